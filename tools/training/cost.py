"""GPU-hours of a training plan: response regeneration plus head training, as a range.

Anchors (ids in ``tools/data/training_evidence.csv``):
- regeneration: 0.333 H100-h per 1K samples for a 70B verifier (C8: ~10 min on 2x H100 per 1K, Llama-3.3-70B);
- training: 0.044 H200-h per 1K sample-epochs for an 8B verifier online (C7: 50.1 samples/s on 8x H200). The
  80 H200-h gpt-oss-120b run (C1: 2 epochs, 4096 tokens) and 64 H200-h gpt-oss-20b run sit inside the high end.
Both anchors are single runs, so the range meant as an 80% interval is wide: x0.4..x2 around the scaled anchor
(ASSUMPTION, stated in the output; the low end keeps C4 inside),
and the untuned 1,344 H200-h Maverick run (C3) is printed as the outlier, not folded in.
Hours convert between GPUs by dense BF16 TFLOPS from the catalog (ASSUMPTION: training is compute-bound).
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.tools.catalog.specs import GpuSpec, ModelSpec

REGEN_H100_H_PER_1K = 0.333  # C8
REGEN_ANCHOR_PARAMS_B = 70.0  # C8's example verifier
TRAIN_H200_H_PER_1K_EPOCH = 0.044  # C7 (Qwen3-8B, online, 8x H200)
TRAIN_ANCHOR_PARAMS_B = 8.0
# Verifier-size scaling clipped: the head's own cost does not vanish on a small verifier, and the 120B run (C1)
# stayed within 10x of the 8B rate.
SIZE_FACTOR_CLIP = (0.3, 10.0)
SPREAD = (0.4, 2.0)  # single-run anchors: x0.4..x2 (assumption; the low end keeps C4, 4.4 RTX 5090-h for 50K, inside)
H100_BF16_TFLOPS = 989.0  # catalog gpus.csv H100-SXM (dense)
H200_BF16_TFLOPS = 989.0  # H200 has the H100's compute (catalog gpus.csv H200 row); memory differs


@dataclass(frozen=True)
class CostEstimate:
    gpu_hours_low: float
    gpu_hours_high: float
    gpu: str
    regenerate_gpu_hours: tuple[float, float]
    train_gpu_hours: tuple[float, float]
    assumptions: list[str]


def _size_factor(params_b: float, anchor_b: float) -> float:
    lo, hi = SIZE_FACTOR_CLIP
    return min(max(params_b / anchor_b, lo), hi)


def estimate_cost(verifier: ModelSpec, gpu: GpuSpec, *, samples: int, epochs: int, regenerate: bool) -> CostEstimate:
    """GPU-hours on ``gpu`` for regenerating ``samples`` responses and training ``epochs`` over them."""
    active_b = verifier.params_active_b or verifier.params_total_b or TRAIN_ANCHOR_PARAMS_B
    tflops = gpu.bf16_tflops or H100_BF16_TFLOPS
    regen_mid = 0.0
    if regenerate:
        regen_mid = samples / 1000 * REGEN_H100_H_PER_1K * _size_factor(active_b, REGEN_ANCHOR_PARAMS_B)
        regen_mid *= H100_BF16_TFLOPS / tflops
    train_mid = samples / 1000 * epochs * TRAIN_H200_H_PER_1K_EPOCH * _size_factor(active_b, TRAIN_ANCHOR_PARAMS_B)
    train_mid *= H200_BF16_TFLOPS / tflops
    regen = (round(regen_mid * SPREAD[0], 1), round(regen_mid * SPREAD[1], 1))
    train = (round(train_mid * SPREAD[0], 1), round(train_mid * SPREAD[1], 1))
    notes = [
        f"regeneration: 0.333 H100-h per 1K samples at 70B (C8), scaled by active parameters ({active_b:g}B), "
        "x0.4..x2 (one anchor)" if regenerate else "no regeneration",
        f"training: 0.044 H200-h per 1K sample-epochs at 8B online (C7), scaled by active parameters, x0.4..x2 "
        "(one anchor; C1: 80 H200-h for gpt-oss-120b, 2 epochs)",
        f"converted to {gpu.name} by dense BF16 TFLOPS ({tflops:g}); assumes compute-bound training",
        "an untuned run took 1,344 H200-h (Llama-4-Maverick, 7 epochs, C3): budget for tuning the pipeline first",
    ]
    return CostEstimate(gpu_hours_low=round(regen[0] + train[0], 1), gpu_hours_high=round(regen[1] + train[1], 1),
                        gpu=gpu.key, regenerate_gpu_hours=regen, train_gpu_hours=train, assumptions=notes)

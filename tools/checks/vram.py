"""VRAM fit: verifier + draft/head weights + KV caches, per GPU, under tensor parallelism.

Memory model (per GPU, tensor parallel size ``gpus``):

    usable = memory_gib * reserve_fraction            (vLLM gpu_memory_utilization 0.9)
    weights = (verifier + draft) bytes / tp           (draft sharded only if its TP = target TP)
    runtime = activation/workspace + CUDA graphs       (stated constant per GPU)
    kv      = (verifier KV + draft KV) per sequence x concurrency / tp
    fits   <=> weights + runtime + kv <= usable

The largest concurrency at the requested context, and the longest context at
the requested concurrency, come out of the same equation.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.arch.kv import KV_DTYPE_BYTES, kv_bytes_per_sequence
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.vocab import BYTES_PER_PARAM

GIB = 2**30
# vLLM's default --gpu-memory-utilization (vllm/config/cache.py; ENGINES.md). SGLang's
# --mem-fraction-static is chosen per GPU size (0.79-0.88), so 0.9 is a fair common default.
DEFAULT_RESERVE_FRACTION = 0.9
# Activation workspace, CUDA-graph pools and the sampler's logits buffers: a stated
# assumption of 1.5 GiB per GPU (vLLM profiles this at start-up; 1-3 GiB is typical for
# 7B-70B models at default max_num_batched_tokens).
RUNTIME_OVERHEAD_GIB = 1.5


class VramResult(BaseModel):
    """Per-GPU memory budget and the verdict."""

    fits: bool
    verifier: str
    gpu: str
    gpus: int
    usable_gib_per_gpu: float
    verifier_weights_gib: float = Field(description="per GPU")
    draft_weights_gib: float = Field(description="per GPU (draft model or head)")
    runtime_overhead_gib: float
    kv_gib: float = Field(description="per GPU, verifier + draft KV at context x concurrency")
    kv_verifier_gib_per_seq: float = Field(description="whole-model KV for one sequence, before sharding")
    kv_draft_gib_per_seq: float
    headroom_gib: float = Field(description="usable minus everything above, per GPU (negative: does not fit)")
    max_concurrency_at_context: int = Field(description="sequences that fit at the requested context (0: none)")
    max_context_at_concurrency: int = Field(description="context that fits at the requested concurrency (0: none)")
    verifier_alone_fits: bool
    weight_bytes_per_param: float
    assumptions: list[str]


def _weights_gib(params_b: float, quant: str) -> float:
    return params_b * 1e9 * BYTES_PER_PARAM[quant] / GIB


def _default_quant(m: ModelSpec) -> str:
    return m.dtype if m.dtype in BYTES_PER_PARAM else "bf16"


def fit_specs(
    verifier: ModelSpec,
    gpu: GpuSpec,
    *,
    gpus: int = 1,
    draft: ModelSpec | None = None,
    draft_params_b: float | None = None,
    head_params_b: float | None = None,
    quantization: str | None = None,
    draft_quantization: str | None = None,
    kv_cache_dtype: str = "auto",
    context_tokens: int = 4096,
    concurrency: int = 1,
    draft_tp: int | None = None,
    reserve_fraction: float = DEFAULT_RESERVE_FRACTION,
) -> VramResult:
    """Compute the per-GPU memory budget for resolved specs (the planner's entry point)."""
    assumptions: list[str] = []
    quant = quantization or _default_quant(verifier)
    vparams = count_params(verifier)
    # The MTP layers ship in the checkpoint and engines load them with --speculative-config mtp.
    verifier_params_b = vparams.total_b + (vparams.mtp_b if head_params_b is None else 0.0)
    verifier_w = _weights_gib(verifier_params_b, quant) / gpus

    draft_tp = draft_tp or (gpus if draft is not None or draft_params_b else 1)
    if draft_tp not in (1, gpus):
        raise InputError(
            f"draft tensor parallel size {draft_tp} is invalid: vLLM accepts 1 or the target's TP ({gpus}) "
            "(vllm#31345, #31398). Use --draft-tp 1 or --draft-tp {gpus}."
        )
    dquant = draft_quantization or "bf16"
    draft_w = 0.0
    kv_draft_seq = 0.0
    if draft is not None:
        draft_w = _weights_gib(count_params(draft).total_b, dquant) / draft_tp
        kv_draft_seq = kv_bytes_per_sequence(draft, context_tokens, kv_cache_dtype) / GIB
    elif draft_params_b:
        draft_w = _weights_gib(draft_params_b, dquant) / draft_tp
        # Unknown architecture: scale the verifier's KV by the parameter ratio (a stated estimate).
        ratio = draft_params_b / max(vparams.total_b, 1e-9)
        kv_draft_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) * ratio / GIB
        assumptions.append("draft KV estimated as verifier KV x (draft params / verifier params): "
                           "architecture not given")
    if head_params_b:
        # Heads are replicated on every rank in vLLM/SGLang (small; not sharded).
        draft_w += _weights_gib(head_params_b, "bf16")
        # An EAGLE head is one decoder layer: its KV is one layer's worth of the verifier's.
        kv_draft_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) / verifier.num_layers / GIB
        assumptions.append("head KV = one verifier layer's KV (EAGLE heads are a single decoder layer)")

    kv_verifier_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) / GIB
    usable = gpu.memory_gib * reserve_fraction
    fixed = verifier_w + draft_w + RUNTIME_OVERHEAD_GIB
    kv_per_seq_per_gpu = kv_verifier_seq / gpus + kv_draft_seq / draft_tp
    kv = kv_per_seq_per_gpu * concurrency
    headroom = usable - fixed - kv

    free_for_kv = usable - fixed
    max_conc = int(free_for_kv // kv_per_seq_per_gpu) if free_for_kv > 0 and kv_per_seq_per_gpu > 0 else 0
    per_token = kv_per_seq_per_gpu / context_tokens
    max_ctx = int(free_for_kv / (per_token * concurrency)) if free_for_kv > 0 and per_token > 0 else 0
    if verifier.sliding_window and verifier.sliding_layer_fraction > 0:
        max_ctx = _max_context_sliding(verifier, draft, free_for_kv, concurrency, gpus, kv_cache_dtype)
        assumptions.append(f"sliding-window layers keep {verifier.sliding_window} tokens; an engine that "
                           "allocates full context on every layer needs more")

    limit = verifier.max_position_embeddings
    if limit and max_ctx > limit:
        # Memory is not the binding limit: the model's positions are (an engine refuses a longer max_model_len).
        max_ctx = limit
        assumptions.append(f"max context capped at the model's max_position_embeddings ({limit}); memory "
                           "would hold more")
    assumptions += [
        f"engine may use {reserve_fraction:.0%} of {gpu.memory_gib:g} GiB per GPU (vLLM gpu_memory_utilization "
        "default; marketed GB of HBM parts are binary GiB)",
        f"weights at {quant} ({BYTES_PER_PARAM[quant]:.3g} bytes/param), sharded over TP={gpus}",
        f"{RUNTIME_OVERHEAD_GIB} GiB per GPU for activations, CUDA graphs and sampler buffers (stated assumption)",
        f"KV cache dtype {kv_cache_dtype} ({KV_DTYPE_BYTES[kv_cache_dtype]:g} bytes/element)",
    ]
    if verifier.is_mla:
        assumptions.append("MLA caches kv_lora_rank + qk_rope_head_dim values per token per layer (DeepSeek-V2 §2.1)")
    return VramResult(
        fits=headroom >= 0,
        verifier=verifier.repo_id,
        gpu=gpu.key,
        gpus=gpus,
        usable_gib_per_gpu=round(usable, 2),
        verifier_weights_gib=round(verifier_w, 2),
        draft_weights_gib=round(draft_w, 2),
        runtime_overhead_gib=RUNTIME_OVERHEAD_GIB,
        kv_gib=round(kv, 2),
        kv_verifier_gib_per_seq=round(kv_verifier_seq, 4),
        kv_draft_gib_per_seq=round(kv_draft_seq, 4),
        headroom_gib=round(headroom, 2),
        max_concurrency_at_context=max(max_conc, 0),
        max_context_at_concurrency=max(max_ctx, 0),
        verifier_alone_fits=usable - verifier_w - RUNTIME_OVERHEAD_GIB - kv_verifier_seq / gpus * concurrency >= 0,
        weight_bytes_per_param=BYTES_PER_PARAM[quant],
        assumptions=assumptions,
    )


def _max_context_sliding(
    verifier: ModelSpec, draft: ModelSpec | None, free_gib: float, concurrency: int, gpus: int, kv_dtype: str
) -> int:
    """Largest context that fits when some layers cap their cache at the window (bisection, bounded)."""
    if free_gib <= 0:
        return 0

    def need(ctx: int) -> float:
        total = kv_bytes_per_sequence(verifier, ctx, kv_dtype) / gpus
        if draft is not None:
            total += kv_bytes_per_sequence(draft, ctx, kv_dtype) / gpus
        return total * concurrency / GIB

    lo, hi = 0, 1
    while need(hi) <= free_gib and hi < 2**26:  # 67M tokens: far past any real context
        lo, hi = hi, hi * 2
    for _ in range(64):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(mid) <= free_gib else (lo, mid)
    return lo

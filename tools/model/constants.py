"""Every global constant of the speedup model, in one frozen object passed to the model.

``ModelConstants`` groups the roofline constants, the MoE routing reuse, the
all-reduce latencies, the model-free lookup costs and the per-harness
``RuntimeOverhead`` table. The model functions (``forward_time``,
``step_time``, ``head_step_time``, ``cycle_cost``, ``estimate_for_specs``...)
take it as ``constants=DEFAULT_CONSTANTS``; the global fit
(``tools/calibration/fit.py``) passes modified copies
(``DEFAULT_CONSTANTS.model_copy(update=...)``) and never touches module state.
Each field's description names its source; the longer derivations are the
comments above each field. The per-harness overhead values and their sources
are in ``tools/model/overhead.py``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.model.overhead import DEFAULT_OVERHEADS, OverheadTable, RuntimeOverhead


class ModelConstants(BaseModel):
    """The global constants of the step-time and cycle-cost model (frozen: vary a copy, never the default)."""

    model_config = ConfigDict(frozen=True)

    # --- roofline ---------------------------------------------------------------------------------------------
    # Achievable fraction of peak HBM bandwidth for decode GEMVs. Derived from the published row
    # EAGLE-GPTFAST: gpt-fast (compiled) decodes LLaMA2-7B fp16 at 55.1 tok/s on an RTX 3090 -> 13.5 GB x
    # 55.1/s = 744 GB/s = 79% of its 936 GB/s.
    bandwidth_efficiency: float = Field(
        0.80, description="achievable fraction of peak HBM bandwidth for decode GEMVs (published row EAGLE-GPTFAST: "
        "gpt-fast 55.1 tok/s LLaMA2-7B fp16 on an RTX 3090 = 79% of 936 GB/s)")
    # Achievable fraction of dense tensor peak for the skinny GEMMs of decode/verify (M = tokens in the step,
    # tens to hundreds), well below the ~0.7-0.8 that large GEMMs reach. Global fit (tools/calibration/fit.py,
    # jointly with roofline_sharpness) over the 48 published rows with batch > 1 (EAGLE1-T7, EAGLE3-T5, Clover,
    # Hydra, blockwise MTP) plus the fit half of the engine-measured rows, acceptance from priors without the row's
    # own source or any holdout source: mean APE 14.4% (flat: 0.40 with sharpness 3 scores 14.2%, within 0.3 pp;
    # kept at 0.35 / 2).
    flops_efficiency: float = Field(
        0.35, description="achievable fraction of dense tensor peak for the skinny decode/verify GEMMs (global fit, "
        "tools/calibration/fit.py: batch > 1 dev rows + engine fit half, out-of-source priors, mean APE 14.5%)")
    # Memory and compute do not overlap perfectly near the roofline corner: components combine as
    # (m^p + c^p)^(1/p) instead of max(m, c); p -> infinity is the ideal roofline, p = 2 adds 41% at the corner
    # and ~12% when one side is half the other. Same global fit as flops_efficiency.
    roofline_sharpness: float = Field(
        2.0, description="p of the soft roofline (m^p + c^p)^(1/p) (same global fit as flops_efficiency)")
    activation_bytes: float = Field(
        2.0, description="bytes per activation in all-reduce messages (bf16/fp16 activations)")
    # PCIe Gen4 x16 is 64 GB/s bidirectional (gpus.csv interconnect column) -> 32 GB/s per direction.
    pcie_gbps_per_direction: float = Field(
        32.0, description="PCIe Gen4 x16: 64 GB/s bidirectional (gpus.csv interconnect column) -> 32 GB/s each way")

    # --- MoE routing --------------------------------------------------------------------------------------------
    # MoE routing locality: probability that a token repeats the previous token's expert choice (same sequence)
    # beyond chance. Mixtral paper (Jiang et al. 2024, arXiv 2401.04088) sec. 5, Table 5: share of consecutive
    # tokens (The Pile, 8 subsets, layers 0/15/31) with the same first-choice expert: layer 0 13.6-14.9%, layer 15
    # 23.6-28.4%, layer 31 19.7-26.3% vs 12.5% at random; sharing the first or second choice: 44.9-49.9%,
    # 61.6-67.0%, 44.5-53.6% vs 46.4% at random. Excess over chance, (p - p_random) / (1 - p_random), averaged over
    # the 24 cells: 0.098 (first choice), 0.145 (first or second); 0.32 at layer 15 alone. 0.10 taken (the
    # first-choice reading, the lower one). Not fitted: the two MoE rows of published-dev.csv cannot identify it
    # (EAGLE1-MIXTRAL verifies a 26-token tree that touches >= 7.8 of 8 experts for any rho <= 0.5; DSV3-MTP
    # verifies 2 tokens on unstated hardware and its error is the per-cycle engine overhead: even rho = 1 moves it
    # only 0.83 -> 0.89 against 1.8 measured). Liang et al. 2025 (arXiv 2505.16056) Table 1 ranks local routing
    # consistency Qwen3-30B-A3B (SRP 54.1) > Mixtral-8x7B (49.4) > DeepSeek-V2-Lite/DeepSeekMoE (37.9/36.9, shared
    # experts), so one global rho is optimistic for DeepSeek and conservative for Qwen3.
    routing_reuse: float = Field(
        0.10, ge=0.0, le=1.0, description="probability a token repeats its predecessor's experts beyond chance "
        "(Mixtral paper arXiv 2401.04088 Table 5, first-choice reading; not fitted)")

    # --- tensor-parallel all-reduce -----------------------------------------------------------------------------
    # Small-message all-reduce latency (NCCL / engine custom all-reduce): assumption, ~8 us over NVLink,
    # ~25 us over PCIe.
    allreduce_latency_ms_nvlink: float = Field(
        0.008, description="small-message all-reduce latency over NVLink (assumption, ~8 us)")
    allreduce_latency_ms_pcie: float = Field(
        0.025, description="small-message all-reduce latency over PCIe (assumption, ~25 us)")

    # --- model-free drafting on the host ---------------------------------------------------------------------
    # Host-side drafting work per sequence per cycle for model-free methods (assumptions, ms).
    ngram_lookup_ms: float = Field(
        0.05, description="prompt lookup: n-gram match over the context on CPU (vLLM ngram proposer), "
        "per sequence per cycle (assumption)")
    suffix_lookup_ms: float = Field(
        0.1, description="suffix tree match + update over prompt and previous outputs (Arctic Inference), "
        "per sequence per cycle (assumption)")
    rest_lookup_ms: float = Field(
        1.0, description="suffix-array retrieval from a large datastore (REST; README machine: 96 CPU cores), "
        "per sequence per cycle (assumption)")

    # --- runtimes -----------------------------------------------------------------------------------------------
    overheads: OverheadTable = Field(
        DEFAULT_OVERHEADS, description="per-harness runtime overheads; values and sources in "
        "tools/model/overhead.py (eager harness and engine per-cycle costs: global fits, tools/calibration/fit.py)")

    def overhead(self, harness: str) -> RuntimeOverhead:
        """The overhead constants of ``harness``; InputError for an unknown name."""
        return self.overheads.get(harness)


DEFAULT_CONSTANTS = ModelConstants()


def get_overhead(harness: str, *, constants: ModelConstants = DEFAULT_CONSTANTS) -> RuntimeOverhead:
    """The overhead constants of a harness in ``constants``; InputError for an unknown name."""
    return constants.overhead(harness)


def routing_reuse_note(constants: ModelConstants = DEFAULT_CONSTANTS) -> str:
    """The assumption line that MoE step times carry, quoting the routing reuse in use."""
    return (
        f"MoE verify: within one sequence a token repeats its predecessor's experts with probability "
        f"{constants.routing_reuse} "
        "beyond chance (Mixtral paper arXiv 2401.04088 Table 5: consecutive-token expert repeats 0.10-0.15 above "
        "random, up to 0.32 at layer 15), sequences in a batch route independently and uniformly; models with shared "
        "experts (DeepSeek) show less locality, Qwen3 more (Liang et al. arXiv 2505.16056 Table 1)"
    )

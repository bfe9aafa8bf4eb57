"""Whether the engine overlaps the speculative path's host work with the GPU (async / overlap scheduling).

A speculative cycle carries host work the plain decode path overlaps: input preparation, metadata and a
sync for each draft step and for the verify pass, acceptance and KV bookkeeping per cycle and per running
request (the per-cycle terms of ``tools/model/overhead.py``). Engines have moved that work off the critical path:

* **vLLM** schedules asynchronously with EAGLE/MTP speculation by default from 0.14.0 (vllm#31998, "Enable async
  scheduling by default with spec decoding", merged 2026-01-08; released in 0.14.0 on 2026-01-17 per djl#3833).
  Other methods (n-gram, draft models, DFlash) were switched on later (vllm#48341 for draft models in July 2026,
  vllm#58065 for DFlash in September 2026) in releases we cannot name, so they stay off here.
* **SGLang** has an overlap scheduler for speculation ("spec v2"), opt-in with ``SGLANG_ENABLE_SPEC_V2=1`` for
  EAGLE/EAGLE-3/MTP/standalone chains (top-k 1) only (sglang docs attention_backend.md, PR #20210; roadmap
  sglang#23005 still asks to enable it by default in May 2026).
* **TensorRT-LLM**'s one-model C++ loop is already the leanest path in the fit (tools/model/overhead.py) and is
  not modelled as a separate mode.

With the overlap on, the host work of cycle i+1 runs while the GPU works on cycle i, so only the part of it that
outlasts the cycle's GPU time (draft steps + verify) shows: ``exposed = max(0, host - GPU)``
(``tools/model/cyclecost.py``), except a fitted share of the per-request work that stays serial
(``RuntimeOverhead.overlap_seq_exposed_fraction``, MoE verifiers): with all of it hidden, predicted speedup rose
with concurrency on the MoE rows that ran with overlap while the measured speedup fell. Measured, the difference
is large: vLLM MTP on DeepSeek-V3.2 (May 2026, 8x B300, MTP=1) delivers 1.87x at tau 1.90, a cycle barely longer
than one decode step (engine row VLLM-BLOG-AA-2026/1), where vLLM V1 in July 2025 left 2-6 ms per EAGLE-3 cycle on
Llama-3.1-8B (vllm#20780).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from specpick.tools.engines.lookup import engine as engine_spec, engines, is_engine
from specpick.tools.engines.vllm import VLLM_ASYNC_SPEC_SINCE  # noqa: F401  (its home; re-exported for the calibration)
from specpick.tools.model.estimate import ENGINE_HARNESSES
from specpick.tools.methods import is_method, method_record
from specpick.tools.vocab import SpecOverlap

# The engines with a separate overlap mode in the model (each engine's own ``overlap``, tools/engines/).
OVERLAP_ENGINES = tuple(e.name for e in engines() if e.overlap_mode)


def overlap_setting_error(engine: str, setting: SpecOverlap) -> str | None:
    """Why a stated overlap setting cannot apply to ``engine`` (a runtime/harness name), or None: "on"/"off" describe
    an engine's own overlap mode, which only ``OVERLAP_ENGINES`` have (one rule for `speedup` and `recommend`)."""
    if setting == "auto" or engine in OVERLAP_ENGINES:
        return None
    return (f"--spec-overlap applies to {' and '.join(OVERLAP_ENGINES)} (their overlap scheduling of the speculative "
            "path); leave it at auto for this engine or harness")


class OverlapDecision(BaseModel):
    """Whether a speculative cycle's host work overlaps the GPU, and the sentence that says why."""

    overlap: bool
    note: str | None = Field(description="the assumption line for the answer (None: an eager harness, nothing "
                             "to say)")


def spec_overlap(engine: str, engine_version: str | None, method: str, *,
                 setting: SpecOverlap = "auto") -> OverlapDecision:
    """The overlap of ``method`` on ``engine`` (a runtime/harness name) at ``engine_version`` (None: the newest
    release we track).

    ``setting`` "on"/"off" states what the user runs (SGLang's spec v2 is an environment variable the engine
    version cannot tell); "auto" takes the engine's default for that release. SGLang runs spec v2 for chains only:
    the cycle cost drops the overlap for a tree (``RuntimeOverhead.overlap_chains_only``). The papers' eager
    harnesses and HF generate have no scheduler: no overlap and no note.
    """
    if engine not in ENGINE_HARNESSES:
        return OverlapDecision(overlap=False, note=None)
    rec = method_record(method) if is_method(method) else None  # a row without a method, or no speculation
    mode = engine_spec(engine).overlap(engine_version, method, rec) if is_engine(engine) else None
    if mode is None:
        return OverlapDecision(overlap=False, note=f"{engine}: speculative host work costed as measured in its "
                               "engine rows (no separate overlap mode modelled)")
    can, default, what = mode.can, mode.default, mode.what
    if setting == "off" or not can:
        why = "turned off" if setting == "off" else f"not available for {method}"
        return OverlapDecision(overlap=False, note=f"speculative host work adds to each cycle: {what} {why}")
    if setting == "on" or default:
        return OverlapDecision(overlap=True, note=f"speculative host work overlaps the GPU: {what}; only the part "
                               "that outlasts a cycle's draft + verify time is added, plus, for a MoE verifier, the "
                               "per-request share that stays serial (fitted on the MoE engine rows that ran with "
                               "overlap, tools/model/overhead.py; a dense verifier's host work is taken as hidden: the "
                               "dense rows measured with overlap, Qwen3-32B and Llama-3.3-70B in vLLM, ran faster than that "
                               "predicts at concurrency 64)")
    version = f" {engine_version}" if engine_version else ""
    return OverlapDecision(overlap=False, note=f"speculative host work adds to each cycle: {what} is not on by "
                           f"default in {engine}{version}" + mode.hint)

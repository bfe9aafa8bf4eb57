"""Cost of one speculative cycle (draft + verify + overhead) relative to one plain decode step.

``k = (draft time + verify time + per-cycle overhead) / plain decode step time``
at the same batch. For chain drafts this is ``N c + r + o`` (c = one draft
step / one decode step, r = verify of N+1 tokens / one decode step, o = the
runtime's per-cycle overhead); for trees the draft phase is ``depth`` head
steps over ``top_k`` candidates and verification covers the tree's token budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.methods import MethodRecord, is_method, method_record
from specpick.tools.model.cost_inputs import DraftSetup, Hardware, Precision, Runtime, StepLoad
from specpick.tools.model.overhead import execution_path, path_overhead_ms, per_seq_ms, verify_token_frac
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.model.steptime import MEDUSA_DEFAULT_HEADS, HeadKind, StepTime, head_step_time, step_time

# Host-side lookup costs of the model-free methods are ``ModelConstants`` fields (tools/model/constants.py).
REST_VERIFY_TOKENS = 64  # assumption: REST verifies a draft tree of up to 64 tokens, like Medusa's
# Lookahead (W window, N n-gram size, G verification set): extra tokens per step = (W + G)(N - 1).
# LADE blog Table 1 "good configs" on A100: 7B W=15 N=5, 13B W=10 N=5, 33B W=7 N=5 (G = W);
# TensorRT-LLM defaults W=4, N=3, G=4 (ENGINES.md).
LOOKAHEAD_PAPER_CONFIGS = ((10.0, (15, 5, 15)), (20.0, (10, 5, 10)), (float("inf"), (7, 5, 7)))
LOOKAHEAD_ENGINE_CONFIG = (4, 3, 4)
# Parallel drafters run ONE draft forward per cycle over all drafted positions, ``parallel_draft_layers`` decoder
# layers deep (tools/methods.py); each layer is costed like an EAGLE-3 head layer on the verifier's geometry
# (counting the fc and LM head per layer over-counts, so the draft cost is an upper bound). Autoregressive heads
# (``autoregressive_head``) are the ones whose draft state an engine may refresh with an extra "extend" forward
# over the accepted tokens after each verify (RuntimeOverhead.one_model_extend_forward; SGLang's EAGLE worker does).


class CycleCost(BaseModel):
    """One draft+verify cycle, in milliseconds and relative to one plain decode step."""

    method: str
    base: StepTime = Field(description="plain decode step of the verifier at this batch")
    draft_step: StepTime | None = Field(None, description="one draft step (draft model or head), if any")
    draft_steps: int = Field(description="draft steps per cycle")
    draft_ms: float
    verify: StepTime
    host_lookup_ms: float = Field(description="model-free drafting work on the host per cycle")
    overhead_ms: float = Field(description="runtime per-cycle overhead")
    forwards: int = Field(description="forward passes launched per cycle: draft steps + the verify pass")
    cycle_ms: float
    cost_ratio: float = Field(description="c: one draft step / one plain decode step")
    verify_cost: float = Field(description="r: verification pass / one plain decode step")
    overhead_cost: float = Field(description="(host lookup + per-cycle overhead) / one plain decode step")
    cycle_cost: float = Field(description="k: whole cycle / one plain decode step")
    verify_tokens: int
    path: str = Field("eager", description="execution path: eager, one_model, two_model or model_free")
    overlapped: bool = Field(False, description="the per-cycle host work overlapped the GPU (overlap scheduling)")


def lookahead_config(params_b: float, harness: str) -> tuple[int, int, int]:
    """(W, N, G) of Lookahead decoding: the LADE blog's config for the model size in eager harnesses."""
    if harness in ("paper", "transformers"):
        return next(cfg for limit, cfg in LOOKAHEAD_PAPER_CONFIGS if params_b <= limit)
    return LOOKAHEAD_ENGINE_CONFIG


@lru_cache(maxsize=4096)
def _step(model: ModelSpec, hw: Hardware, load: StepLoad, precision: Precision, runtime: Runtime,
          draft: bool) -> StepTime:
    # cached per constant set too: ModelConstants is frozen and hashable, so a fit's copies never collide
    return step_time(model, hw, load, precision, runtime, draft_step=draft)


@lru_cache(maxsize=4096)
def _head(kind: HeadKind, verifier: ModelSpec, hw: Hardware, load: StepLoad, precision: Precision,
          runtime: Runtime, heads: int = MEDUSA_DEFAULT_HEADS) -> StepTime:
    return head_step_time(kind, verifier, hw, load, precision, runtime, num_heads=heads)


@dataclass(frozen=True)
class _Cycle:
    """What every forward of one cycle shares: the verifier as served, the GPUs, the runtime, the batch and
    the context."""

    verifier: ModelSpec
    precision: Precision
    hw: Hardware
    runtime: Runtime
    load: StepLoad

    def step(self, model: ModelSpec, tokens: int, precision: Precision | None = None,
             draft: bool = False) -> StepTime:
        """A forward of ``model`` feeding ``tokens`` tokens per sequence."""
        return _step(model, self.hw, self.load.feeding(tokens), precision or self.precision, self.runtime, draft)

    def head(self, kind: HeadKind, tokens: int, heads: int = MEDUSA_DEFAULT_HEADS) -> StepTime:
        """A step of a ``kind`` head on the verifier feeding ``tokens`` tokens per sequence."""
        return _head(kind, self.verifier, self.hw, self.load.feeding(tokens), self.precision, self.runtime, heads)


@dataclass(frozen=True)
class _DraftPhase:
    """The draft half of a cycle: its (representative) step, forwards, time and host lookups; ``verify_tokens``
    and ``tree`` override the shape's when the method verifies its own budget (Lookahead, REST)."""

    step: StepTime | None = None
    steps: int = 0
    ms: float = 0.0
    host_ms: float = 0.0
    verify_tokens: int | None = None
    tree: bool = False


def _model_draft(d: DraftSetup, rec: MethodRecord, at: _Cycle) -> _DraftPhase:
    """A separate draft model: N autoregressive steps, or one forward over N mask tokens (PARD, arXiv 2504.18583)."""
    if d.draft is None:
        raise InputError(f"method {d.method} needs its {rec.label} draft model" if rec.parallel_draft
                         else f"method {d.method} needs a draft model")
    precision = at.precision.with_weights(d.draft_bytes_per_param or None)
    if not rec.parallel_draft:
        step = at.step(d.draft, 1, precision, draft=True)
        return _DraftPhase(step, d.num_draft_tokens, d.num_draft_tokens * step.total_ms)
    step = at.step(d.draft, d.num_draft_tokens, precision, draft=True)
    return _DraftPhase(step, 1, step.total_ms)


def _head_draft(d: DraftSetup, rec: MethodRecord, at: _Cycle, is_tree: bool) -> _DraftPhase:
    """Draft modules on the verifier's hidden states: parallel drafters, Medusa's heads, autoregressive heads
    (EAGLE chains and trees, MTP)."""
    n = d.num_draft_tokens
    if rec.parallel_draft:
        # DFlash: block [anchor, MASK x N] in one non-causal forward; P-EAGLE: N mask positions in one pass.
        step = at.head("eagle3", n + 1 if rec.drafts_anchor else n)
        return _DraftPhase(step, 1, rec.parallel_draft_layers * step.total_ms)
    kind: HeadKind = rec.head_kind  # type: ignore[assignment]
    if not rec.autoregressive_head:  # Medusa: every head drafts its own position in one pass
        step = at.head(kind, 1, d.medusa_heads or MEDUSA_DEFAULT_HEADS)
        return _DraftPhase(step, 1, step.total_ms)
    first = at.head(kind, 1)
    if is_tree:
        wide = at.head(kind, d.tree_top_k)
        return _DraftPhase(first, n, first.total_ms + (n - 1) * wide.total_ms)
    return _DraftPhase(first, n, n * first.total_ms)


def _model_free_draft(d: DraftSetup, rec: MethodRecord, at: _Cycle) -> _DraftPhase:
    """Drafts looked up on the host (n-gram, suffix, REST) or guessed in the verify pass itself (Lookahead)."""
    if rec.fixed_tree:  # Lookahead's n-gram pool
        w, ngram, g = d.lookahead or lookahead_config(at.verifier.params_total_b or 7.0, at.runtime.overhead.harness)
        return _DraftPhase(verify_tokens=1 + (w + g) * (ngram - 1))
    # host lookup costs are ModelConstants fields named by method (ngram_lookup_ms, suffix_lookup_ms); REST is
    # suffix decoding's retrieval variant (the only method with that variant) and verifies a draft tree
    c, batch = at.runtime.constants, at.load.batch
    if d.variant == "rest":
        return _DraftPhase(host_ms=c.rest_lookup_ms * batch, verify_tokens=REST_VERIFY_TOKENS, tree=True)
    return _DraftPhase(host_ms=getattr(c, f"{d.method}_lookup_ms") * batch)


def _draft_phase(d: DraftSetup, at: _Cycle, is_tree: bool) -> _DraftPhase:
    if not is_method(d.method):
        raise InputError(f"unknown method '{d.method}'")
    rec = method_record(d.method)
    if rec.loads == "draft_lm":
        return _model_draft(d, rec, at)
    if rec.verifier_bound:
        return _head_draft(d, rec, at, is_tree)
    return _model_free_draft(d, rec, at)


def _overlapped_overhead_ms(over: float, gpu_ms: float, at: _Cycle) -> float:
    """Per-cycle overhead under overlap scheduling: the per-request share that stays serial
    (RuntimeOverhead.overlap_seq_exposed_fraction, fitted on MoE rows; dense verifiers keep none: overhead.py says
    why) is paid in full; the rest hides under the cycle's GPU work (``gpu_ms``), and only what outlasts it shows."""
    overhead, moe = at.runtime.overhead, at.verifier.is_moe
    share = overhead.overlap_seq_exposed_fraction if moe else 0.0
    seq_exposed = share * per_seq_ms(overhead, moe) * at.load.batch
    hidden = over - seq_exposed
    return max(0.0, hidden - gpu_ms) + seq_exposed + overhead.overlap_exposed_ms


def _verify_step(at: _Cycle, base: StepTime, verify_tokens: int) -> StepTime:
    """The verify pass over ``verify_tokens`` tokens: its roofline, plus, where the runtime's small-batch kernels
    cost more than their bytes (llama.cpp: ``RuntimeOverhead.verify_token_frac``), that share of the plain step's
    memory time per token beyond the first."""
    verify = at.step(at.verifier, verify_tokens)
    frac = verify_token_frac(at.runtime.overhead, at.hw.gpu.vendor)
    if frac <= 0.0 or verify_tokens <= 1:
        return verify
    extra = frac * (verify_tokens - 1) * base.memory_ms
    return verify.model_copy(update={"total_ms": verify.total_ms + extra, "gpu_ms": verify.gpu_ms + extra})


def cycle_cost(draft: DraftSetup, verifier: ModelSpec, precision: Precision, hw: Hardware, runtime: Runtime, *,
               batch: int, context_tokens: int) -> CycleCost:
    """Cost of one cycle of ``draft.method`` (see module docstring). ``draft.num_draft_tokens`` is N or the depth.

    ``runtime.overlap``: the engine prepares the next cycle on the host while the GPU runs this one
    (``tools/model/overlap.py``), so only the per-cycle host work that outlasts the cycle's GPU time
    (draft + verify) adds to it, plus the per-request share that stays serial.
    """
    n, method, overhead = draft.num_draft_tokens, draft.method, runtime.overhead
    if n < 1:
        raise InputError("num_draft_tokens must be >= 1")
    at = _Cycle(verifier, precision, hw, runtime, StepLoad(batch, 1, context_tokens))
    # Partial offload: plain decoding keeps the layers a draft would displace on the GPU (tools/checks/offload.py).
    plain = at if hw.host_read is None else replace(at, hw=replace(hw, host_read=hw.plain_host_read))
    base = plain.step(verifier, 1)
    is_tree = draft.tree_top_k > 1 and (draft.tree_tokens or 0) > n + 1
    phase = _draft_phase(draft, at, is_tree)
    verify_tokens = phase.verify_tokens or (draft.tree_tokens if is_tree and draft.tree_tokens else n + 1)
    is_tree = is_tree or phase.tree
    verify = _verify_step(at, base, verify_tokens)
    draft_ms, forwards = phase.ms, phase.steps + 1
    path = execution_path(overhead, method)
    rec = method_record(method)
    if path == "one_model" and overhead.one_model_extend_forward and rec.autoregressive_head:
        # the engine's extra draft forward over the accepted tokens (at most N+1; graphs pad to it)
        draft_ms += at.head(rec.head_kind, n + 1).total_ms  # type: ignore[arg-type]
        forwards += 1
    over = path_overhead_ms(overhead, path, forwards=forwards, batch=batch, tree=is_tree or rec.fixed_tree,
                            moe=verifier.is_moe)
    # "chains only" means top-k 1: a top-4 draft verifying depth + 1 tokens is still no chain to SGLang spec v2
    overlapped = runtime.overlap and path != "eager" and not (draft.tree_top_k > 1 and overhead.overlap_chains_only)
    if overlapped:
        over = _overlapped_overhead_ms(over, draft_ms + verify.total_ms, at)
    cycle = draft_ms + verify.total_ms + phase.host_ms + over
    b = base.total_ms
    step = phase.step
    return CycleCost(
        method=method, base=base, draft_step=step, draft_steps=phase.steps, draft_ms=draft_ms, verify=verify,
        host_lookup_ms=phase.host_ms, overhead_ms=over, forwards=forwards, cycle_ms=cycle,
        # parallel drafters: c is their whole (single) draft forward
        cost_ratio=(draft_ms / b if rec.parallel_draft else step.total_ms / b) if step else 0.0,
        verify_cost=verify.total_ms / b, overhead_cost=(phase.host_ms + over) / b, cycle_cost=cycle / b,
        verify_tokens=verify_tokens, path=path, overlapped=overlapped,
    )

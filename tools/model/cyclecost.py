"""Cost of one speculative cycle (draft + verify + overhead) relative to one plain decode step.

``k = (draft time + verify time + per-cycle overhead) / plain decode step time``
at the same batch. For chain drafts this is ``N c + r + o`` (c = one draft
step / one decode step, r = verify of N+1 tokens / one decode step, o = the
runtime's per-cycle overhead); for trees the draft phase is ``depth`` head
steps over ``top_k`` candidates and verification covers the tree's token budget.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants
from specpick.tools.model.overhead import RuntimeOverhead, execution_path, path_overhead_ms, per_seq_ms
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.model.steptime import MEDUSA_DEFAULT_HEADS, StepTime, head_step_time, step_time

# Host-side lookup costs of the model-free methods are ``ModelConstants`` fields (tools/model/constants.py).
REST_VERIFY_TOKENS = 64  # assumption: REST verifies a draft tree of up to 64 tokens, like Medusa's
# Lookahead (W window, N n-gram size, G verification set): extra tokens per step = (W + G)(N - 1).
# LADE blog Table 1 "good configs" on A100: 7B W=15 N=5, 13B W=10 N=5, 33B W=7 N=5 (G = W);
# TensorRT-LLM defaults W=4, N=3, G=4 (ENGINES.md).
LOOKAHEAD_PAPER_CONFIGS = ((10.0, (15, 5, 15)), (20.0, (10, 5, 10)), (float("inf"), (7, 5, 7)))
LOOKAHEAD_ENGINE_CONFIG = (4, 3, 4)
# Parallel drafters run ONE draft forward per cycle over all drafted positions. Their depth in decoder layers
# (each costed like an EAGLE-3 head layer on the verifier's geometry; counting the fc and LM head per layer
# over-counts, so the draft cost is an upper bound):
DFLASH_DRAFT_LAYERS = 5  # SpecForge configs/qwen3-8b-dflash.json: 5 layers, H=4096 (staging heads_new.csv note)
PEAGLE_DRAFT_LAYERS = 4  # amazon/gpt-oss-120b-p-eagle card: 4 decoder layers (heads_new.csv method_detail)
# Autoregressive heads whose draft state an engine may refresh with an extra "extend" forward over the accepted
# tokens after each verify (RuntimeOverhead.one_model_extend_forward; SGLang's EAGLE worker does), by head kind.
EXTEND_HEAD_KIND: dict[str, str] = {"eagle": "eagle", "eagle2": "eagle", "eagle3": "eagle3", "mtp": "mtp"}


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
def _step(model: ModelSpec, gpu: GpuSpec, gpus: int, batch: int, tokens: int, context: int, bpp: float,
          kv_dtype: str, overhead: RuntimeOverhead, draft: bool, extra_host: float,
          constants: ModelConstants) -> StepTime:
    # cached per constant set too: ModelConstants is frozen and hashable, so a fit's copies never collide
    return step_time(model, gpu, gpus=gpus, batch=batch, tokens_per_seq=tokens, context_tokens=context,
                     weight_bytes_per_param=bpp, kv_dtype=kv_dtype, overhead=overhead, draft_step=draft,
                     extra_host_ms=extra_host, constants=constants)


@lru_cache(maxsize=4096)
def _head(kind: str, verifier: ModelSpec, gpu: GpuSpec, gpus: int, batch: int, tokens: int, context: int,
          bpp: float, kv_dtype: str, overhead: RuntimeOverhead, constants: ModelConstants,
          heads: int = MEDUSA_DEFAULT_HEADS) -> StepTime:
    return head_step_time(kind, verifier, gpu, gpus=gpus, batch=batch, tokens_per_seq=tokens,  # type: ignore[arg-type]
                          context_tokens=context, weight_bytes_per_param=bpp, kv_dtype=kv_dtype, overhead=overhead,
                          num_heads=heads, constants=constants)


def cycle_cost(
    method: str,
    verifier: ModelSpec,
    gpu: GpuSpec,
    *,
    gpus: int,
    batch: int,
    context_tokens: int,
    weight_bytes_per_param: float,
    overhead: RuntimeOverhead,
    num_draft_tokens: int,
    tree_top_k: int = 1,
    tree_tokens: int | None = None,
    draft: ModelSpec | None = None,
    draft_bytes_per_param: float | None = None,
    kv_dtype: str = "auto",
    variant: str = "",
    verifier_params_b: float | None = None,
    lookahead: tuple[int, int, int] | None = None,
    medusa_heads: int | None = None,
    overlap: bool = False,
    constants: ModelConstants = DEFAULT_CONSTANTS,
) -> CycleCost:
    """Cost of one cycle of ``method`` (see module docstring). ``num_draft_tokens`` is N or the tree depth.

    ``overhead`` is the runtime's row of ``constants.overheads``; ``constants`` also supplies the roofline and
    the model-free lookup costs. ``overlap``: the engine prepares the next cycle on the host while the GPU runs
    this one (``tools/model/overlap.py``), so only the per-cycle host work that outlasts the cycle's GPU time
    (draft + verify) adds to it, plus the per-request share that stays serial.
    """
    c = constants
    n = num_draft_tokens
    if n < 1:
        raise InputError("num_draft_tokens must be >= 1")
    bpp = weight_bytes_per_param
    base = _step(verifier, gpu, gpus, batch, 1, context_tokens, bpp, kv_dtype, overhead, False, 0.0, c)
    is_tree = tree_top_k > 1 and (tree_tokens or 0) > n + 1
    verify_tokens = tree_tokens if is_tree and tree_tokens else n + 1
    draft_step: StepTime | None = None
    draft_ms = 0.0
    steps = 0
    host = 0.0
    if method == "draft_model":
        if draft is None:
            raise InputError("method draft_model needs a draft model")
        draft_step = _step(draft, gpu, gpus, batch, 1, context_tokens, draft_bytes_per_param or bpp, kv_dtype,
                           overhead, True, 0.0, c)
        steps, draft_ms = n, n * draft_step.total_ms
    elif method in ("eagle", "eagle2", "eagle3"):
        kind = "eagle3" if method == "eagle3" else "eagle"
        first = _head(kind, verifier, gpu, gpus, batch, 1, context_tokens, bpp, kv_dtype, overhead, c)
        draft_step = first
        if is_tree:
            wide = _head(kind, verifier, gpu, gpus, batch, tree_top_k, context_tokens, bpp, kv_dtype, overhead, c)
            draft_ms = first.total_ms + (n - 1) * wide.total_ms
        else:
            draft_ms = n * first.total_ms
        steps = n
    elif method in ("dflash", "dspark", "peagle"):
        # DFlash: block [anchor, MASK x N] in one non-causal forward; P-EAGLE: N mask positions in one pass.
        # DSpark: the same 5-layer block backbone over its N-token block (DeepSpec / speculators dspark configs:
        # 5 draft layers; vLLM requires num_speculative_tokens == block_size); its low-rank Markov head then
        # samples the block left to right, a rank-256 projection per token, not counted here.
        layers = PEAGLE_DRAFT_LAYERS if method == "peagle" else DFLASH_DRAFT_LAYERS
        draft_step = _head("eagle3", verifier, gpu, gpus, batch, n + 1 if method == "dflash" else n,
                           context_tokens, bpp, kv_dtype, overhead, c)
        steps, draft_ms = 1, layers * draft_step.total_ms
    elif method == "pard":
        if draft is None:
            raise InputError("method pard needs its PARD draft model")
        # PARD: the draft model's forward over N mask tokens, once per cycle (arXiv 2504.18583).
        draft_step = _step(draft, gpu, gpus, batch, n, context_tokens, draft_bytes_per_param or bpp, kv_dtype,
                           overhead, True, 0.0, c)
        steps, draft_ms = 1, draft_step.total_ms
    elif method == "medusa":
        draft_step = _head("medusa", verifier, gpu, gpus, batch, 1, context_tokens, bpp, kv_dtype, overhead, c,
                           medusa_heads or MEDUSA_DEFAULT_HEADS)
        steps, draft_ms = 1, draft_step.total_ms
    elif method == "mtp":
        draft_step = _head("mtp", verifier, gpu, gpus, batch, 1, context_tokens, bpp, kv_dtype, overhead, c)
        steps, draft_ms = n, n * draft_step.total_ms
    elif method == "lookahead":
        w, ngram, g = lookahead or lookahead_config(verifier_params_b or 7.0, overhead.harness)
        verify_tokens = 1 + (w + g) * (ngram - 1)
    elif method == "ngram":
        host = c.ngram_lookup_ms * batch
    elif method == "suffix":
        if variant == "rest":
            host, verify_tokens = c.rest_lookup_ms * batch, REST_VERIFY_TOKENS
            is_tree = True
        else:
            host = c.suffix_lookup_ms * batch
    else:
        raise InputError(f"unknown method '{method}'")
    verify = _step(verifier, gpu, gpus, batch, verify_tokens, context_tokens, bpp, kv_dtype, overhead, False, 0.0, c)
    tree_like = is_tree or method in ("medusa", "lookahead")
    forwards = steps + 1
    path = execution_path(overhead, method)
    if path == "one_model" and overhead.one_model_extend_forward and method in EXTEND_HEAD_KIND:
        # the engine's extra draft forward over the accepted tokens (at most N+1; graphs pad to it)
        draft_ms += _head(EXTEND_HEAD_KIND[method], verifier, gpu, gpus, batch, n + 1, context_tokens, bpp, kv_dtype, overhead, c).total_ms
        forwards += 1
    over = path_overhead_ms(overhead, path, forwards=forwards, batch=batch, tree=tree_like, moe=verifier.is_moe)
    # "chains only" means top-k 1: a top-4 draft verifying depth + 1 tokens is still no chain to SGLang spec v2
    overlapped = overlap and path != "eager" and not (tree_top_k > 1 and overhead.overlap_chains_only)
    if overlapped:
        # the per-request share that stays serial (RuntimeOverhead.overlap_seq_exposed_fraction, fitted on MoE rows;
        # dense verifiers keep none: overhead.py says why) is paid in full; the rest hides under the cycle's GPU work,
        # and only what outlasts it shows
        share = overhead.overlap_seq_exposed_fraction if verifier.is_moe else 0.0
        seq_exposed = share * per_seq_ms(overhead, verifier.is_moe) * batch
        hidden = over - seq_exposed
        over = max(0.0, hidden - (draft_ms + verify.total_ms)) + seq_exposed + overhead.overlap_exposed_ms
    cycle = draft_ms + verify.total_ms + host + over
    b = base.total_ms
    return CycleCost(
        method=method, base=base, draft_step=draft_step, draft_steps=steps, draft_ms=draft_ms, verify=verify,
        host_lookup_ms=host, overhead_ms=over, forwards=forwards, cycle_ms=cycle,
        # parallel drafters: c is their whole (single) draft forward
        cost_ratio=(draft_ms / b if method in ("dflash", "dspark", "peagle") else draft_step.total_ms / b) if draft_step else 0.0,
        verify_cost=verify.total_ms / b, overhead_cost=(host + over) / b, cycle_cost=cycle / b,
        verify_tokens=verify_tokens, path=path, overlapped=overlapped,
    )

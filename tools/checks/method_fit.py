"""The memory check of one speculative deployment, shared by `speedup`, `vram` and `recommend`.

Each verb used to size memory its own way (weights only, heads left out, a different context); this is
the one place that decides what a method adds to the verifier: a separate draft (its own TP rule and
weight format) or a speculative head (the catalog's ``head_params_b``, sharded like the verifier), and
calls ``fit_specs`` with the deployment's context and concurrency.
"""

from __future__ import annotations

from dataclasses import replace

from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.vram import NO_DRAFT, DraftWeights, KvLoad, VramResult, fit_specs
from specpick.tools.checks.vram import draft_tensor_parallel as vram_draft_tp
from specpick.tools.deployment import Hardware
from specpick.tools.engines.lookup import engine as engine_spec, is_engine, offloads, splits_layers
from specpick.tools.methods import REGISTRY
from specpick.tools.validation import valid_tp_sizes
from specpick.tools.arch.params import count_params
from specpick.tools.checks.offload import GpuBudget
from specpick.tools.checks.offload import host_memory
from specpick.tools.checks.offload import plan_offload
from specpick.tools.arch.kv import KV_DTYPE_BYTES

# The catalog's head method for each strategy that loads a head (EAGLE-2 runs EAGLE-1 heads with a dynamic tree);
# drafters in their own repos are sized as drafters, not heads.
HEAD_METHOD_FOR: dict[str, str] = {r.name: r.head_kind for r in REGISTRY
                                   if r.head_kind is not None and r.loads in ("head_repo", "verifier_layers")}
# Heads whose weights sit in a repository of their own (MTP layers ship inside the verifier and are counted with it).
OWN_REPO_HEADS: frozenset[str] = frozenset(r.name for r in REGISTRY if r.loads == "head_repo")
PUBLISHER_RANK = {"official": 0, "vendor": 1, "community": 2}


def draft_tensor_parallel(draft: ModelSpec, gpus: int, engine: str | None = None) -> int:
    """Draft TP for a draft model spec: the verifier's TP on an engine that runs drafts only there (vLLM V1), else
    the size rule of ``checks/vram.draft_tensor_parallel``. The memory check and the printed config both read it."""
    if is_engine(engine) and engine_spec(engine).draft_tp_is_target:  # type: ignore[arg-type]
        return gpus
    return vram_draft_tp(count_params(draft).total_b, gpus)


def published_head(verifier: ModelSpec, method: str, engine: str | None = None) -> HeadSpec | None:
    """The catalog's head for ``method`` on this exact verifier (official first), loadable by ``engine``."""
    wanted = HEAD_METHOD_FOR.get(method)
    if wanted is None:
        return None
    heads = [h for h in get_catalog().heads_for(verifier.repo_id) if h.method == wanted and h.publisher != "test"
             and (engine is None or engine in h.runtimes)]
    return sorted(heads, key=lambda h: PUBLISHER_RANK.get(h.publisher, 3))[0] if heads else None


def method_fit(verifier: ModelSpec, hw: Hardware, *, method: str, kv: KvLoad, draft: DraftWeights = NO_DRAFT,
               head: HeadSpec | None = None, quantization: str | None = None,
               engine: str | None = None) -> VramResult:
    """Weights + draft/head + KV at ``kv.context_tokens`` x ``kv.concurrency`` for ``method`` (``none``: verifier
    only).

    MTP layers ship inside the verifier's checkpoint (``fit_specs`` counts them with the verifier); other heads
    add the catalog's ``head_params_b`` (``draft.head_params_b`` given: that size, `vram --head-params-b`). An
    unknown head size is left out and said so. The draft is counted in ``draft.quantization`` (its own format) and
    only for method draft_model.
    """
    head_b = head.head_params_b if head is not None and method in OWN_REPO_HEADS else None
    head_b = draft.head_params_b if draft.head_params_b is not None else head_b
    weights = replace(draft, spec=draft.spec if method == "draft_model" else None, head_params_b=head_b)
    fit = fit_specs(verifier, hw, draft=weights, kv=replace(kv, kv_cache_dtype=sizable_kv_dtype(kv.kv_cache_dtype)),
                    quantization=quantization, engine=engine)
    # Unified memory (Apple M-series, Strix Halo, DGX Spark): the GPU's memory is the system RAM, nothing to offload to.
    if offloads(engine) and not fit.fits and not hw.gpu.unified_memory:
        fit = with_offload(fit, verifier, hw, kv)
    if head is not None and head_b is None and method in OWN_REPO_HEADS:
        fit.assumptions.append(unknown_head_line(head, verifier, fit))
    elif head_b is not None and head is not None:
        fit.assumptions.append(f"head weights: {head.head_repo_id} ({head_b:g}B, catalog heads.csv)")
    return fit


# An unknown head's size is bounded by what an EAGLE/DFlash-style head holds: one verifier decoder layer, the fc that
# fuses up to three hidden states (3H x H) and an LM head of its own over the full vocabulary (H x V); heads that
# reuse the verifier's LM head or prune the vocabulary are smaller (EAGLE-3: SafeAILab/EAGLE README).
UNKNOWN_HEAD_NOTE = "size not in the catalog: counted as 0 GiB"


def unknown_head_line(head: HeadSpec, verifier: ModelSpec, fit: VramResult) -> str:
    """Say that a head's weights were left out, with the most they can take per GPU against the headroom."""
    p = count_params(verifier)
    bound_b = p.per_layer_b + 3 * verifier.hidden_size ** 2 / 1e9 + verifier.hidden_size * verifier.vocab_size / 1e9
    per_gpu = bound_b * 2.0 * 1e9 / 2 ** 30 / max(fit.gpus, 1)  # bf16, sharded like the verifier
    covered = "the headroom covers it" if fit.headroom_gib >= per_gpu else "more than the headroom: check it fits"
    return (f"head {head.head_repo_id}: {UNKNOWN_HEAD_NOTE}; one decoder layer + fc + its own LM head is at most "
            f"{bound_b:.2f}B params, {per_gpu:.1f} GiB/GPU in bf16 ({covered})")


def with_offload(fit: VramResult, verifier: ModelSpec, hw: Hardware, kv: KvLoad) -> VramResult:
    """llama.cpp runs what exceeds the GPUs from system RAM: the fit under partial offload, when there is one.

    The KV at the deployment's context and concurrency, the runtime and the draft stay on the GPUs; the layers their
    memory cannot hold go to system RAM (``tools/checks/offload.py``). It fits when those weights fit the RAM left.
    """

    host, host_lines = host_memory(hw.host.memory_gib if hw.host else None,
                                   hw.host.bandwidth_gbps if hw.host else None)
    budget = GpuBudget(fit.usable_gib_per_gpu * fit.gpus, fit.verifier_weights_gib * fit.gpus,
                       (fit.runtime_overhead_gib + fit.kv_gib + fit.draft_weights_gib) * fit.gpus)
    plan = plan_offload(budget, verifier.num_layers, verifier.is_moe, host)
    if plan is None:
        return fit
    plan = plan.model_copy(update={"assumptions": plan.assumptions + host_lines})
    held = kv.concurrency if plan.fits else 0
    return fit.model_copy(update={
        "fits": plan.fits, "offload": plan, "max_concurrency_at_context": held,
        "max_context_at_concurrency": kv.context_tokens if plan.fits else 0,
        "assumptions": fit.assumptions + plan.assumptions + ([
            f"under partial offload the answer holds {kv.concurrency} sequence(s) at {kv.context_tokens} tokens "
            "(the KV sized for them stays on the GPU)"] if plan.fits else [])})


def sizable_kv_dtype(kv_cache_dtype: str | None) -> str:
    """The KV dtype ``fit_specs`` knows; engine spellings outside its table are sized as the default."""

    return kv_cache_dtype if kv_cache_dtype in KV_DTYPE_BYTES else "auto"


def fit_options(verifier: ModelSpec, hw: Hardware, *, method: str, kv: KvLoad, draft: DraftWeights = NO_DRAFT,
                head: HeadSpec | None = None, quantization: str | None = None,
                engine: str | None = None) -> list[str]:
    """What would fit instead of this deployment: fp8 weights on the same GPUs, or the fewest more GPUs.

    Each option is checked with ``method_fit`` at the same context and concurrency; none is applied. A GPU count
    is offered only when it is a tensor-parallel size the verifier's heads accept (``validation.valid_tp_sizes``):
    16x for a 40-head model would be refused by every engine, 40x is the next size that shards it. A model
    without head counts (a Hub config that lacks them) is tried at powers of two. Each option takes the engine's
    own memory reservation and draft TP, and the catalog's head size.
    """
    gpus, gpu = hw.gpus, hw.gpu
    hw = replace(hw, reserve_fraction=None)
    kw = dict(method=method, kv=kv, draft=replace(draft, tp=None, head_params_b=None), head=head, engine=engine)
    out: list[str] = []
    if (quantization or verifier.dtype) in ("bf16", "fp16", "fp32"):
        fp8 = method_fit(verifier, hw, quantization="fp8", **kw)  # type: ignore[arg-type]
        if fp8.max_concurrency_at_context >= 1:
            out.append(f"fp8 weights on the same {gpus}x {gpu.key} (up to {fp8.max_concurrency_at_context} "
                       f"sequences at {kv.context_tokens} tokens)")
    sizes = (valid_tp_sizes(verifier.num_attention_heads, verifier.num_kv_heads) if verifier.num_attention_heads > 0
             else [2, 4, 8, 16, 32, 64])
    for more in sizes:
        if more <= gpus:
            continue
        bigger = method_fit(verifier, replace(hw, gpus=more), quantization=quantization, **kw)  # type: ignore[arg-type]
        if bigger.fits:
            # llama.cpp splits whole layers over its GPUs (--split-mode layer, its default; PCIe suffices).
            split = "layer split, --split-mode layer" if splits_layers(engine) else f"tensor parallel {more}"
            out.append(f"{more}x {gpu.key} ({split}; up to {bigger.max_concurrency_at_context} "
                       f"sequences at {kv.context_tokens} tokens)")
            break
    return out

"""From a ``Deployment`` to the speed model's request and the memory check: one builder each.

The planner (per candidate), `speedup`, and the calibration cases all build ``EstimateRequest`` here, and
`recommend`, `speedup` and `vram` size memory here, so the context, the bytes per parameter of the verifier
and of the draft, the runtime (harness), the overlap setting and the starting draft length are the same
wherever the same deployment is asked about.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.deployment import Deployment, HostRead
from specpick.tools.deploy.evidence import tau_spread
from specpick.tools.methods import is_method, method_record
from specpick.tools.deploy.flag_effects import acceptance_effects
from specpick.tools.deploy.lengths import start_draft_length
from specpick.tools.model.estimate import EstimateRequest, TreeShape
from specpick.tools.model.overhead import ENGINE_TO_HARNESS
from specpick.tools.model.overlap import spec_overlap
from specpick.tools.vocab import BYTES_PER_PARAM
from specpick.tools.checks.method_fit import method_fit
from specpick.tools.checks.vram import DraftWeights
from specpick.tools.checks.vram import KvLoad
from specpick.tools.checks.method_fit import draft_tensor_parallel, fit_options

if TYPE_CHECKING:
    from specpick.tools.checks.vram import VramResult

DEFAULT_HARNESS = "vllm"  # no engine named: the most common open-source serving engine's overheads


def draft_bytes_per_param(dep: Deployment, draft: ModelSpec | None) -> float | None:
    """One precision for a draft in the speed model and the memory check: the user's draft format, else its own."""
    if draft is None:
        return None
    if dep.drafter is not None and dep.drafter.spec is not None and dep.drafter.spec.repo_id == draft.repo_id:
        return dep.drafter.bytes_per_param
    return BYTES_PER_PARAM.get(draft.dtype, 2.0)


def draft_format(dep: Deployment, draft: ModelSpec | None) -> str | None:
    if draft is None:
        return None
    if dep.drafter is not None and dep.drafter.spec is not None and dep.drafter.spec.repo_id == draft.repo_id:
        return dep.drafter.weight_format
    return draft.dtype if draft.dtype in BYTES_PER_PARAM else "bf16"


def harness_for(dep: Deployment, engine: str | None) -> str:
    """The per-cycle overhead set: the user's harness override, else the engine's, else vLLM's."""
    if dep.engine.harness:
        return dep.engine.harness
    return ENGINE_TO_HARNESS.get(engine, engine) if engine else DEFAULT_HARNESS


def estimate_request(dep: Deployment, method: str, *, engine: str | None, draft: ModelSpec | None = None,
                     num_draft_tokens: int | None = None, tree: TreeShape | None = None, batch: int | None = None,
                     measured: bool = False, max_batch: int | None = None, sweep: bool = True,
                     sweep_draft_length: bool = True, notes: tuple[str, ...] = (),
                     fit: VramResult | None = None, head: HeadSpec | None = None) -> EstimateRequest:
    """The speed model's request for ``method`` on ``engine`` in this deployment.

    The user's release and overlap setting describe the engine they named; another engine weighed for them runs
    at its newest release with its defaults. ``measured``: the deployment's measured acceptance is for this method.
    ``fit``: this method's memory check; under llama.cpp's partial offload each verifier forward also reads the
    offloaded layers from system RAM (``tools/checks/offload.py``). ``head``: the published head the method loads;
    the acceptance effects its flags cite are priced in (``tools/deploy/flag_effects.py``).
    """
    harness = harness_for(dep, engine)
    mine = engine is None or engine == dep.engine.name
    overlap = spec_overlap(harness, dep.engine.release if mine else None, method,
                           setting=dep.engine.overlap_setting if mine else "auto")  # type: ignore[arg-type]
    ev = dep.evidence if measured else None
    return EstimateRequest(
        verifier=dep.verifier.spec, gpu=dep.hardware.gpu, method=method, draft=draft, gpus=dep.hardware.gpus,
        workload=dep.workload, temperature=dep.temperature, batch=batch or dep.concurrency,
        num_draft_tokens=num_draft_tokens or start_draft_length(method), tree=tree,
        alpha=ev.alpha if ev else None, tau=ev.tau if ev else None,
        tau_at_draft_tokens=ev.num_draft_tokens if ev and ev.tau is not None and not ev.n_assumed else None,
        tau_by_draft_tokens=ev.tau_by_draft_tokens if ev else (), tau_spread=tau_spread(ev) if ev else None,
        sweep_max_draft_tokens=ev.num_draft_tokens if ev and (ev.per_position or ev.tau_at_n) else None,
        tau_spread_measured=not (ev and ev.spread_from_prior),
        harness=harness, engine=engine,
        context_tokens=dep.context_tokens, weight_bytes_per_param=dep.verifier.bytes_per_param,
        draft_bytes_per_param=draft_bytes_per_param(dep, draft), max_batch=max_batch, sweep=sweep,
        sweep_draft_length=sweep_draft_length, spec_overlap=overlap.overlap,
        acceptance_effects=acceptance_effects(dep, method, head),
        assumptions=tuple(notes) + ((overlap.note,) if overlap.note else ()) + _offload_notes(fit),
        **_host_reads(dep, fit),
    )


def _host_reads(dep: Deployment, fit: VramResult | None) -> dict[str, HostRead | None]:
    """Partial offload: the verifier's share in system RAM with this method, and without speculation (the plain step
    keeps on the GPU the layers a draft displaces)."""
    if fit is None or fit.offload is None or not fit.offload.fits:
        return {}
    plain = memory_fit(dep, "none", engine="llamacpp")
    return {"host_read": fit.offload.host_read(dep.verifier.repo_id),
            "plain_host_read": plain.offload.host_read(dep.verifier.repo_id) if plain.offload is not None else None}


def _offload_notes(fit: VramResult | None) -> tuple[str, ...]:
    if fit is None or fit.offload is None or not fit.offload.fits:
        return ()
    o = fit.offload
    off = o.num_layers - o.layers_on_gpu
    what = ("the routed experts of" if o.moe else "") + f" {off} of {o.num_layers} verifier layers"
    return (f"partial offload:{what} in system RAM ({o.offloaded_weights_gib:.1f} GiB, read at "
            f"{o.host_bandwidth_gbps:g} GB/s); each forward reads them once (MoE: the experts its tokens route to), "
            "so a verify of N+1 tokens costs about what one decode step does",
            *o.assumptions)


def memory_fit(dep: Deployment, method: str, *, engine: str | None, draft: ModelSpec | None = None,
               head: HeadSpec | None = None, concurrency: int | None = None, gpus: int | None = None,
               quantization: str | None = None, head_params_b: float | None = None,
               draft_tp: int | None = None, head_format: str | None = None) -> VramResult:
    """The memory check of ``method`` in this deployment (``none``: the verifier alone), as every verb runs it.

    ``head_params_b``/``head_format``: a head the catalog does not size, as `vram --head-params-b` gives it.
    """
    # a separate draft LM runs at the engine's draft TP, as the launch line prints it
    if draft_tp is None and draft is not None and is_method(method) and method_record(method).loads == "draft_lm":
        draft_tp = draft_tensor_parallel(draft, gpus or dep.hardware.gpus, engine)
    weights = DraftWeights(spec=draft, head_params_b=head_params_b,
                           quantization=draft_format(dep, draft) or head_format, tp=draft_tp)
    return method_fit(dep.verifier.spec, replace(dep.hardware, gpus=gpus or dep.hardware.gpus), method=method,
                      kv=KvLoad(dep.context_tokens, concurrency or dep.concurrency, dep.kv_cache_dtype),
                      draft=weights, head=head, quantization=quantization or dep.verifier.quantization_given,
                      engine=engine)


def fit_alternatives(dep: Deployment, method: str, *, engine: str | None, draft: ModelSpec | None = None,
                     head: HeadSpec | None = None, concurrency: int | None = None) -> list[str]:
    """What would fit instead (fp8 weights, more GPUs), each checked by ``memory_fit``'s rule."""

    return fit_options(dep.verifier.spec, dep.hardware, method=method,
                       kv=KvLoad(dep.context_tokens, concurrency or dep.concurrency, dep.kv_cache_dtype),
                       draft=DraftWeights(spec=draft, quantization=draft_format(dep, draft)), head=head,
                       quantization=dep.verifier.quantization_given, engine=engine)


def with_concurrency(dep: Deployment, concurrency: int) -> Deployment:
    """The same deployment at another concurrency (what fits when the user's does not)."""
    return replace(dep, concurrency=concurrency)


__all__ = ["draft_bytes_per_param", "estimate_request", "fit_alternatives", "harness_for",
           "memory_fit", "with_concurrency"]

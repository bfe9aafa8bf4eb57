"""The one resolver: user input -> ``Deployment`` (names resolved, contradictions refused, every default decided).

`recommend`, `speedup`, `vram` and `engine-config` each turn their input model (its deployment fields declared once,
``tools/deployment_input.py``) into a ``DeploymentQuery`` through the one mapper ``query_from_input`` and call
``resolve_deployment``; nothing after it decides a default. The rules that used to differ per verb live
here once:

- context while decoding: the user's, else the workload's typical length (``tools/model/workload_context``),
  capped by the model's position limit; without a workload (`vram`) ``NO_WORKLOAD_CONTEXT_TOKENS``;
- engine release: the user's, else the newest release the catalog tracks (named in the defaults);
- a draft's weight format: its own (``--draft-quantization``, else its checkpoint's), never the verifier's;
- a draft named or sized by the user, or listed by the catalog, resolved by one query (``tools/deploy/drafts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from specpick.tools.engines.registry import names as engine_names
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.deploy.drafts import find_known_draft, synthetic_draft
from specpick.tools.deploy.measured_file import MeasuredFigures
from specpick.tools.deployment import Deployment, Drafter, EngineChoice, Evidence, Hardware, HostMemory, ServedModel
from specpick.tools.errors import InputError, PickerError
from specpick.tools.model.overlap import overlap_setting_error
from specpick.tools.model.workload_context import typical_context_tokens
from specpick.tools.validation import check_context, check_draft_smaller, check_tensor_parallel
from specpick.tools.vocab import BYTES_PER_PARAM, sampling_from_temperature
from specpick.tools.hub.gguf_ref import is_gguf_name
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.catalog.parallel_drafts import is_pard_repo
from specpick.tools.catalog.parallel_drafts import pard_draft_spec
from specpick.tools.catalog.quant_names import split_quant_name
from specpick.tools.deploy.evidence import build_evidence
from specpick.tools.deploy.evidence import with_spread
from specpick.tools.deploy.requests import estimate_request
from specpick.tools.model.estimate import estimate_for_specs

# `vram` takes no workload: its context default is the one PlannerInputs and VramInput documented (4096).
NO_WORKLOAD_CONTEXT_TOKENS = 4096
# Representative temperatures for the coarse sampling classes (stated when used).
SAMPLING_TEMPERATURE = {"greedy": 0.0, "low-temp": 0.3, "high-temp": 1.0, "beam": 0.0}


@dataclass(frozen=True)
class DeploymentQuery:
    """What the user gave, as every verb's input model spells it; ``given`` names the fields the user set."""

    verifier: str
    base_model: str | None = None  # a derived verifier: the published model its facts come from
    verifier_change: str = "none"  # none, full-finetune, rl, lora, merge
    adapters: int | None = None
    gpu: str = "H100-SXM"
    workload: str | None = None
    gpus: int = 1
    pipeline_parallel: int = 1
    dp_attention: bool = False
    engine: str | None = None
    engine_version: str | None = None
    spec_overlap: str = "auto"
    harness: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    context_tokens: int | None = None
    concurrency: int = 1
    temperature: float | None = None
    sampling: str | None = None
    method: str | None = None
    draft: str | None = None
    draft_params_b: float | None = None
    draft_quantization: str | None = None
    head: str | None = None
    alpha: float | None = None
    tau: float | None = None
    measured_at_draft_tokens: int | None = None  # the N a given alpha/tau was measured at (`speedup`: its N)
    # `recommend`'s evidence inputs (tools/deploy/evidence.py): the N is checked against the method, the prior at
    # that N is recorded (how far it was off) and the range taken from the measurement's spread.
    measured_n_given: bool = False
    measured_method: str | None = None
    measured_speedup: float | None = None
    measurement_file: str | None = None
    compare_prior: bool = False
    measured_figures: MeasuredFigures | None = None  # `recommend --samples`: simulated on the user's pairs
    figures_source: str = ""
    reserve_fraction: float | None = None
    host_memory_gib: float | None = None  # system RAM (llama.cpp partial offload); None: the stated default
    host_bandwidth_gbps: float | None = None
    live: bool = False
    catalog_only: bool = False  # `speedup`/`vram`/`engine-config` answer from the catalog only
    assumed_engine: str | None = None  # no engine named: whose defaults apply (`speedup`/`vram`: vLLM's)
    engine_from_gguf: bool = False  # the engine is llama.cpp because the verifier is a GGUF build named without one
    context_flag: str = "--context"
    gpus_flag: str = "--gpus"
    given: frozenset[str] = field(default_factory=frozenset)
    # The defaults this verb announces (a verb without sampling does not list it); context and engine always.
    announce: frozenset[str] = frozenset({"sampling", "gpu", "gpus", "concurrency"})


_QUERY_FIELDS = tuple(f.name for f in fields(DeploymentQuery) if f.name != "given")


def query_from_input(inp: Any, **verb: Any) -> DeploymentQuery:
    """The one mapper: a verb's input model -> the resolver's query.

    Every field the input model shares with ``DeploymentQuery`` by name (the deployment fields of
    ``tools/deployment_input.py``) is copied; ``given`` is what the user set; ``verb`` holds what only this verb says
    (its catalog-only rule, the engine it assumes, a field it spells another way), and wins.
    """
    own = type(inp).model_fields
    values = {name: getattr(inp, name) for name in _QUERY_FIELDS if name in own}
    values["given"] = frozenset(inp.model_fields_set) | frozenset(verb.pop("also_given", ()))
    values.update(verb)
    return DeploymentQuery(**values)


GGUF_ENGINE_LINE = ("engine = llamacpp (the verifier is a GGUF build, which llama-server loads as named; --engine to "
                    "weigh another engine)")


def engine_for_gguf(verifier: str, engine: str | None, harness: str | None = None) -> str | None:
    """The engine a GGUF build named without ``--engine`` is answered for: llama.cpp, which loads it as named (every
    verb takes this default, listed as ``GGUF_ENGINE_LINE``); None when an engine or harness was given or the name is
    no GGUF build."""
    if engine is not None or harness is not None:
        return None

    return "llamacpp" if is_gguf_name(verifier) else None


def newest_release(engine: str) -> str | None:
    """The newest release the catalog tracks for ``engine`` (``Catalog.newest_release``)."""
    return get_catalog().newest_release(engine)


def release_text(engine: str, version: str | None) -> str:
    """How an answer names the release it assumed."""
    if version:
        return f"{engine} {version}"
    newest = newest_release(engine)
    return f"{engine} {newest} or newer" if newest else f"{engine}, today's build"


def context_rule(given: int | None, workload: str | None, limit: int) -> tuple[int, str | None]:
    """(context tokens, the default line or None): the user's, else typical for the workload capped by the limit."""
    if given is not None:
        return given, None
    typical = typical_context_tokens(workload) if workload else NO_WORKLOAD_CONTEXT_TOKENS
    what = f"typical for {workload}" if workload else "no workload given"
    if 0 < limit < typical:
        return limit, (f"context tokens = {limit} (the model's max_position_embeddings; the default {typical}, "
                       f"{what}, is past it)")
    return typical, (f"context tokens = {typical} ({what}: tokens in the KV cache while decoding; the memory "
                     "check and the speed estimate both use it)")


# 4-bit float formats whose FP4 tensor-core rate (gpus.csv fp4_tflops) the speed model does not use: it costs their
# matmuls at the FP8 rate, and the answer says so.
FP8_COMPUTE_FORMATS = frozenset({"nvfp4"})  # mxfp4 (gpt-oss) too, unsaid as before


def _format(quant: str | None, dtype: str) -> tuple[str, float]:
    fmt = quant or (dtype if dtype in BYTES_PER_PARAM else "bf16")
    return fmt, BYTES_PER_PARAM.get(fmt, 2.0)


def _verifier(q: DeploymentQuery) -> tuple[ModelSpec, str, list[str], str | None, str | None]:
    """The verifier's facts, where they came from, notes, and the weight format its name declares (a GGUF build).

    A derived verifier (``--base-model``) takes the base model's facts: a fine-tune keeps its architecture.
    """
    name = q.base_model or q.verifier
    notes = [f"{q.verifier}: architecture facts from its base model {q.base_model} (your id is the one served)"] \
        if q.base_model else []

    # One name rule for every verb: a GGUF repo id (with :QUANT) or a local .gguf path resolves to its base model
    # and weight format here, whether or not the verb may read the Hub.
    resolved = resolve_model_spec(name, live=q.live and not q.catalog_only, catalog_only=q.catalog_only)
    return (resolved.spec, resolved.source, notes + list(resolved.notes), resolved.quantization,
            q.verifier if q.base_model else resolved.served_as)


def _names_its_format(name: str) -> bool:
    """The name itself states the weight format: a GGUF tag (``-GGUF:Q4_K_M``), a .gguf file (its header), or a
    quantized build's suffix (``-AWQ``, ``-FP8-dynamic``). A GGUF repo named without a tag holds several files, and
    --quantization is how the user says which one they serve."""
    return name.lower().endswith(".gguf") or (":" in name and is_gguf_name(name)) or split_quant_name(name) is not None


def _check(q: DeploymentQuery) -> None:
    if q.adapters is not None and q.verifier_change != "lora":
        raise InputError("--adapters counts LoRA adapters: add --verifier-change lora (or drop --adapters)")
    if q.alpha is not None and q.tau is not None:
        raise InputError("give --alpha or --tau, not both (tau follows from alpha and the draft length)")
    if q.pipeline_parallel > q.gpus or q.gpus % q.pipeline_parallel:
        raise InputError(
            f"--pipeline-parallel {q.pipeline_parallel} does not divide --gpus {q.gpus} (the total GPU count, "
            "tensor x pipeline); give the total GPUs, or fewer pipeline stages")
    if q.engine_version and q.engine is None:
        raise InputError(f"--engine-version {q.engine_version} needs --engine (which engine runs that release?)")
    if q.spec_overlap != "auto" and q.engine is None and q.harness is None:
        raise InputError(f"--spec-overlap {q.spec_overlap} needs --engine (which engine runs it?)")
    bad = overlap_setting_error(q.harness or q.engine or "vllm", q.spec_overlap)  # type: ignore[arg-type]
    if bad:
        raise InputError(bad)
    if q.head and (q.draft or q.draft_params_b is not None):
        raise InputError("give a draft model (--draft) or a speculative head (--head), not both")
    if q.draft and q.draft_params_b is not None:
        raise InputError("give --draft or --draft-params-b, not both")


def _draft_spec(q: DeploymentQuery, verifier: ModelSpec) -> tuple[ModelSpec, str]:
    """The named draft: the catalog's listing for this verifier first (one query for listings and answers)."""

    assert q.draft is not None
    if is_pard_repo(q.draft):
        pard = pard_draft_spec(q.draft)
        if pard is not None:
            return pard, f"PARD draft {pard.repo_id}: {pard.notes or 'catalog row'}"
    listed = find_known_draft(verifier, q.draft)
    if listed is not None:
        return listed.spec, f"draft {listed.repo_id}: {listed.note}"
    if q.catalog_only:
        return get_catalog().model(q.draft), ""

    return resolve_model_spec(q.draft, live=q.live).spec, ""


def _drafter(q: DeploymentQuery, verifier: ModelSpec, verifier_format: str) -> Drafter | None:
    if q.head:
        head = get_catalog().head(q.head)
        if head is None and "/" not in q.head:
            raise InputError(f"--head {q.head!r} is not a published head in the catalog nor a Hub repo id "
                             "(org/name); run `specpick heads` for the list")
        # A head is served in the verifier's weight format unless the user says otherwise (tools/checks/vram.py).
        fmt, bpp = _format(q.draft_quantization, verifier_format)
        return Drafter(repo_id=head.head_repo_id if head else q.head, kind="head", head=head, weight_format=fmt,
                       bytes_per_param=bpp, params_b=head.head_params_b if head else None,
                       note="catalog heads.csv" if head else "Hub repo (not in the catalog)")
    if q.draft_params_b is not None:
        # Checked before the geometry stand-in is built: its own count would hide the size the user gave.
        check_draft_smaller(q.draft_params_b, count_params(verifier).total_b, verifier=verifier.repo_id)
        spec, note = synthetic_draft(q.draft_params_b, verifier)
    elif q.draft:
        spec, note = _draft_spec(q, verifier)
    else:
        return None
    if spec.repo_id.lower() == verifier.repo_id.lower():
        raise InputError("--draft is the verifier itself; a draft must be a smaller model (or use ngram/EAGLE)")
    fmt, bpp = _format(q.draft_quantization, spec.dtype)
    return Drafter(repo_id=spec.repo_id, kind="draft", spec=spec, weight_format=fmt, bytes_per_param=bpp,
                   params_b=count_params(spec).total_b, note=note)


def _sampling(q: DeploymentQuery) -> tuple[str, float, list[str]]:
    if q.temperature is not None:
        implied = sampling_from_temperature(q.temperature)
        if q.sampling is not None and "sampling" in q.given and q.sampling != "beam" and q.sampling != implied:
            raise InputError(f"--sampling {q.sampling} contradicts --temperature {q.temperature:g} (which is "
                             f"{implied}); give one of them")
        return (q.sampling if q.sampling == "beam" else implied), q.temperature, []
    sampling = q.sampling or "greedy"
    temperature = SAMPLING_TEMPERATURE[sampling]
    notes = [f"{sampling} taken as T={temperature:g} (give --temperature to be exact)"] if sampling in (
        "low-temp", "high-temp") else []
    return sampling, temperature, notes


def _engine(q: DeploymentQuery) -> tuple[EngineChoice, str]:
    if q.engine is None and q.assumed_engine:
        line = (f"engine = {q.assumed_engine} assumed (its overheads and memory reservation), release "
                f"{release_text(q.assumed_engine, None)}")
        return EngineChoice(None, None, release_text(q.assumed_engine, None), q.spec_overlap, q.harness), line
    if q.engine is None:
        tracked = ", ".join(release_text(e, None) for e in engine_names() if newest_release(e))
        line = f"engine release = the newest tracked for each engine considered ({tracked}; others: today's build)"
        return EngineChoice(None, None, line.split("= ", 1)[1], q.spec_overlap, q.harness), line
    text = release_text(q.engine, q.engine_version)
    line = "" if q.engine_version else f"engine release = {text} (the newest we track; --engine-version to change)"
    return EngineChoice(q.engine, q.engine_version, text, q.spec_overlap, q.harness), line


def _evidence(q: DeploymentQuery, drafter: Drafter | None) -> Evidence | None:

    return build_evidence(alpha=q.alpha, tau=q.tau, measured_n=q.measured_at_draft_tokens,
                          measured_method=q.measured_method, measured_speedup=q.measured_speedup,
                          measurement_file=q.measurement_file, method=q.method, drafter=drafter,
                          concurrency=q.concurrency, check_n=q.measured_n_given, figures=q.measured_figures,
                          figures_source=q.figures_source)


def _with_prior(dep: Deployment) -> Deployment:
    """The deployment with the prior at the evidence's N recorded, and the evidence's range (never zero width)."""
    ev = dep.evidence
    if ev is None or ev.method is None or ev.tau is None or ev.num_draft_tokens is None:
        return dep

    draft = dep.draft_spec if ev.method == "draft_model" else None
    if ev.method == "draft_model" and draft is None:
        return dep  # which draft was measured is unknown: no prior to compare
    try:
        prior = estimate_for_specs(estimate_request(dep, ev.method, engine=dep.engine.name, draft=draft,
                                                    num_draft_tokens=ev.num_draft_tokens, sweep=False))
    except PickerError:
        return dep  # no prior for this method here (the answer says why when it ranks it)
    return replace(dep, evidence=with_spread(ev, prior.tau, prior.tau_low, prior.tau_high))


def resolve_deployment(q: DeploymentQuery) -> Deployment:
    """Resolve names, refuse contradictions and decide every default (listed in ``Deployment.defaults``).

    Raises:
        InputError: contradictory input, or input the model's facts rule out (TP vs heads, context vs limit).
        NotFoundError: unknown verifier, draft or GPU (close matches listed).
    """
    _check(q)
    verifier, source, notes, declared_format, served_id = _verifier(q)
    # A GGUF build or a quantized build's name says its own weight format: a --quantization that names another one
    # is a contradiction (`-AWQ --quantization bf16` was planned as bf16; `-GGUF:Q4_K_M --quantization fp8` kept
    # Q4_K_M silently; issue 39, cause 12). The same format given twice is fine.
    if q.quantization and declared_format and q.quantization != declared_format and _names_its_format(q.verifier):
        raise InputError(f"--quantization {q.quantization} contradicts {q.verifier}, whose name says its weights are "
                         f"{declared_format}: drop --quantization, or name the build you serve in that format")
    quantization = q.quantization or declared_format
    tp = q.gpus // q.pipeline_parallel
    flag = q.gpus_flag if q.pipeline_parallel == 1 else \
        f"--gpus {q.gpus} / --pipeline-parallel {q.pipeline_parallel} ="
    # llama.cpp splits a model across GPUs by layers (--split-mode layer, its default), not by attention heads: any
    # GPU count holds it. The other engines shard heads (tensor parallel), so the count must divide them.
    if q.engine != "llamacpp":
        check_tensor_parallel(tp, verifier.num_attention_heads, verifier.num_kv_heads, model=verifier.repo_id,
                              flag=flag)
    limit = verifier.max_position_embeddings
    if q.context_tokens is not None:
        check_context(q.context_tokens, limit, model=verifier.repo_id, flag=q.context_flag)
    context, context_line = context_rule(q.context_tokens, q.workload, limit)
    gpu = get_catalog().gpu(q.gpu)
    sampling, temperature, sampling_notes = _sampling(q)
    fmt, bpp = _format(quantization, verifier.dtype)
    if fmt in FP8_COMPUTE_FORMATS:  # the step time's matmul rate is keyed by bytes per weight (tools/model/steptime)
        notes.append(f"{fmt} weights: memory and weight reads at {bpp * 8:g} bits per weight; matmuls costed at the "
                     "GPU's FP8 rate (as for int4 and mxfp4), not an FP4 rate: decode is bound by the reads")
    drafter = _drafter(q, verifier, fmt)
    engine, release_line = _engine(q)
    defaults: list[str] = []
    if "sampling" in q.announce and "sampling" not in q.given and "temperature" not in q.given:
        defaults.append(f"sampling = {sampling}")
    defaults += [f"{name} = {value}" for name, value in (("gpu", q.gpu), ("gpus", q.gpus),
                                                         ("concurrency", q.concurrency))
                 if name not in q.given and name in q.announce]
    defaults += [GGUF_ENGINE_LINE] if q.engine_from_gguf else []
    defaults += [line for line in (context_line, release_line) if line]
    dep = Deployment(
        verifier=ServedModel(verifier, fmt, bpp, quantization, served_id=served_id,
                             change=q.verifier_change,
                             adapters=q.adapters if q.verifier_change == "lora" else None), engine=engine,
        hardware=Hardware(gpu, q.gpus, q.pipeline_parallel, q.dp_attention, q.reserve_fraction,
                          host=HostMemory(q.host_memory_gib, q.host_bandwidth_gbps)),
        workload=q.workload or "", context_tokens=context, concurrency=q.concurrency, temperature=temperature,
        sampling=sampling, kv_cache_dtype=q.kv_cache_dtype or "auto", drafter=drafter, evidence=_evidence(q, drafter),
        defaults=tuple(defaults), notes=tuple(notes + sampling_notes), facts_source=source,
    )
    return _with_prior(dep) if q.compare_prior else dep


__all__ = ["DeploymentQuery", "GGUF_ENGINE_LINE", "context_rule", "query_from_input", "engine_for_gguf", "newest_release", "release_text",
           "resolve_deployment"]

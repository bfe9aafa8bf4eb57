"""`specpick speedup`: expected speedup of one speculative method, with its assumptions stated.

Resolves names through the catalog, checks the inputs for contradictions, picks
the runtime defaults (draft length, tree shape) and calls the model in
``tools/model/estimate.py``. Every number in the result comes with a source or an
assumption in ``assumptions``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from specpick.tools.arch.kv import KV_DTYPE_BYTES
from specpick.tools.calibration.evidence import MeasuredSpeedup, measured_line, measured_speedups, outside_note
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.model.overhead import Harness
from specpick.tools.arch.params import count_params
from specpick.tools.model.prior_rules import TREE_DEFAULTS
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.checks.vram import VramResult
from specpick.tools.deploy.drafts import best_published_head, find_known_draft, known_drafts
from specpick.tools.deploy.lengths import FIXED_DRAFT_LENGTH, start_draft_length
from specpick.tools.deploy.requests import DEFAULT_HARNESS, estimate_request, fit_alternatives, harness_for, memory_fit
from specpick.tools.deploy.evidence import measured_estimate
from specpick.tools.deploy.resolve import DeploymentQuery, engine_for_gguf, query_from_input, resolve_deployment
from specpick.tools.deployment import Deployment
from specpick.tools.deployment_input import (
    Adapters, Alpha, BaseModelName, Change, ConcurrencyOption, Context, DpAttention, EngineOptional, EngineRelease, Gpu,
    Gpus, HostBandwidth, HostMemory, MeasuredMethod, MeasuredN, MeasuredSpeedupOption, Overlap, SamplingTemperature,
    TauMeasured, Verifier, WeightFormat, WorkloadRequired, rename_deprecated,
)
from specpick.tools.model.draftshape import tuned_estimate
from specpick.tools.model.estimate import (
    ENGINE_HARNESSES, TREE_METHODS_WITH_HEADS, EstimateRequest, SpeedupResult, TreeShape,
    estimate_for_specs, validate_acceptance,
)
from specpick.tools.validation import MAX_DRAFT_TOKENS, DraftTokens, ModelName, ParamsB, check_tree_shape
from specpick.tools.catalog.parallel_drafts import is_pard_repo, pard_draft_spec
from specpick.tools.methods import method_record
from specpick.tools.vocab import (
    DRAFT_MODEL_METHODS, MEASURED_TAU_METHODS, Method,
)
from specpick.tools.model.overlap import overlap_setting_error
from specpick.tools.training.fitness import derived_fitness

MAX_TREE_TOP_K = 64
MAX_VERIFY_TOKENS = 1024


class SpeedupAnswer(SpeedupResult):
    """The estimate, with the engine rows measured on this verifier and method beside it (as in `recommend`)."""

    defaults_used: list[str] = Field(default_factory=list, description="inputs that took a stated default, the "
                                     "engine release included (tools/deploy/resolve.py: the same rule as recommend)")

    measured: list[MeasuredSpeedup] = Field(
        default_factory=list, description="engine rows measured on this verifier with this method (other hardware, "
        "releases and loads): the user's engine first, then the nearest batch; tools/data/engine_measurements.csv")


class SpeedupInput(BaseModel):
    """Inputs of `specpick speedup` (field names are the CLI flags).

    Ranges and finiteness come from the shared types in ``tools/validation.py`` (the same for the CLI, the
    Claude tool and MCP); the checks across fields raise ``InputError`` in ``_check``.
    """

    model_config = ConfigDict(extra="forbid")

    verifier: Verifier
    base_model: BaseModelName
    verifier_change: Change
    adapters: Adapters
    method: Method = Field(description="speculative method")
    draft: ModelName | None = Field(None, description="draft model (method draft_model only); default: the "
                                    "catalog's known same-family draft")
    draft_params_b: ParamsB | None = Field(None, description="draft size in billions, if the draft is not in the "
                                           "catalog (method draft_model only; smaller than the verifier)")
    gpu: Gpu
    gpus: Gpus
    workload: WorkloadRequired
    temperature: SamplingTemperature
    concurrency: ConcurrencyOption
    num_draft_tokens: DraftTokens | None = Field(None, description="draft length N (tree methods: depth); default: "
                                                 "the best N of a sweep")
    alpha: Alpha
    tau: TauMeasured
    measured_n: MeasuredN
    measured_method: MeasuredMethod
    measured_speedup: MeasuredSpeedupOption
    engine: EngineOptional
    engine_version: EngineRelease
    spec_overlap: Overlap
    harness: Harness | None = Field(None, description="override the runtime overhead set: paper = the papers' "
                                    "eager PyTorch harnesses, compiled = gpt-fast/XLA")
    context_tokens: Context
    quantization: WeightFormat
    kv_cache_dtype: str = Field("auto", description="KV cache dtype for the memory check: auto (bf16/fp16), fp8")
    dp_attention: DpAttention
    host_memory_gib: HostMemory
    host_bandwidth_gbps: HostBandwidth
    tree_depth: DraftTokens | None = Field(None, description="tree methods: draft depth (same as "
                                           "--num-draft-tokens)")
    tree_top_k: Annotated[int, Field(ge=1, le=MAX_TREE_TOP_K)] | None = Field(
        None, description="tree methods: branching per depth (1 = chain)")
    num_verify_tokens: Annotated[int, Field(ge=2, le=MAX_VERIFY_TOKENS)] | None = Field(
        None, description="tree methods: tokens verified per cycle (budget): between depth+1 and the full tree "
        "1 + top_k + ... + top_k^depth")

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: object) -> object:
        return rename_deprecated(data)  # `batch` (Claude/MCP callers) -> concurrency, with a notice

    @model_validator(mode="after")
    def _check(self) -> SpeedupInput:
        overlap_bad = overlap_setting_error(self.harness or self.engine or DEFAULT_HARNESS, self.spec_overlap)
        checks: list[tuple[bool, str]] = [
            ((self.draft or self.draft_params_b) is not None and self.method not in DRAFT_MODEL_METHODS,
             f"--draft/--draft-params-b only apply to method draft_model or pard, not {self.method}"),
            (self.draft is not None and self.draft_params_b is not None,
             "give --draft or --draft-params-b, not both"),
            (any(v is not None for v in (self.tree_depth, self.tree_top_k, self.num_verify_tokens))
             and self.method not in TREE_METHODS_WITH_HEADS,
             f"tree options apply to eagle, eagle2, eagle3 and medusa, not {self.method}"),
            (self.tree_depth is not None and self.num_draft_tokens is not None
             and self.tree_depth != self.num_draft_tokens,
             "--tree-depth and --num-draft-tokens both set the depth and disagree"),
            (self.kv_cache_dtype not in KV_DTYPE_BYTES,
             f"--kv-cache-dtype must be one of {', '.join(KV_DTYPE_BYTES)}, got {self.kv_cache_dtype}"),
            (self.engine == "transformers" and self.concurrency > 1,
             "transformers assisted generation runs batch 1 only; use --concurrency 1 or a serving engine"),
            (self.measured_method is not None and self.measured_method != self.method,
             f"speedup estimates {self.method}: --measured-method {self.measured_method} describes another drafter "
             f"(use `specpick recommend` to weigh both, or drop --measured-method)"),
            (overlap_bad is not None, overlap_bad or ""),
            (self.engine_version is not None and self.harness is not None and self.harness not in ENGINE_HARNESSES,
             f"--engine-version sets a serving engine's defaults; harness {self.harness} has none"),
            (self.engine_version is not None and self.engine is None,
             f"--engine-version {self.engine_version} needs --engine (which engine runs that release?)"),
        ]
        for bad, message in checks:
            if bad:
                raise InputError(message)
        n = self.num_draft_tokens or self.tree_depth
        validate_acceptance(self.alpha, self.tau, n or MAX_DRAFT_TOKENS, self.method in MEASURED_TAU_METHODS)
        return self


def _default_draft(inp: SpeedupInput, verifier: ModelSpec, notes: list[str]) -> ModelSpec:
    """No --draft: the first draft the catalog lists for this verifier (the listing `heads`/`model` show)."""
    if inp.method == "pard":
        name = next((d.repo_id for d in known_drafts(verifier) if is_pard_repo(d.repo_id)), None)
        if name is None:
            raise InputError(f"no known PARD draft for {verifier.repo_id}; pass one with --draft (e.g. amd/PARD-...)")
        draft = pard_draft_spec(name)
        assert draft is not None  # known_drafts lists only drafts it could size
        notes.append(f"PARD draft {draft.repo_id}: {draft.notes or 'catalog row'}")
        return draft
    engine = _draft_engine(inp)
    usable = [d for d in known_drafts(verifier) if not d.incompatible and not is_pard_repo(d.repo_id)]
    known = [d for d in usable if d.runs_on(engine)]
    if usable and not known:
        raise InputError(f"no known draft for {verifier.repo_id} loads in {engine}: {usable[0].refusal(engine)}; "
                         f"pass --engine {usable[0].runtimes[0]}, or a draft with --draft / --draft-params-b")
    if not known:
        raise InputError(f"no known draft for {verifier.repo_id} in the catalog; pass --draft or --draft-params-b")
    relation = f" ({known[0].relation} tokenizer)" if known[0].relation else ""
    notes.append(f"draft not given: the catalog's known {verifier.family} draft {known[0].repo_id}{relation}"
                 + ("" if known[0].note == "catalog row" else f"; {known[0].note}"))
    return known[0].spec


def _draft_engine(inp: SpeedupInput) -> str | None:
    """The engine that must load the draft: the user's, else vLLM whose overheads are assumed (a papers' harness
    override loads nothing)."""
    return inp.engine or (None if inp.harness else DEFAULT_HARNESS)


def _resolve_draft(inp: SpeedupInput, dep: Deployment, notes: list[str]) -> ModelSpec | None:
    """The deployment's draft (named or sized by the user), else the catalog's default for the method."""
    if inp.method not in DRAFT_MODEL_METHODS:
        return None
    verifier = dep.verifier.spec
    if inp.method == "pard" and inp.draft_params_b is not None:
        raise InputError("--draft-params-b does not apply to pard: pass the PARD draft repo with --draft")
    if inp.method == "pard" and inp.draft and pard_draft_spec(inp.draft) is None:
        raise InputError(f"{inp.draft} is not a PARD draft we can size (its base model is not in the catalog); "
                         "PARD drafts are named amd/PARD-<base>")
    draft = dep.draft_spec
    if draft is None:
        draft = _default_draft(inp, verifier, notes)
    elif dep.drafter is not None and dep.drafter.note:
        notes.append(dep.drafter.note)
    if draft.repo_id == verifier.repo_id:
        raise InputError("the draft is the verifier itself: choose a smaller draft model")
    listed = find_known_draft(verifier, draft.repo_id)
    engine = _draft_engine(inp)
    if listed is not None and engine is not None and not listed.runs_on(engine):
        raise InputError(f"{listed.refusal(engine)}; pass --engine {listed.runtimes[0]} or another draft")
    vp, dp = count_params(verifier).total_b, count_params(draft).total_b
    if dp >= vp and inp.draft_params_b is None:
        raise InputError(f"draft ({dp:.2f}B) is not smaller than the verifier ({vp:.2f}B): it cannot pay")
    return draft


def _user_tree(inp: SpeedupInput, harness: str) -> TreeShape | None:
    """The tree the user fixed with --tree-top-k / --num-verify-tokens (None: the shared tree rule decides)."""
    if inp.method not in TREE_METHODS_WITH_HEADS or (inp.tree_top_k is None and inp.num_verify_tokens is None):
        return None
    d = inp.tree_depth or inp.num_draft_tokens or TREE_DEFAULTS[inp.method if inp.method in TREE_DEFAULTS
                                                                else "eagle2"][0]
    k = inp.tree_top_k or (10 if harness == "paper" else 4)
    budget = inp.num_verify_tokens or min(d * k + 1, 64)
    check_tree_shape(d, k, budget)
    return TreeShape(depth=d, top_k=k, num_verify_tokens=max(budget, 2))


def _check_support(inp: SpeedupInput, verifier: ModelSpec) -> None:
    if inp.engine:
        s = get_catalog().support(inp.engine, inp.method, inp.engine_version)
        if s is not None and not s.runs_at(inp.engine_version):
            at = f" {inp.engine_version}" if inp.engine_version else ""
            why = s.notes or s.source if s.support == "no" else f"from {s.min_version} on"
            raise InputError(f"{inp.engine}{at} does not run method {inp.method} ({why}); "
                             "pick another engine, release or method")
    if method_record(inp.method).in_verifier_checkpoint and verifier.mtp_layers == 0:
        raise InputError(f"{verifier.repo_id} has no multi-token-prediction layers; choose another method")


def _check_fit(inp: SpeedupInput, dep: Deployment, draft: ModelSpec | None, notes: list[str],
               head: HeadSpec | None) -> VramResult:
    """The same memory check `vram` and `recommend` run: weights + draft/head + KV at context x batch.

    Raises:
        InputError: the deployment does not fit (the verdict and what would fit, exit 2).
    """
    fit = memory_fit(dep, inp.method, engine=inp.engine, draft=draft, head=head)
    if not fit.fits:
        options = fit_alternatives(dep, inp.method, engine=inp.engine, draft=draft, head=head)
        raise InputError(f"memory: {fit.verdict_line()}; " + (f"would fit: {'; or '.join(options)}"
                                                               if options else "lower --concurrency or --context")
                         + " (`specpick vram` shows the budget)")
    notes.append(f"memory: {fit.verdict_line()} ({fit.reservation})")
    return fit


def _evidence_given(inp: SpeedupInput) -> bool:
    """The user said where their acceptance was measured (N, speedup or drafter): recommend's evidence rules apply."""
    return bool({"measured_n", "measured_speedup", "measured_method"} & inp.model_fields_set)


def deployment_query(inp: SpeedupInput) -> DeploymentQuery:
    """The deployment `speedup` asks about, in the resolver's terms (the one mapper, shared with every verb).

    A --tau/--alpha without --measured-n was measured at the N asked (the estimate's own); with it, at that N, and
    the model carries it to the N asked as `recommend` does (the prior at the measured N recorded).
    """
    measured_n = inp.measured_n if inp.measured_n is not None else inp.tree_depth or inp.num_draft_tokens
    evidence_given = _evidence_given(inp)
    return query_from_input(
        inp, measured_at_draft_tokens=measured_n, measured_n_given=inp.measured_n is not None,
        measured_method=inp.method if evidence_given else None, compare_prior=evidence_given,
        catalog_only=True, assumed_engine=None if inp.harness else DEFAULT_HARNESS, also_given={"sampling"},
        announce=frozenset({"gpu", "gpus", "concurrency"}),
    )


def _derived_notes(inp: SpeedupInput, dep) -> list[str]:  # type: ignore[no-untyped-def]
    """A derived verifier: the facts are the base's, and a head's acceptance prior is the base pair's."""
    v = dep.verifier
    if v.change == "none":
        return []

    notes = [f"{v.served_repo_id} is {v.change} from {v.repo_id}: architecture facts from {v.repo_id}"]
    if method_record(inp.method).loads in ("head_repo", "drafter_repo", "verifier_layers") and inp.tau is None \
            and inp.alpha is None:
        heads = [h.head_repo_id for h in get_catalog().heads_for(v.repo_id) if h.method == inp.method]
        fit = derived_fitness(heads[0] if heads else f"<your {inp.method} head>", v.repo_id, v.served_repo_id,
                              v.change, v.adapters)
        if fit is not None:
            notes.append(f"the acceptance prior is the base pair's; on your verifier: {fit.effect}. "
                         f"{fit.action} ({', '.join(fit.evidence)}); give --tau from a measurement")
    return notes


def estimate_speedup(inp: SpeedupInput) -> SpeedupAnswer:
    """Expected speedup of ``inp.method`` for the named verifier, GPU and workload.

    Raises:
        NotFoundError: unknown verifier, draft or GPU.
        InputError: contradictory or out-of-range inputs, or no acceptance to go on.
    """
    gguf_engine = engine_for_gguf(inp.verifier, inp.engine, inp.harness)
    if gguf_engine is not None:  # a GGUF build named without --engine: answered for llama.cpp, as every verb does
        inp = inp.model_copy(update={"engine": gguf_engine})
    dep = resolve_deployment(replace(deployment_query(inp), engine_from_gguf=gguf_engine is not None))
    verifier, gpu = dep.verifier.spec, dep.hardware.gpu
    _check_support(inp, verifier)
    notes: list[str] = [f"verifier: {verifier.repo_id} ({verifier.source.split(';')[0][:120]})",
                        f"GPU: {gpu.name}, {gpu.bandwidth_gbps:g} GB/s ({gpu.source[:100]})"]
    notes += [f"default: {d}" for d in dep.defaults]
    notes += _derived_notes(inp, dep)
    draft = _resolve_draft(inp, dep, notes)
    # How the verifier's name resolved (a GGUF build: its base model and weight format); a derived verifier's own
    # lines (above) say it instead.
    notes += [] if inp.base_model else list(dep.notes)
    head = best_published_head(dep.verifier.repo_id, inp.method, inp.engine)  # the head recommend would take
    fit = _check_fit(inp, dep, draft, notes, head)
    n = inp.tree_depth or inp.num_draft_tokens
    start = n or start_draft_length(inp.method)
    if inp.tau is not None and inp.method not in MEASURED_TAU_METHODS and inp.tau > start + 1:
        raise InputError(f"--tau {inp.tau} is impossible with {start} draft tokens (at most {start + 1} per cycle)")
    req = estimate_request(dep, inp.method, engine=inp.engine, draft=draft, num_draft_tokens=n, measured=True,
                           max_batch=fit.max_concurrency_at_context, notes=tuple(notes), fit=fit, head=head)
    harness = harness_for(dep, inp.engine)
    def run(r: EstimateRequest) -> SpeedupResult:
        return tuned_estimate(r, num_draft_tokens=n or FIXED_DRAFT_LENGTH.get(inp.method), tree=_user_tree(inp, harness))

    # With --measured-n / --measured-speedup the evidence is recommend's: carried from its N, range from its spread,
    # cost side recalibrated to the measured speedup (tools/deploy/evidence.py).
    result = measured_estimate(req, dep.evidence, run) if dep.evidence is not None and _evidence_given(inp) \
        else run(req)
    measured = measured_speedups(verifier.repo_id, inp.method, engine=inp.engine, batch=inp.concurrency)
    outside = outside_note(measured, inp.engine, result.low, result.high, inp.concurrency) if inp.engine else None
    return SpeedupAnswer(**result.model_dump(exclude={"assumptions"}),
                         assumptions=result.assumptions + ([outside] if outside else []), measured=measured,
                         defaults_used=list(dep.defaults))


__all__ = ["EstimateRequest", "SpeedupAnswer", "SpeedupInput", "SpeedupResult", "estimate_for_specs",
           "estimate_speedup", "render_text"]


def render_text(result: SpeedupAnswer) -> str:
    """A few lines: the estimate, acceptance, costs, sweeps and the stated assumptions."""
    r = result
    shape = f"N={r.num_draft_tokens}"
    if r.tree is not None:
        shape = f"tree depth {r.tree.depth}, top-{r.tree.top_k}, {r.tree.num_verify_tokens} verify tokens"
    who = f"{r.method}" + (f" (draft {r.draft})" if r.draft else "")
    out = [
        f"{who} on {r.verifier}, {r.gpus}x {r.gpu}, {r.workload}, T={r.temperature:g}, batch {r.batch}, "
        f"{r.engine or r.harness} overheads",
        f"  speedup      {r.speedup:.2f}x   (range {r.low:.2f}-{r.high:.2f}x)   {shape}",
        f"  acceptance   tau {r.tau:.2f} (range {r.tau_low:.2f}-{r.tau_high:.2f})"
        + (f", alpha {r.alpha:.3f}" if r.alpha is not None else "") + f"  <- {r.acceptance_source}",
        f"  cycle cost   k {r.cycle_cost:.3f} = draft {r.cost_ratio:.3f} x steps + verify {r.verify_cost:.3f}"
        f" + overhead {r.engine_overhead:.3f}   (plain step {r.base_step.total_ms:.2f} ms, "
        f"{r.base_step.bound}-bound)",
    ]
    if r.draft_sweep:
        pts = "  ".join(f"{p.num_draft_tokens}:{p.speedup:.2f}" for p in r.draft_sweep)
        out.append(f"  draft length {r.draft_length_rule}   (N:speedup {pts})")
    if r.batch_sweep:
        shown = (1, 4, 16, 32, 64, 128, 256, 512, r.batch, r.max_batch)
        pts = "  ".join(f"{p.batch}:{p.speedup:.2f}" for p in r.batch_sweep if p.batch in shown)
        top = r.batch_sweep[-1].batch
        cap = f" (memory holds {r.max_batch} sequences at {r.context_tokens} tokens)" if r.max_batch else ""
        first_pay = next((p.batch for p in r.batch_sweep if p.speedup >= 1.0), None)
        if first_pay is None:
            be = f"does not pay at any swept concurrency up to {top}{cap}"
        else:
            start = f"pays from batch {first_pay}" if first_pay > r.batch_sweep[0].batch else "pays from batch 1"
            be = (f"{start}, stops paying above ~{r.break_even_concurrency}" if r.break_even_concurrency else
                  f"{start} up to {top}{cap}")
        out.append(f"  concurrency  {be}   (batch:speedup {pts})")
    if r.measured:
        out.append("  measured elsewhere (engine rows on this verifier and method; not your deployment):")
        out += [f"    - {measured_line(m)}" for m in r.measured]
    out.append("  assumptions:")
    out += [f"    - {a}" for a in r.assumptions]
    if r.defaults_used:
        out.append("  defaults used: " + "; ".join(r.defaults_used))
    return "\n".join(out)

"""Planner step 1: resolve names to facts, settle sampling, record defaults, reject contradictions.

Everything the planner decides later works on a ``PlanContext``; building it
is where bad or contradictory input becomes a one-line ``InputError`` (exit 2)
before any estimate runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.model.overlap import overlap_setting_error
from specpick.tools.catalog.parallel_drafts import is_pard_repo, pard_draft_spec
from specpick.tools.hub.resolve import ResolvedModel, resolve_model_spec
from specpick.tools.catalog.specs import GpuSpec, HeadSpec, ModelSpec
from specpick.tools.validation import check_context, check_tensor_parallel
from specpick.tools.vocab import sampling_from_temperature

if TYPE_CHECKING:
    from specpick.tools.checks.heads import HeadCheck

# Representative temperatures for the coarse sampling classes (stated when used).
SAMPLING_TEMPERATURE = {"greedy": 0.0, "low-temp": 0.3, "high-temp": 1.0, "beam": 0.0}
# A measured alpha/tau given without naming its method describes this verifier and workload for the
# model-based drafters; copy-based methods keep their priors (their acceptance is about input overlap).
MODEL_BASED_MEASURED = "<model-based>"
# Fields whose defaults we announce ("Defaults used: ...") when the user did not set them. Not "engine": left
# out, the planner picks the engine per method (candidates.pick_engine), so its default value is never used.
ANNOUNCED_DEFAULTS = ("sampling", "gpu", "gpus", "can_finetune", "second_model", "latency", "concurrency",
                      "context_tokens")


@dataclass
class PlanContext:
    """Resolved inputs the planner works on."""

    inp: PlannerInputs
    verifier: ModelSpec
    gpu: GpuSpec
    temperature: float
    sampling: str
    engine_explicit: bool
    facts_source: str
    draft: ModelSpec | None = None
    head: HeadSpec | None = None
    head_repo: str | None = None
    defaults_used: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gpus: int = 1
    # Which method a user-measured alpha/tau belongs to (None: applied to every method).
    measured_method: str | None = None
    head_check: HeadCheck | None = None  # for a --head outside the catalog
    # The one context length of this answer: the memory check and the speed estimate both use it.
    context_tokens: int = 4096
    # Concurrency the answer is computed at: the user's, or what fits on their GPUs if that is less (stated).
    concurrency: int = 1
    # Not even one sequence fits on the user's GPUs at this context: nothing to plan (a blocker).
    nothing_fits: bool = False


def _settle_sampling(inp: PlannerInputs, given: set[str]) -> tuple[str, float, list[str]]:
    notes: list[str] = []
    if "temperature" in given and inp.temperature is not None:
        implied = sampling_from_temperature(inp.temperature)
        if "sampling" in given and inp.sampling != "beam" and inp.sampling != implied:
            raise InputError(
                f"--sampling {inp.sampling} contradicts --temperature {inp.temperature:g} (which is {implied}); "
                "give one of them"
            )
        return (inp.sampling if inp.sampling == "beam" else implied), inp.temperature, notes
    temperature = SAMPLING_TEMPERATURE[inp.sampling]
    if inp.sampling in ("low-temp", "high-temp"):
        notes.append(f"{inp.sampling} taken as T={temperature:g} (give --temperature to be exact)")
    return inp.sampling, temperature, notes


def _check_contradictions(inp: PlannerInputs) -> None:
    if inp.draft and not inp.second_model:
        raise InputError(
            f"--draft {inp.draft} contradicts --no-second-model (a draft model is a second model); drop one of them"
        )
    if inp.alpha is not None and inp.tau is not None:
        raise InputError("give --alpha or --tau, not both (tau follows from alpha and the draft length)")
    if inp.method == "draft_model" and not inp.second_model:
        raise InputError("--method draft_model needs a second model, but --no-second-model was given; "
                         "drop --no-second-model or pick a method without a draft model (eagle3, ngram, ...)")
    if inp.pipeline_parallel > inp.gpus or inp.gpus % inp.pipeline_parallel:
        raise InputError(
            f"--pipeline-parallel {inp.pipeline_parallel} does not divide --gpus {inp.gpus} (the total GPU count, "
            "tensor x pipeline); give the total GPUs, or fewer pipeline stages"
        )
    if inp.engine_version and "engine" not in inp.model_fields_set:
        raise InputError(f"--engine-version {inp.engine_version} needs --engine (which engine runs that release?)")
    # The overlap setting describes the engine the user runs: without --engine the planner weighs several engines
    # and the setting would apply to none of them (a silently ignored input).
    if inp.spec_overlap != "auto" and "engine" not in inp.model_fields_set:
        raise InputError(f"--spec-overlap {inp.spec_overlap} needs --engine (which engine runs it?)")
    overlap_bad = overlap_setting_error(inp.engine, inp.spec_overlap)
    if overlap_bad:
        raise InputError(overlap_bad)
    if inp.head and inp.draft:
        raise InputError("give a draft model (--draft) or a speculative head (--head), not both")


def _check_against_model(inp: PlannerInputs, verifier: ModelSpec) -> None:
    """Tensor parallel vs the heads, context vs the position limit: what the engine itself would refuse."""
    tp = inp.gpus // inp.pipeline_parallel
    flag = "--gpus" if inp.pipeline_parallel == 1 else f"--gpus {inp.gpus} / --pipeline-parallel {inp.pipeline_parallel} ="
    check_tensor_parallel(tp, verifier.num_attention_heads, verifier.num_kv_heads, model=verifier.repo_id, flag=flag)
    check_context(inp.context_tokens, verifier.max_position_embeddings, model=verifier.repo_id)


def _resolve_head(inp: PlannerInputs, verifier: ModelSpec) -> tuple[HeadSpec | None, str | None]:
    if not inp.head:
        return None, None
    head = get_catalog().head(inp.head)
    if head is None and "/" not in inp.head:
        raise InputError(f"--head {inp.head!r} is not a published head in the catalog nor a Hub repo id "
                         "(org/name); run `specpick heads` for the list")
    return head, head.head_repo_id if head else inp.head


def build_context(inp: PlannerInputs) -> PlanContext:
    """Resolve and validate the planner inputs.

    Raises:
        InputError: contradictory inputs or a method the budget rules out.
        NotFoundError: unknown model or GPU (close matches listed).
    """
    given = set(inp.model_fields_set)
    _check_contradictions(inp)
    resolved: ResolvedModel = resolve_model_spec(inp.verifier, live=inp.live)
    verifier = resolved.spec
    if resolved.quantization and "quantization" not in given:  # a GGUF build says its own weight format
        inp = inp.model_copy(update={"quantization": resolved.quantization})
    limit = verifier.max_position_embeddings
    capped_context = "context_tokens" not in given and 0 < limit < inp.context_tokens
    if capped_context:
        # The stated default (4096) is past this model's positions (Vicuna: 2048): plan at the model's limit.
        inp = inp.model_copy(update={"context_tokens": limit})
        given.add("context_tokens")
    _check_against_model(inp, verifier)
    gpu = get_catalog().gpu(inp.gpu)
    sampling, temperature, notes = _settle_sampling(inp, given)
    notes += resolved.notes
    # A PARD draft keeps its base model's architecture: the catalog answers for it offline.
    draft = (pard_draft_spec(inp.draft) if inp.draft and is_pard_repo(inp.draft) else None) or (
        resolve_model_spec(inp.draft, live=inp.live).spec if inp.draft else None)
    if draft is not None and draft.repo_id == verifier.repo_id:
        raise InputError("--draft is the verifier itself; a draft must be a smaller model (or use ngram/EAGLE)")
    head, head_repo = _resolve_head(inp, verifier)
    head_check = None
    if head is None and head_repo:
        # A head outside the catalog is read from the Hub (cache, then catalog fallbacks): its config says
        # which verifier and hidden size it was trained for.
        from specpick.tools.checks.heads import check_head

        head_check = check_head(head_repo, verifier.repo_id, live=True)
        notes.append(f"--head {head_repo}: {head_check.summary} (facts from {head_check.source})")
    from specpick.tools.model.workload_context import typical_context_tokens

    # One context for the whole answer: the user's, else the workload's typical length (stated once, below).
    context_tokens = inp.context_tokens if "context_tokens" in given else typical_context_tokens(inp.workload)
    defaults = []
    for name in ANNOUNCED_DEFAULTS:
        if name not in given and not (name == "sampling" and "temperature" in given):
            value = context_tokens if name == "context_tokens" else getattr(inp, name)
            if name == "context_tokens":
                defaults.append(f"context tokens = {value} (typical for {inp.workload}: tokens in the KV cache "
                                "while decoding; the memory check and the speed estimate both use it)")
                continue
            shown = {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value
            defaults.append(f"{name.replace('_', ' ')} = {shown}")
    if capped_context:
        defaults.append(f"context tokens = {limit} (the model's max_position_embeddings; the usual default "
                        f"{PlannerInputs.model_fields['context_tokens'].default} is past it)")
    measured = None
    if inp.alpha is not None or inp.tau is not None:
        head_method = {"eagle": "eagle", "eagle3": "eagle3", "medusa": "medusa", "mtp": "mtp"}
        measured = inp.method or ("draft_model" if draft else head_method.get(head.method) if head else None)
        what = f"alpha={inp.alpha:g}" if inp.alpha is not None else f"tau={inp.tau:g}"
        notes.append(f"measured {what} applied to {measured}; other methods use published priors" if measured else
                     f"measured {what} applied to the model-based drafters that propose one token per forward "
                     "(draft model, EAGLE, Medusa, MTP); parallel drafters (PARD, P-EAGLE, DFlash: a whole block per "
                     "forward) and copy-based methods (n-gram, suffix, lookahead) keep their priors, as their "
                     "acceptance is not a per-token figure of this kind (name the measured method with --method)")
    ctx = PlanContext(
        inp=inp, verifier=verifier, gpu=gpu, temperature=temperature, sampling=sampling,
        engine_explicit="engine" in given, facts_source=resolved.source, draft=draft, head=head,
        head_repo=head_repo, defaults_used=defaults, notes=notes, gpus=inp.gpus, measured_method=measured,
        head_check=head_check, context_tokens=context_tokens, concurrency=inp.concurrency,
    )
    if ctx.measured_method is None and (inp.alpha is not None or inp.tau is not None):
        ctx.measured_method = MODEL_BASED_MEASURED
    return ctx

"""Planner step 1: resolve names to facts, settle sampling, record defaults, reject contradictions.

Everything the planner decides later works on a ``PlanContext``; building it
is where bad or contradictory input becomes a one-line ``InputError`` (exit 2)
before any estimate runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.specs import GpuSpec, HeadSpec, ModelSpec
from specpick.tools.deploy.resolve import DeploymentQuery, engine_for_gguf, query_from_input, resolve_deployment
from specpick.tools.deployment import Deployment
from specpick.tools.errors import InputError
from specpick.tools.deploy.requests import DEFAULT_HARNESS

if TYPE_CHECKING:
    from specpick.tools.checks.heads import HeadCheck

# A measured alpha/tau given without naming its method describes this verifier and workload for the
# model-based drafters; copy-based methods keep their priors (their acceptance is about input overlap).
MODEL_BASED_MEASURED = "<model-based>"
# Planner budget fields whose defaults we announce too ("Defaults used: ..."); the deployment's own defaults
# (sampling, GPU, concurrency, context, engine release) come from the resolver. Not "engine": left out, the
# planner picks the engine per method (candidates.pick_engine), each at its newest tracked release (stated).
BUDGET_DEFAULTS = ("can_finetune", "second_model", "latency")


@dataclass(frozen=True)
class PlanContext:
    """The resolved deployment plus the planner's budget inputs; steps read it and return values."""

    inp: PlannerInputs
    dep: Deployment
    engine_explicit: bool
    head_repo: str | None = None
    head_check: HeadCheck | None = None  # for a --head outside the catalog
    # Which method a user-measured alpha/tau belongs to (None: no measurement; MODEL_BASED_MEASURED: every
    # one-token-per-forward model-based drafter).
    measured_method: str | None = None
    # Not even one sequence fits on the user's GPUs at this context: nothing to plan (a blocker).
    nothing_fits: bool = False

    # Read-only views of the deployment, under the names the planner steps use.
    @property
    def engine(self) -> str | None:
        """The engine the user named (or a GGUF build implies); None: the planner picks one per method."""
        return self.dep.engine.name

    @property
    def home_engine(self) -> str:
        """The engine ties go to and "speculation off" is stated for: the user's, else vLLM (the assumed engine
        `speedup` and `vram` take too, ``tools/deploy/requests.DEFAULT_HARNESS``)."""

        return self.dep.engine.name or DEFAULT_HARNESS

    @property
    def verifier(self) -> ModelSpec:
        return self.dep.verifier.spec

    @property
    def gpu(self) -> GpuSpec:
        return self.dep.hardware.gpu

    @property
    def gpus(self) -> int:
        return self.dep.hardware.gpus

    @property
    def temperature(self) -> float:
        return self.dep.temperature

    @property
    def sampling(self) -> str:
        return self.dep.sampling

    @property
    def draft(self) -> ModelSpec | None:
        return self.dep.draft_spec

    @property
    def head(self) -> HeadSpec | None:
        return self.dep.head

    @property
    def context_tokens(self) -> int:
        """The one context length of this answer: the memory check and the speed estimate both use it."""
        return self.dep.context_tokens

    @property
    def concurrency(self) -> int:
        """Concurrency the answer is computed at: the user's, or what fits on their GPUs if that is less (stated)."""
        return self.dep.concurrency

    @property
    def facts_source(self) -> str:
        return self.dep.facts_source

    @property
    def defaults_used(self) -> list[str]:
        return list(self.dep.defaults)

    @property
    def notes(self) -> list[str]:
        return list(self.dep.notes)

    def at_concurrency(self, concurrency: int) -> PlanContext:
        """This context at another concurrency (what fits, when the user's does not)."""
        return replace(self, dep=replace(self.dep, concurrency=concurrency))


def _check_contradictions(inp: PlannerInputs) -> None:
    """Budget contradictions (the deployment's own are the resolver's)."""
    if inp.draft and not inp.second_model:
        raise InputError(
            f"--draft {inp.draft} contradicts --no-second-model (a draft model is a second model); drop one of them"
        )
    if inp.method == "draft_model" and not inp.second_model:
        raise InputError("--method draft_model needs a second model, but --no-second-model was given; "
                         "drop --no-second-model or pick a method without a draft model (eagle3, ngram, ...)")


def deployment_query(inp: PlannerInputs) -> DeploymentQuery:
    """The deployment `recommend` asks about, in the resolver's terms (the one mapper, shared with every verb)."""
    return query_from_input(
        inp, measured_at_draft_tokens=inp.measured_n, measured_n_given=True, measurement_file=inp.from_measurement,
        compare_prior=True)


def _budget_defaults(inp: PlannerInputs, deployment_defaults: tuple[str, ...]) -> tuple[str, ...]:
    """The resolver's defaults with the planner's budget defaults after the GPU lines (the order answers use)."""
    given = inp.model_fields_set
    budget = []
    for name in BUDGET_DEFAULTS:
        if name not in given:
            value = getattr(inp, name)
            shown = {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value
            budget.append(f"{name.replace('_', ' ')} = {shown}")
    head = [d for d in deployment_defaults if d.startswith(("sampling =", "gpu =", "gpus ="))]
    return tuple(head + budget + [d for d in deployment_defaults if d not in head])


def build_context(inp: PlannerInputs) -> PlanContext:
    """Resolve and validate the planner inputs.

    Raises:
        InputError: contradictory inputs or a method the budget rules out.
        NotFoundError: unknown model or GPU (close matches listed).
    """
    _check_contradictions(inp)
    gguf_engine = engine_for_gguf(inp.verifier, inp.engine)
    if gguf_engine is not None:  # a GGUF build named without --engine: answered for llama.cpp (stated)
        inp = inp.model_copy(update={"engine": gguf_engine})
    query = replace(deployment_query(inp), engine_from_gguf=gguf_engine is not None)
    dep = resolve_deployment(query)
    if inp.samples is not None:
        from pathlib import Path

        from specpick.skill.planner.samples import samples_figures

        # The pairs are tokenized as the resolved verifier tokenizes them, then go through the resolver as evidence.
        figures = samples_figures(Path(inp.samples), dep.verifier.repo_id)
        dep = resolve_deployment(replace(query, measured_figures=figures, figures_source=f"--samples {inp.samples}"))
    notes = list(dep.notes)
    head_check = None
    head_repo = dep.drafter.repo_id if dep.drafter is not None and dep.drafter.kind == "head" else None
    if dep.head is None and head_repo:
        # A head outside the catalog is read from the Hub (cache, then catalog fallbacks): its config says
        # which verifier and hidden size it was trained for.
        from specpick.tools.checks.heads import check_head

        head_check = check_head(head_repo, dep.verifier.repo_id, live=True)
        notes.append(f"--head {head_repo}: {head_check.summary} (facts from {head_check.source})")
    measured = None
    if dep.evidence is not None:
        from specpick.skill.planner.labels import LABEL
        from specpick.tools.deploy.evidence import evidence_lines

        measured = dep.evidence.method or MODEL_BASED_MEASURED
        notes.extend(evidence_lines(dep, LABEL.get(dep.evidence.method or "", dep.evidence.method or "")))
    dep = replace(dep, defaults=_budget_defaults(inp, dep.defaults), notes=tuple(notes))
    return PlanContext(inp=inp, dep=dep, engine_explicit="engine" in inp.model_fields_set, head_repo=head_repo,
                       head_check=head_check, measured_method=measured)

"""Ranking the feasible candidates: the figure each is compared on, the tie margins, the tuned choice, and why an
option that looks faster was not chosen.

Candidates are first estimated at a default draft length; only the leader is tuned. So each untuned candidate is
compared at the length tuning will give it (``ranking_point``): its sweep's rule N, the tuned estimate itself when the
user stated tau (the sweep cannot move a measured tau), and suffix decoding's fixed cap. Near-ties (``TIE_MARGIN``) go to
the option with fewer moving parts: no training, no plugin, no second model to host, the engine the user named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specpick.skill.planner.candidates import Candidate, estimate
from specpick.skill.planner.context import PlanContext
from specpick.skill.planner.labels import LABEL
from specpick.skill.planner.tuning import SUFFIX_MAX_TOKENS, choose_parameters
from specpick.tools.vocab import COPY_METHODS, DRAFT_MODEL_METHODS, EAGLE_METHODS, INPUT_GROUNDED_WORKLOADS
from specpick.tools.model.draftshape import TREE_ENGINES
from specpick.tools.model.draftshape import wide_tree_gate
from specpick.tools.model.overhead import ENGINE_TO_HARNESS

if TYPE_CHECKING:  # the model layer loads with the first estimate, not with the planner's modules
    from specpick.tools.model.estimate import SpeedupResult

# Near-ties go to the option that needs no training, no plugin, no second model, then to the user's/default engine.
TIE_MARGIN = 0.05


def ranking_point(ctx: PlanContext, c: Candidate) -> tuple[float, int | None]:
    """(point speedup, N) of a candidate at the draft length tuning will give it; a tuned candidate's own. Computed
    once per untuned candidate (two of the cases cost an estimate)."""
    e = c.estimate
    if e is None:
        return 0.0, None
    if c.num_draft_tokens is not None:
        return c.speedup, c.num_draft_tokens
    if c.ranking_point is None:
        c.ranking_point = _untuned_point(ctx, c, e)
    return c.ranking_point


def _untuned_point(ctx: PlanContext, c: Candidate, e: SpeedupResult) -> tuple[float, int | None]:
    if c.strategy == "suffix":
        # tuning sets suffix's cap (tuning.SUFFIX_MAX_TOKENS), past the sweep's reach
        return estimate(ctx, c, num_draft_tokens=SUFFIX_MAX_TOKENS, sweep=False).speedup, SUFFIX_MAX_TOKENS
    ev = ctx.dep.evidence
    if ev is not None and ev.tau is not None and ev.n_assumed and e.prior is None:
        # a stated tau is a figure at one length: tuning keeps its start length and holds tau there, where the sweep
        # re-expands it per N, so read the tuned estimate itself (a rare path: one more estimate per drafter)
        tuned = estimate(ctx, c, tuned=True)
        return tuned.speedup, tuned.num_draft_tokens
    if not e.draft_sweep:
        return e.speedup, e.num_draft_tokens  # no sweep (lookahead), no other length
    if _tuning_may_widen(ctx, c, e):
        # tuning may widen an EAGLE chain into a tree (draftshape.tuned_estimate), which can beat the chain by more
        # than a near-tie once engine chains decay along the draft: rank it at what tuning will give
        tuned = estimate(ctx, c, tuned=True)
        return tuned.speedup, tuned.num_draft_tokens
    at_rule = next((p.speedup for p in e.draft_sweep if p.num_draft_tokens == e.best_num_draft_tokens), e.speedup)
    return at_rule, e.best_num_draft_tokens


def _tuning_may_widen(ctx: PlanContext, c: Candidate, e: SpeedupResult) -> bool:
    """The wide-tree rule's conditions (``tools/model/draftshape.tuned_estimate``): an EAGLE head on a tree engine at
    low concurrency with a high per-token alpha."""

    return (c.strategy in EAGLE_METHODS and ENGINE_TO_HARNESS.get(c.engine, c.engine) in TREE_ENGINES
            and wide_tree_gate(c.strategy, ctx.concurrency, e.alpha or 0.0, from_prior=e.prior is not None))


def ranking_speedup(ctx: PlanContext, c: Candidate) -> float:
    """The candidate's speedup at ``ranking_point`` (the draft length tuning will give it)."""
    e = c.estimate
    if e is None or e.speedup <= 0:
        return 0.0
    return ranking_point(ctx, c)[0]


def _second_model_margin(ctx: PlanContext, c: Candidate) -> bool:
    """A separate draft model pays the tie margin unless the user named it, or named its method with a measured
    acceptance (then it is what they run, as the named engine is). An alpha given without a method belongs to every
    model-based drafter (``context.MODEL_BASED_MEASURED``) and exempts none of them."""
    if c.strategy not in DRAFT_MODEL_METHODS:
        return False
    named = ctx.draft is not None and c.draft is not None and c.draft.repo_id == ctx.draft.repo_id
    return not named and ctx.measured_method != c.strategy


def score(ctx: PlanContext, c: Candidate) -> float:
    """What candidates are ranked by: ``ranking_speedup`` less the tie margins that apply."""
    penalty = 1.0 - (TIE_MARGIN if c.needs_training else 0.0)
    # Suffix decoding needs the arctic-inference plugin and has no published acceptance of its own (its
    # prior is prompt lookup's); it earns its place on agentic traffic, where its cache of earlier outputs
    # is what it was built for (Arctic Inference). Elsewhere near-ties go to plain n-gram.
    if c.strategy == "suffix" and ctx.inp.workload != "agentic":
        penalty -= TIE_MARGIN
    # A separate draft model is a second model to host (its weights and KV cache on every GPU, its tokenizer to
    # match, its own runner): near-ties go to the option without one.
    if _second_model_margin(ctx, c):
        penalty -= TIE_MARGIN
    return ranking_speedup(ctx, c) * penalty


def off_its_ground(ctx: PlanContext, c: Candidate) -> bool:
    """A copy drafter (n-gram, suffix) on work whose output does not copy its input, not asked for by the user: the
    answer would raise its own blocking flag (``low_overlap_ngram``, tools/methods.py blocking_flags; vllm#8439
    measured a loss on such traffic), so the planner does not choose it."""
    return (c.strategy in COPY_METHODS and ctx.inp.workload not in INPUT_GROUNDED_WORKLOADS
            and ctx.inp.method != c.strategy)


def ranked(ctx: PlanContext, candidates: list[Candidate]) -> list[Candidate]:
    """Feasible candidates, best first; the user's (or default) engine first when another engine's option is only
    marginally faster; a copy drafter off its ground (``off_its_ground``) left out."""
    feasible = [c for c in candidates if c.feasible and c.estimate is not None]
    if not feasible:
        return []
    scores = {id(c): score(ctx, c) for c in feasible}
    feasible.sort(key=lambda c: scores[id(c)], reverse=True)
    best = feasible[0]
    same_engine = [c for c in feasible if c.engine == ctx.home_engine]
    if same_engine and best.engine != ctx.home_engine and \
            scores[id(same_engine[0])] >= scores[id(best)] * (1 - TIE_MARGIN):
        feasible.remove(same_engine[0])
        feasible.insert(0, same_engine[0])
    # A copy drafter off its ground is not chosen at all: the answer would contradict its own flag. It stays in
    # "considered" with the reason, and the user can still ask for it with --method to measure it.
    return [c for c in feasible if not off_its_ground(ctx, c)]


def choose_tuned(ctx: PlanContext, order: list[Candidate],
                 rationale: list[str]) -> tuple[Candidate, list[tuple[Candidate, Candidate]]]:
    """The best candidate once its parameters are set, and every (candidate, its tuned value) tuning produced.

    A named seed adjustment can move the leader's estimate below the runner-up's; then the runner-up is tuned too
    and taken if it now scores higher, down the ranking. A leader that tuning did not weaken keeps its place (so
    the ranking's preference for the user's engine within ``TIE_MARGIN`` stands).
    """
    leader = order[0]
    before = score(ctx, leader)
    chosen = choose_parameters(ctx, leader)
    tuned_pairs = [(leader, chosen)]
    if score(ctx, chosen) >= before:
        return chosen, tuned_pairs
    for nxt in order[1:]:
        if score(ctx, chosen) >= score(ctx, nxt):
            break
        tuned = choose_parameters(ctx, nxt)
        tuned_pairs.append((nxt, tuned))
        if score(ctx, tuned) > score(ctx, chosen):
            n = f" (N={chosen.num_draft_tokens})" if chosen.num_draft_tokens else ""
            rationale.append(f"{LABEL[chosen.strategy]} on {chosen.engine} ranked first, but its tuned setting{n} is "
                             f"expected at {chosen.speedup:.2f}x, below "
                             f"{LABEL[tuned.strategy]} on {tuned.engine} at {tuned.speedup:.2f}x: "
                             f"{LABEL[tuned.strategy]} is chosen.")
            chosen = tuned
    return chosen, tuned_pairs


def why_not_chosen(ctx: PlanContext, c: Candidate, chosen: Candidate) -> str:
    """Why an alternative whose figure (at the length tuning would give it) beats the choice's still ranks below it
    ('' when it does not)."""
    workload = ctx.inp.workload
    if off_its_ground(ctx, c):
        return (f"; not chosen: {workload} output does not copy its input and copy-based drafting lost speed on "
                f"such traffic (vllm#8439); to try it, ask for it with --method {c.strategy} and measure")
    if chosen.strategy == "none":
        return "; not run: speculation is off for this deployment (the recommendation says why)"
    point, _ = ranking_point(ctx, c)
    if chosen.estimate is None or point <= chosen.speedup:
        return ""
    if c.needs_training:
        return f"; needs training, so it must beat an option that needs none by more than {TIE_MARGIN:.0%}"
    if c.strategy == "suffix" and workload != "agentic":
        return (f"; needs the arctic-inference plugin, so near-ties ({TIE_MARGIN:.0%}) go to plain n-gram off "
                "agentic work")
    if _second_model_margin(ctx, c):
        return (f"; a second model to host (weights and KV cache on every GPU, a tokenizer to match), so near-ties "
                f"({TIE_MARGIN:.0%}) go to an option without one")
    if c.engine != chosen.engine:
        return f"; on another engine, within {TIE_MARGIN:.0%} of the choice on the engine you named (or the default)"
    return "; the choice's tuned setting scored higher"

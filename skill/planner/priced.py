"""What a priced flag did to the headline, in words: the flag's effect and the estimate before and after it.

The effects themselves are priced in the speed model (``tools/deploy/flag_effects.py`` decides which apply,
``tools/model/acceptance_effects.py`` holds the cited figures); this module only states them, so the answer says
by how much a flag moved the number printed beside it (issue 34).
"""

from __future__ import annotations

from dataclasses import replace

from specpick.skill.planner.candidates import Candidate, estimate
from specpick.skill.planner.context import PlanContext
from specpick.tools.deploy.flag_effects import acceptance_effects


def _head(cand: Candidate):  # type: ignore[no-untyped-def]
    return None if cand.needs_training else cand.head


def priced_effects(ctx: PlanContext, cand: Candidate) -> list[str]:
    """The flags whose effect is priced into ``cand``'s estimate (empty for a measured or head-less candidate)."""
    if cand.estimate is None or cand.estimate.acceptance_source.startswith("user-stated"):
        return []
    return [e.flag for e in acceptance_effects(ctx.dep, cand.strategy, _head(cand))]


def priced_text(ctx: PlanContext, cand: Candidate, flag: str | None = None) -> str:
    """``. head_context_exceeded (context ..., head trained at 8192) priced: tau x0.64 (F17, speculators PR#684):
    eagle3 2.66x (2.18-3.25x) at N=5 unpriced -> 1.70x (1.39-2.08x) at N=5, ...`` ('' if none).

    ``flag``: state that flag's effect only (the before/after is every priced effect's together).
    """
    if cand.estimate is None or not priced_effects(ctx, cand):
        return ""
    effects = [e for e in acceptance_effects(ctx.dep, cand.strategy, _head(cand)) if flag in (None, e.flag)]
    if not effects:
        return ""
    before = estimate(ctx, replace(cand, head=None), tuned=True)  # the same candidate, nothing priced
    after = cand.estimate
    if cand.num_draft_tokens is None and cand.ranking_point is not None:  # an alternative: the point it was ranked on
        now = f"{cand.ranking_point[0]:.2f}x at N={cand.ranking_point[1]}"
    else:
        now = f"{after.speedup:.2f}x ({after.low:.2f}-{after.high:.2f}x) at N={after.num_draft_tokens}"
    what = "; ".join(f"{e.flag} ({e.why}) priced: {e.stated()}" for e in effects)
    return (f". {what}: {cand.strategy} {before.speedup:.2f}x ({before.low:.2f}-{before.high:.2f}x) at N="
            f"{before.num_draft_tokens} unpriced -> {now}, the figure this answer ranks it on")


__all__ = ["priced_effects", "priced_text"]

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
from specpick.tools.vocab import EAGLE_METHODS


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
    if cand.estimate is None:
        return ""
    effects = [e for e in acceptance_effects(ctx.dep, cand.strategy, _head(cand)) if flag in (None, e.flag)]
    if flag is not None and (not effects or not priced_effects(ctx, cand)):
        return f". Not priced into the estimate: {_unpriced(cand, flag)}"
    if not effects or not priced_effects(ctx, cand):
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


def _unpriced(cand: Candidate, flag: str) -> str:
    """Why a raised flag's effect is not in the number beside it."""
    if cand.estimate is not None and cand.estimate.acceptance_source.startswith("user-stated"):
        return "the acceptance is your measurement, which already holds it"
    if flag == "head_context_exceeded":
        if cand.strategy not in EAGLE_METHODS:
            return f"its cited curve (F17) measured an EAGLE-3 head, not {cand.strategy}; measure tau at your context"
        return "its cited curve (F17) ends at 20K, short of the head's trained length; measure tau at your context"
    return ("its cited collapse on 8-bit weights (F8) is a requantized draft layer, not a BF16 head, and no figure "
            "is cited for this format; measure alpha against BF16")


__all__ = ["priced_effects", "priced_text"]

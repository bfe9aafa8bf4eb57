"""Per-batch-size draft lengths from the batch sweep, and where speculation stops paying.

For each batch size the model sweeps (up to what fits in memory), K is the same draft-length rule as
everywhere else (``choose_draft_length``: the shortest N within 2% of the best) over N = 1..12, then the
same named seed adjustments the answer's N went through (``tuning.seed_adjustment`` at that batch), capped at
the answer's N (engines require every K <= num_speculative_tokens), and 0 where no N beats plain decoding. Consecutive batch sizes with the same K merge into one range.
Engines take it as vLLM ``num_speculative_tokens_per_batch_size`` ([start, end, K] ranges, PR #32374,
v0.23+) and TensorRT-LLM ``draft_len_schedule`` ({upper bound: K}, PR #10860).
"""

from __future__ import annotations

from specpick.skill.planner.candidates import Candidate, estimate
from specpick.skill.planner.context import PlanContext
from specpick.skill.planner.tuning import lengthening_yields, measured_alpha, seed_adjustment
from specpick.skill.schema import TreeParams
from specpick.tools.methods import methods_where
from specpick.tools.model.draftlength import choose_draft_length
from specpick.tools.model.estimate import SweepPoint

# Methods whose engines schedule a chain draft length by batch size (trees and copy caps are left alone).
SCHEDULED: frozenset[str] = methods_where(batch_scheduled=True)


def draft_schedule(ctx: PlanContext, c: Candidate) -> list[tuple[int, int, int]]:
    """[(start_batch, end_batch, K)] up to the memory cap; [] when there is nothing to schedule.

    Only for chains (a tree's width has no per-batch switch) with a batch sweep; a schedule that never
    changes K is returned empty (the fixed N says it already).
    """

    n = c.num_draft_tokens or 0
    if c.strategy not in SCHEDULED or n < 1 or (c.tree is not None and c.tree.top_k > 1) or c.estimate is None:
        return []
    by_n = {}
    for k in range(1, max(p.num_draft_tokens for p in c.estimate.draft_sweep or []) + 1 if c.estimate.draft_sweep
                   else n + 1):
        tree = TreeParams(depth=k, top_k=1, num_verify_tokens=k + 1) if c.tree is not None else None
        by_n[k] = {p.batch: p for p in estimate(ctx, c, num_draft_tokens=k, tree=tree,
                                                   sweep_draft_length=False).batch_sweep}
    batches = sorted(set.intersection(*(set(pts) for pts in by_n.values())))
    if not batches:
        return []
    ks = []
    for b in batches:
        pts = [SweepPoint(num_draft_tokens=k, tau=0.0, cycle_cost=by_n[k][b].cycle_cost, speedup=by_n[k][b].speedup)
               for k in by_n]
        best = max(p.speedup for p in pts)
        k = choose_draft_length(pts) if best >= 1.0 else 0
        if k:
            adjusted = min(seed_adjustment(ctx, c.strategy, k, measured_alpha(ctx, c.strategy), concurrency=b)[0], n)
            # the answer's own rule: a lengthening seed rule yields where the model expects a clear loss from it
            if not lengthening_yields(k, adjusted, by_n[k][b].speedup, by_n[adjusted][b].speedup):
                k = adjusted
        ks.append(k)
    # Each swept batch's K holds from it up to the next swept batch, so K=0 starts exactly at the break-even
    # concurrency (the first swept batch where speculation stops paying) and the last range ends at the cap.
    ranges: list[tuple[int, int, int]] = []
    start = 1
    for i, b in enumerate(batches):
        if i + 1 == len(batches):
            ranges.append((start, b, ks[i]))
        elif ks[i + 1] != ks[i]:
            ranges.append((start, batches[i + 1] - 1, ks[i]))
            start = batches[i + 1]
    return [] if len(ranges) == 1 else ranges


def schedule_text(ranges: list[tuple[int, int, int]]) -> str:
    """The schedule in words: 'batch 1-8: N=4; 9-32: N=2; 33-96: off'."""
    return "; ".join(f"batch {s}" + (f"-{e}" if e != s else "") + ": " + (f"N={k}" if k else "off")
                     for s, e, k in ranges)

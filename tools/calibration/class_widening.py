"""How much an extrapolation class's 80% ranges would have to widen, scored out of sample (issue 34).

A class whose held-out rows fall outside their ranges more than one time in five (``extrapolation.py``) says the
committed bands are too narrow for that kind of deployment. The fix issue 34 names is to widen a range by the error
measured for its class. This module measures that widening and scores it without letting a row size its own:

* each row needs a widening ``k`` >= 1 of its range in log space (``log(end / point)`` times ``k``) to hold its
  measurement: ``k = log(measured / point) / log(end / point)`` on the side it missed, 1 when it is inside;
* the rows of one source are widened by the split-conformal 80% order statistic of the ``k`` of the class's rows
  from *every other source* (Lei et al. 2018, "Distribution-free predictive inference for regression", JASA
  113:1094, the rule the committed bands use: the ceil((n + 1) x 0.8)-th smallest of n), so no row's own miss, nor
  its source's, sizes the widening it is scored with;
* the widened coverage is then the share of the class's rows inside their widened range.

It is a diagnostic printed beside each class (no estimate reads it yet): what the gate would show if answers in the
class carried their class's measured error.
"""

from __future__ import annotations

import math

from specpick.tools.calibration.cases import Prediction
from specpick.tools.calibration.stats import Coverage, interval_coverage

WIDENING_COVERAGE = 0.80  # the ranges' stated coverage (tools/model/intervals.py INTERVAL_COVERAGE)


def widening_needed(p: Prediction, measured: float) -> float:
    """The factor >= 1 by which ``p``'s range must widen in log space to hold ``measured`` (inf: a zero-width side)."""
    miss = math.log(measured / p.speedup)
    if miss == 0:
        return 1.0
    side = math.log((p.high if miss > 0 else p.low) / p.speedup)
    if side == 0:
        return math.inf
    return max(1.0, miss / side)


def conformal_factor(needed: list[float]) -> float:
    """The split-conformal 80% order statistic of the others' widenings (1 when there are none)."""
    if not needed:
        return 1.0
    ranked = sorted(needed)
    rank = math.ceil((len(ranked) + 1) * WIDENING_COVERAGE)
    return ranked[min(rank, len(ranked)) - 1]


def widened(p: Prediction, factor: float) -> tuple[float, float]:
    """``p``'s range widened by ``factor`` in log space around its point."""
    return (p.speedup * (p.low / p.speedup) ** factor, p.speedup * (p.high / p.speedup) ** factor)


def cross_fitted_coverage(scored: list[tuple[str, Prediction, float]]) -> tuple[Coverage, dict[str, float]]:
    """Coverage of (source, prediction, measured) rows with each source's ranges widened by the factor measured on
    the class's other sources, and that factor per source."""
    needed = [(s, widening_needed(p, m)) for s, p, m in scored]
    factors = {s: conformal_factor([k for other, k in needed if other != s]) for s in {s for s, _, _ in scored}}
    triples = [(*widened(p, factors[s]), m) for s, p, m in scored]
    return interval_coverage(triples), factors

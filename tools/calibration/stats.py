"""Error statistics of predictions against measurements, shared by every calibration report."""

from __future__ import annotations

import math
import statistics

from pydantic import BaseModel, Field


class Stats(BaseModel):
    n: int
    median_ape_pct: float | None
    bias_pct: float | None = Field(description="median signed error, + = model above measurement")
    p90_ape_pct: float | None


def pct_error(pred: float, meas: float) -> float:
    return (pred - meas) / meas * 100.0


def nearest_rank_percentile(sorted_values: list[float], pct: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``pct``% of the values at or below it.

    Never below the median (the old ``values[int(0.9 * (n - 1))]`` picked the smaller of two values for n=2, so
    a report could show p90 under its median).
    """
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def error_stats(pairs: list[tuple[float, float]]) -> Stats:
    """Median absolute % error, median signed % error (bias) and p90 of (predicted, measured) pairs.

    p90 is the nearest-rank percentile (the ceil(0.9 n)-th smallest error), so it is never below the median
    even for two rows."""
    if not pairs:
        return Stats(n=0, median_ape_pct=None, bias_pct=None, p90_ape_pct=None)
    errs = [pct_error(p, m) for p, m in pairs]
    ape = sorted(abs(e) for e in errs)
    return Stats(n=len(pairs), median_ape_pct=round(statistics.median(ape), 2),
                 bias_pct=round(statistics.median(errs), 2), p90_ape_pct=round(nearest_rank_percentile(ape, 90.0), 2))


def format_stats_line(label: str, s: Stats) -> str:
    """One aligned line of a text report."""
    if not s.n:
        return f"  {label:<22} n=0"
    return (f"  {label:<22} n={s.n:<4} median APE {s.median_ape_pct:5.1f}%   bias {s.bias_pct:+6.1f}%   "
            f"p90 {s.p90_ape_pct:5.1f}%")


class Coverage(BaseModel):
    """How often the measurement fell inside the prediction's stated interval [low, high]."""

    n: int
    inside: int
    share: float | None = Field(description="inside / n; None when n = 0")
    below: int = Field(0, description="measured below low (model too optimistic even at its low end)")
    above: int = Field(0, description="measured above high")


def interval_coverage(triples: list[tuple[float, float, float]]) -> Coverage:
    """Coverage of (low, high, measured) triples; the ends count as inside."""
    below = sum(1 for lo, _, m in triples if m < lo)
    above = sum(1 for _, hi, m in triples if m > hi)
    inside = len(triples) - below - above
    return Coverage(n=len(triples), inside=inside, share=round(inside / len(triples), 3) if triples else None,
                    below=below, above=above)


def format_coverage_line(label: str, c: Coverage) -> str:
    """One aligned line: share of measurements inside [low, high], and the misses on each side."""
    if not c.n:
        return f"  {label:<22} n=0"
    return (f"  {label:<22} n={c.n:<4} inside [low, high] {c.share:6.1%}   below low {c.below:<3} "
            f"above high {c.above}")

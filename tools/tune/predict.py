"""Predicting smaller draft lengths from one run at the largest, and picking N per batch-size range.

A chain drafter's draft at length n is the first n tokens of its draft at a larger length (n-gram lookup copies the
continuation of the same match; a head drafts position by position), so one run at the largest N already says what
every smaller N would have accepted. vLLM's per-request ``acceptance_histogram[j]`` counts the verify steps that
accepted exactly j drafts; each such step covered j accepted tokens and one token of the verifier's. Re-cutting
that stretch into steps of at most n drafts gives the steps and accepted tokens a run at n would have had on the
same text. The one thing the larger run cannot say is whether drafts past its own horizon would have been accepted:
for a step that accepted all N, the last measured position's conditional acceptance, P(accept N | accepted N-1),
stands in for the chance that the stretch ran on (``horizon_acceptance``).

Speed at a predicted N: tokens per step from the re-cut, times the measured step rate at the largest N, with the
step cost taken as the same at both lengths unless a cost ratio is given (verifying n+1 or N+1 tokens costs about
the same while decoding is memory-bound; on a compute-bound host it does not, and the measured points say so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specpick.tools.bootstrap import bootstrap_interval



@dataclass(frozen=True)
class StepCounts:
    """Verify steps with drafts, and the drafted tokens they accepted, for one request at one draft length."""

    steps: float
    accepted: float

    @property
    def tau(self) -> float | None:
        """Mean tokens per verify step (accepted drafts plus the verifier's token)."""
        return 1.0 + self.accepted / self.steps if self.steps else None


def recut(histogram: Sequence[int], n: int, horizon_accept: float = 0.0) -> StepCounts:
    """The steps and accepted drafts a chain drafter of length ``n`` would have had on the same text.

    Args:
        histogram: ``histogram[j]`` = verify steps that accepted exactly j drafts, at the measured length
            ``len(histogram) - 1``.
        n: the draft length to predict, 1 <= n <= the measured length.
        horizon_accept: the chance that the drafter would also have been right just past the measured length,
            where a step accepted every draft (the larger run cannot see it). 0 cuts such a stretch as if the next
            draft had been rejected; 1 as if the stretch ran on, its tokens then coming n + 1 per step.
    """
    measured_n = len(histogram) - 1
    if not 1 <= n <= measured_n:
        raise ValueError(f"draft length {n} outside 1..{measured_n}")
    steps = accepted = 0.0
    for j, count in enumerate(histogram):
        if not count:
            continue
        # A stretch of j matched tokens then the verifier's own: steps of n accept n and emit n + 1 tokens until
        # no more than n matched tokens are left; the last step accepts those and stops at the mismatch.
        full, rest = divmod(j, n + 1)
        closed_steps, closed_accepted = full + 1, full * n + rest
        if j == measured_n and horizon_accept > 0:
            # Running on: all j + 1 tokens came n + 1 per step (the last step shared with the next stretch).
            open_steps = (j + 1) / (n + 1)
            closed_steps = (1 - horizon_accept) * closed_steps + horizon_accept * open_steps
            closed_accepted = (1 - horizon_accept) * closed_accepted + horizon_accept * open_steps * n
        steps += count * closed_steps
        accepted += count * closed_accepted
    return StepCounts(steps=steps, accepted=accepted)


def horizon_acceptance(histograms: Sequence[Sequence[int]]) -> float:
    """P(the draft just past the horizon is right | every draft before it was): taken as the last measured
    position's conditional acceptance, P(accept N | accepted N-1), pooled over requests (0 without data)."""
    if not histograms:
        return 0.0
    width = max(len(h) for h in histograms)
    if width < 3:
        return 0.0
    totals = [sum(h[j] for h in histograms if j < len(h)) for j in range(width)]
    reached_last = sum(totals[width - 2:])  # steps that accepted at least N-1 drafts
    return totals[width - 1] / reached_last if reached_last else 0.0


def pooled_tau(counts: Sequence[StepCounts]) -> float | None:
    steps = sum(c.steps for c in counts)
    return 1.0 + sum(c.accepted for c in counts) / steps if steps else None


def tau_interval(counts: Sequence[StepCounts]) -> tuple[float | None, float | None]:
    """80% bootstrap interval of the pooled tau over requests (None with fewer than two requests)."""
    return bootstrap_interval([c for c in counts if c.steps], pooled_tau)


def tokens_per_step(counts: Sequence[StepCounts], plain_steps: int) -> float | None:
    """Output tokens per engine step, counting the steps that drafted nothing (``plain_steps``) as one token."""
    spec_steps = sum(c.steps for c in counts)
    total_steps = spec_steps + plain_steps
    if not total_steps:
        return None
    return (spec_steps + sum(c.accepted for c in counts) + plain_steps) / total_steps


@dataclass(frozen=True)
class Point:
    """One (N, concurrency) setting: the measured speedup, and/or the predicted one with its interval."""

    num_draft_tokens: int
    concurrency: int
    measured: float | None = None
    predicted: float | None = None
    predicted_low: float | None = None
    predicted_high: float | None = None

    @property
    def best_known(self) -> float | None:
        return self.measured if self.measured is not None else self.predicted


def best_n_per_concurrency(points: Sequence[Point], min_gain: float = 1.0) -> dict[int, int]:
    """The N with the highest known speedup at each concurrency, 0 where none beats ``min_gain`` (speculation off)."""
    best: dict[int, int] = {}
    for conc in sorted({p.concurrency for p in points}):
        here = [p for p in points if p.concurrency == conc and p.best_known is not None]
        top = max(here, key=lambda p: (p.best_known, -p.num_draft_tokens), default=None)
        best[conc] = top.num_draft_tokens if top is not None and top.best_known > min_gain else 0  # type: ignore[operator]
    return best


def schedule_ranges(best: dict[int, int], max_batch_size: int) -> list[tuple[int, int, int]]:
    """Batch-size ranges (start, end, N) covering 1..max_batch_size: each measured concurrency's N holds from just
    above the previous measured concurrency up to it; the largest one's N holds to ``max_batch_size``."""
    concs = sorted(best)
    ranges: list[tuple[int, int, int]] = []
    start = 1
    for i, conc in enumerate(concs):
        end = max_batch_size if i == len(concs) - 1 else conc
        if end < start:
            continue
        if ranges and ranges[-1][2] == best[conc]:
            ranges[-1] = (ranges[-1][0], end, best[conc])
        else:
            ranges.append((start, end, best[conc]))
        start = end + 1
    return ranges

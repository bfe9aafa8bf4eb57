"""The per-position prediction of smaller draft lengths, against an independent simulation of a chain drafter.

The simulation walks a text whose positions the drafter gets right or wrong (as n-gram copying does: whether the
drafter's token at a position is right does not depend on N), at any draft length. Re-cutting the walk at the
largest N must give exactly the walk at a smaller n whenever no step accepted all N drafts (past the horizon the
larger run cannot know), and must conserve the tokens covered.
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from specpick.tools.tune.predict import (
    Point, StepCounts, best_n_per_concurrency, recut, schedule_ranges, tau_interval,
)


def walk(right: list[bool], n: int) -> tuple[list[int], StepCounts]:
    """Chain drafting of length n over the text: (histogram of accepted per step, totals)."""
    hist = [0] * (n + 1)
    pos = steps = accepted = 0
    while pos < len(right):
        j = 0
        while j < n and pos + j < len(right) and right[pos + j]:
            j += 1
        hist[j] += 1
        steps += 1
        accepted += j
        pos += j + 1  # j accepted drafts, then the verifier's own token
    return hist, StepCounts(steps, accepted)


# Each text ends at a wrong draft: a text cut short in the middle of a stretch (the request's last tokens) is a
# stretch neither run saw the end of, one per request, which the exact comparison leaves out.
texts = st.lists(st.booleans(), min_size=0, max_size=300).map(lambda r: [*r, False])


@settings(max_examples=300, deadline=None)
@given(right=texts, top=st.integers(2, 8), data=st.data())
def test_recut_equals_the_walk_at_the_smaller_length(right: list[bool], top: int, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, top))
    hist, _ = walk(right, top)
    # A step that accepted all drafts: what came after its horizon is unknown to the larger run (not an equality).
    assume(hist[top] == 0)
    assert recut(hist, n) == walk(right, n)[1]


@settings(max_examples=300, deadline=None)
@given(right=texts, top=st.integers(2, 8), data=st.data())
def test_recut_conserves_tokens(right: list[bool], top: int, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, top))
    hist, measured = walk(right, top)
    predicted = recut(hist, n)
    assert predicted.steps + predicted.accepted == measured.steps + measured.accepted
    assert predicted.accepted <= measured.accepted and predicted.steps >= measured.steps


def test_recut_at_the_measured_length_is_the_measurement() -> None:
    hist = [3, 1, 0, 2, 5]
    assert recut(hist, 4) == StepCounts(steps=11, accepted=1 + 6 + 20)


def test_recut_refuses_lengths_the_run_cannot_speak_for() -> None:
    import pytest

    with pytest.raises(ValueError):
        recut([1, 2, 3], 3)


def test_tau_interval_is_an_interval_with_width() -> None:
    counts = [StepCounts(10, 5), StepCounts(10, 25), StepCounts(8, 2), StepCounts(12, 30)]
    low, high = tau_interval(counts)
    assert low is not None and high is not None and low < high


def test_best_n_is_off_where_nothing_pays_and_ranges_cover_every_batch() -> None:
    pts = [Point(2, 1, measured=1.4), Point(4, 1, measured=1.6), Point(2, 4, predicted=1.1),
           Point(4, 4, predicted=1.05), Point(2, 16, measured=0.9), Point(4, 16, measured=0.8)]
    best = best_n_per_concurrency(pts)
    assert best == {1: 4, 4: 2, 16: 0}
    ranges = schedule_ranges(best, 64)
    assert ranges == [(1, 1, 4), (2, 4, 2), (5, 64, 0)]
    covered = [b for a, e, _ in ranges for b in range(a, e + 1)]
    assert covered == list(range(1, 65))

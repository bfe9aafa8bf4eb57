"""Copy-heavy workloads (code-edit, doc-edit, agent-loop): a two-state burst model of copy drafters' acceptance,
and the leave-one-source-out coverage of their rows, reported apart from every gated set (issue 26).

Why a burst model: on an edit, a copy drafter (n-gram, suffix) is either inside a copied span, where it keeps being
right, or at an edit, where it is wrong at once. vLLM's per-position acceptance on Blazedit (vllm#24344, engine row
VLLM-24344/2: 0.81, 0.74, 0.70, 0.68, 0.66) falls by 4-9% per position, where one geometric alpha fitted to the same
tau would fall by ~13% per position. So: f_copy = P(first drafted token accepted), c = P(next accepted | previous
accepted), E[run | copy] = (1 - c^N) / (1 - c) within a draft of N, and tau = 1 + f_copy * E[run | copy].
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass



@dataclass(frozen=True)
class Burst:
    """Two-state acceptance: a draft starts on a copied span with ``f_copy`` and then stays on it with ``c_run``."""

    f_copy: float
    c_run: float

    def expected_run(self, n: int) -> float:
        """E[accepted drafted tokens | the first is accepted], within a draft of ``n`` tokens."""
        if self.c_run >= 1.0:
            return float(n)
        return (1.0 - self.c_run ** n) / (1.0 - self.c_run)

    def tau(self, n: int) -> float:
        """Mean accepted length at draft length ``n``, bonus token included: 1 + f_copy * E[run | copy]."""
        return 1.0 + self.f_copy * self.expected_run(n)

    def position_acceptance(self, n: int) -> list[float]:
        """P(drafted token i is accepted), i = 1..n (vLLM's 'acceptance at token i-1')."""
        return [self.f_copy * self.c_run ** i for i in range(n)]


def burst_from_positions(positions: Sequence[float]) -> Burst:
    """Fit the burst to measured per-position acceptance: f_copy is the first position's, and c_run the one whose
    run gives the same sum over positions (= tau - 1 in vLLM's definition), so the fitted burst keeps the measured
    tau at the measured N (bisection; bounded loop)."""
    if not positions or any(not 0.0 < p <= 1.0 for p in positions):
        raise ValueError(f"per-position acceptance must be in (0, 1]: {list(positions)}")
    f, n, target = positions[0], len(positions), sum(positions)
    if target >= f * n:
        return Burst(f, 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if Burst(f, mid).expected_run(n) * f < target:
            lo = mid
        else:
            hi = mid
    return Burst(f, (lo + hi) / 2)


def geometric_positions(alpha: float, n: int) -> list[float]:
    """P(drafted token i accepted) under one per-token alpha: alpha^i."""
    return [alpha ** (i + 1) for i in range(n)]


def geometric_alpha_for_tau(tau: float, n: int) -> float:
    """The single alpha whose chain of ``n`` gives ``tau`` (bisection on 1 + a + ... + a^n; bounded loop)."""
    if not 1.0 <= tau <= n + 1:
        raise ValueError(f"tau {tau} outside [1, {n + 1}] for a chain of {n}")
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if sum(mid ** i for i in range(n + 1)) < tau:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def positions_from_notes(notes: str) -> list[float]:
    """The ``pos_accept=a;b;c`` cell a row's notes carry (engine rows), or [] when absent."""
    marker = "pos_accept="
    if marker not in notes:
        return []
    tail = notes.split(marker, 1)[1]
    out: list[float] = []
    for cell in tail.split(";"):
        try:
            out.append(float(cell.strip().split()[0]))
        except (ValueError, IndexError):
            break
    return out


@dataclass(frozen=True)
class TauRow:
    """One copy-heavy acceptance measurement: its id, source, method, draft length and measured tau."""

    row_id: str
    source_id: str
    method: str
    num_draft_tokens: int
    tau: float
    workload: str = "code-edit"


@dataclass(frozen=True)
class Coverage:
    """How many rows had a prediction without their own source, and how many fell inside its [low, high]."""

    n_rows: int
    n_predicted: int
    n_inside: int
    not_covered: tuple[str, ...]

    @property
    def share(self) -> float | None:
        return self.n_inside / self.n_predicted if self.n_predicted else None


# predict(row, excluded sources) -> (tau low, tau high), or None when no prior exists without those sources.
Predictor = Callable[[TauRow, frozenset[str]], "tuple[float, float] | None"]


def loso_coverage(rows: Iterable[TauRow], predict: Predictor) -> Coverage:
    """Leave-one-source-out coverage: each row predicted without its own source, inside the range or not."""
    rows = list(rows)
    inside, predicted, missing = 0, 0, []
    for r in rows:
        rng = predict(r, frozenset({r.source_id}))
        if rng is None:
            missing.append(r.row_id)
            continue
        predicted += 1
        inside += rng[0] <= r.tau <= rng[1]
    return Coverage(n_rows=len(rows), n_predicted=predicted, n_inside=inside, not_covered=tuple(missing))


__all__ = ["Burst", "Coverage", "Predictor", "TauRow", "burst_from_positions", "geometric_alpha_for_tau",
           "geometric_positions", "loso_coverage", "positions_from_notes"]

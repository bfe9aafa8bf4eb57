"""The draft-length rule: one function, used by `speedup` and `recommend` alike.

N is the shortest draft whose speedup is within ``BEST_N_TOLERANCE`` of the best of the model's N sweep
(``tools/model/estimate.py`` builds the sweep at the deployment's batch and context).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

# Assumption (stated in every answer's N rule): 2% is well inside the cost model's own error (median 15.7% on
# engine rows with measured acceptance, `specpick calibrate --engines`), and a shorter draft wastes less verifier
# compute when acceptance or load turn out worse than assumed.
BEST_N_TOLERANCE = 0.02


class _Point(Protocol):
    num_draft_tokens: int
    speedup: float


def choose_draft_length(sweep: Sequence[_Point], tolerance: float = BEST_N_TOLERANCE) -> int:
    """The draft-length rule: the shortest N whose speedup is within ``tolerance`` of the sweep's best.

    One rule for every verb (``speedup`` and ``recommend``); ``draft_length_rule_text`` states it.
    """
    if not sweep:
        raise ValueError("empty draft-length sweep")
    top = max(p.speedup for p in sweep)
    return min(p.num_draft_tokens for p in sweep if p.speedup >= (1 - tolerance) * top)


def draft_length_rule_text(sweep: Sequence[_Point], tolerance: float = BEST_N_TOLERANCE) -> str:
    """The rule and its outcome in words, for the answer."""
    n = choose_draft_length(sweep, tolerance)
    top = max(sweep, key=lambda p: p.speedup)
    at_n = next(p for p in sweep if p.num_draft_tokens == n)
    rule = f"the shortest N within {tolerance:.0%} of the sweep's best"
    if n == top.num_draft_tokens:
        return f"N={n} ({rule}: the best itself, {top.speedup:.2f}x)"
    return f"N={n} ({rule}: {at_n.speedup:.2f}x vs {top.speedup:.2f}x at N={top.num_draft_tokens})"

"""One rule for what a measured figure may be, wherever it is read back (issue 39, causes 2 and 9).

`--from-measurement` (``tools/deploy/measured_file.py``) and `tune`'s results file (``tools/tune/results.py``) read
figures that `measure` and `tune` wrote, or that someone edited: a speedup of -3 turned speculation off, NaN printed
as ``nanx``, tau -5 gave a -0.84x estimate, a concurrency of 10^30 was used. The live path already refuses such
figures where the engine's counters are read (``tools/measure/metrics.py``); these rules are the same bounds for a
figure that comes back from a file. Each problem is one phrase the caller puts after the file and line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from specpick.tools.validation import MAX_DRAFT_TOKENS  # a tau above N + 1 is impossible

# No measured speculative-decoding speedup comes near this (the largest in tools/data/published_measurements.csv is
# under 7x); a figure above it is a broken or edited file, not a fast server.
MAX_SPEEDUP = 50.0
# Requests in flight `measure` and `tune` drive (both refuse more): the largest concurrency a report can hold.
MAX_MEASURED_CONCURRENCY = 1024


def _finite(x: float) -> bool:
    return not (math.isnan(x) or math.isinf(x))


def figure_problem(*, tau: float | None = None, num_draft_tokens: int | None = None, alpha: float | None = None,
                   per_position: Sequence[float] = (), speedup: float | None = None,
                   concurrency: int | None = None) -> str | None:
    """The first impossible figure, as a phrase ("tau 51.00 is above N + 1 = 5"), or None when all can be."""
    for name, value in (("tau", tau), ("alpha", alpha), ("speedup", speedup)):
        if value is not None and (isinstance(value, bool) or not _finite(float(value))):
            return f"{name} {value!r} is not a finite number"
    n_bad = isinstance(num_draft_tokens, bool) or not 1 <= (num_draft_tokens or 0) <= MAX_DRAFT_TOKENS
    if num_draft_tokens is not None and n_bad:
        return f"draft length N = {num_draft_tokens!r} is not between 1 and {MAX_DRAFT_TOKENS}"
    if tau is not None:
        top = num_draft_tokens + 1 if num_draft_tokens else MAX_DRAFT_TOKENS + 1
        if not 1.0 <= tau <= top:
            return f"tau {tau:.2f} is outside [1, N + 1 = {top:g}] (tau counts the bonus token)"
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        return f"alpha {alpha:.3g} is outside [0, 1] (accepted / proposed draft tokens)"
    if any(isinstance(p, bool) or not _finite(float(p)) or not 0.0 <= p <= 1.0 for p in per_position):
        return "a per-position acceptance is outside [0, 1]"
    if any(b > a + 1e-9 for a, b in zip(per_position, per_position[1:])):
        return "per-position acceptance rises along the draft (position i+1 needs position i accepted)"
    if num_draft_tokens and len(per_position) > num_draft_tokens:
        return f"{len(per_position)} per-position figures for N = {num_draft_tokens}"
    if speedup is not None and not 0.0 < speedup <= MAX_SPEEDUP:
        return f"speedup {speedup:.3g}x is outside (0, {MAX_SPEEDUP:g}]"
    if concurrency is not None and (isinstance(concurrency, bool) or not 1 <= concurrency <= MAX_MEASURED_CONCURRENCY):
        return f"concurrency {concurrency!r} is not between 1 and {MAX_MEASURED_CONCURRENCY}"
    return None


__all__ = ["MAX_MEASURED_CONCURRENCY", "MAX_SPEEDUP", "figure_problem"]

"""One bootstrap for every 80% interval the tool derives from the user's own measurements (per prompt or request).

Seeded, so a report read twice gives the same interval; resampling whole requests keeps each prompt's figures
together (the unit that varies between the user's prompts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

RESAMPLES = 1000
SEED = 20261201
# An 80% interval: the 10th and 90th percentiles of the resampled statistic.
QUANTILES = (0.10, 0.90)


def bootstrap_interval(items: Sequence[T], statistic: Callable[[Sequence[T]], float | None]
                       ) -> tuple[float | None, float | None]:
    """The 80% bootstrap interval of ``statistic`` over ``items`` (None, None with fewer than two items or when the
    statistic is undefined on every resample)."""
    if len(items) < 2:
        return None, None
    rng = random.Random(SEED)
    values = sorted(v for v in (statistic([rng.choice(items) for _ in items]) for _ in range(RESAMPLES))
                    if v is not None)
    if not values:
        return None, None
    lo_q, hi_q = QUANTILES
    return values[int(lo_q * (len(values) - 1))], values[int(hi_q * (len(values) - 1))]

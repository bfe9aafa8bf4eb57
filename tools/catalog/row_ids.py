"""Row ids for the measurement tables, derived from the source rather than from file position.

A row's id is ``{source_id}/{n}``: ``n`` is the row's 1-based ordinal among the rows of the same
``source_id``, in file order (``EAGLE3-T1/3`` is the third EAGLE3-T1 row). Positional ids (``P121``)
renumbered every later row, prior, test and report whenever one row was inserted; an ordinal within the
source only moves when that source's own rows change, and a row added for a new source moves nothing.

An acceptance prior is built from exactly one measurement row, so its id is that row's id behind the
``A:`` prefix (``A:EAGLE3-T1/3``): derivable from the row, and still distinguishable from a row id in a
report that lists both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

SEPARATOR = "/"
PRIOR_PREFIX = "A:"


def source_ordinal_ids(source_ids: Iterable[str], after: Iterable[str] = ()) -> list[str]:
    """``{source_id}/{n}`` for each source id in order.

    ``after``: source ids of rows that come first in the same id space (e.g. the published file before the
    rows appended to it), so the ordinals of ``source_ids`` continue theirs and cannot collide with them.
    """
    seen: Counter[str] = Counter(after)
    out: list[str] = []
    for source_id in source_ids:
        seen[source_id] += 1
        out.append(f"{source_id}{SEPARATOR}{seen[source_id]}")
    return out


def prior_id(row_id: str) -> str:
    """The id of the acceptance prior built from measurement row ``row_id``."""
    return f"{PRIOR_PREFIX}{row_id}"

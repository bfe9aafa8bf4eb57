"""Engine measurements of one verifier and method: what others measured, shown next to the model's estimate.

The estimate is a model; a row of ``tools/data/engine_measurements.csv`` measured on the same verifier with the same
method is evidence the user should see beside it (other hardware, engine release and load, so not their
deployment). Where such a row on the user's engine falls outside the estimate's 80% interval, the answer says so.
"""

from __future__ import annotations

import math
from functools import lru_cache

from specpick.tools.answer import MeasuredSpeedup
from specpick.tools.calibration.engine_rows import engine_measurements_text, engine_row
from specpick.tools.calibration.engine_specs import resolve_engine_verifier, verifier_name
from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.published import read_cells
from specpick.tools.catalog.row_ids import source_ordinal_ids
from specpick.tools.catalog.tables import normalize_name
from specpick.tools.engines.lookup import is_engine, label as engine_label

MAX_SHOWN = 5


@lru_cache(maxsize=1)
def _cells() -> tuple[tuple[str, dict[str, str]], ...]:
    cells = read_cells(engine_measurements_text())
    return tuple(zip(source_ordinal_ids(r["source_id"] for r in cells), cells, strict=True))


@lru_cache(maxsize=256)
def _cell_key(cell: str) -> str:
    return normalize_name(verifier_name(cell))


@knowledge_cache("evidence.cell_repo")  # resolved in the catalog: a reload forgets it
def _cell_repo(cell: str) -> str | None:
    spec, _ = resolve_engine_verifier(cell)
    return spec.repo_id if spec is not None else None


def _rows_on(verifier_repo_id: str) -> list[tuple[str, dict[str, str]]]:
    """The (row id, cells) measured on ``verifier_repo_id``. A cell is resolved in the catalog only when its name
    could be this model's (one shares the other's normalised prefix: "DeepSeek-V3 / R1" for DeepSeek-V3), so one
    answer resolves a handful of cells, not every verifier in the table."""
    key = normalize_name(verifier_repo_id.split("/")[-1])
    out = []
    for row_id, r in _cells():
        name = _cell_key(r["verifier_model"])
        could_be = name and (key.startswith(name) or name.startswith(key))
        if could_be and _cell_repo(r["verifier_model"]) == verifier_repo_id:
            out.append((row_id, r))
    return out


def measured_speedups(verifier_repo_id: str, method: str, engine: str | None = None,
                      batch: int = 1) -> list[MeasuredSpeedup]:
    """Point speedups measured on ``verifier_repo_id`` with ``method``: the user's engine first, then the batch
    nearest ``batch`` (a row that states none counts as batch 1), then rows that state their acceptance; at most
    ``MAX_SHOWN``."""
    found: list[tuple[float, MeasuredSpeedup]] = []
    for row_id, cells in _rows_on(verifier_repo_id):
        row = engine_row(row_id, cells)
        if row.method != method or row.speedup is None or row.speedup_is_range:
            continue
        distance = abs(math.log((row.batch or 1) / batch))
        found.append((distance, MeasuredSpeedup(
            row_id=row_id, speedup=row.speedup, engine=row.engine, engine_version=row.engine_version,
            hardware=cells["hardware"], batch=cells["batch_size"], concurrency=row.batch, config=cells["config"],
            # a tau measured on another run than this speedup is not shown beside it (engine_rows.OTHER_RUN_TAG)
            draft=cells["draft_or_head"], tau=row.tau if row.acceptance_from_speedup_run else None,
            source=row.source)))
    found.sort(key=lambda dm: (dm[1].engine != engine, dm[0], dm[1].tau is None))
    return [m for _, m in found[:MAX_SHOWN]]


def outside_interval(measured: list[MeasuredSpeedup], engine: str, low: float, high: float,
                     batch: int = 1) -> list[MeasuredSpeedup]:
    """The rows on ``engine`` measured at concurrency ``batch`` (a row that states none counts as 1) whose speedup
    lies outside [low, high]. A row at another concurrency is no test of this range: speedup falls with load, and
    the answer's range is for its own concurrency (the row is still listed as measured elsewhere)."""
    return [m for m in measured if m.engine == engine and (m.concurrency or 1) == batch
            and not low <= m.speedup <= high]


def outside_note(measured: list[MeasuredSpeedup], engine: str, low: float, high: float,
                 batch: int = 1) -> str | None:
    """The assumption line naming the rows on ``engine`` measured at concurrency ``batch`` outside [low, high]
    (None: there are none); the same words in `recommend` and `speedup`."""
    out = outside_interval(measured, engine, low, high, batch)
    if not out:
        return None
    lo, hi = min(m.speedup for m in out), max(m.speedup for m in out)
    span = f"{lo:.2f}x" if lo == hi else f"{lo:.2f}-{hi:.2f}x"
    releases = "; ".join(sorted({m.engine_version for m in out}))
    return (f"measured on {engine} for this verifier and method at concurrency {batch} outside this answer's range: "
            f"{span} "
            f"({', '.join(m.row_id for m in out)}; {releases}): their release or hardware may differ from yours, "
            "and where they match, the model misses this pair by more than its interval, so measure before relying "
            "on the estimate")


def measured_line(m: MeasuredSpeedup) -> str:
    """One measured row in words: speedup, engine (display name) and release, hardware, batch, draft, shape and id
    (the same line in `speedup` and in `recommend`)."""
    tau = f", tau {m.tau:.2f}" if m.tau is not None else ""
    engine = engine_label(m.engine) if is_engine(m.engine) else m.engine
    return (f"{m.speedup:.2f}x on {engine} {m.engine_version}, {m.hardware}, batch {m.batch}, "
            f"draft {m.draft}, shape {m.config}{tau} ({m.row_id})")

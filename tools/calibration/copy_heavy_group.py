"""calibrate's copy-heavy group (issue 26): the copy-heavy rows and sources, and the leave-one-source-out coverage
of the copy drafters' acceptance and speedup on them, reported apart from every gated set."""

from __future__ import annotations

import csv
from importlib import resources

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from specpick.tools.calibration.stats import (Coverage, Stats, error_stats, format_coverage_line, format_stats_line,
                                              interval_coverage)
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS
from specpick.tools.calibration.engine_rows import engine_rows_from_text
from specpick.tools.calibration.cases import predict
from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.errors import InputError
from specpick.tools.calibration.copy_heavy_tau import tau_loso

if TYPE_CHECKING:
    from specpick.tools.calibration.engine_rows import EngineRow


def copy_heavy_sources() -> dict[str, int]:
    """Rows per source across the copy-heavy set: tagged engine rows, ``copy_heavy_measurements.csv`` (speedups)
    and ``copy_heavy_acceptance.csv`` (acceptance only)."""
    counts: dict[str, int] = {}
    for name in ("engine_measurements.csv", "copy_heavy_measurements.csv", "copy_heavy_acceptance.csv"):
        text = resources.files("specpick.tools").joinpath("data", name).read_text("utf-8")
        for r in csv.DictReader(text.splitlines()):
            if r.get("workload") in COPY_HEAVY_WORKLOADS or any(f"workload={w}" in r["notes"]
                                                                for w in COPY_HEAVY_WORKLOADS):
                counts[r["source_id"]] = counts.get(r["source_id"], 0) + 1
    return counts


def copy_heavy_speedup_rows(methods: frozenset[str]) -> list[EngineRow]:
    """The copy-heavy rows of ``methods`` that state a speedup: engine rows tagged code-edit, doc-edit or
    agent-loop, and ``copy_heavy_measurements.csv`` (same columns), each source's rows numbered in its own file."""

    out: list[EngineRow] = []
    for name in ("engine_measurements.csv", "copy_heavy_measurements.csv"):
        text = resources.files("specpick.tools").joinpath("data", name).read_text("utf-8")
        out += [r for r in engine_rows_from_text(text)
                if r.workload in COPY_HEAVY_WORKLOADS and r.method in methods and r.speedup is not None]
    return out


class SpeedupLoso(BaseModel):
    """Leave-one-source-out speedup predictions of the copy-heavy rows: each row predicted with the acceptance
    priors rebuilt without its own source (split by source before anything rests on it), its copy-heavy workload
    kept (not folded into 'code'), the engine cost model as committed."""

    n_rows: int
    sources: dict[str, int] = Field(description="graded rows per source")
    stats: Stats
    coverage: Coverage
    not_graded: dict[str, int] = Field(description="why a row could not be predicted -> rows")
    rows: list[tuple[str, float, float, float, float]] = Field(
        description="(row id, measured, predicted, low, high) of every graded row")


def speedup_loso(methods: frozenset[str]) -> SpeedupLoso:
    """Predict every copy-heavy speedup row of ``methods`` without its own source; rows whose setup the model cannot
    take (GPU or draft length not stated, a range) are counted by reason, never guessed."""

    rows = copy_heavy_speedup_rows(methods)
    graded: list[tuple[str, float, float, float, float]] = []
    sources: dict[str, int] = {}
    not_graded: dict[str, int] = {}
    for row in rows:
        use, case = row_use(row, llamacpp=row.llamacpp)  # a llama.cpp row on its own harness, as the rest
        if isinstance(case, str) or use not in ("cost_model", "end_to_end"):
            why = case if isinstance(case, str) else use
            not_graded[why] = not_graded.get(why, 0) + 1
            continue
        # the row's own copy-heavy workload, not the benchmark's generation mapping ('code' for InstructCoder)
        case = case.model_copy(update={"workloads": (row.workload,), "tau": None, "alpha": None})
        try:
            p = predict(case, own=False, exclude=frozenset({row.source_id}))
        except InputError:
            not_graded["no prior without the row's source"] = not_graded.get("no prior without the row's source",
                                                                              0) + 1
            continue
        graded.append((row.row_id, row.speedup or 0.0, p.speedup, p.low, p.high))
        sources[row.source_id] = sources.get(row.source_id, 0) + 1
    return SpeedupLoso(n_rows=len(rows), sources=dict(sorted(sources.items())),
                       stats=error_stats([(pred, meas) for _, meas, pred, _, _ in graded]),
                       coverage=interval_coverage([(lo, hi, meas) for _, meas, _, lo, hi in graded]),
                       not_graded=dict(sorted(not_graded.items(), key=lambda kv: -kv[1])), rows=graded)


def coverage_lines(methods: frozenset[str], label: str) -> list[str]:
    """calibrate's copy-heavy group: rows and sources, and the LOSO median error and 80% range coverage of
    ``methods``' acceptance (tau) rows and of their speedup rows."""

    sources = copy_heavy_sources()
    tl = tau_loso(methods)
    tau_graded = ", ".join(f"{k} {v}" for k, v in tl.graded_sources.items()) or "none"
    tau_skipped = "; ".join(f"{v} {k}" for k, v in tl.not_graded.items())
    sp = speedup_loso(methods)
    graded = ", ".join(f"{k} {v}" for k, v in sp.sources.items()) or "none"
    skipped = "; ".join(f"{v} {k}" for k, v in sp.not_graded.items())
    return [f"\ncopy-heavy workloads (code-edit, doc-edit, agent-loop; reported, never gated): "
            f"{sum(sources.values())} rows from {len(sources)} sources ({', '.join(sorted(sources))})",
            f"  {label} acceptance (tau) LOSO: {tl.stats.n} of {tl.n_rows} rows graded from "
            f"{len(tl.graded_sources)} source(s) ({tau_graded}); rows per source "
            f"{', '.join(f'{k} {v}' for k, v in tl.sources.items())}"
            + (f"; not graded: {tau_skipped}" if tau_skipped else ""),
            format_stats_line(f"{label} tau LOSO", tl.stats),
            format_coverage_line(f"{label} tau LOSO cover.", tl.coverage),
            f"  {label} speedup LOSO: {sp.stats.n} of {sp.n_rows} rows graded from {len(sp.sources)} source(s) "
            f"({graded})" + (f"; not graded: {skipped}" if skipped else ""),
            format_stats_line(f"{label} LOSO", sp.stats),
            format_coverage_line(f"{label} LOSO cover.", sp.coverage)]


__all__ = ["SpeedupLoso", "copy_heavy_sources", "copy_heavy_speedup_rows", "coverage_lines",
           "speedup_loso"]

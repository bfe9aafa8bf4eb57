"""calibrate's copy-heavy group (issue 26): the copy-heavy rows and sources, and the leave-one-source-out coverage
of the copy drafters' acceptance and speedup on them, reported apart from every gated set."""

from __future__ import annotations

import csv
from importlib import resources

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from specpick.tools.calibration.stats import (Coverage, Stats, error_stats, format_coverage_line, format_stats_line,
                                              interval_coverage)
from specpick.tools.model.copy_heavy import Predictor, TauRow, loso_coverage
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS

if TYPE_CHECKING:
    from specpick.tools.calibration.engine_rows import EngineRow


def copy_heavy_tau_rows(methods: frozenset[str]) -> list[TauRow]:
    """The copy-heavy acceptance rows of ``methods`` among the acceptance priors (engine rows tagged code-edit,
    doc-edit or agent-loop; ``tools/data/acceptance_priors.csv``)."""
    text = resources.files("specpick.tools").joinpath("data", "acceptance_priors.csv").read_text("utf-8")
    out = []
    for r in csv.DictReader(text.splitlines()):
        if r["workload"] in COPY_HEAVY_WORKLOADS and r["method"] in methods and r["tau"] and r["num_draft_tokens"]:
            out.append(TauRow(r["published_row"], r["source_id"], r["method"], int(r["num_draft_tokens"]),
                              float(r["tau"]), r["workload"]))
    return out


def copy_heavy_sources() -> dict[str, int]:
    """Rows per source across the copy-heavy set: tagged engine rows plus ``copy_heavy_measurements.csv``."""
    counts: dict[str, int] = {}
    for name in ("engine_measurements.csv", "copy_heavy_measurements.csv"):
        text = resources.files("specpick.tools").joinpath("data", name).read_text("utf-8")
        for r in csv.DictReader(text.splitlines()):
            if any(f"workload={w}" in r["notes"] for w in COPY_HEAVY_WORKLOADS):
                counts[r["source_id"]] = counts.get(r["source_id"], 0) + 1
    return counts


def prior_predictor(engine: str = "vllm") -> Predictor:
    """The tool's own prediction for a row: the engine acceptance prior at the row's draft length, without the
    excluded sources (None when nothing is left to rest on)."""
    from specpick.tools.errors import InputError
    from specpick.tools.model.prior_rows import Shape
    from specpick.tools.model.priors import PriorQuery, acceptance_prior

    def predict(row: TauRow, exclude: frozenset[str]) -> tuple[float, float] | None:
        query = PriorQuery(workload=row.workload, exclude_sources=exclude, harness_class="engine", engine=engine)
        try:
            p = acceptance_prior(row.method, Shape(num_draft_tokens=row.num_draft_tokens), query)
        except InputError:
            return None
        # a prior resting on another workload's rows is not a copy-heavy prediction: count it as not covered
        return (p.tau_low, p.tau_high) if p.workload_used in COPY_HEAVY_WORKLOADS else None

    return predict


def copy_heavy_speedup_rows(methods: frozenset[str]) -> list[EngineRow]:
    """The copy-heavy rows of ``methods`` that state a speedup: engine rows tagged code-edit, doc-edit or
    agent-loop, and ``copy_heavy_measurements.csv`` (same columns), each source's rows numbered in its own file."""
    from specpick.tools.calibration.engine_rows import engine_rows_from_text

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
    from specpick.tools.calibration.cases import predict
    from specpick.tools.calibration.engine_cases import row_use
    from specpick.tools.errors import InputError

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
    """calibrate's copy-heavy group: rows and sources, the LOSO coverage of ``methods``' acceptance rows, and the
    LOSO coverage and median error of their speedup rows."""
    sources = copy_heavy_sources()
    rows = copy_heavy_tau_rows(methods)
    cov = loso_coverage(rows, prior_predictor())
    share = "n/a" if cov.share is None else f"{cov.share:.0%}"
    sp = speedup_loso(methods)
    graded = ", ".join(f"{k} {v}" for k, v in sp.sources.items()) or "none"
    skipped = "; ".join(f"{v} {k}" for k, v in sp.not_graded.items())
    return [f"\ncopy-heavy workloads (code-edit, doc-edit, agent-loop; reported, never gated): "
            f"{sum(sources.values())} rows from {len(sources)} sources ({', '.join(sorted(sources))})",
            f"  {label} acceptance LOSO coverage: {cov.n_inside}/{cov.n_predicted} inside [low, high] ({share}) "
            f"of {cov.n_rows} rows with tau; not covered (no copy-heavy prior without the row's source): "
            f"{len(cov.not_covered)}" + (f" ({', '.join(cov.not_covered)})" if cov.not_covered else ""),
            f"  {label} speedup LOSO: {sp.stats.n} of {sp.n_rows} rows graded from {len(sp.sources)} source(s) "
            f"({graded})" + (f"; not graded: {skipped}" if skipped else ""),
            format_stats_line(f"{label} LOSO", sp.stats),
            format_coverage_line(f"{label} LOSO cover.", sp.coverage)]


__all__ = ["SpeedupLoso", "copy_heavy_sources", "copy_heavy_speedup_rows", "copy_heavy_tau_rows", "coverage_lines",
           "prior_predictor", "speedup_loso"]

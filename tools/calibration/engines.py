"""`specpick calibrate --engines`: the model against engine-measured rows, kept apart from the dev set.

The dev set (``published_measurements.csv``) is mostly the methods' own eager
harnesses; ``tools/data/engine_measurements.csv`` holds what vLLM, SGLang and
TensorRT-LLM measured. Those rows never enter the dev-set figure or the
acceptance priors. They are split by source into two halves, fixed by a rule
that does not look at the model:

    within each engine, sources sorted by id alternate fit, holdout, fit, ...

The engine per-cycle constants (``tools/model/overhead.py``) are fitted on the dev
set's batch > 1 rows plus the *fit* half only (``tools/calibration/fit.py``); the
*holdout* half is reported separately and is never fitted on. Figures per engine,
method, dense vs MoE verifier and batch 1 vs > 1, for the cost model alone
(rows' own tau/alpha) and end to end (acceptance priors).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import CalibCase, predict_speedup
from specpick.tools.calibration.stats import Stats, error_stats, format_stats_line
from specpick.tools.calibration.engine_cases import ENGINES, EngineRow, build_case, load_engine_rows

Split = Literal["fit", "holdout"]
SPLIT_RULE = "within each engine, sources sorted by id alternate fit, holdout, fit, ... (first source: fit)"


class EngineRowResult(BaseModel):
    row_id: str
    source_id: str
    engine: str
    engine_version: str
    method: str
    verifier: str
    model_class: Literal["dense", "moe"]
    hardware: str
    batch: int
    split: Split
    measured: float
    cost_model: float | None = Field(None, description="prediction with the row's own tau/alpha")
    end_to_end: float | None = Field(None, description="prediction with acceptance priors")
    notes: list[str] = Field(default_factory=list)


class EngineModeReport(BaseModel):
    mode: Literal["cost_model", "end_to_end"]
    overall: Stats
    fit_half: Stats
    holdout_half: Stats
    per_engine: dict[str, Stats]
    per_method: dict[str, Stats]
    per_class: dict[str, Stats] = Field(description="dense vs MoE verifier")
    per_batch: dict[str, Stats] = Field(description="batch 1 vs batch > 1")


class EngineReport(BaseModel):
    n_rows: int
    n_used: int
    skipped: dict[str, int]
    split_rule: str = SPLIT_RULE
    cost_model: EngineModeReport
    end_to_end: EngineModeReport
    rows: list[EngineRowResult]


def split_of(rows: tuple[EngineRow, ...] | None = None) -> dict[str, Split]:
    """source_id -> fit/holdout by SPLIT_RULE (over every row in the file, usable or not)."""
    rows = rows if rows is not None else load_engine_rows()
    out: dict[str, Split] = {}
    for engine in sorted({r.engine for r in rows} | set(ENGINES)):
        sources = sorted({r.source_id for r in rows if r.engine == engine})
        out.update({s: ("fit" if i % 2 == 0 else "holdout") for i, s in enumerate(sources)})
    return out


def engine_cases(split: Split | None = None) -> list[CalibCase]:
    """Usable engine rows as calibration cases, optionally one half only."""
    halves = split_of()
    cases = [c for c in (build_case(r) for r in load_engine_rows()) if not isinstance(c, str)]
    return [c for c in cases if split is None or halves[c.row.source_id] == split]


def _group(results: list[EngineRowResult], attr: str, key) -> dict[str, Stats]:
    keys = sorted({key(r) for r in results})
    return {k: error_stats([(getattr(r, attr), r.measured) for r in results
                       if key(r) == k and getattr(r, attr) is not None]) for k in keys}


def _mode(name: str, results: list[EngineRowResult]) -> EngineModeReport:
    pairs = [r for r in results if getattr(r, name) is not None]

    def st(rows: list[EngineRowResult]) -> Stats:
        return error_stats([(getattr(r, name), r.measured) for r in rows])

    return EngineModeReport(
        mode=name,  # type: ignore[arg-type]
        overall=st(pairs), fit_half=st([r for r in pairs if r.split == "fit"]),
        holdout_half=st([r for r in pairs if r.split == "holdout"]),
        per_engine=_group(pairs, name, lambda r: r.engine), per_method=_group(pairs, name, lambda r: r.method),
        per_class=_group(pairs, name, lambda r: r.model_class),
        per_batch=_group(pairs, name, lambda r: "batch 1" if r.batch == 1 else "batch > 1"),
    )


def engine_report() -> EngineReport:
    """Predict every engine row (cost model and end to end) and summarise by group and split half."""
    rows = load_engine_rows()
    halves = split_of(rows)
    skipped: dict[str, int] = {}
    results: list[EngineRowResult] = []
    for row in rows:
        case = build_case(row)
        if isinstance(case, str):
            skipped[case] = skipped.get(case, 0) + 1
            continue
        res = EngineRowResult(
            row_id=row.row_id, source_id=row.source_id, engine=row.engine, engine_version=row.engine_version,
            method=row.method or "", verifier=case.verifier.repo_id,
            model_class="moe" if case.verifier.is_moe else "dense", hardware=f"{case.gpus}x {case.gpu.key}",
            batch=case.batch, split=halves[row.source_id], measured=row.speedup or 0.0, notes=case.notes,
        )
        if case.tau is not None or case.alpha is not None:
            res.cost_model = predict_speedup(case, own=True)
        res.end_to_end = predict_speedup(case, own=False)
        results.append(res)
    return EngineReport(
        n_rows=len(rows), n_used=len(results), skipped=dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
        cost_model=_mode("cost_model", results), end_to_end=_mode("end_to_end", results), rows=results,
    )


def render_engine_text(report: EngineReport, *, rows: bool = False) -> str:
    """Human summary of the engine validation set (never mixed into the dev-set figures)."""
    out = [f"\nengine-measured rows (held out from the dev set): {report.n_rows}, used: {report.n_used}",
           f"  split: {report.split_rule}"]
    out += [f"  skipped {n:>2}: {reason}" for reason, n in report.skipped.items()]
    titles = {"cost_model": "engines, cost model (row's own tau/alpha)",
              "end_to_end": "engines, end to end (acceptance priors)"}
    for m in (report.cost_model, report.end_to_end):
        out.append(f"\n{titles[m.mode]}:")
        out += [format_stats_line("overall", m.overall), format_stats_line("fit half", m.fit_half),
                format_stats_line("holdout half", m.holdout_half)]
        for groups in (m.per_engine, m.per_method, m.per_class, m.per_batch):
            out += [format_stats_line(k, s) for k, s in groups.items()]
    if rows:
        out.append("\nengine rows (split | measured | cost model | end to end):")
        f = lambda v: "   -  " if v is None else f"{v:6.2f}"  # noqa: E731
        # The id already names the source ({source_id}/{n}), so it replaces the separate source column.
        width = max(len(r.row_id) for r in report.rows)
        for r in report.rows:
            out.append(f"  {r.row_id:<{width}} {r.engine:<6} {r.method:<11} {r.model_class:<5} "
                       f"{r.hardware:<12} bs{r.batch:<3} {r.split:<7} {r.measured:6.2f} | {f(r.cost_model)} | "
                       f"{f(r.end_to_end)}")
    return "\n".join(out)

"""`specpick calibrate`: the speedup model against published (and engine-measured) results."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.calibration.report import CalibrationReport, calibrate
from specpick.tools.calibration.stats import format_stats_line
from specpick.tools.errors import ThresholdError
from specpick.tools.validation import PercentLimit


class CalibrateInput(BaseModel):
    """Options of `specpick calibrate`."""

    model_config = ConfigDict(extra="forbid")

    rows: bool = Field(False, description="list every row with its measured and predicted speedup")
    max_median_ape_pct: PercentLimit | None = Field(
        None, description="fail (exit 8) if the end-to-end median absolute % error exceeds this (0-1000]"
    )
    loso: bool = Field(True, description="also predict each row with priors rebuilt without its own source")
    fit: bool = Field(False, description="also re-run the global fit of the runtime constants (slow, ~10 s) and "
                      "report committed vs best values")
    engines: bool = Field(False, description="also report the engine-measured rows (tools/data/engine_measurements."
                          "csv: vLLM, SGLang, TensorRT-LLM) as a held-out set, separately from the dev-set figures")


def calibrate_tool(inp: CalibrateInput) -> CalibrationReport:
    """Tool entry point: the report, or ThresholdError when the median error exceeds the limit."""
    report = calibrate(loso=inp.loso)
    if inp.fit:
        from specpick.tools.calibration.fit import fit_all

        report = report.model_copy(update={"fit": [f.model_dump() for f in fit_all()]})
    if inp.engines:
        from specpick.tools.calibration.engines import engine_report

        eng = engine_report()
        if not inp.rows:
            eng = eng.model_copy(update={"rows": []})
        report = report.model_copy(update={"engines": eng.model_dump()})
    if not inp.rows:
        report = report.model_copy(update={"rows": []})
    limit = inp.max_median_ape_pct
    med = report.end_to_end.overall.median_ape_pct
    if limit is not None and med is not None and med > limit:
        raise ThresholdError(f"calibration median error {med:.1f}% exceeds --max-median-ape-pct {limit:g}%")
    return report


def render_text(report: CalibrationReport) -> str:
    """Human summary: per mode, overall and per method; skips; constants; optional rows."""
    out = [f"published rows: {report.n_published}, used: {report.n_used}, "
           f"target median APE <= {report.target_median_ape_pct:g}%"]
    out.append("skipped:")
    out += [f"  {n:>3}  {reason}" for reason, n in report.skipped.items()]
    modes = [report.cost_model, report.end_to_end] + ([report.leave_one_source_out]
                                                      if report.leave_one_source_out else [])
    titles = {"cost_model": "cost model (row's own tau/alpha)", "end_to_end": "end to end (acceptance priors)",
              "leave_one_source_out": "leave one source out (priors without the row's source)"}
    for m in modes:
        out.append(f"\n{titles[m.mode]}:")
        out.append(format_stats_line("overall", m.overall))
        out.append(format_stats_line("batch > 1", m.batch_above_1))
        out += [format_stats_line(k, s) for k, s in m.per_method.items()]
        out += [format_stats_line(f"harness {k}", s) for k, s in m.per_harness.items()]
        if m.not_covered:
            out.append(f"  not covered (no prior without the source): {m.not_covered}")
    out.append("\nglobal constants:")
    out += [f"  {k}: {v}" for k, v in report.constants.items()]
    for f in report.fit or []:
        out.append(f"  fit '{f['name']}' ({f['n_rows']} rows, {f['objective']}): committed {f['committed']} -> "
                   f"{f['committed_score_pct']}%; grid best {f['best']} -> {f['best_score_pct']}%")
        if f.get("holdout"):
            h = f["holdout"]
            out.append(f"    held-out engine rows ({h['n_rows']:.0f}, never fitted): committed {h['committed_mean_ape_pct']}%"
                       f", grid best {h['best_mean_ape_pct']}% mean APE")
    if report.engines:
        from specpick.tools.calibration.engines import EngineReport, render_engine_text

        out.append(render_engine_text(EngineReport.model_validate(report.engines), rows=bool(report.rows)))
    if report.rows:
        out.append("\nrows (measured | cost model | end to end | leave-one-source-out):")
        # The id already names the source ({source_id}/{n}), so it replaces the separate source column.
        width = max(len(r.row_id) for r in report.rows)
        for r in report.rows:
            f = lambda v: "   -  " if v is None else f"{v:6.2f}"
            out.append(f"  {r.row_id:<{width}} {r.method:<11} {r.variant:<10} {r.workload:<13} "
                       f"bs{r.batch:<3} {r.measured:6.2f} | {f(r.cost_model)} | {f(r.end_to_end)} | {f(r.loso)}")
    return "\n".join(out)

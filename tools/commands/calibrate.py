"""`specpick calibrate`: the speedup model against published (and engine-measured) results.

Out-of-sample figures come first and are what CI gates on (README "Quality gates"): the dev set with each
row's own source left out of the priors, the engine-measured rows the same way, the engine rows' cost model
with their own tau/alpha, the engine holdout half, and interval coverage. In-sample figures come last.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.calibration.report import CalibrationReport, calibrate
from specpick.tools.calibration.stats import Coverage, Stats, format_coverage_line, format_stats_line
from specpick.tools.errors import ThresholdError
from specpick.tools.calibration.engines import EngineReport
from specpick.tools.calibration.copy_heavy_group import coverage_lines
from specpick.tools.calibration.extrapolation import gate_failures
from specpick.tools.vocab import COPY_METHODS

_PCT = dict(gt=0, le=1000, allow_inf_nan=False)  # a percentage limit: finite, above 0


class CalibrateInput(BaseModel):
    """Options of `specpick calibrate`."""

    model_config = ConfigDict(extra="forbid")

    rows: bool = Field(False, description="list every row with its measured and predicted speedup")
    max_loso_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the dev set's leave-one-source-out median absolute % error exceeds this",
        **_PCT)
    max_engine_loso_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the engine rows' leave-one-source-out median absolute % error exceeds "
        "this (runs --engines)", **_PCT)
    max_engine_cost_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the engine rows' cost-model median absolute % error (their own "
        "tau/alpha) exceeds this (runs --engines)", **_PCT)
    min_interval_coverage: float | None = Field(
        None, description="fail (exit 8) if the share of held-out measurements inside the predicted [low, high] "
        "(dev LOSO; with --engines also engine LOSO) is below this (0 to 1)", ge=0, le=1, allow_inf_nan=False)
    max_llamacpp_loso_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the llama.cpp rows' leave-one-source-out median absolute % error exceeds "
        "this (runs --engines)", **_PCT)
    min_llamacpp_coverage: float | None = Field(
        None, description="fail (exit 8) if the share of llama.cpp rows inside their predicted 80% [low, high] (leave "
        "one source out) is below this: the ranges are overconfident (0 to 1; runs --engines)", ge=0, le=1,
        allow_inf_nan=False)
    max_llamacpp_coverage: float | None = Field(
        None, description="fail (exit 8) if that share is above this: the ranges are wider than the 80% they claim "
        "(0 to 1; runs --engines)", ge=0, le=1, allow_inf_nan=False)
    min_class_coverage: float | None = Field(
        None, description="fail (exit 8) if, in any extrapolation class with >= 10 rows (a whole class held out of "
        "every prior: long context, PCIe, newest release, architecture, GPU class), the share of rows inside their "
        "predicted 80% [low, high] is below this (0 to 1; runs --engines)", ge=0, le=1, allow_inf_nan=False)
    ungated_classes: list[str] = Field(
        default_factory=list, description="extrapolation class keys --min-class-coverage leaves out (known failures, "
        "still printed with their figures)")
    max_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the IN-SAMPLE end-to-end median absolute % error exceeds this", **_PCT)
    loso: bool = Field(True, description="also predict each row with priors rebuilt without its own source")
    fit: bool = Field(False, description="also re-run the global fit of the runtime constants (slow, ~10 s) and "
                      "report committed vs best values")
    engines: bool = Field(False, description="also report the engine-measured rows (tools/data/engine_measurements."
                          "csv) as a held-out set, separately from the dev-set figures")


def _over(label: str, flag: str, limit: float | None, s: Stats | None) -> list[str]:
    if limit is None or s is None or s.median_ape_pct is None or s.median_ape_pct <= limit:
        return []
    return [f"{label} median error {s.median_ape_pct:.1f}% exceeds {flag} {limit:g}%"]


def _under(label: str, limit: float | None, c: Coverage | None) -> list[str]:
    if limit is None or c is None or c.share is None or c.share >= limit:
        return []
    return [f"{label} interval coverage {c.share:.1%} is below --min-interval-coverage {limit:g}"]


def threshold_failures(inp: CalibrateInput, report: CalibrationReport) -> list[str]:
    """Every threshold the report misses, one phrase each (empty: all met)."""

    loso = report.leave_one_source_out
    eng = EngineReport.model_validate(report.engines) if report.engines else None
    out = _over("in-sample end-to-end", "--max-median-ape-pct", inp.max_median_ape_pct, report.end_to_end.overall)
    out += _over("dev leave-one-source-out", "--max-loso-median-ape-pct", inp.max_loso_median_ape_pct,
                 loso.overall if loso else None)
    out += _under("dev leave-one-source-out", inp.min_interval_coverage, loso.coverage if loso else None)
    if eng:
        out += _over("engine leave-one-source-out", "--max-engine-loso-median-ape-pct",
                     inp.max_engine_loso_median_ape_pct, eng.loso.overall)
        out += _over("engine cost-model", "--max-engine-cost-median-ape-pct", inp.max_engine_cost_median_ape_pct,
                     eng.cost_model.overall)
        out += _under("engine leave-one-source-out", inp.min_interval_coverage, eng.loso.coverage.overall)
        out += _llamacpp_failures(inp, eng)
        out += _class_failures(inp, eng)
    return out


def _class_failures(inp: CalibrateInput, eng) -> list[str]:  # noqa: ANN001 - EngineReport, imported lazily
    """The extrapolation gate: coverage in every class with enough rows, the listed known failures aside."""
    if inp.min_class_coverage is None:
        return []
    if eng.extrapolation is None:
        return ["no extrapolation classes in the engine report: --min-class-coverage has nothing to grade"]
    known = {c.name for c in eng.extrapolation.classes}
    unknown = sorted(set(inp.ungated_classes) - known)
    out = [f"--ungated-classes names no extrapolation class: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
           ] if unknown else []
    return out + gate_failures(eng.extrapolation, inp.min_class_coverage, inp.ungated_classes)


def _llamacpp_failures(inp: CalibrateInput, eng) -> list[str]:  # noqa: ANN001 - EngineReport, imported lazily
    """The llama.cpp gates: its LOSO median error and its 80% ranges' coverage (both ways)."""
    sec = eng.llamacpp
    gates = (inp.max_llamacpp_loso_median_ape_pct, inp.min_llamacpp_coverage, inp.max_llamacpp_coverage)
    if all(g is None for g in gates):
        return []
    if sec is None:
        return ["no llama.cpp row the model can run: the llama.cpp gates have nothing to grade"]
    out = _over("llama.cpp leave-one-source-out", "--max-llamacpp-loso-median-ape-pct",
                inp.max_llamacpp_loso_median_ape_pct, sec.loso.overall)
    share = sec.loso.coverage.overall.share
    if share is not None and inp.min_llamacpp_coverage is not None and share < inp.min_llamacpp_coverage:
        out.append(f"llama.cpp leave-one-source-out interval coverage {share:.1%} is below --min-llamacpp-coverage "
                   f"{inp.min_llamacpp_coverage:g}")
    if share is not None and inp.max_llamacpp_coverage is not None and share > inp.max_llamacpp_coverage:
        out.append(f"llama.cpp leave-one-source-out interval coverage {share:.1%} is above --max-llamacpp-coverage "
                   f"{inp.max_llamacpp_coverage:g} (the ranges are wider than they claim)")
    return out


def calibrate_tool(inp: CalibrateInput) -> CalibrationReport:
    """Tool entry point: the report, or ThresholdError naming every threshold the figures miss."""
    needs_loso = inp.max_loso_median_ape_pct is not None or inp.min_interval_coverage is not None
    report = calibrate(loso=inp.loso or needs_loso)
    if inp.fit:
        from specpick.tools.calibration.fit import fit_all

        report = report.model_copy(update={"fit": [f.model_dump() for f in fit_all()]})
    if inp.engines or inp.max_engine_loso_median_ape_pct is not None or inp.max_engine_cost_median_ape_pct is not None \
            or any(g is not None for g in (inp.max_llamacpp_loso_median_ape_pct, inp.min_llamacpp_coverage,
                                           inp.max_llamacpp_coverage, inp.min_class_coverage)):
        from specpick.tools.calibration.engines import engine_report

        eng = engine_report()
        if not inp.rows:
            lcpp = eng.llamacpp.model_copy(update={"rows": []}) if eng.llamacpp else None
            eng = eng.model_copy(update={"rows": [], "llamacpp": lcpp})
        report = report.model_copy(update={"engines": eng.model_dump()})
    failures = threshold_failures(inp, report)
    if not inp.rows:
        report = report.model_copy(update={"rows": []})
    if failures:
        raise ThresholdError("calibration: " + "; ".join(failures))
    return report


def _headline(report: CalibrationReport) -> list[str]:

    out = ["\nout of sample (the CI gates; README 'Quality gates'):"]
    loso = report.leave_one_source_out
    if loso:
        out += [format_stats_line("dev LOSO end to end", loso.overall),
                format_coverage_line("dev LOSO coverage", loso.coverage or Coverage(n=0, inside=0, share=None))]
        if report.loso_grouped:
            out.append(format_stats_line("dev LOSO, Spec-Bench runs grouped (not gated)", report.loso_grouped))
    if report.engines:
        e = EngineReport.model_validate(report.engines)
        out += [format_stats_line("engine LOSO end to end", e.loso.overall),
                format_stats_line("engine cost model", e.cost_model.overall),
                format_stats_line("engine holdout LOSO", e.loso.holdout_half),
                format_stats_line("engine holdout cost", e.cost_model.holdout_half),
                format_coverage_line("engine LOSO coverage", e.loso.coverage.overall),
                format_coverage_line("engine holdout cover.", e.loso.coverage.holdout_half)]
        if e.llamacpp is not None:
            out += [format_stats_line("llama.cpp LOSO", e.llamacpp.loso.overall),
                    format_coverage_line("llama.cpp LOSO cover.", e.llamacpp.loso.coverage.overall)]
        if e.extrapolation is not None:
            gated = [c for c in e.extrapolation.classes if c.gated and c.coverage.share is not None]
            low = min(gated, key=lambda c: c.coverage.share or 0.0, default=None)
            out.append(f"  extrapolation classes  {len(gated)} of {len(e.extrapolation.classes)} with >= "
                       f"{e.extrapolation.min_rows_to_gate} rows" + (f"; lowest coverage {low.coverage.share:.1%} "
                                                                     f"({low.name})" if low else ""))
    out.append("  LOSO rebuilds the acceptance priors without the row's source (and, for engine holdout rows, without "
               "any holdout source), the engines' position decay and engine/paper ratio with them; the global "
               "constants and the papers' prior rules (tree factor, temperature ratio, draft-size slope) are as "
               "committed, fitted on the dev rows and the engine fit half (not out of sample for those).")
    return out


def _dev_mode_lines(title: str, m) -> list[str]:
    out = [f"\n{title}:", format_stats_line("overall", m.overall), format_stats_line("batch > 1", m.batch_above_1)]
    out += [format_stats_line(k, s) for k, s in m.per_method.items()]
    out += [format_stats_line(f"harness {k}", s) for k, s in m.per_harness.items()]
    if m.not_covered:
        out.append(f"  not covered (no prior without the source): {m.not_covered}")
    if m.coverage:
        out.append("  interval coverage (measured inside the prediction's [low, high]):")
        out.append(format_coverage_line("overall", m.coverage))
        out += [format_coverage_line(k, c) for k, c in m.coverage_per_method.items()]
    return out


def render_text(report: CalibrationReport) -> str:
    """Human summary: out-of-sample headline, then details, then in-sample figures (labelled), constants, rows."""
    out = [f"published rows: {report.n_published}, used: {report.n_used}, "
           f"target median APE <= {report.target_median_ape_pct:g}%"]
    out.append("skipped:")
    out += [f"  {n:>3}  {reason}" for reason, n in report.skipped.items()]
    out += _headline(report)

    out += coverage_lines(frozenset(COPY_METHODS), "n-gram/suffix")
    if report.leave_one_source_out:
        out += _dev_mode_lines("dev set, leave one source out (priors without the row's source)",
                               report.leave_one_source_out)
    out += _dev_mode_lines("dev set, cost model (row's own tau/alpha)", report.cost_model)
    eng = None
    if report.engines:
        from specpick.tools.calibration.engine_render import render_engine_in_sample, render_engine_text
        from specpick.tools.calibration.engines import EngineReport

        eng = EngineReport.model_validate(report.engines)
        out.append(render_engine_text(eng, rows=bool(report.rows), in_sample=False))
    out.append("\nIN-SAMPLE (the priors were built from some of these same rows):")
    out += _dev_mode_lines("dev set, end to end IN-SAMPLE (acceptance priors as committed)", report.end_to_end)
    if eng:
        out.append(render_engine_in_sample(eng))
    out.append("\nglobal constants:")
    out += [f"  {k}: {v}" for k, v in report.constants.items()]
    for f in report.fit or []:
        out.append(f"  fit '{f['name']}' ({f['n_rows']} rows, {f['objective']}): committed {f['committed']} -> "
                   f"{f['committed_score_pct']}%; grid best {f['best']} -> {f['best_score_pct']}%")
        if f.get("holdout"):
            h = f["holdout"]
            out.append(f"    held-out engine rows ({h['n_rows']:.0f}, never fitted): committed {h['committed_mean_ape_pct']}%"
                       f", grid best {h['best_mean_ape_pct']}% mean APE")
    if report.rows:
        out.append("\nrows (measured | cost model | end to end | leave-one-source-out):")
        # The id already names the source ({source_id}/{n}), so it replaces the separate source column.
        width = max(len(r.row_id) for r in report.rows)
        f = lambda v: "   -  " if v is None else f"{v:6.2f}"  # noqa: E731
        for r in report.rows:
            out.append(f"  {r.row_id:<{width}} {r.method:<11} {r.variant:<10} {r.workload:<13} "
                       f"bs{r.batch:<3} {r.measured:6.2f} | {f(r.cost_model)} | {f(r.end_to_end)} | {f(r.loso)}")
    return "\n".join(out)

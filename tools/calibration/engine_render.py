"""Text of the engine-measured report (`specpick calibrate --engines`): out-of-sample first, in-sample last."""

from __future__ import annotations

from specpick.tools.calibration.engines import EngineModeReport, EngineReport
from specpick.tools.calibration.extrapolation import TOO_FEW
from specpick.tools.calibration.stats import format_coverage_line, format_stats_line

TITLES = {
    "loso": "engines, leave one source out (priors without the row's source)",
    "cost_model": "engines, cost model (row's own tau/alpha; priors without its source where a shape needs them)",
    "end_to_end": "engines, end to end IN-SAMPLE (priors as committed)",
}


def _mode_lines(m: EngineModeReport, *, groups: bool) -> list[str]:
    out = [f"\n{TITLES[m.mode]}:", format_stats_line("overall", m.overall),
           format_stats_line("holdout half", m.holdout_half), format_stats_line("fit half", m.fit_half),
           format_stats_line("sources never fitted", m.never_fitted)]
    if m.not_covered:
        out.append(f"  not covered (no prior without the source): {m.not_covered}")
    if groups:
        for g in (m.per_engine, m.per_method, m.per_class, m.per_batch):
            out += [format_stats_line(k, s) for k, s in g.items()]
    c = m.coverage
    out.append("  interval coverage (measured inside the prediction's [low, high]):")
    out += [format_coverage_line("overall", c.overall), format_coverage_line("holdout half", c.holdout_half)]
    if groups:
        out += [format_coverage_line(k, v) for k, v in {**c.per_engine, **c.per_method}.items()]
    return out


def _llamacpp_lines(report: EngineReport, *, rows: bool) -> list[str]:
    """The llama.cpp section: its rows against its own fitted cost model (tools/model/overhead_llamacpp.py)."""
    sec = report.llamacpp
    if sec is None:
        return []
    m = sec.loso
    out = [f"\nllama.cpp (its own cost model, tools/model/overhead_llamacpp.py; no other engine's figure holds these "
           f"rows): {sec.n_rows} rows, {m.overall.n} with a point speedup the model can run, from {len(sec.sources)} "
           f"sources ({', '.join(sec.sources)})",
           "  leave one source out (priors without the row's source; the constants fitted on the fit half only):",
           format_stats_line("overall", m.overall), format_stats_line("holdout half", m.holdout_half),
           format_stats_line("fit half", m.fit_half), format_stats_line("sources never fitted", m.never_fitted)]
    if m.not_covered:
        out.append(f"  not covered (no prior without the source): {m.not_covered}")
    out += [format_stats_line(f"family {k}", s) for k, s in sec.per_family.items()]
    out += [format_stats_line(k, s) for k, s in m.per_method.items()]
    out += [format_stats_line(f"back end {k}", s) for k, s in sec.per_backend.items()]
    out += [format_stats_line(k, s) for k, s in m.per_batch.items()]
    if sec.refit_loso is not None:
        out.append(format_stats_line("constants refit w/o source", sec.refit_loso))
    out.append("  interval coverage (measured inside the prediction's [low, high]):")
    c = m.coverage
    out += [format_coverage_line("overall", c.overall), format_coverage_line("holdout half", c.holdout_half)]
    out += [format_coverage_line(f"family {k}", v) for k, v in sec.coverage_per_family.items()]
    out += [format_coverage_line(k, v) for k, v in c.per_method.items()]
    if sec.cost_model is not None:
        out.append("  cost model (the row's own tau/alpha):")
        out += [format_stats_line("overall", sec.cost_model.overall),
                format_coverage_line("coverage", sec.cost_model.coverage.overall)]
    out += [f"  skipped {n:>3}: {reason}" for reason, n in sec.skipped.items()]
    if rows:
        out.append("  llama.cpp rows (split | measured | LOSO [low, high] | cost model | in-sample):")
        out += _row_lines(sec.rows)
    return out


def extrapolation_lines(report: EngineReport) -> list[str]:
    """The table "extrapolation classes": each class held out of every prior and predicted (extrapolation.py)."""
    ext = report.extrapolation
    if ext is None:
        return []
    out = ["\nextrapolation classes (a whole class held out of every prior the prediction reads, then predicted):",
           f"  rule: {ext.rule}",
           f"  {'class':<30} {'key':<26} {'n':>4} {'sources':>7} {'median APE':>10} {'bias':>7} {'coverage':>8} "
           f"{'widened':>8}"]
    for c in ext.classes:
        s, cov = c.stats, c.coverage
        wide = c.widened_coverage.share if c.widened_coverage else None
        figures = (f"{s.median_ape_pct:9.1f}% {s.bias_pct:+6.1f}% {cov.share:8.1%} {wide:8.1%}"
                   if s.n and cov.share is not None and wide is not None else f"{'-':>10} {'-':>7} {'-':>8} {'-':>8}")
        mark = "" if c.gated else f"  {TOO_FEW}"
        missed = f"  ({c.not_covered} not covered)" if c.not_covered else ""
        out.append(f"  {c.label:<30} {c.name:<26} {s.n:>4} {c.n_sources:>7} {figures}{mark}{missed}")
    out.append("  widened: coverage with each source's ranges widened by the error measured on the class's other "
               "sources (tools/calibration/class_widening.py); a diagnostic, not gated: no estimate carries it yet")
    return out


def _row_lines(results: list) -> list[str]:
    f = lambda p: "   -  " if p is None else f"{p.speedup:6.2f}"  # noqa: E731
    iv = lambda p: "      -       " if p is None else f"[{p.low:5.2f},{p.high:5.2f}]"  # noqa: E731
    # The id already names the source ({source_id}/{n}), so it replaces the separate source column.
    width = max((len(r.row_id) for r in results), default=0)
    return [f"  {r.row_id:<{width}} {r.engine:<6} {r.method:<11} {r.model_class:<5} "
            f"{r.hardware:<12} bs{r.batch:<3} {r.split:<7} {r.measured:6.2f} | {f(r.loso)} {iv(r.loso)} | "
            f"{f(r.cost_model)} | {f(r.end_to_end)}" for r in results]


def render_engine_in_sample(report: EngineReport) -> str:
    """The in-sample engine figures (priors as committed), printed after every out-of-sample figure."""
    return "\n".join(_mode_lines(report.end_to_end, groups=False))


def render_engine_text(report: EngineReport, *, rows: bool = False, in_sample: bool = True) -> str:
    """Human summary of the engine validation set (never mixed into the dev-set figures); ``in_sample=False``
    leaves the in-sample mode out so a caller can print it last."""
    out = [f"\nengine-measured rows (held out from the dev set): {report.n_rows}, with a point speedup the model "
           f"can run: {report.n_used}", f"  split: {report.split_rule}", f"  caveat: {report.loso_caveat}",
           "  usable rows per engine/method (cost model = speedup + own tau/alpha; end to end = any point speedup, "
           "cost-model rows included; acceptance only = tau/alpha, no speedup):"]
    out += [f"    {k:<20} cost model {v['cost_model']:>3}   end to end {v['end_to_end']:>3}   acceptance only "
            f"{v['acceptance_only']:>3}" for k, v in report.usable.items()]
    out += [f"  skipped {n:>3}: {reason}" for reason, n in report.skipped.items()]
    for m in (report.loso, report.cost_model):
        out += _mode_lines(m, groups=True)
    out += extrapolation_lines(report)
    acc = report.acceptance_loso
    out.append("\nengines, acceptance alone, leave one source out (measured tau vs the priors' tau; rows that state "
               "tau, with or without a speedup):")
    out += [format_stats_line("overall", acc.overall), format_stats_line("holdout half", acc.holdout_half)]
    out += [format_stats_line(k, v) for k, v in {**acc.per_engine, **acc.per_method}.items()]
    if acc.not_covered:
        out.append(f"  not covered (no prior without the source): {acc.not_covered}")
    step = report.plain_step
    out.append("\nengines, plain decode step without speculation, absolute ms (the rows' own no-spec baselines at "
               "concurrency <= 4, tools/data/engine_baselines.csv; the fit half's join the execution-path fit, the "
               "holdout half's never do):")
    out += [format_stats_line(name, s) for name, s in (("dense", step.dense), ("MoE", step.moe),
                                                       ("holdout half", step.holdout)) if s is not None]
    out.append(f"  baselines skipped (row not runnable): {sum(step.skipped.values())}")
    out += _llamacpp_lines(report, rows=rows)
    if in_sample:
        out.append(render_engine_in_sample(report))
    if rows:
        out.append("\nengine rows (split | measured | LOSO [low, high] | cost model | in-sample):")
        out += _row_lines(report.rows)
    return "\n".join(out)

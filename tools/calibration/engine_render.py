"""Text of the engine-measured report (`specpick calibrate --engines`): out-of-sample first, in-sample last."""

from __future__ import annotations

from specpick.tools.calibration.engines import EngineModeReport, EngineReport
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


def _held_out_lines(report: EngineReport) -> list[str]:
    """The rows held out of every gate, fit and prior (engine_rows.HELD_OUT_TAG), in their own section."""
    if report.held_out_loso is None or report.held_out_cost_model is None:
        return []
    out = [f"\nheld out of every gate, fit and prior: {report.held_out_loso.overall.n} llama.cpp rows the model can run "
           "(no llama.cpp cost model is fitted yet: these figures say how far today's model is off; they gate "
           "nothing)"]
    for m in (report.held_out_loso, report.held_out_cost_model):
        lines = _mode_lines(m, groups=True)
        out.append(f"  {lines[0].strip()}")
        out += [line for line in lines[1:] if not line.lstrip().startswith(("fit half", "sources never fitted"))]
    return out


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
    out += _held_out_lines(report)
    if in_sample:
        out.append(render_engine_in_sample(report))
    if rows:
        out.append("\nengine rows (split | measured | LOSO [low, high] | cost model | in-sample):")
        f = lambda p: "   -  " if p is None else f"{p.speedup:6.2f}"  # noqa: E731
        iv = lambda p: "      -       " if p is None else f"[{p.low:5.2f},{p.high:5.2f}]"  # noqa: E731
        # The id already names the source ({source_id}/{n}), so it replaces the separate source column.
        width = max((len(r.row_id) for r in report.rows), default=0)
        for r in report.rows:
            out.append(f"  {r.row_id:<{width}} {r.engine:<6} {r.method:<11} {r.model_class:<5} "
                       f"{r.hardware:<12} bs{r.batch:<3} {r.split:<7} {r.measured:6.2f} | {f(r.loso)} {iv(r.loso)} | "
                       f"{f(r.cost_model)} | {f(r.end_to_end)}")
    return "\n".join(out)

"""The text form of a ``TuneReport``: predicted vs measured at every point, the schedule, the configs."""

from __future__ import annotations

from io import StringIO

from specpick.tools.measure.report import format_or_dash, print_trailer
from specpick.tools.tune.run import TuneReport


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{low:.2f}-{high:.2f}]"


def render_text(report: TuneReport, width: int = 120) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, markup=False, highlight=False)
    console.print(f"specpick tune: {report.method} on {report.engine}")
    t = Table(title="Predicted vs measured per setting (tau: 80% interval over prompts)")
    for col in ("N", "conc", "measured", "tau measured", "tau predicted", "speedup measured", "speedup predicted",
                "classes"):
        t.add_column(col, justify="right")
    for p in report.points:
        classes = ", ".join(f"{c.name} {format_or_dash(c.speedup, '{:.2f}x')} ({c.decision or '-'})" for c in p.per_class)
        t.add_row(str(p.num_draft_tokens), str(p.concurrency), "yes" if p.measured else "no",
                  format_or_dash(p.tau_measured, "{:.2f}") + _interval(p.tau_measured_low, p.tau_measured_high),
                  format_or_dash(p.tau_predicted, "{:.2f}") + _interval(p.tau_predicted_low, p.tau_predicted_high),
                  format_or_dash(p.speedup_measured, "{:.2f}x"), format_or_dash(p.speedup_predicted, "{:.2f}x"), classes or "-")
    console.print(t)
    best = ", ".join(f"concurrency {c}: N={n or 'off'}" for c, n in report.best_n.items())
    console.print(f"best: {best}")
    console.print("schedule: " + ", ".join(f"batch {a}-{b}: N={k or 'off'}" for a, b, k in report.schedule))
    console.print(f"runs measured: {report.runs_measured}; runs saved by prediction: {report.runs_saved} "
                  f"(results: {report.results_file})")
    for cfg in report.configs:
        console.print(f"{cfg.engine} {cfg.engine_version}: {cfg.launch_command}")
        if cfg.format == "yaml":
            console.print(cfg.config.rstrip())
    print_trailer(console, report.warnings, report.assumptions, report.plots)
    return buf.getvalue()

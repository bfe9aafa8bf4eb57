"""PNG plots for ``specpick measure --plot-dir``: per-position acceptance, and speedup vs concurrency.

matplotlib (the ``measure`` extra) is imported here only, with the Agg backend
so it never needs a display.
"""

from __future__ import annotations

from pathlib import Path

from specpick.tools.errors import InputError
from specpick.tools.measure.metrics import Acceptance
from specpick.tools.measure.preflight import MATPLOTLIB_HINT
from specpick.tools.measure.report import MeasureReport


def _pyplot():  # type: ignore[no-untyped-def]
    try:
        import matplotlib
    except ImportError as exc:
        raise InputError(f"--plot-dir needs matplotlib: {MATPLOTLIB_HINT}") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _series(report: MeasureReport) -> list[tuple[str, Acceptance]]:
    """Every acceptance figure in the report that has per-position rates, labelled for the legend."""
    out: list[tuple[str, Acceptance]] = []
    if len(report.results) > 1:
        for r in report.results:
            if r.acceptance is not None and r.acceptance.per_position:
                out.append((f"concurrency {r.concurrency}", r.acceptance))
    elif report.acceptance is not None and report.acceptance.per_position:
        out.append((report.acceptance.source, report.acceptance))
    if report.ngram is not None and report.ngram.acceptance.per_position:
        out.append(("n-gram simulation", report.ngram.acceptance))
    return out


def write_plots(report: MeasureReport, plot_dir: Path) -> list[str]:
    """Write the plots that the report has data for; return their paths.

    Raises:
        InputError: the folder cannot be created or written.
    """
    series = _series(report)
    speedups = [(r.concurrency, r.speedup, r.throughput_ratio) for r in report.results if r.speedup is not None]
    if not series and len(speedups) < 2:
        return []
    try:
        plot_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--plot-dir {plot_dir} cannot be created: {exc.strerror}") from exc
    plt = _pyplot()
    paths: list[str] = []
    if series:
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        width = 0.8 / len(series)
        for j, (label, acc) in enumerate(series):
            xs = [i + 1 + (j - (len(series) - 1) / 2) * width for i in range(len(acc.per_position))]
            ax.bar(xs, acc.per_position, width=width, label=f"{label} (alpha {acc.alpha:.2f}, tau {acc.tau:.2f})")
        ax.set_xlabel("draft position")
        ax.set_ylabel("P(token at this position accepted)")
        ax.set_ylim(0, 1.05)
        ax.set_xticks(range(1, max(len(a.per_position) for _, a in series) + 1))
        ax.set_title(f"Per-position acceptance: {report.model or report.mode}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = plot_dir / "acceptance_per_position.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))
    if len(speedups) >= 2:
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        conc = [c for c, _, _ in speedups]
        ax.plot(conc, [s for _, s, _ in speedups], marker="o", label="per-request decode speedup")
        ax.plot(conc, [t for _, _, t in speedups], marker="s", label="throughput ratio (tokens/s)")
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(conc, [str(c) for c in conc])
        ax.set_xlabel("concurrency")
        ax.set_ylabel("speculative / baseline")
        ax.set_title(f"Speedup vs concurrency: {report.model or report.mode}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = plot_dir / "speedup_vs_concurrency.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))
    return paths

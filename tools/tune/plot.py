"""One PNG: speedup against draft length per concurrency, measured points solid, predicted ones hollow."""

from __future__ import annotations

from pathlib import Path

from specpick.tools.errors import InputError
from specpick.tools.tune.analysis import TunePoint


def write_plot(points: list[TunePoint], method: str, engine: str, directory: Path) -> str:
    """Takes the report's fields, not the report: ``run`` builds the report and imports this module."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot-dir needs matplotlib: pip install 'spec-decode-picker[measure]'") from None
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create --plot-dir {directory} ({exc.strerror})") from None
    fig, ax = plt.subplots(figsize=(6, 4))
    for conc in sorted({p.concurrency for p in points}):
        pts = [p for p in points if p.concurrency == conc]
        meas = [(p.num_draft_tokens, p.speedup_measured) for p in pts if p.speedup_measured is not None]
        pred = [(p.num_draft_tokens, p.speedup_predicted) for p in pts if p.speedup_predicted is not None]
        if meas:
            ax.plot(*zip(*meas), "o-", label=f"measured, concurrency {conc}")
        if pred:
            ax.plot(*zip(*pred), "o--", mfc="none", label=f"predicted, concurrency {conc}")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("draft length N")
    ax.set_ylabel("speedup vs no speculation")
    ax.set_title(f"specpick tune: {method} on {engine}")
    ax.legend(fontsize=7)
    path = directory / "tune-speedup.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)

"""calibrate's copy-heavy group (issue 26): the copy-heavy rows and sources, and the leave-one-source-out coverage
of the copy drafters' acceptance on them, reported apart from every gated set."""

from __future__ import annotations

import csv
from importlib import resources

from specpick.tools.model.copy_heavy import Predictor, TauRow, loso_coverage
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS


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


def coverage_lines(methods: frozenset[str], label: str) -> list[str]:
    """calibrate's copy-heavy group: rows and sources, and the LOSO coverage of ``methods``' acceptance rows."""
    sources = copy_heavy_sources()
    rows = copy_heavy_tau_rows(methods)
    cov = loso_coverage(rows, prior_predictor())
    share = "n/a" if cov.share is None else f"{cov.share:.0%}"
    return [f"\ncopy-heavy workloads (code-edit, doc-edit, agent-loop; reported, never gated): "
            f"{sum(sources.values())} rows from {len(sources)} sources ({', '.join(sorted(sources))})",
            f"  {label} acceptance LOSO coverage: {cov.n_inside}/{cov.n_predicted} inside [low, high] ({share}) "
            f"of {cov.n_rows} rows with tau; not covered (no copy-heavy prior without the row's source): "
            f"{len(cov.not_covered)}" + (f" ({', '.join(cov.not_covered)})" if cov.not_covered else "")]


__all__ = ["copy_heavy_sources", "copy_heavy_tau_rows", "coverage_lines", "prior_predictor"]

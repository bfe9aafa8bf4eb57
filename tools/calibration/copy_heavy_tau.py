"""calibrate's copy-heavy acceptance (tau) leave-one-source-out (issue 26): every copy-heavy n-gram/suffix row that
states a mean accepted length, predicted by the copy-heavy acceptance prior rebuilt without the row's source, with
an 80% range taken from the same model's out-of-sample misses on the other sources (nested: the held-out source is
out of the range's misses too). Acceptance needs no GPU, so rows the speedup check cannot take can count here.

Rows are graded only where the prediction and the measurement count the same thing: the prior's copy-heavy burst
is fitted to vLLM's 'mean acceptance length', which counts drafting steps only (vllm#24344). A row counted per step
over all steps (drafting or not) is graded only where its source states the drafting share s (steps that drafted /
all steps): a step without a draft yields one token, so per step tau = 1 + s x (tau per drafting step - 1).
"""

from __future__ import annotations

import csv
import math
from importlib import resources

from pydantic import BaseModel, Field

from specpick.tools.bootstrap import QUANTILES
from specpick.tools.calibration.stats import Coverage, Stats, error_stats, interval_coverage
from specpick.tools.model.copy_heavy import TauRow
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS
from specpick.tools.errors import InputError
from specpick.tools.model.prior_rows import Shape
from specpick.tools.model.priors import PriorQuery
from specpick.tools.model.priors import acceptance_prior

# What the prior's copy-heavy tau counts (the accounting of the rows it is fitted to, engine rows VLLM-24344).
PRIOR_COUNTS = "per drafting step"
# Fewest out-of-sample misses an 80% range is read from: below it the 10th/90th percentiles are the extremes.
MIN_MISSES_FOR_RANGE = 5

NO_N = "draft length not stated"
OTHER_COUNT = "counted per step over all steps (drafting share not stated)"
NO_PRIOR = "no copy-heavy prior without the row's source"
NO_RANGE = f"fewer than {MIN_MISSES_FOR_RANGE} out-of-sample misses on other sources to set a range"


class CountedTauRow(BaseModel):
    """A copy-heavy tau row with what its tau counts ('per drafting step' or 'per step ...') and, where stated,
    the drafting share (steps that drafted / all steps)."""

    row: TauRow
    counts: str
    num_draft_tokens_stated: bool
    drafting_share: float | None = None

    def as_counted(self, tau_per_drafting_step: float) -> float | None:
        """A prediction per drafting step expressed as this row counts it (None: the row's count cannot be
        matched: per step over all steps with no stated drafting share)."""
        if self.counts == PRIOR_COUNTS:
            return tau_per_drafting_step
        if self.drafting_share is None:
            return None
        return 1.0 + self.drafting_share * (tau_per_drafting_step - 1.0)


def acceptance_rows(methods: frozenset[str]) -> list[CountedTauRow]:
    """Copy-heavy tau rows of ``methods``: the engine acceptance rows tagged code-edit/doc-edit/agent-loop
    (``acceptance_priors.csv``, vLLM 'mean acceptance length': per drafting step) and
    ``copy_heavy_acceptance.csv`` (each row says what its tau counts)."""
    out = [CountedTauRow(row=r, counts=PRIOR_COUNTS, num_draft_tokens_stated=True)
           for r in copy_heavy_tau_rows(methods)]
    text = resources.files("specpick.tools").joinpath("data", "copy_heavy_acceptance.csv").read_text("utf-8")
    per_source: dict[str, int] = {}
    for r in csv.DictReader(text.splitlines()):
        if r["method"] not in methods or r["workload"] not in COPY_HEAVY_WORKLOADS or not r["tau"]:
            continue
        k = per_source[r["source_id"]] = per_source.get(r["source_id"], 0) + 1
        n = int(r["num_draft_tokens"]) if r["num_draft_tokens"] else 0
        out.append(CountedTauRow(
            row=TauRow(f"{r['source_id']}/acc{k}", r["source_id"], r["method"], n, float(r["tau"]), r["workload"]),
            counts=r["tau_counts"], num_draft_tokens_stated=bool(n),
            drafting_share=float(r["drafting_share"]) if r["drafting_share"] else None))
    return out


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


class TauLoso(BaseModel):
    """Leave-one-source-out tau predictions of the copy-heavy acceptance rows."""

    n_rows: int
    sources: dict[str, int] = Field(description="rows per source, graded or not")
    graded_sources: dict[str, int] = Field(description="graded rows per source")
    stats: Stats
    coverage: Coverage
    not_graded: dict[str, int] = Field(description="why a row could not be graded -> rows")
    rows: list[tuple[str, float, float, float, float]] = Field(
        description="(row id, measured tau, predicted tau, low, high) of every graded row")


def _point(row: TauRow, exclude: frozenset[str], engine: str) -> float | None:
    """The copy-heavy prior's tau for ``row`` without ``exclude`` (None: nothing copy-heavy is left to rest on)."""

    query = PriorQuery(workload=row.workload, exclude_sources=exclude, harness_class="engine", engine=engine)
    try:
        p = acceptance_prior(row.method, Shape(num_draft_tokens=row.num_draft_tokens), query)
    except InputError:
        return None
    # a prior resting on another workload's rows is not a copy-heavy prediction
    return p.tau if p.workload_used in COPY_HEAVY_WORKLOADS else None


def _quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile by the index convention of ``tools/bootstrap.py`` (no interpolation)."""
    return sorted_values[int(q * (len(sorted_values) - 1))]


def tau_loso(methods: frozenset[str], engine: str = "vllm") -> TauLoso:
    """Grade every gradable copy-heavy tau row of ``methods`` without its own source; the range is the prediction
    times the 10th/90th percentile of measured/predicted over the other sources' rows, each of those predicted
    without its own source and without the held-out one (so the range never saw the held-out source)."""
    rows = acceptance_rows(methods)
    sources: dict[str, int] = {}
    not_graded: dict[str, int] = {}
    gradable: list[CountedTauRow] = []
    for c in rows:
        sources[c.row.source_id] = sources.get(c.row.source_id, 0) + 1
        why = NO_N if not c.num_draft_tokens_stated else None if c.as_counted(2.0) is not None else OTHER_COUNT
        if why:
            not_graded[why] = not_graded.get(why, 0) + 1
        else:
            gradable.append(c)

    def counted_point(c: CountedTauRow, exclude: frozenset[str]) -> float | None:
        p = _point(c.row, exclude, engine)
        return None if p is None else c.as_counted(p)

    graded: list[tuple[str, float, float, float, float]] = []
    graded_sources: dict[str, int] = {}
    for c in gradable:
        row, held = c.row, c.row.source_id
        point = counted_point(c, frozenset({held}))
        if point is None:
            not_graded[NO_PRIOR] = not_graded.get(NO_PRIOR, 0) + 1
            continue
        misses = sorted(math.log(o.row.tau / p) for o in gradable if o.row.source_id != held
                        for p in [counted_point(o, frozenset({held, o.row.source_id}))] if p)
        if len(misses) < MIN_MISSES_FOR_RANGE:
            not_graded[NO_RANGE] = not_graded.get(NO_RANGE, 0) + 1
            continue
        lo, hi = (point * math.exp(_quantile(misses, q)) for q in QUANTILES)
        graded.append((row.row_id, row.tau, point, lo, hi))
        graded_sources[held] = graded_sources.get(held, 0) + 1
    return TauLoso(n_rows=len(rows), sources=dict(sorted(sources.items())),
                   graded_sources=dict(sorted(graded_sources.items())),
                   stats=error_stats([(pred, meas) for _, meas, pred, _, _ in graded]),
                   coverage=interval_coverage([(lo, hi, meas) for _, meas, _, lo, hi in graded]),
                   not_graded=dict(sorted(not_graded.items(), key=lambda kv: -kv[1])), rows=graded)


__all__ = ["MIN_MISSES_FOR_RANGE", "PRIOR_COUNTS", "CountedTauRow", "TauLoso", "acceptance_rows",
           "copy_heavy_tau_rows", "tau_loso"]

"""Acceptance ratios from same-setup published pairs: one source, one table, one verifier, one thing changed.

When one source measured two runs that differ in a single respect, the ratio of their acceptance says how far that
respect moves acceptance, free of the harness, hardware and verifier the two runs share. Two such respects are used
where a prior has to borrow rows (``tools/model/priors.py``):

- **the variant** of a method (``variant_gap``: tau over tau). A variant with no rows of its own borrows the plain
  method's, and a plain method with none borrows a variant's (``_select_rows``). Variants are not alike: Hydra's
  sequentially dependent heads accept about 1.4x the tokens of Medusa-1's on the same verifier (EAGLE-3 paper
  Table 1 and the Spec-Bench leaderboard, tau 3.65 vs 2.59 on MT-Bench). Borrowed as they were, a Medusa-1 prior
  without its own rows sat at Medusa-2's level and a Medusa-2 prior at Medusa-1's. A pair compares like with like:
  both rows run by the method's authors, or both by third parties (``tools/catalog/authorship.py``); otherwise the
  ratio would also carry who ran them, which ``tools/model/runner_levelling.py`` already moves.
- **the workload** (``workload_gap``: (tau-1) over (tau-1), the quantity ``WORKLOAD_ADJUST`` moves). A workload
  with no rows borrows the nearest one's (``FALLBACK``); where that move was an assumption, the measured ratio
  replaces it.

A pair's tau comes from the rows when they state it. A row that states only a speedup has its tau read off a run
that costs the same per cycle: for two variants only when the variant keeps the plain method's drafter and tree
(``SAME_SHAPE_VARIANTS``), as tau_v / tau_plain = speedup_v / speedup_plain; for a workload, from its table's stated
overall tau, split over the table's tasks in proportion to their speedups, and only between workloads of alike
typical context (``CONTEXT_ALIKE``), since a long document makes each verify dearer and the speedup ratio would
charge that to acceptance (EAGLE-3 on CNN/DM: tau 0.97x MT-Bench's, speedup 0.90x; EAGLE-3 paper Table 1). A source
gives the median of its pairs and a ratio is the median over sources, so one paper's many benchmarks count once.
Every ratio is computed without the sources a leave-one-source-out run excludes, a republished copy of a measurement
with its original (``catalog.published.measurement_sources``).
"""

from __future__ import annotations

import statistics
from functools import lru_cache

from specpick.tools.catalog.knowledge import knowledge, knowledge_cache
from specpick.tools.catalog.authorship import by_authors
from specpick.tools.catalog.published import AGGREGATE, WORKLOAD_MIXES, PublishedRow, load_published, \
    measurement_sources
from specpick.tools.model.workload_context import typical_context_tokens
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import METHOD_FAMILY

# (method, variant) whose drafting and verification are the plain method's, so only acceptance differs: the
# registry's ``same_shape_variants`` (Medusa-2, HASS; tools/methods.py cites them).
SAME_SHAPE_VARIANTS: frozenset[tuple[str, str]] = frozenset(
    (r.name, v) for r in REGISTRY for v in r.same_shape_variants)
CONTEXT_ALIKE = 2.0  # assumption: typical contexts within 2x of each other cost alike per cycle
# assumption: below this (tau-1) on the base workload, a 0.01 error in a read-off tau moves the ratio by over 3%
MIN_BASE_EXCESS = 0.3


def _contexts_alike(a: str, b: str) -> bool:
    ca, cb = typical_context_tokens(a), typical_context_tokens(b)
    return max(ca, cb) <= CONTEXT_ALIKE * min(ca, cb)


@knowledge_cache("same_setup.paper_rows")  # read from the catalog's rows: reload() drops it (Knowledge)
def _paper_rows() -> tuple[PublishedRow, ...]:
    """Published rows usable in a pair: a modelled method and point values (aggregates and mixes included: they
    anchor a table's tau, and two variants run on the same mix compare like any benchmark)."""
    return tuple(r for r in load_published() if r.method and r.workload
                 and not r.speedup_is_range and not r.acceptance_is_range)


def _rows(exclude: frozenset[str]) -> tuple[PublishedRow, ...]:
    """The pair rows of the view leaving ``exclude`` out (kept on that view: a reload or another view rebuilds)."""
    view = knowledge().without(exclude)
    return view.derived("same_setup.rows", lambda: tuple(
        r for r in _paper_rows() if view.keeps(measurement_sources(r.row_id, r.source_id))))


def _median_over_sources(by_source: dict[str, list[float]]) -> tuple[float, tuple[str, ...]]:
    if not by_source:
        return 1.0, ()
    return statistics.median(statistics.median(v) for v in by_source.values()), tuple(sorted(by_source))


@lru_cache(maxsize=256)
def variant_gap(method: str, variant: str, exclude: frozenset[str] = frozenset()) -> tuple[float, tuple[str, ...]]:
    """(tau of ``variant`` over the plain method's, the sources it rests on), from pairs outside ``exclude``;
    (1.0, ()) for the plain method or when no source ran both."""
    if not variant:
        return 1.0, ()

    def setup(r: PublishedRow) -> tuple:
        return (r.source_id, r.source, r.verifier_model, r.hardware, r.task, r.temperature, r.batch,
                by_authors(r.source_id, r.method, r.variant))

    # a mean of rows already in the set would count its benchmarks twice; a mix run by both variants is one pair
    rows = [r for r in _rows(exclude) if r.method == method and r.workload != AGGREGATE]
    plain: dict[tuple, list[PublishedRow]] = {}
    for r in rows:
        if r.variant == "":
            plain.setdefault(setup(r), []).append(r)
    same_shape = (method, variant) in SAME_SHAPE_VARIANTS
    by_source: dict[str, list[float]] = {}
    for r in rows:
        if r.variant != variant:
            continue
        for p in plain.get(setup(r), []):
            if r.tau and p.tau:
                by_source.setdefault(r.source_id, []).append(r.tau / p.tau)
            elif same_shape and r.speedup and p.speedup:
                by_source.setdefault(r.source_id, []).append(r.speedup / p.speedup)
    return _median_over_sources(by_source)


def measured_variant_gaps() -> dict[tuple[str, str], tuple[float, tuple[str, ...]]]:
    """Every (method, variant) some source ran beside the plain method: its gap and sources (for ``calibrate``)."""
    kinds = sorted({(r.method, r.variant) for r in _paper_rows() if r.variant})
    return {k: g for k in kinds if (g := variant_gap(*k))[1]}


def _task_taus(table: list[PublishedRow]) -> dict[str, float]:
    """workload -> tau for one table of one method on one setup: the tasks' stated taus; when no task states one,
    the table's stated overall tau (an aggregate or mix row) split over its tasks in proportion to their speedups."""
    tasks = [r for r in table if r.workload != AGGREGATE and r.workload not in WORKLOAD_MIXES]
    taus: dict[str, list[float]] = {}
    if any(r.tau for r in tasks):
        for r in tasks:
            if r.tau:
                taus.setdefault(r.workload, []).append(r.tau)
    else:
        overall = [r.tau for r in table if (r.workload == AGGREGATE or r.workload in WORKLOAD_MIXES) and r.tau]
        if len(overall) == 1 and tasks and all(r.speedup for r in tasks):  # one overall, or the table is unclear
            mean_speed = statistics.fmean(r.speedup for r in tasks)
            for r in tasks:
                taus.setdefault(r.workload, []).append(overall[0] * r.speedup / mean_speed)
    return {w: statistics.median(v) for w, v in taus.items()}


@lru_cache(maxsize=512)
def workload_gap(family: str, workload: str, base: str,
                 exclude: frozenset[str] = frozenset()) -> tuple[float, tuple[str, ...]]:
    """((tau-1) on ``workload`` over (tau-1) on ``base`` for the method family, the sources it rests on), from one
    method, variant and configuration run on both workloads in one table, outside ``exclude``; (1.0, ()) when none.
    Rows of one workload in one table (MT-Bench categories) give the median of their taus."""
    tables: dict[tuple, list[PublishedRow]] = {}
    for r in _rows(exclude):
        if METHOD_FAMILY.get(r.method) == family:
            key = (r.source_id, r.source, r.verifier_model, r.hardware, r.temperature, r.batch, r.method, r.variant,
                   r.config, r.draft_or_head)
            tables.setdefault(key, []).append(r)
    by_source: dict[str, list[float]] = {}
    estimated_ok = _contexts_alike(workload, base)
    for key, table in tables.items():
        taus = _task_taus(table)
        if not estimated_ok and not all(any(r.workload == w and r.tau for r in table) for w in (workload, base)):
            continue  # unlike contexts: only taus both rows state
        if workload in taus and base in taus and taus[base] - 1.0 >= MIN_BASE_EXCESS and taus[workload] > 1.0:
            by_source.setdefault(key[0], []).append((taus[workload] - 1.0) / (taus[base] - 1.0))
    return _median_over_sources(by_source)


__all__ = ["SAME_SHAPE_VARIANTS", "measured_variant_gaps", "variant_gap", "workload_gap"]

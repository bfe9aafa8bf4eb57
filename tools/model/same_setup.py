"""Acceptance ratios from same-setup published pairs: one source, one verifier, one harness, one thing changed.

When one source measured two runs that differ in a single respect, the ratio of their acceptance says how far that
respect moves acceptance, free of the harness, hardware and verifier the two runs share. Two such respects are used
where a prior has to borrow rows (``tools/model/priors.py``):

- **the variant** of a method. A variant with no rows of its own borrows the plain method's, and a plain method with
  none borrows a variant's (``_select_rows``). Variants are not alike: Hydra's sequentially dependent heads accept
  about 1.4x the tokens of Medusa-1's on the same verifier (EAGLE-3 paper Table 1 and the Spec-Bench leaderboard,
  tau 3.65 vs 2.59 on MT-Bench), and Medusa-2's jointly trained backbone about 1.25x (Medusa README: 2.83x vs
  2.18x). Borrowed as they were, a Medusa-1 prior sat at Medusa-2's level and a Medusa-2 prior at Medusa-1's.
- **the workload**. A workload with no rows borrows the nearest one's (``FALLBACK``). Where the move was an
  assumption (``WORKLOAD_ADJUST`` reasons that start with "assumption"), a measured ratio replaces it: EAGLE-2 on
  Spec-Bench's translation task runs at 0.67x its chat speed on the same machine (SAM-Decoding README).

A pair's ratio is tau over tau when both rows state it. Otherwise it is speedup over speedup when the two runs
cost the same per cycle, since then the speedup ratio is the tau ratio: for two variants only when the variant keeps
the plain method's drafter and tree (``SAME_SHAPE_VARIANTS``); for two workloads of one method, variant and
configuration only when their typical contexts are alike (``CONTEXT_ALIKE``), since a long document makes each
verify dearer and the speedup ratio would charge that to acceptance (EAGLE-3 on CNN/DM: tau 0.97x MT-Bench's, speedup
0.90x; EAGLE-3 paper Table 1). A source gives the median of its pairs and a ratio is the median over sources, so one
paper's many benchmarks count once. Every ratio is computed without the sources a leave-one-source-out run excludes.
"""

from __future__ import annotations

import statistics
from functools import lru_cache

from specpick.tools.catalog.published import AGGREGATE, PublishedRow, load_published
from specpick.tools.model.workload_context import DEFAULT_CONTEXT_TOKENS, UNKNOWN_WORKLOAD_CONTEXT_TOKENS
from specpick.tools.vocab import METHOD_FAMILY

# (method, variant) whose drafting and verification are the plain method's, so only acceptance differs:
# Medusa-2 trains the same heads jointly with the backbone and decodes with the same tree (Cai et al. 2024,
# arXiv 2401.10774, sec. 2.3); HASS trains EAGLE-2's head with harmonized objectives and decodes with EAGLE-2's
# dynamic tree (Zhang et al. 2024, arXiv 2408.15766, sec. 4).
SAME_SHAPE_VARIANTS: frozenset[tuple[str, str]] = frozenset({("medusa", "medusa-2"), ("eagle2", "hass")})


CONTEXT_ALIKE = 2.0  # assumption: typical contexts within 2x of each other cost alike per cycle


def _contexts_alike(a: str, b: str) -> bool:
    ca, cb = (DEFAULT_CONTEXT_TOKENS.get(w, UNKNOWN_WORKLOAD_CONTEXT_TOKENS) for w in (a, b))
    return max(ca, cb) <= CONTEXT_ALIKE * min(ca, cb)


@lru_cache(maxsize=1)
def _paper_rows() -> tuple[PublishedRow, ...]:
    """Published rows usable in a pair: a modelled method, point values, no mean of rows already in the set (a
    mix such as Spec-Bench's overall is kept: two variants run on the same mix compare like any benchmark)."""
    return tuple(r for r in load_published() if r.method and r.workload and r.workload != AGGREGATE
                 and not r.speedup_is_range and not r.acceptance_is_range)


def _ratio(a: PublishedRow, b: PublishedRow, speedup_ok: bool) -> float | None:
    """Acceptance of ``a`` over ``b``: tau over tau, else (same drafting) speedup over speedup."""
    if a.tau and b.tau:
        return a.tau / b.tau
    if speedup_ok and a.speedup and b.speedup:
        return a.speedup / b.speedup
    return None


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
        return r.source_id, r.verifier_model, r.hardware, r.task, r.temperature, r.batch

    rows = [r for r in _paper_rows() if r.method == method and r.source_id not in exclude]
    plain = {setup(r): r for r in rows if r.variant == ""}
    by_source: dict[str, list[float]] = {}
    for r in rows:
        if r.variant == variant and setup(r) in plain:
            ratio = _ratio(r, plain[setup(r)], (method, variant) in SAME_SHAPE_VARIANTS)
            if ratio is not None:
                by_source.setdefault(r.source_id, []).append(ratio)
    return _median_over_sources(by_source)


def borrow_factor(method: str, wanted: str, row_variant: str, exclude: frozenset[str]) -> float:
    """The multiplier on tau that moves a ``row_variant`` row of ``method`` to ``wanted`` (1.0 when either gap is
    unmeasured: then the row is used as it is)."""
    if wanted == row_variant:
        return 1.0
    g_wanted, src_w = variant_gap(method, wanted, exclude)
    g_row, src_r = variant_gap(method, row_variant, exclude)
    if (wanted and not src_w) or (row_variant and not src_r):
        return 1.0
    return g_wanted / g_row


def measured_variant_gaps() -> dict[tuple[str, str], tuple[float, tuple[str, ...]]]:
    """Every (method, variant) some source ran beside the plain method: its gap and sources (for ``calibrate``)."""
    kinds = sorted({(r.method, r.variant) for r in _paper_rows() if r.variant})
    return {k: g for k in kinds if (g := variant_gap(*k))[1]}


@lru_cache(maxsize=512)
def workload_gap(family: str, workload: str, base: str,
                 exclude: frozenset[str] = frozenset()) -> tuple[float, tuple[str, ...]]:
    """(tau on ``workload`` over tau on ``base`` for the method family, the sources it rests on), from runs of one
    method, variant and configuration on both workloads outside ``exclude``; (1.0, ()) when none. Several rows of
    one workload in one setup (MT-Bench categories) give the median of their pairs."""
    groups: dict[tuple, dict[str, list[PublishedRow]]] = {}
    for r in _paper_rows():
        if r.source_id in exclude or METHOD_FAMILY.get(r.method) != family or r.workload not in (workload, base):
            continue
        key = (r.source_id, r.verifier_model, r.hardware, r.temperature, r.batch, r.method, r.variant, r.config)
        groups.setdefault(key, {}).setdefault(r.workload, []).append(r)
    by_source: dict[str, list[float]] = {}
    speedup_ok = _contexts_alike(workload, base)
    for key, by_w in groups.items():
        if workload not in by_w or base not in by_w:
            continue
        ratios = [x for a in by_w[workload] for b in by_w[base] if (x := _ratio(a, b, speedup_ok)) is not None]
        if ratios:
            by_source.setdefault(key[0], []).append(statistics.median(ratios))
    return _median_over_sources(by_source)


__all__ = ["SAME_SHAPE_VARIANTS", "borrow_factor", "measured_variant_gaps", "variant_gap", "workload_gap"]

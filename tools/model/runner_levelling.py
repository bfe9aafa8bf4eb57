"""Who ran a papers'-harness row: levelling acceptance to the method's authors' or a third party's run.

The methods' authors measure more acceptance than third parties re-running their methods (RADAR's EAGLE-3 on
Vicuna-13B: tau 5.5-6.4 where the EAGLE-3 paper has 6.2-7.5). A user is a third party, so a prior's authors' rows
are scaled down by ``runner_ratio`` (``runner_factors``); a calibration case the authors ran scales the third
parties' rows up by it. Who ran a row: ``tools/catalog/authorship.py``.
"""

from __future__ import annotations

import statistics

from specpick.tools.catalog.authorship import by_authors
from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.published import measurement_sources
from specpick.tools.model.prior_rows import PriorRow, RowTarget, load_prior_rows, row_shape, row_taus, source_median
from specpick.tools.vocab import EAGLE_METHODS, Runner

RUNNER_MIN_SOURCES = 2  # third-party sources compared with the authors before rows are levelled by who ran them


RUNNER_RATIO_FLOOR = 0.5  # assumption: below this a comparison says more about the rows than about who ran them


RUNNER_LABEL: dict[str, str] = {"authors": "the method's own authors", "third_party": "a third party"}


def _by_authors(r: PriorRow) -> bool:
    return by_authors(r.source_id, r.method, r.variant)


def _runner_group(method: str) -> str:
    """The methods one author-vs-third-party comparison speaks for: the EAGLE heads share one family of papers."""
    return "eagle" if method in EAGLE_METHODS else method


@knowledge_cache("priors.runner_comparisons")  # MTP rows' decays read the catalog's families
def _runner_comparisons(exclude: frozenset[str]) -> tuple[dict[str, tuple[float, ...]], frozenset[str]]:
    """(per third-party source, its rows' tau-1 over the authors' for the same method, variant and workload;
    the method groups those comparisons cover), from the papers'-harness rows outside ``exclude``."""
    paper = [r for r in load_prior_rows() if r.harness_class == "paper"
             and not measurement_sources(r.published_row, r.source_id) & exclude]
    ratios: dict[str, list[float]] = {}
    groups: set[str] = set()
    for r in paper:
        if r.tau is None or r.tau <= 1.0 or _by_authors(r):
            continue
        authors = [a for a in paper if _by_authors(a) and (a.method, a.variant, a.workload) == (r.method, r.variant,
                                                                                                 r.workload)]
        if not authors:
            continue
        draft_ratio = r.draft_params_b / r.verifier_params_b if r.draft_params_b and r.verifier_params_b else None
        target = RowTarget(r.method, r.temperature, row_shape(r), draft_ratio)
        tau_authors = source_median(authors, row_taus(authors, target, 1.0, [], exclude))
        if tau_authors > 1.0:
            ratios.setdefault(r.source_id, []).append((r.tau - 1.0) / (tau_authors - 1.0))
            groups.add(_runner_group(r.method))
    return {k: tuple(v) for k, v in ratios.items()}, frozenset(groups)


def runner_ratio(exclude: frozenset[str] = frozenset()) -> tuple[float, int]:
    """(a third party's tau - 1 over the method's authors' prior for the same method, variant and workload, capped at
    1; the third-party sources it rests on), from the papers'-harness rows outside ``exclude`` (a leave-one-source-out
    run must not learn it from the left-out source). Like the prior it corrects, it pools verifiers: it says how far
    third parties' runs fall below what the authors' rows predict for them, not a same-model gap (on the same
    verifier only, RADAR's rows give about 0.87 and HASS's about 1.04).

    Each third-party row that states tau is set against its method's authors' own rows of the same variant and
    workload, moved to the row's shape, temperature and draft size (``row_taus``); a source gives the median of its
    rows' ratios and the figure is the median over sources. (1.0, n) when fewer than ``RUNNER_MIN_SOURCES`` compare.
    """
    ratios, _ = _runner_comparisons(exclude)
    if len(ratios) < RUNNER_MIN_SOURCES:
        return 1.0, len(ratios)
    # floor: a source of tau-1 rows at ~0 must not zero the ratio that authors' cases divide by
    return min(1.0, max(RUNNER_RATIO_FLOOR, statistics.median(statistics.median(v) for v in ratios.values()))), \
        len(ratios)


def runner_factors(rows: list[PriorRow], runner: Runner, exclude: frozenset[str],
                    assumptions: list[str]) -> list[float] | None:
    """Per paper row, the multiplier on tau - 1 that levels it to ``runner``'s run (None: no row moves).

    The methods' authors measure more than third parties (``tools/catalog/authorship.py``); a user is a third
    party, so the authors' rows are scaled down by ``runner_ratio``, and a calibration case the authors ran scales
    the third parties' rows up by it. Only a method group some comparison covers moves (``_runner_group``): there
    are no authors' plain-Medusa, n-gram or lookahead tau rows to compare with, so the ratio is not extrapolated.
    """
    if _runner_group(rows[0].method) not in _runner_comparisons(exclude)[1]:
        return None
    ratio, n_sources = runner_ratio(exclude)
    want_authors = runner == "authors"
    factors = [1.0 if _by_authors(r) == want_authors else (1.0 / ratio if want_authors else ratio) for r in rows]
    if all(f == 1.0 for f in factors):
        return None
    other = "third parties'" if want_authors else "the method's authors'"
    assumptions.append(f"acceptance levelled to a run by {RUNNER_LABEL[runner]}: {other} rows' tau-1 "
                       f"{'/' if want_authors else 'x'} {ratio:.2f} (third parties' tau-1 over the authors' for the "
                       f"same method, variant and workload, median of {n_sources} third-party sources)")
    return factors


__all__ = ["RUNNER_LABEL", "RUNNER_MIN_SOURCES", "RUNNER_RATIO_FLOOR", "runner_factors", "runner_ratio"]

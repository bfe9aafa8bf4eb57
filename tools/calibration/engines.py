"""`specpick calibrate --engines`: the model against engine-measured rows, kept apart from the dev set.

The dev set (``published_measurements.csv``) is mostly the methods' own eager harnesses;
``tools/data/engine_measurements.csv`` holds what serving engines measured. Those rows never enter the
dev-set figures. Every row is predicted three ways, each with the estimate's interval [low, high]:

* **leave one source out** (the headline): acceptance from the priors with the row's own source removed;
* **cost model**: the row's own tau/alpha fed in (priors, where a shape still needs them, without its
  source), so only the cycle cost is tested;
* **end to end, in-sample**: the priors as committed.

LOSO removes the source from the acceptance priors only. The global constants (roofline, engine per-cycle
costs) are used as committed; they were fitted on the dev set's batch > 1 rows and the engine *fit* half,
so for a fit-half source LOSO is not fully out of sample (rows whose source the committed constants saw
are flagged ``constants_saw_source``). The sources are split fit/holdout by the committed file
``tools/data/engine_split.csv`` (``tools/calibration/split.py``); holdout figures are reported apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import CalibCase, Prediction, predict
from specpick.tools.calibration.engine_cases import Use, row_use
from specpick.tools.calibration.engine_rows import EngineRow, load_engine_rows
from specpick.tools.calibration.extrapolation import ExtrapolationReport, extrapolation_report
from specpick.tools.calibration.split import SPLIT_RULE, Split, constants_saw, holdout_sources, split_of_source
from specpick.tools.calibration.baselines import PlainStepReport, plain_step_report
from specpick.tools.calibration.stats import Coverage, Stats, error_stats, interval_coverage
from specpick.tools.errors import InputError
from specpick.tools.calibration.llamacpp_fit import refit_loso_errors
from specpick.tools.vocab import METHOD_FAMILY

Mode = Literal["loso", "cost_model", "end_to_end"]
LOSO_CAVEAT = ("LOSO removes the row's source from the acceptance priors only; the global constants are as "
               "committed (fitted on the dev set's batch > 1 rows and the engine fit half), so rows whose source "
               "the constants saw are not fully out of sample ('sources never fitted' excludes them)")


class EngineRowResult(BaseModel):
    row_id: str
    source_id: str
    engine: str
    engine_version: str
    method: str
    verifier: str
    model_class: Literal["dense", "moe"]
    hardware: str
    vendor: str = Field("", description="the GPU's vendor (llama.cpp: its back end, CUDA / ROCm or Vulkan / Metal)")
    batch: int
    split: Split
    constants_saw_source: bool = Field(description="the committed global constants were fitted on this source")
    measured: float
    loso: Prediction | None = Field(None, description="priors without the row's source")
    cost_model: Prediction | None = Field(None, description="the row's own tau/alpha")
    end_to_end: Prediction | None = Field(None, description="priors as committed (in-sample where they used it)")
    notes: list[str] = Field(default_factory=list)


class CoverageGroups(BaseModel):
    overall: Coverage
    holdout_half: Coverage
    per_engine: dict[str, Coverage]
    per_method: dict[str, Coverage]


class EngineModeReport(BaseModel):
    mode: Mode
    overall: Stats
    fit_half: Stats
    holdout_half: Stats
    never_fitted: Stats = Field(description="rows whose source the committed constants never saw")
    per_engine: dict[str, Stats]
    per_method: dict[str, Stats]
    per_class: dict[str, Stats] = Field(description="dense vs MoE verifier")
    per_batch: dict[str, Stats] = Field(description="batch 1 vs batch > 1")
    coverage: CoverageGroups
    not_covered: int = Field(0, description="rows with no prior left once their source is removed")


class AcceptanceReport(BaseModel):
    """Measured tau (mean accepted tokens per cycle, bonus included) vs the priors' tau without the row's source:
    the acceptance half of the model alone, on every engine row that states tau (with or without a speedup)."""

    overall: Stats
    holdout_half: Stats
    per_engine: dict[str, Stats]
    per_method: dict[str, Stats]
    not_covered: int = 0


class LlamacppSection(BaseModel):
    """The llama.cpp rows against the llama.cpp cost model, by the engines' out-of-sample rules (split by source,
    LOSO priors; the constants fitted on the fit half only), plus the stricter refit without the row's source."""

    n_rows: int = Field(description="llama.cpp rows in tools/data/engine_measurements.csv")
    sources: list[str] = Field(description="sources of the rows with a point speedup the model can run")
    loso: EngineModeReport
    cost_model: EngineModeReport | None = Field(None, description="rows that state their own tau/alpha")
    per_backend: dict[str, Stats] = Field(default_factory=dict, description="LOSO by GPU vendor (its back end)")
    per_family: dict[str, Stats] = Field(default_factory=dict, description="LOSO by method family (tools/vocab.py "
                                         "METHOD_FAMILY: head, draft, model_free)")
    coverage_per_family: dict[str, Coverage] = Field(default_factory=dict)
    refit_loso: Stats | None = Field(None, description="each source predicted with the constants refitted without "
                                     "it (tools/calibration/llamacpp_fit.py), priors without it")
    rows: list[EngineRowResult] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)


class EngineReport(BaseModel):
    n_rows: int
    n_used: int = Field(description="rows with a point speedup the model can run")
    usable: dict[str, dict[str, int]] = Field(description="'engine/method' -> rows usable for cost_model (point "
                                              "speedup + own tau/alpha), end_to_end (point speedup, includes the "
                                              "cost_model rows) and acceptance_only (tau/alpha, no speedup)")
    skipped: dict[str, int]
    split_rule: str = SPLIT_RULE
    loso_caveat: str = LOSO_CAVEAT
    loso: EngineModeReport
    cost_model: EngineModeReport
    end_to_end: EngineModeReport
    acceptance_loso: AcceptanceReport
    plain_step: PlainStepReport = Field(description="the model's plain decode step against the rows' measured "
                                        "no-speculation baselines, absolute ms (tools/calibration/baselines.py)")
    rows: list[EngineRowResult]
    llamacpp: LlamacppSection | None = Field(None, description="the llama.cpp rows: their own cost model, fit and "
                                             "gate (tools/model/overhead_llamacpp.py); no other engine's figure holds "
                                             "them")
    extrapolation: ExtrapolationReport | None = Field(None, description="whole classes of rows (long context, PCIe, "
                                                      "newest release, architecture, GPU class) held out of every "
                                                      "prior and predicted (tools/calibration/extrapolation.py)")


def engine_cases(split: Split | None = None) -> list[CalibCase]:
    """Engine rows with a point speedup as calibration cases, optionally one committed half only."""
    cases = []
    for row in load_engine_rows():
        use, case = row_use(row)
        if use in ("cost_model", "end_to_end") and not isinstance(case, str):
            if split is None or split_of_source(row.source_id) == split:
                cases.append(case)
    return cases


def _by(rows: list[EngineRowResult], key: Callable[[EngineRowResult], str], fn) -> dict:
    return {k: fn([r for r in rows if key(r) == k]) for k in sorted({key(r) for r in rows})}


def _mode(name: Mode, results: list[EngineRowResult]) -> EngineModeReport:
    rows = [r for r in results if getattr(r, name) is not None]

    def st(group: list[EngineRowResult]) -> Stats:
        return error_stats([(getattr(r, name).speedup, r.measured) for r in group])

    def cov(group: list[EngineRowResult]) -> Coverage:
        return interval_coverage([(getattr(r, name).low, getattr(r, name).high, r.measured) for r in group])

    holdout = [r for r in rows if r.split == "holdout"]
    return EngineModeReport(
        mode=name, overall=st(rows), fit_half=st([r for r in rows if r.split == "fit"]), holdout_half=st(holdout),
        never_fitted=st([r for r in rows if not r.constants_saw_source]),
        per_engine=_by(rows, lambda r: r.engine, st), per_method=_by(rows, lambda r: r.method, st),
        per_class=_by(rows, lambda r: r.model_class, st),
        per_batch=_by(rows, lambda r: "batch 1" if r.batch == 1 else "batch > 1", st),
        coverage=CoverageGroups(overall=cov(rows), holdout_half=cov(holdout),
                                per_engine=_by(rows, lambda r: r.engine, cov),
                                per_method=_by(rows, lambda r: r.method, cov)),
        not_covered=sum(1 for r in results if getattr(r, name) is None) if name == "loso" else 0,
    )


def _result(row: EngineRow, use: Use, case: CalibCase) -> EngineRowResult:
    res = EngineRowResult(
        row_id=row.row_id, source_id=row.source_id, engine=row.engine, engine_version=row.engine_version,
        method=row.method or "", verifier=case.verifier.repo_id,
        model_class="moe" if case.verifier.is_moe else "dense", hardware=f"{case.gpus}x {case.gpu.key}",
        vendor=case.gpu.vendor,
        batch=case.batch, split=split_of_source(row.source_id), constants_saw_source=constants_saw(row.source_id),
        measured=row.speedup or 0.0, notes=case.notes,
    )
    own_source = frozenset({row.source_id})
    # A holdout row's priors leave out every holdout source, not just its own: the holdout half then rests on
    # nothing derived from the holdout half (engine rows are acceptance priors for engine estimates).
    # llama.cpp rows: their holdout half is the llama.cpp sources of it, which are no acceptance prior
    # (tools/calibration/llamacpp_fit.py says why the serving engines' holdout rows stay in their priors).
    if res.split == "holdout" and not row.llamacpp:
        own_source = own_source | holdout_sources()
    if use == "cost_model":
        res.cost_model = predict(case, own=True, exclude=own_source)
    res.end_to_end = predict(case, own=False)
    try:
        res.loso = predict(case, own=False, exclude=own_source)
    except InputError:  # no prior left for this method once the source is removed: counted as not covered
        res.loso = None
    return res


def _acceptance(taus: list[tuple[EngineRow, float | None]]) -> AcceptanceReport:
    scored = [(r, t) for r, t in taus if t is not None]

    def st(group: list[tuple[EngineRow, float]]) -> Stats:
        return error_stats([(t, r.tau or 0.0) for r, t in group])

    def by(key: Callable[[EngineRow], str]) -> dict[str, Stats]:
        return {k: st([(r, t) for r, t in scored if key(r) == k]) for k in sorted({key(r) for r, _ in scored})}

    return AcceptanceReport(
        overall=st(scored), holdout_half=st([(r, t) for r, t in scored if split_of_source(r.source_id) == "holdout"]),
        per_engine=by(lambda r: r.engine), per_method=by(lambda r: r.method or ""),
        not_covered=len(taus) - len(scored))


def _loso_tau(case: CalibCase) -> float | None:
    try:
        return predict(case, own=False, exclude=frozenset({case.row.source_id})).tau
    except InputError:
        return None


def engine_report() -> EngineReport:
    """Predict every usable engine row (LOSO, cost model, in-sample) and summarise by group, split and interval."""
    rows = load_engine_rows()
    skipped: dict[str, int] = {}
    usable: dict[str, dict[str, int]] = {}
    results: list[EngineRowResult] = []
    lcpp: list[EngineRowResult] = []
    lcpp_skipped: dict[str, int] = {}
    taus: list[tuple[EngineRow, float | None]] = []
    for row in rows:
        if row.llamacpp:  # its own section; counted among the skipped for the serving engines' figures
            use, case = row_use(row, llamacpp=True)
            if use in ("cost_model", "end_to_end") and not isinstance(case, str):
                lcpp.append(_result(row, use, case))
            elif isinstance(case, str):
                lcpp_skipped[case] = lcpp_skipped.get(case, 0) + 1
        use, case = row_use(row)
        if isinstance(case, str):
            skipped[case] = skipped.get(case, 0) + 1
            continue
        counts = usable.setdefault(f"{row.engine}/{row.method}",
                                   {"cost_model": 0, "end_to_end": 0, "acceptance_only": 0})
        counts[use] += 1
        if use == "cost_model":
            counts["end_to_end"] += 1
        if use in ("cost_model", "end_to_end"):
            results.append(_result(row, use, case))
        if row.tau is not None:
            taus.append((row, results[-1].loso.tau if use != "acceptance_only" and results[-1].loso
                         else _loso_tau(case)))
    return EngineReport(
        n_rows=len(rows), n_used=len(results), usable=dict(sorted(usable.items())),
        skipped=dict(sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))),
        loso=_mode("loso", results), cost_model=_mode("cost_model", results),
        end_to_end=_mode("end_to_end", results), acceptance_loso=_acceptance(taus), plain_step=plain_step_report(),
        rows=results, llamacpp=_llamacpp_section(sum(1 for r in rows if r.llamacpp), lcpp, lcpp_skipped),
        extrapolation=extrapolation_report(),
    )


def _llamacpp_section(n_rows: int, results: list[EngineRowResult], skipped: dict[str, int]) -> LlamacppSection | None:
    if not results:
        return None

    with_cost = [r for r in results if r.cost_model is not None]
    loso = [r for r in results if r.loso is not None]
    vendor = {r.row_id: r.vendor for r in results}
    refit = refit_loso_errors()

    family = lambda r: METHOD_FAMILY.get(r.method, r.method)  # noqa: E731
    return LlamacppSection(
        n_rows=n_rows, sources=sorted({r.source_id for r in results}), loso=_mode("loso", results),
        cost_model=_mode("cost_model", with_cost) if with_cost else None,
        per_backend=_by(loso, lambda r: vendor[r.row_id],
                        lambda g: error_stats([(r.loso.speedup, r.measured) for r in g])),  # type: ignore[union-attr]
        per_family=_by(loso, family, lambda g: error_stats([(r.loso.speedup, r.measured) for r in g])),  # type: ignore[union-attr]
        coverage_per_family=_by(loso, family, lambda g: interval_coverage(
            [(r.loso.low, r.loso.high, r.measured) for r in g])),  # type: ignore[union-attr]
        refit_loso=error_stats(refit) if refit else None, rows=results,
        skipped=dict(sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))))

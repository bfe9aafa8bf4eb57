"""Global fit of the few runtime constants (`specpick calibrate --fit`; maintenance, not used at run time).

The same constants serve every row: a grid search picks the values that
minimise the median absolute % error, and the committed constants in
``tools/model/overhead.py`` / ``tools/model/constants.py`` quote the result. Nothing here is
fitted per row. Each grid point is a copy of ``DEFAULT_CONSTANTS`` passed down to the
model; no module state is patched.

* eager "paper" harness: host dispatch per layer, per-forward cost, draft-step
  host cost, per-cycle and per-tree-cycle costs, on the rows that state their own
  tau/alpha (the cost model alone, mode a);
* jointly, the roofline FLOPs efficiency and sharpness and the engines' per-cycle
  costs (fixed, per forward in the cycle, per sequence; one set for vLLM, SGLang and
  TensorRT-LLM) on every dev row with batch > 1 (EAGLE1-T7, EAGLE3-T5, Clover, Hydra,
  blockwise MTP; end to end) plus the *fit* half of the engine-measured rows (the committed split
  ``tools/data/engine_split.csv``, ``tools/calibration/split.py``; their own tau/alpha where stated,
  priors otherwise),
  by pooled mean APE (a median over one curve's 18 points is too flat to pick from;
  rows without acceptance absorb prior bias, reported as such). The engine rows'
  *holdout* half is scored for the committed and the best values but never fitted on;
* the engines' execution-path costs on the fit half's rows that state their own acceptance, pooled with the fit
  half's no-speculation baselines (the absolute plain step) and the dev rows a serving engine ran at batch > 1 (the
  dense concurrency sweeps the fit half lacks; end to end, priors without the row's source or any holdout source);
* the share of per-request work that overlap scheduling leaves on the critical path, end to end on the fit half's
  rows that ran with overlap (acceptance from priors without the row's source), refitted leave-one-source-out.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import CalibCase, build_case, predict_speedup
from specpick.tools.catalog.published import load_published
from specpick.tools.errors import InputError
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants
from specpick.tools.model.estimate import ENGINE_HARNESSES
from specpick.tools.calibration.engines import engine_cases
from specpick.tools.calibration.engines import holdout_sources
from specpick.tools.calibration.llamacpp_fit import GRID
from specpick.tools.calibration.llamacpp_fit import fit_llamacpp
from specpick.tools.calibration.baselines import plain_step_report

PAPER_GRID: dict[str, tuple[float, ...]] = {
    "host_per_layer_ms": (0.8, 0.9, 1.0, 1.1, 1.2),
    "per_forward_ms": (1.0, 2.0),
    "draft_step_host_ms": (0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
    "cycle_ms": (1.0, 2.0, 3.0, 4.0),
    "cycle_tree_ms": (0.0, 1.0, 2.0, 3.0),
}
# Keys are the labels the fit reports: roofline keys name ``ModelConstants`` fields (ROOFLINE_FIELDS); "engine."
# keys are ``RuntimeOverhead`` fields set alike on every serving engine (too few engine rows to fit them apart).
# The roofline efficiencies alone: the engines' per-cycle terms belong to the execution-path fit below, on the
# rows that identify them (their own acceptance), so the two fits do not pull one constant two ways.
BATCH_GRID: dict[str, tuple[float, ...]] = {
    "FLOPS_EFFICIENCY": (0.3, 0.35, 0.4, 0.45), "ROOFLINE_SHARPNESS": (2.0, 3.0),
}
ENGINE_PREFIX = "engine."
ROOFLINE_FIELDS: dict[str, str] = {"FLOPS_EFFICIENCY": "flops_efficiency", "ROOFLINE_SHARPNESS": "roofline_sharpness"}

class FitResult(BaseModel):
    name: str
    objective: str
    best: dict[str, float]
    best_score_pct: float
    n_rows: int
    committed: dict[str, float]
    committed_score_pct: float
    holdout: dict[str, float] | None = Field(None, description="held-out engine rows, mean APE %: committed / best "
                                            "(scored, never fitted on)")
    loso_mean_ape_pct: float | None = Field(None, description="each source predicted with the value fitted on the "
                                            "other sources (fits that report it)")


def with_overheads(base: ModelConstants, harnesses: tuple[str, ...], **values: float) -> ModelConstants:
    """A copy of ``base`` whose overheads of ``harnesses`` take ``values`` (nested copy; ``base`` is untouched)."""
    table = base.overheads
    table = table.model_copy(update={h: table.get(h).model_copy(update=values) for h in harnesses})
    return base.model_copy(update={"overheads": table})


def paper_constants(values: dict[str, float], base: ModelConstants = DEFAULT_CONSTANTS) -> ModelConstants:
    """``base`` with the eager "paper" harness overheads set to ``values`` (a ``PAPER_GRID`` point)."""
    return with_overheads(base, ("paper",), **values)


def batch_constants(values: dict[str, float], base: ModelConstants = DEFAULT_CONSTANTS) -> ModelConstants:
    """``base`` with a ``BATCH_GRID`` point: roofline fields directly, "engine." fields on every engine."""
    roof = {ROOFLINE_FIELDS[k]: v for k, v in values.items() if not k.startswith(ENGINE_PREFIX)}
    eng = {k.removeprefix(ENGINE_PREFIX): v for k, v in values.items() if k.startswith(ENGINE_PREFIX)}
    return with_overheads(base.model_copy(update=roof), ENGINE_HARNESSES, **eng)


def _ape(c: CalibCase, own: bool, constants: ModelConstants) -> float:
    return abs(predict_speedup(c, own=own, constants=constants) / (c.row.speedup or 1.0) - 1.0) * 100


def ape_out_of_sample(c: CalibCase, own: bool, constants: ModelConstants, exclude: frozenset[str]) -> float | None:
    """APE with priors that leave out ``exclude`` (a row's own acceptance needs none); None: no prior remains."""
    try:
        return abs(predict_speedup(c, own=own, exclude=frozenset() if own else exclude, constants=constants)
                   / (c.row.speedup or 1.0) - 1.0) * 100
    except InputError:
        return None


def _median_ape(cases: list[CalibCase], own: bool, constants: ModelConstants, mean: bool = False) -> float:
    errs = [_ape(c, own, constants) for c in cases]
    if not errs:
        return float("nan")
    return statistics.fmean(errs) if mean else statistics.median(errs)


def _cases() -> list[CalibCase]:
    return [c for c in (build_case(r) for r in load_published()) if not isinstance(c, str)]


def _grid(name: str, objective: str, grid: dict[str, tuple[float, ...]], score: Callable[[dict[str, float]], float],
          committed: dict[str, float]) -> FitResult:
    keys = list(grid)
    best, best_err = {}, float("inf")
    for combo in itertools.product(*(grid[k] for k in keys)):
        values = dict(zip(keys, combo))
        err = score(values)
        if err < best_err:
            best, best_err = values, err
    return FitResult(name=name, objective=objective, best=best, best_score_pct=round(best_err, 2), n_rows=0,
                     committed=committed, committed_score_pct=round(score(committed), 2))


def fit_all(paper_grid: dict[str, tuple[float, ...]] = PAPER_GRID,
            batch_grid: dict[str, tuple[float, ...]] = BATCH_GRID,
            path_grid: dict[str, tuple[float, ...]] | None = None,
            overlap_grid: dict[str, tuple[float, ...]] | None = None,
            llamacpp_grid: dict[str, tuple[float | None, ...]] | None = None) -> list[FitResult]:
    """The fits in order: the eager harness on its own-acceptance rows; the roofline (batch rows, engine fit half);
    the engines' execution paths (fit half, own acceptance); the per-request work overlap scheduling leaves exposed;
    llama.cpp's own constants on its fit-half rows.

    Each grid point is scored with its own copy of ``DEFAULT_CONSTANTS``; the defaults are never modified.
    Smaller grids (same keys) make quick checks possible.
    """
    cases = _cases()
    paper = [c for c in cases if c.harness == "paper" and c.own_acceptance]
    batch = [c for c in cases if c.batch > 1]

    def paper_score(v: dict[str, float]) -> float:
        return _median_ape(paper, own=True, constants=paper_constants(v))

    po = DEFAULT_CONSTANTS.overhead("paper")
    r1 = _grid("eager paper harness", "median APE, cost model (rows' own tau/alpha)", paper_grid, paper_score,
               {k: getattr(po, k) for k in paper_grid})


    fit_half, holdout = engine_cases("fit"), engine_cases("holdout")
    held_out = holdout_sources()

    def batch_score(v: dict[str, float]) -> float:
        # acceptance from priors without the row's own source and without any holdout source (a dev row an engine ran
        # draws engine priors and engine decay sweeps, some of them the holdout's), so neither the holdout half nor a
        # row's own acceptance leaks into the roofline it helps choose
        constants = batch_constants(v)
        errs = [e for c in batch if (e := ape_out_of_sample(c, False, constants, held_out | {c.row.source_id}))
                is not None]
        errs += [e for c in fit_half if (e := ape_out_of_sample(c, c.own_acceptance, constants,
                                                                  held_out | {c.row.source_id})) is not None]
        return statistics.fmean(errs)

    def holdout_score(v: dict[str, float]) -> float:
        constants = batch_constants(v)
        errs = [e for c in holdout if (e := ape_out_of_sample(c, c.own_acceptance, constants,
                                                                 held_out | {c.row.source_id})) is not None]
        return round(statistics.fmean(errs), 2)

    so = DEFAULT_CONSTANTS.overhead("sglang")
    committed = {k: (getattr(so, k.removeprefix(ENGINE_PREFIX)) if k.startswith(ENGINE_PREFIX)
                     else getattr(DEFAULT_CONSTANTS, ROOFLINE_FIELDS[k])) for k in batch_grid}
    r2 = _grid("roofline", "mean APE over the dev batch > 1 rows (end to end) and the engine rows' fit half (own "
               "tau/alpha where stated), priors without the row's source or any holdout source", batch_grid,
               batch_score, committed)
    r2 = r2.model_copy(update={"n_rows": len(batch) + len(fit_half), "holdout": {
        "n_rows": float(len(holdout)), "committed_mean_ape_pct": holdout_score(committed),
        "best_mean_ape_pct": holdout_score(r2.best)}})
    return [r1.model_copy(update={"n_rows": len(paper)}), r2, fit_engine_paths(path_grid or PATH_GRID),
            fit_overlap_exposure(overlap_grid or OVERLAP_GRID), llamacpp_fit_result(llamacpp_grid)]


def llamacpp_fit_result(grid: dict[str, tuple[float | None, ...]] | None = None) -> FitResult:
    """llama.cpp's own constants on its fit-half rows (tools/calibration/llamacpp_fit.py), as a ``FitResult``."""

    r = fit_llamacpp(grid or GRID)
    none_as_shared = lambda v: {k: (-1.0 if x is None else x) for k, x in v.items()}  # noqa: E731 - -1: shared value
    return FitResult(name="llama.cpp", objective="mean APE, coordinate descent on the llama.cpp rows of the fit split "
                     f"({', '.join(r['sources'])}; own tau where stated, else priors without the row's source or any "
                     "llama.cpp holdout source); -1 = no vendor value of its own", best=none_as_shared(r["best"]),
                     best_score_pct=r["best_score_pct"], n_rows=r["n_rows"], committed=none_as_shared(r["committed"]),
                     committed_score_pct=r["committed_score_pct"], holdout=r["holdout"])


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for res in fit_all():
        print(res.model_dump_json())


# --- serving engines: one cost per execution path ---------------------------------------------------------------
# Keys "<harness>.<field>" set one engine's RuntimeOverhead field; "engine.<field>" sets it on all three.
# One-model costs are per engine (SGLang/TensorRT-LLM capture the draft loop in the verifier's graphs; vLLM's
# EAGLE path did not at first, vllm#20780); the two-model, model-free, MoE and per-sequence terms are shared
# (too few rows per engine to fit them apart).
# The shared MoE term comes first: it moves every MoE row, and coordinate descent is order-sensitive.
PATH_GRID: dict[str, tuple[float, ...]] = {
    "engine.moe_layer_ms": (0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15),
    "engine.moe_layer_16bit_ms": (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1),
    **{f"{h}.one_model_spec_forward_ms": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8) for h in ENGINE_HARNESSES},
    **{f"{h}.one_model_cycle_ms": (0.0, 0.25, 0.5, 1.0, 2.0) for h in ENGINE_HARNESSES},
    "engine.spec_forward_ms": (0.2, 0.4, 0.6, 0.8, 1.0),
    "engine.cycle_ms": (0.0, 0.5, 1.0, 2.0),
    "engine.cycle_per_seq_ms": (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
    "engine.cycle_per_seq_dense_ms": (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3),
    # SGLang spec v2 keeps a sync on the verify result per cycle (sglang#11762 roadmap: "Remove or make
    # verify_done.synchronize() an option"); vLLM's is zero by its own account (0.19: "zero-bubble async scheduling
    # + speculative decoding", vllm#32951) and none of its fit rows with their own acceptance ran with overlap.
    "sglang.overlap_exposed_ms": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
}
PATH_ROUNDS = 4


def path_constants(values: dict[str, float], base: ModelConstants = DEFAULT_CONSTANTS) -> ModelConstants:
    """``base`` with a ``PATH_GRID`` point applied (nested copies; ``base`` untouched)."""
    out = base
    for key, value in values.items():
        who, field = key.split(".", 1)
        out = with_overheads(out, ENGINE_HARNESSES if who == "engine" else (who,), **{field: value})
    return out


def committed_path_values(grid: dict[str, tuple[float, ...]]) -> dict[str, float]:
    """The committed value of every ``grid`` key (the point a fit starts from; tests ablate one key of it)."""
    def value(key: str) -> float:
        who, field = key.split(".", 1)
        o = DEFAULT_CONSTANTS.overhead("sglang" if who == "engine" else who)
        v = getattr(o, field)
        if v is None:  # a one-model field not set: the path uses the generic engine term
            v = getattr(o, field.removeprefix("one_model_"))
        return float(v)
    return {k: value(k) for k in grid}


def dev_engine_batch_cases() -> list[CalibCase]:
    """The dev rows a serving engine ran at batch > 1 (EAGLE-3 paper's SGLang and vLLM sweeps, Clover on vLLM): the
    only dense verifiers measured across concurrency that the engine rows' fit half lacks."""
    return [c for c in _cases() if c.batch > 1 and c.harness in ENGINE_HARNESSES]


def fit_engine_paths(grid: dict[str, tuple[float, ...]] = PATH_GRID, rounds: int = PATH_ROUNDS) -> FitResult:
    """Coordinate descent over ``grid`` on the *fit* split: the engine rows that state their own acceptance (the
    cost model alone) pooled with the no-speculation baselines of fit-split rows (``baselines.py``: the absolute plain
    step, so a ratio cannot come out right with both of its terms wrong) and with the dev rows a serving engine ran at
    batch > 1 (``dev_engine_batch_cases``: without them no dense verifier above concurrency 4 would inform the
    per-request cost; these are end to end, so their acceptance priors, built without their own source and without
    any holdout source, can absorb some cost error), each one row, by mean APE. The holdout split (rows and
    baselines) is scored for the committed and the best values but never fitted on."""

    fit = [c for c in engine_cases("fit") if c.own_acceptance]
    holdout = [c for c in engine_cases("holdout") if c.own_acceptance]
    dev_engine = dev_engine_batch_cases()
    held_out = holdout_sources()

    def errors(cases: list[CalibCase], split: str, values: dict[str, float]) -> list[float]:
        """APE of each row of ``cases``, then of each plain step of ``split`` (fit split: then of each dev row that an
        engine ran at batch > 1, end to end with priors without the row's own source or any holdout source)."""
        constants = path_constants(values)
        steps = [abs(p.error_pct) for p in plain_step_report(constants).rows if p.split == split]
        dev = [e for c in dev_engine if (e := ape_out_of_sample(c, False, constants, held_out | {c.row.source_id}))
               is not None] if split == "fit" else []
        return [_ape(c, True, constants) for c in cases] + steps + dev

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else float("nan")

    committed = committed_path_values(grid)
    best, best_err = dict(committed), mean(errors(fit, "fit", committed))
    committed_err = best_err
    for _ in range(rounds):
        moved = False
        for key, options in grid.items():
            for v in options:
                trial = {**best, key: v}
                err = mean(errors(fit, "fit", trial))
                if err < best_err - 1e-9:
                    best, best_err, moved = trial, err, True
        if not moved:
            break
    n_fit_extra = len(errors([], "fit", committed))
    n_dev = n_fit_extra - len([p for p in plain_step_report(path_constants(committed)).rows if p.split == "fit"])
    held: dict[str, float] = {"n_rows": float(len(holdout))}
    for label, values in (("committed", committed), ("best", best)):
        errs = errors(holdout, "holdout", values)
        rows, steps = errs[:len(holdout)], errs[len(holdout):]
        held |= {f"{label}_mean_ape_pct": round(mean(errs), 2), f"{label}_rows_mean_ape_pct": round(mean(rows), 2),
                 f"{label}_plain_step_mean_ape_pct": round(mean(steps), 2), "n_plain_steps": float(len(steps))}
    return FitResult(name="engine execution paths", objective="mean APE, coordinate descent: cost model (fit-split "
                     "engine rows' own tau/alpha) pooled with the plain decode step of "
                     f"{n_fit_extra - n_dev} fit-split baselines and the {n_dev} dev rows an engine ran at batch > 1 "
                     "(end to end, priors without the row's source or any holdout source)", best=best,
                     best_score_pct=round(best_err, 2),
                     n_rows=len(fit) + n_fit_extra,
                     committed=committed, committed_score_pct=round(committed_err, 2), holdout=held)


# --- overlap scheduling: the per-request work that stays serial -----------------------------------------------
# The execution-path fit cannot see it: no fit-split vLLM row that ran with overlap states its own acceptance. So it
# is fitted end to end on every fit-split row that ran with overlap, with acceptance from priors built *without the
# row's own source* (the constant cannot lean on priors fitted to the same rows), and checked by refitting it with
# each source left out.
OVERLAP_GRID: dict[str, tuple[float, ...]] = {
    "engine.overlap_seq_exposed_fraction": tuple(i / 10 for i in range(11)),
}


def fit_overlap_exposure(grid: dict[str, tuple[float, ...]] = OVERLAP_GRID) -> FitResult:
    """Grid search, by mean APE, over the fit-split engine rows that ran with overlap scheduling (end to end; a row's own
    tau/alpha where it states one, else priors without the row's source and without any holdout source, so nothing
    of the holdout half reaches the fit). ``holdout`` reports the holdout rows with overlap (scored, never fitted on);
    ``loso_mean_ape_pct``: each fit source predicted with the value fitted on the other fit sources."""

    fit = [c for c in engine_cases("fit") if c.spec_overlap]
    holdout = [c for c in engine_cases("holdout") if c.spec_overlap]
    held_out = holdout_sources()
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    committed = committed_path_values(grid)

    def errors(cases: list[CalibCase], values: dict[str, float]) -> dict[str, float]:
        constants = path_constants(values)
        return {c.row.row_id: abs(predict_speedup(c, own=c.own_acceptance, exclude=held_out | {c.row.source_id},
                                                  constants=constants) / (c.row.speedup or 1.0) - 1.0) * 100
                for c in cases}

    table = [(p, errors(fit, p)) for p in points]
    best, best_errs = min(table, key=lambda t: statistics.fmean(t[1].values()))
    loso: list[float] = []
    for source in sorted({c.row.source_id for c in fit}):
        mine = {c.row.row_id for c in fit if c.row.source_id == source}
        _, errs = min(table, key=lambda t: statistics.fmean(e for r, e in t[1].items() if r not in mine))
        loso += [errs[r] for r in mine]
    held = {"n_rows": float(len(holdout))}
    if holdout:
        held |= {"committed_mean_ape_pct": round(statistics.fmean(errors(holdout, committed).values()), 2),
                 "best_mean_ape_pct": round(statistics.fmean(errors(holdout, best).values()), 2)}
    return FitResult(name="overlap: per-request work exposed", objective="mean APE, end to end (fit-split rows that "
                     "ran with overlap scheduling; priors without the row's source or any holdout source)", best=best,
                     best_score_pct=round(statistics.fmean(best_errs.values()), 2), n_rows=len(fit),
                     committed=committed, committed_score_pct=round(statistics.fmean(errors(fit, committed).values()), 2),
                     holdout=held, loso_mean_ape_pct=round(statistics.fmean(loso), 2))

"""The fit of llama.cpp's few cost constants (tools/model/overhead_llamacpp.py) on llama.cpp rows only.

The same out-of-sample rules as the serving engines' fits (tools/calibration/fit.py): the rows are split by source
(``tools/data/engine_split.csv``, fixed before any fit), the constants are chosen on the *fit* half only, by mean
absolute % error, coordinate descent over a small grid; each row's acceptance is its own tau where it states one
(the cost model alone), else the priors without the row's own source and without any llama.cpp holdout source, so
neither a row's own acceptance nor the llama.cpp holdout half reaches the constants. The holdout half is scored, never
fitted on. The priors are otherwise the ones a llama.cpp answer reads (every serving-engine and published row): the
serving engines' own holdout half tests their constants, which this fit does not touch, and leaving their rows out
here would fit the llama.cpp constants against other priors than the answers use (for Qwen3.8-27B MTP: DeepSeek-V3's
SGLang acceptance instead of the Qwen3.5 family's vLLM rows).

Beside it, ``refit_loso_errors`` is the stricter leave-one-source-out: every llama.cpp source predicted with the
constants refitted on all the *other* llama.cpp sources (either half) and priors without it: how the model would
do on a source it has never seen in any way. It is a diagnostic; the committed constants never see the holdout.

No serving engine's row enters this fit, and no llama.cpp row enters theirs (``engine_cases.row_use``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from functools import lru_cache

from specpick.tools.calibration.cases import CalibCase, predict_speedup
from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.calibration.split import load_split, split_of_source
from specpick.tools.errors import InputError
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants

HARNESS = "llamacpp"
# RuntimeOverhead fields of the llama.cpp harness and the values tried (None: the shared verify_token_frac).
# The MoE layer time comes first (it moves every MoE row; coordinate descent is order-sensitive).
GRID: dict[str, tuple[float | None, ...]] = {
    "moe_layer_ms": (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3),
    "verify_token_frac": (0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3),
    "verify_token_frac_apple": (None, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8),
    "verify_token_frac_amd": (None, 0.0, 0.02, 0.04, 0.06, 0.1, 0.15),
    "spec_forward_ms": (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
    "cycle_ms": (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0),
}
ROUNDS = 4


def llamacpp_cases(split: str | None = None) -> list[CalibCase]:
    """llama.cpp rows with a point speedup the model can run, optionally one committed half only; a row that states
    no acceptance of its own carries none (the priors supply it, as ``row_use`` arranges)."""
    out = []
    for row in load_engine_rows():
        use, case = row_use(row, llamacpp=True)
        if use in ("cost_model", "end_to_end") and not isinstance(case, str):
            if split is None or split_of_source(row.source_id) == split:
                out.append(case)
    return out


def llamacpp_constants(values: dict[str, float | None], base: ModelConstants = DEFAULT_CONSTANTS) -> ModelConstants:
    """``base`` with the llama.cpp harness's fields set to ``values`` (nested copies; ``base`` untouched)."""
    table = base.overheads
    table = table.model_copy(update={HARNESS: table.get(HARNESS).model_copy(update=values)})
    return base.model_copy(update={"overheads": table})


def committed_values(grid: dict[str, tuple[float | None, ...]] = GRID) -> dict[str, float | None]:
    """The committed value of each ``grid`` field."""
    o = DEFAULT_CONSTANTS.overhead(HARNESS)
    return {k: getattr(o, k) for k in grid}


def _holdout_sources() -> frozenset[str]:
    """The llama.cpp sources of the holdout half (kept out of every prior the fit reads; they are no acceptance prior
    anyway, ``NOT_A_PRIOR_TAG``). The serving engines' holdout rows are not this fit's holdout: they test the serving
    engines' constants, which this fit never moves, and they are acceptance evidence every llama.cpp answer reads."""
    return frozenset(s for s, half in load_split().items() if half == "holdout"
                     and any(r.source_id == s and r.llamacpp for r in load_engine_rows()))


def case_ape(c: CalibCase, constants: ModelConstants, exclude: frozenset[str]) -> float | None:
    """APE of one case: its own tau/alpha where stated, else priors without ``exclude`` | its own source (None: no
    prior remains)."""
    try:
        pred = predict_speedup(c, own=c.own_acceptance, exclude=frozenset() if c.own_acceptance
                               else exclude | {c.row.source_id}, constants=constants)
    except InputError:
        return None
    return abs(pred / (c.row.speedup or 1.0) - 1.0) * 100


def _mean_ape(cases: Iterable[CalibCase], values: dict[str, float | None], exclude: frozenset[str]) -> float:
    constants = llamacpp_constants(values)
    errs = [e for c in cases if (e := case_ape(c, constants, exclude)) is not None]
    return statistics.fmean(errs) if errs else float("nan")


def descend(cases: list[CalibCase], exclude: frozenset[str], grid: dict[str, tuple[float | None, ...]] = GRID,
            rounds: int = ROUNDS) -> tuple[dict[str, float | None], float]:
    """Coordinate descent over ``grid`` from the committed values: (best values, their mean APE on ``cases``)."""
    best = committed_values(grid)
    best_err = _mean_ape(cases, best, exclude)
    for _ in range(rounds):
        moved = False
        for key, options in grid.items():
            for v in options:
                trial = {**best, key: v}
                err = _mean_ape(cases, trial, exclude)
                if err < best_err - 1e-9:
                    best, best_err, moved = trial, err, True
        if not moved:
            break
    return best, best_err


def fit_llamacpp(grid: dict[str, tuple[float | None, ...]] = GRID) -> dict[str, object]:
    """The fit on the fit half: committed and best values with their mean APE, and the holdout half's mean APE at
    both (scored, never fitted on)."""
    held = _holdout_sources()
    fit, holdout = llamacpp_cases("fit"), llamacpp_cases("holdout")
    committed = committed_values(grid)
    best, best_err = descend(fit, held, grid)
    return {
        "n_rows": len(fit), "sources": sorted({c.row.source_id for c in fit}), "committed": committed,
        "committed_score_pct": round(_mean_ape(fit, committed, held), 2), "best": best,
        "best_score_pct": round(best_err, 2),
        "holdout": {"n_rows": float(len(holdout)),
                    "committed_mean_ape_pct": round(_mean_ape(holdout, committed, held), 2),
                    "best_mean_ape_pct": round(_mean_ape(holdout, best, held), 2)},
    }


@lru_cache(maxsize=1)
def refit_loso_errors() -> tuple[tuple[float, float], ...]:
    """(predicted, measured) per llama.cpp row, each source predicted with the constants refitted on every other
    llama.cpp source and priors without it (see the module docstring)."""
    cases = llamacpp_cases()
    out: list[tuple[float, float]] = []
    for source in sorted({c.row.source_id for c in cases}):
        mine = [c for c in cases if c.row.source_id == source]
        others = [c for c in cases if c.row.source_id != source]
        values, _ = descend(others, frozenset({source}))
        constants = llamacpp_constants(values)
        for c in mine:
            try:
                pred = predict_speedup(c, own=False, exclude=frozenset({source}), constants=constants)
            except InputError:
                continue
            out.append((pred, c.row.speedup or 1.0))
    return tuple(out)

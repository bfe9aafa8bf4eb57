"""Global fit of the few runtime constants (`specpick calibrate --fit`; maintenance, not used at run time).

The same constants serve every row: a grid search picks the values that
minimise the median absolute % error, and the committed constants in
``tools/overhead.py`` / ``tools/steptime.py`` quote the result. Nothing here is
fitted per row.

* eager "paper" harness: host dispatch per layer, per-forward cost, draft-step
  host cost, per-cycle and per-tree-cycle costs, on the rows that state their own
  tau/alpha (the cost model alone, mode a);
* jointly, the roofline FLOPs efficiency and sharpness and the engines' (SGLang's; vLLM
  reuses them) per-cycle and per-sequence costs on every row with batch > 1 (EAGLE1-T7, EAGLE3-T5, Clover,
  Hydra, blockwise MTP), end to end by mean APE (a median over one curve's 18
  points is too flat to pick from; the SGLang rows state no acceptance, so this fit
  also absorbs prior bias, reported as such).
"""

from __future__ import annotations

import itertools
import statistics
from contextlib import contextmanager
from collections.abc import Iterator

from pydantic import BaseModel

from specpick.tools import cyclecost, overhead, steptime
from specpick.tools.calibrate import _predict
from specpick.tools.calibration_rows import CalibCase, build_case
from specpick.tools.published import load_published

PAPER_GRID: dict[str, tuple[float, ...]] = {
    "host_per_layer_ms": (0.6, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4),
    "per_forward_ms": (1.0, 2.0, 3.0, 4.0),
    "draft_step_host_ms": (0.0, 0.2, 0.4),
    "cycle_ms": (0.0, 0.5, 1.0, 2.0),
    "cycle_tree_ms": (0.0, 1.0, 2.0),
}
BATCH_GRID: dict[str, tuple[float, ...]] = {
    "FLOPS_EFFICIENCY": (0.25, 0.3, 0.35, 0.4, 0.5), "ROOFLINE_SHARPNESS": (2.0, 3.0, 6.0),
    "sglang.cycle_ms": (3.0, 4.0, 5.0, 6.0, 7.0), "sglang.cycle_per_seq_ms": (0.0, 0.05, 0.1, 0.2),
}


class FitResult(BaseModel):
    name: str
    objective: str
    best: dict[str, float]
    best_score_pct: float
    n_rows: int
    committed: dict[str, float]
    committed_score_pct: float


@contextmanager
def _patched(harness: str, **values: float) -> Iterator[None]:
    old = overhead.OVERHEADS[harness]
    overhead.OVERHEADS[harness] = old.model_copy(update=values)
    try:
        yield
    finally:
        overhead.OVERHEADS[harness] = old


@contextmanager
def _roofline(**values: float) -> Iterator[None]:
    old = {k: getattr(steptime, k) for k in values}
    for k, v in values.items():
        setattr(steptime, k, v)
    cyclecost._step.cache_clear()
    cyclecost._head.cache_clear()
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(steptime, k, v)
        cyclecost._step.cache_clear()
        cyclecost._head.cache_clear()


def _median_ape(cases: list[CalibCase], own: bool, mean: bool = False) -> float:
    errs = [abs(_predict(c, own=own) / (c.row.speedup or 1.0) - 1.0) * 100 for c in cases]
    if not errs:
        return float("nan")
    return statistics.fmean(errs) if mean else statistics.median(errs)


def _cases() -> list[CalibCase]:
    return [c for c in (build_case(r) for r in load_published()) if not isinstance(c, str)]


def _grid(name: str, objective: str, grid: dict[str, tuple[float, ...]], score,
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


def fit_all() -> list[FitResult]:
    """Both fits: the eager harness on its own-acceptance rows, then roofline + SGLang on the batch rows."""
    cases = _cases()
    paper = [c for c in cases if c.harness == "paper" and (c.tau is not None or c.alpha is not None)]
    batch = [c for c in cases if c.batch > 1]

    def paper_score(v: dict[str, float]) -> float:
        with _patched("paper", **v):
            return _median_ape(paper, own=True)

    po = overhead.OVERHEADS["paper"]
    r1 = _grid("eager paper harness", "median APE, cost model (rows' own tau/alpha)", PAPER_GRID, paper_score,
               {k: getattr(po, k) for k in PAPER_GRID})

    def batch_score(v: dict[str, float]) -> float:
        roof = {k: v[k] for k in ("FLOPS_EFFICIENCY", "ROOFLINE_SHARPNESS")}
        sg = {k.split(".", 1)[1]: v[k] for k in v if k.startswith("sglang.")}
        with _roofline(**roof), _patched("sglang", **sg), _patched("vllm", **sg):
            return _median_ape(batch, own=False, mean=True)

    so = overhead.OVERHEADS["sglang"]
    committed = {"FLOPS_EFFICIENCY": steptime.FLOPS_EFFICIENCY, "ROOFLINE_SHARPNESS": steptime.ROOFLINE_SHARPNESS,
                 "sglang.cycle_ms": so.cycle_ms, "sglang.cycle_per_seq_ms": so.cycle_per_seq_ms}
    r2 = _grid("roofline + SGLang per-cycle costs", "mean APE, end to end, all batch > 1 rows "
               "(SGLang rows state no acceptance, so prior bias is absorbed too)", BATCH_GRID, batch_score, committed)
    return [r1.model_copy(update={"n_rows": len(paper)}), r2.model_copy(update={"n_rows": len(batch)})]


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for res in fit_all():
        print(res.model_dump_json())

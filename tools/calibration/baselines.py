"""The plain decode step, absolute: engine rows' no-speculation baselines against the model's step time.

A speedup is a ratio, and a ratio can come out right with both of its terms wrong. Many engine rows also state the
speed they measured *without* speculation (a TPOT, or single-user tokens per second); ``tools/data/
engine_baselines.csv`` holds those figures converted to milliseconds per output token of one sequence, one line per
distinct baseline, with the quoted figure and the arithmetic. Only concurrency <= 4 is kept: aggregate throughput at
higher load in these sources includes prefill time and says little about one decode step.

``specpick calibrate --engines`` prints how far the model's plain step (``tools/model/steptime.py``, with the row's
engine overheads, GPUs, weight format and batch) is from each. The baselines of *fit*-split sources join the engine
execution-path fit (``fit.py``), so the MoE layer terms answer to absolute step times and not only to ratios; the
holdout split's are scored, never fitted on (``holdout`` below).
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, Field

from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.calibration.split import split_of_source
from specpick.tools.calibration.stats import Stats, error_stats
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants
from specpick.tools.model.workload_context import typical_context_tokens
from specpick.tools.model.cost_inputs import Hardware, Precision, Runtime, StepLoad
from specpick.tools.model.steptime import step_time

MAX_BASELINE_BATCH = 4  # above this the sources' aggregate throughput includes prefill (module docstring)


class Baseline(BaseModel):
    """One measured no-speculation decode speed, as ``engine_baselines.csv`` states it."""

    row_id: str = Field(description="the engine row whose notes state it (tools/data/engine_measurements.csv)")
    baseline_ms_per_token: float = Field(gt=0, description="one sequence's time per output token, no speculation")
    metric: str
    derivation: str = Field(description="the quoted figure and the arithmetic")
    caveats: str


class PlainStep(BaseModel):
    """The model's plain decode step for one baseline's deployment, beside the measurement."""

    row_id: str
    verifier: str
    moe: bool
    hardware: str
    batch: int
    split: str
    measured_ms: float
    predicted_ms: float
    error_pct: float = Field(description="(predicted / measured - 1) x 100")


class PlainStepReport(BaseModel):
    rows: list[PlainStep]
    skipped: dict[str, int] = Field(description="baselines whose row the model cannot run, by reason")
    dense: Stats | None
    moe: Stats | None
    holdout: Stats | None = Field(description="baselines of holdout-split sources (dense and MoE; never fitted on)")


@lru_cache(maxsize=1)
def load_baselines() -> tuple[Baseline, ...]:
    """The committed baselines (package data)."""
    text = resources.files("specpick.tools").joinpath("data", "engine_baselines.csv").read_text("utf-8")
    return tuple(Baseline(row_id=r["row_id"], baseline_ms_per_token=float(r["baseline_ms_per_token"]),
                          metric=r["metric"], derivation=r["derivation"], caveats=r["caveats"])
                 for r in csv.DictReader(text.splitlines()))


def plain_step_report(constants: ModelConstants = DEFAULT_CONSTANTS) -> PlainStepReport:
    """Every baseline whose engine row the model can run, predicted at the row's deployment (see module docstring)
    with ``constants`` (a fit varies a copy)."""
    rows = {r.row_id: r for r in load_engine_rows()}
    out: list[PlainStep] = []
    skipped: dict[str, int] = {}
    for b in load_baselines():
        use, case = row_use(rows[b.row_id])
        if isinstance(case, str) or case is None:
            reason = case if isinstance(case, str) else use
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        context = typical_context_tokens(case.workloads[0])
        step = step_time(case.verifier, Hardware(case.gpu, case.gpus), StepLoad(case.batch, 1, context),
                         Precision(case.bpp), Runtime(constants.overhead(case.harness), constants))
        out.append(PlainStep(
            row_id=b.row_id, verifier=case.verifier.repo_id, moe=case.verifier.is_moe,
            hardware=f"{case.gpus}x {case.gpu.key}", batch=case.batch, split=split_of_source(case.row.source_id),
            measured_ms=b.baseline_ms_per_token, predicted_ms=round(step.total_ms, 2),
            error_pct=round((step.total_ms / b.baseline_ms_per_token - 1.0) * 100, 1)))

    def stats(group: list[PlainStep]) -> Stats | None:
        return error_stats([(p.predicted_ms, p.measured_ms) for p in group]) if group else None

    return PlainStepReport(rows=out, skipped=skipped, dense=stats([p for p in out if not p.moe]),
                           moe=stats([p for p in out if p.moe]),
                           holdout=stats([p for p in out if p.split == "holdout"]))

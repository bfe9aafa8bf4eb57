"""From measured runs to a tuned setting: predicted vs measured at every point, the best N per batch-size range.

Pure: it reads finished ``MeasureReport``s (one per draft length; the largest carries the baseline server's
per-request figures) and returns the tune report's points and per-class decisions.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from specpick.tools.errors import ServiceError
from specpick.tools.measured_checks import figure_problem
from specpick.tools.measure.classes import ClassResult, RequestFigures, histogram, split_by_class
from specpick.tools.measure.report import ConcurrencyResult, MeasureReport
from specpick.tools.tune.predict import (
    StepCounts, horizon_acceptance, pooled_tau, recut, tau_interval, tokens_per_step,
)


class TunePoint(BaseModel):
    """One (N, concurrency) setting."""

    num_draft_tokens: int
    concurrency: int
    measured: bool = Field(description="a timed run at this setting exists")
    tau_measured: float | None = None
    tau_measured_low: float | None = Field(None, description="80% bootstrap interval over prompts")
    tau_measured_high: float | None = None
    tau_predicted: float | None = Field(None, description="from the largest N's per-position acceptance")
    tau_predicted_low: float | None = None
    tau_predicted_high: float | None = None
    speedup_measured: float | None = None
    speedup_predicted: float | None = None
    per_class: list[ClassResult] = Field(default_factory=list)

    @property
    def speedup_known(self) -> float | None:
        return self.speedup_measured if self.speedup_measured is not None else self.speedup_predicted


def _counts(requests: Sequence[RequestFigures], n: int | None, horizon: float = 0.0) -> list[StepCounts]:
    """Per request: the measured steps (n None) or the re-cut to length n."""
    out = []
    for r in requests:
        if not r.drafts:
            out.append(StepCounts(0, 0))
            continue
        if n is None:
            out.append(StepCounts(r.drafts, r.accepted))
            continue
        hist = histogram(r)
        out.append(recut(hist + [0] * (n + 1 - len(hist)), n, horizon))
    return out


def _plain_steps(requests: Sequence[RequestFigures]) -> int:
    """Engine steps that drafted nothing: output tokens not produced by a verify step (first token excluded)."""
    return sum(max(0, r.spec_tokens - 1 - (r.drafts + r.accepted)) for r in requests)


def _paired(requests: Sequence[RequestFigures], baseline: Sequence[RequestFigures]) -> list[RequestFigures]:
    """This run's requests with the baseline server's figures of the same prompts (same order, same prompts)."""
    if not baseline:
        return list(requests)
    return [r.model_copy(update={"base_decode_ms": b.base_decode_ms, "base_tokens": b.base_tokens})
            for r, b in zip(requests, baseline)]


def _speedup(res: ConcurrencyResult, baseline: ConcurrencyResult | None) -> float | None:
    if res.speedup is not None:
        return res.speedup
    base = baseline.baseline if baseline else None
    if base and base.decode_ms_per_token and res.speculative.decode_ms_per_token:
        return base.decode_ms_per_token / res.speculative.decode_ms_per_token
    return None


def points(runs: dict[int, MeasureReport], draft_lengths: Sequence[int], predict: bool) -> list[TunePoint]:
    """Every (N, concurrency) point: measured figures where a run exists, predictions from the largest N's run."""
    top_n = max(runs)
    top = {r.concurrency: r for r in runs[top_n].results}
    out: list[TunePoint] = []
    for n in sorted(set(draft_lengths)):
        for conc, top_res in sorted(top.items()):
            res = next((r for r in runs[n].results if r.concurrency == conc), None) if n in runs else None
            point = TunePoint(num_draft_tokens=n, concurrency=conc, measured=res is not None)
            if res is not None:
                counts = _counts(res.requests, None)
                point.tau_measured = pooled_tau(counts)
                _check_measured(point)
                point.tau_measured_low, point.tau_measured_high = tau_interval(counts)
                point.speedup_measured = _speedup(res, top_res)
                point.per_class = split_by_class(_paired(res.requests, top_res.requests))
            if predict and n <= top_n and top_res.requests:
                _predict(point, top_res, n, top_n)
            out.append(point)
    return out


def _check_measured(point: TunePoint) -> None:
    """Per-request figures that no server at this N can produce (tau 51 at N=4) are refused, not tuned on (issue
    39, cause 7): the server is not running the N it was given, or its figures are broken."""
    problem = figure_problem(tau=point.tau_measured, num_draft_tokens=point.num_draft_tokens)
    if problem:
        raise ServiceError(f"the server's per-request figures at N={point.num_draft_tokens}, concurrency "
                           f"{point.concurrency}: {problem}; check that server's speculative config runs "
                           f"N={point.num_draft_tokens} (one server per N), then rerun with --fresh")


def _predict(point: TunePoint, top_res: ConcurrencyResult, n: int, top_n: int) -> None:
    horizon = horizon_acceptance([histogram(r) for r in top_res.requests if r.drafts])
    counts = _counts(top_res.requests, n, horizon)
    point.tau_predicted = pooled_tau(counts)
    point.tau_predicted_low, point.tau_predicted_high = tau_interval(counts)
    speed_top = top_res.speedup
    plain = _plain_steps(top_res.requests)
    tps_n = tokens_per_step(counts, plain)
    tps_top = tokens_per_step(_counts(top_res.requests, None), plain)
    if speed_top is not None and tps_n and tps_top:
        # Same step cost at both lengths (stated in the report's assumptions): the speedup scales with tokens per step.
        point.speedup_predicted = speed_top * tps_n / tps_top

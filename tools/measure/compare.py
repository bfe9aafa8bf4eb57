"""``--expect FILE``: compare measured figures with a saved recommendation and apply its fallback plan.

The file is the ``specpick recommend --json`` output (``skill/schema.py``
``Recommendation``). This module reads only the fields it needs and ignores
the rest, so it keeps working as the schema grows:

* ``strategy``, ``num_draft_tokens``
* ``expected_speedup.{value, low, high, alpha, tau, batch}``
* ``fallback[].{trigger.{metric, op, value}, condition, action, next_strategy, next_num_draft_tokens}``
* ``inputs.{workload, concurrency}`` (optional: default workload / concurrency for the run)
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from specpick.tools.errors import InputError, NotFoundError

# Measured alpha / tau within this fraction of the prediction count as "as predicted".
# A judgement call, stated in the report: published priors carry about this much spread
# between harnesses (ENGINES.md issue 18: EAGLE-3 acceptance length drifted 10-15% across vLLM versions).
REL_TOLERANCE = 0.10
MAX_EXPECT_BYTES = 4 * 2**20

TriggerMetric = Literal["alpha", "tau", "speedup", "concurrency", "tpot_ms_p50", "ttft_ms_p50", "throughput_ratio"]
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class _Tolerant(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ExpectedTrigger(_Tolerant):
    metric: TriggerMetric
    op: Literal["<", "<=", ">", ">="]
    value: float


class ExpectedStep(_Tolerant):
    trigger: ExpectedTrigger | None = None
    condition: str = ""
    action: str
    next_strategy: str | None = None
    next_num_draft_tokens: int | None = None


class ExpectedSpeedup(_Tolerant):
    value: float
    low: float | None = None
    high: float | None = None
    alpha: float | None = None
    tau: float | None = None
    batch: int | None = None


class ExpectedInputs(_Tolerant):
    workload: str | None = None
    concurrency: int | None = None


class Expectation(_Tolerant):
    """The fields of a ``Recommendation`` that measurement is checked against."""

    strategy: str
    num_draft_tokens: int | None = None
    expected_speedup: ExpectedSpeedup
    fallback: list[ExpectedStep] = Field(default_factory=list)
    inputs: ExpectedInputs | None = None


def load_expectation(path: Path) -> Expectation:
    """Read a saved ``recommend --json`` output.

    Raises:
        NotFoundError: no such file.
        InputError: not JSON, or missing the fields listed in the module docstring.
    """
    if not path.is_file():
        raise NotFoundError(
            f"--expect file {path} does not exist: save one with `specpick recommend ... --json > FILE`"
        )
    if path.stat().st_size > MAX_EXPECT_BYTES:
        raise InputError(f"--expect file {path} is too large to be a recommendation")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"--expect file {path} is not JSON: save it with `specpick recommend ... --json`") from exc
    try:
        return Expectation.model_validate(data)
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}" for e in exc.errors()[:3])
        raise InputError(f"--expect file {path} is not a recommend --json output ({where})") from exc


class Check(BaseModel):
    metric: Literal["alpha", "tau", "speedup"]
    expected: float | None
    measured: float | None
    low: float | None = None
    high: float | None = None
    verdict: Literal["as_predicted", "below", "above", "not_measured"]
    note: str = ""


class FallbackResult(BaseModel):
    condition: str
    action: str
    metric: str | None = None
    op: str | None = None
    threshold: float | None = None
    measured: float | None = None
    fired: bool = False
    next_strategy: str | None = None
    next_num_draft_tokens: int | None = None


class Comparison(BaseModel):
    """Measured vs predicted, and which fallback steps the measurement triggers."""

    strategy: str
    num_draft_tokens: int | None
    checks: list[Check]
    fallback: list[FallbackResult]
    verdict: Literal["as_predicted", "below_prediction", "above_prediction", "incomplete"]
    summary: str
    tolerance: float = REL_TOLERANCE


def _point_check(metric: Literal["alpha", "tau"], expected: float | None, measured: float | None) -> Check:
    if expected is None or measured is None:
        note = "not in the recommendation" if expected is None else "not measured in this run"
        return Check(metric=metric, expected=expected, measured=measured, verdict="not_measured", note=note)
    lo, hi = expected * (1 - REL_TOLERANCE), expected * (1 + REL_TOLERANCE)
    verdict: Literal["as_predicted", "below", "above"] = (
        "below" if measured < lo else "above" if measured > hi else "as_predicted"
    )
    return Check(
        metric=metric,
        expected=expected,
        measured=measured,
        low=lo,
        high=hi,
        verdict=verdict,
        note=f"{(measured / expected - 1) * 100:+.0f}% vs predicted",
    )


def _speedup_check(exp: ExpectedSpeedup, measured: float | None, note: str) -> Check:
    if measured is None:
        return Check(
            metric="speedup",
            expected=exp.value,
            measured=None,
            low=exp.low,
            high=exp.high,
            verdict="not_measured",
            note=note,
        )
    lo = exp.low if exp.low is not None else exp.value * (1 - REL_TOLERANCE)
    hi = exp.high if exp.high is not None else exp.value * (1 + REL_TOLERANCE)
    verdict: Literal["as_predicted", "below", "above"] = (
        "below" if measured < lo else "above" if measured > hi else "as_predicted"
    )
    return Check(metric="speedup", expected=exp.value, measured=measured, low=lo, high=hi, verdict=verdict, note=note)


def compare(expectation: Expectation, measured: dict[str, float | None], speedup_note: str = "") -> Comparison:
    """Compare measured figures with the expectation and evaluate every fallback trigger.

    Args:
        expectation: the saved recommendation's fields.
        measured: values by trigger metric name (alpha, tau, speedup, concurrency,
            tpot_ms_p50, ttft_ms_p50, throughput_ratio); None where not measured.
        speedup_note: which measurement the speedup figure is (concurrency, method).
    """
    exp = expectation.expected_speedup
    checks = [
        _point_check("alpha", exp.alpha, measured.get("alpha")),
        _point_check("tau", exp.tau, measured.get("tau")),
        _speedup_check(exp, measured.get("speedup"), speedup_note or "pass --baseline-endpoint to measure speedup"),
    ]
    steps: list[FallbackResult] = []
    for step in expectation.fallback:
        res = FallbackResult(
            condition=step.condition or "(unconditional)",
            action=step.action,
            next_strategy=step.next_strategy,
            next_num_draft_tokens=step.next_num_draft_tokens,
        )
        if step.trigger is not None:
            value = measured.get(step.trigger.metric)
            res.metric, res.op, res.threshold, res.measured = (
                step.trigger.metric,
                step.trigger.op,
                step.trigger.value,
                value,
            )
            res.fired = value is not None and _OPS[step.trigger.op](value, step.trigger.value)
            if not res.condition or res.condition == "(unconditional)":
                res.condition = f"{step.trigger.metric} {step.trigger.op} {step.trigger.value:g}"
        steps.append(res)
    measured_checks = [c for c in checks if c.verdict != "not_measured"]
    if not measured_checks:
        verdict: Literal["as_predicted", "below_prediction", "above_prediction", "incomplete"] = "incomplete"
    elif any(c.verdict == "below" for c in measured_checks):
        verdict = "below_prediction"
    elif all(c.verdict == "above" for c in measured_checks):
        verdict = "above_prediction"
    else:
        verdict = "as_predicted"
    fired = [s for s in steps if s.fired]
    summary = f"{verdict.replace('_', ' ')}; " + (
        "fallback: " + " | ".join(f"{s.condition} -> {s.action}" for s in fired)
        if fired
        else "no fallback trigger fired"
    )
    return Comparison(
        strategy=expectation.strategy,
        num_draft_tokens=expectation.num_draft_tokens,
        checks=checks,
        fallback=steps,
        verdict=verdict,
        summary=summary,
    )

"""``--expect FILE``: compare measured figures with a saved recommendation and apply its fallback plan.

The file is the ``specpick recommend --json`` output, read with the answer contract itself (``tools/answer.py``
``Answer``: the recommendation without the planner's input checks, which a saved answer has passed already). Fields
added to the contract later carry defaults and unknown fields are ignored, so a file saved by an earlier release
still loads. The comparison uses:

* ``strategy``, ``num_draft_tokens``
* ``expected_speedup.{value, low, high, alpha, tau, batch}``
* ``fallback[].{trigger.{metric, op, value}, condition, action, next_strategy, next_num_draft_tokens}``
* ``inputs.{workload, concurrency}`` (default workload / concurrency for the run)
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from specpick.tools.answer import Answer, FallbackStep
from specpick.tools.errors import InputError, NotFoundError, format_validation_error

# Measured alpha / tau within this fraction of the prediction count as "as predicted".
# A judgement call, stated in the report: published priors carry about this much spread
# between harnesses (ENGINES.md issue 18: EAGLE-3 acceptance length drifted 10-15% across vLLM versions).
REL_TOLERANCE = 0.10
MAX_EXPECT_BYTES = 4 * 2**20

# Trigger metrics (tools/answer.py TriggerMetric) this tool measures. A step on a metric outside this list is
# listed as not evaluated (tests/test_measure_run.py checks every contract metric is in it).
MEASURED_METRICS = ("alpha", "tau", "speedup", "concurrency", "tpot_ms_p50", "ttft_ms_p50", "throughput_ratio")
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

# What ``--expect`` holds: a saved answer (the name the measure modules use for it).
Expectation = Answer


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
        where = format_validation_error(exc, audience="fields", limit=3)
        raise InputError(f"--expect file {path} is not a recommend --json output ({where})") from exc


Verdict = Literal["as_predicted", "below", "above"]


class Check(BaseModel):
    metric: Literal["alpha", "tau", "speedup"]
    expected: float | None
    measured: float | None
    low: float | None = None
    high: float | None = None
    verdict: Verdict | Literal["not_measured"]
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


def _check(
    metric: Literal["alpha", "tau", "speedup"],
    expected: float | None,
    measured: float | None,
    low: float | None = None,
    high: float | None = None,
    note: str = "",
) -> Check:
    """Place a measured figure against the predicted range (the stated one, else +-REL_TOLERANCE)."""
    if expected is None or measured is None:
        why = note or ("not in the recommendation" if expected is None else "not measured in this run")
        return Check(
            metric=metric, expected=expected, measured=measured, low=low, high=high, verdict="not_measured", note=why
        )
    lo = low if low is not None else expected * (1 - REL_TOLERANCE)
    hi = high if high is not None else expected * (1 + REL_TOLERANCE)
    verdict: Verdict = "below" if measured < lo else "above" if measured > hi else "as_predicted"
    note = note or f"{(measured / expected - 1) * 100:+.0f}% vs predicted"
    return Check(metric=metric, expected=expected, measured=measured, low=lo, high=hi, verdict=verdict, note=note)


def _fallback(step: FallbackStep, measured: dict[str, float | None]) -> FallbackResult:
    res = FallbackResult(
        condition=step.condition,
        action=step.action,
        next_strategy=step.next_strategy,
        next_num_draft_tokens=step.next_num_draft_tokens,
    )
    trig = step.trigger
    if trig is None:
        res.condition = res.condition or "(unconditional)"
        return res
    res.metric, res.op, res.threshold = trig.metric, trig.op, trig.value
    res.measured = measured.get(trig.metric)
    res.fired = res.measured is not None and _OPS[trig.op](res.measured, trig.value)
    res.condition = res.condition or f"{trig.metric} {trig.op} {trig.value:g}"
    if trig.metric not in MEASURED_METRICS:
        res.condition += " (a metric this tool does not measure)"
    return res


def compare(expectation: Expectation, measured: dict[str, float | None], speedup_note: str = "") -> Comparison:
    """Compare measured figures with the expectation and evaluate every fallback trigger.

    Args:
        expectation: the saved recommendation's fields.
        measured: values by trigger metric name (``MEASURED_METRICS``); None where not measured.
        speedup_note: where the speedup figure comes from (which concurrency).
    """
    exp = expectation.expected_speedup
    checks = [
        _check("alpha", exp.alpha, measured.get("alpha")),
        _check("tau", exp.tau, measured.get("tau")),
        _check(
            "speedup",
            exp.value,
            measured.get("speedup"),
            exp.low,
            exp.high,
            speedup_note if measured.get("speedup") is not None else "pass --baseline-endpoint to measure it",
        ),
    ]
    steps = [_fallback(step, measured) for step in expectation.fallback]
    done = [c.verdict for c in checks if c.verdict != "not_measured"]
    verdict: Literal["as_predicted", "below_prediction", "above_prediction", "incomplete"]
    if not done:
        verdict = "incomplete"
    elif "below" in done:
        verdict = "below_prediction"
    elif all(v == "above" for v in done):
        verdict = "above_prediction"
    else:
        verdict = "as_predicted"
    fired = [f"{s.condition} -> {s.action}" for s in steps if s.fired]
    summary = verdict.replace("_", " ") + "; " + ("fallback: " + " | ".join(fired) if fired else "no trigger fired")
    return Comparison(
        strategy=expectation.strategy,
        num_draft_tokens=expectation.num_draft_tokens,
        checks=checks,
        fallback=steps,
        verdict=verdict,
        summary=summary,
    )

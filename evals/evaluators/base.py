"""The grading vocabulary: a check's result and what a grader sees (pydantic_evals' EvaluatorContext)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel

from specpick.evals.dataset import Case, ExpectedAnswer
from specpick.skill.schema import Recommendation

Status = Literal["pass", "fail", "na"]


class CheckResult(BaseModel):
    """One grader's verdict with its evidence."""

    name: str
    status: Status
    reason: str = ""


@dataclass(frozen=True)
class GradeContext:
    """What a grader sees: the case, the expectation for this runner, and the run's output."""

    case: Case
    runner: str
    expected: ExpectedAnswer
    recommendation: Recommendation | None
    markdown: str | None
    error_exit_code: int | None = None  # a PickerError's exit code, when the run ended in one
    error_message: str = ""
    agent_texts: tuple[str, ...] = ()  # the agent's prose turns, in order (agent runner only)


Grader = Callable[[GradeContext], CheckResult]


def check_result(name: str, ok: bool, reason: str) -> CheckResult:
    return CheckResult(name=name, status="pass" if ok else "fail", reason=reason)


def not_applicable(name: str, reason: str) -> CheckResult:
    return CheckResult(name=name, status="na", reason=reason)


def per_strategy(table: dict[str, Any] | None, strategy: str) -> Any:
    if not table:
        return None
    return table.get(strategy, table.get("*"))

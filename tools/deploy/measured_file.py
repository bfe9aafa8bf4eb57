"""Reading the JSON `specpick measure --json` and `specpick tune --json` write, as measured evidence.

This layer sits below the measure and tune verbs, so it reads their reports as plain JSON (the field names are
``MeasureReport``/``TuneReport``'s) rather than importing their models. What it returns: the acceptance at the
N it was measured at, per position where the report has it, the measured speedup, and an 80% bootstrap interval
of tau over the measurement's prompts (the same resampling `specpick tune` uses: pooled tau over requests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specpick.tools.bootstrap import bootstrap_interval
from specpick.tools.errors import InputError, NotFoundError
from specpick.tools.measured_checks import figure_problem
from specpick.tools.userfiles import loads_user_json, read_user_text

MAX_FILE_BYTES = 64 * 1024 * 1024  # a measure report of thousands of prompts is a few MB


@dataclass(frozen=True)
class MeasuredFigures:
    """What one measure/tune report says about one drafter at one concurrency."""

    kind: str  # "measure" or "tune"
    tau: float
    num_draft_tokens: int | None
    alpha: float | None = None
    method: str | None = None
    drafter: str | None = None
    per_position: tuple[float, ...] = ()
    tau_by_n: tuple[tuple[int, float], ...] = ()  # tune: tau measured (else predicted) at each N swept
    tau_low: float | None = None
    tau_high: float | None = None
    speedup: float | None = None
    concurrency: int | None = None
    num_requests: int | None = None
    notes: list[str] = field(default_factory=list)


def pooled_tau(requests: Sequence[tuple[int, int]]) -> float | None:
    """1 + accepted / drafts over (drafts, accepted) pairs."""
    drafts = sum(d for d, _ in requests)
    return 1.0 + sum(a for _, a in requests) / drafts if drafts else None


def tau_interval(requests: Sequence[tuple[int, int]]) -> tuple[float | None, float | None]:
    """80% bootstrap interval of the pooled tau over requests (None with fewer than two requests that drafted)."""
    return bootstrap_interval([r for r in requests if r[0] > 0], pooled_tau)


def _bad(path: Path, why: str) -> InputError:
    return InputError(f"--from-measurement {path}: {why}; give the JSON that `specpick measure --json` or "
                      "`specpick tune --json` printed")


def load_report(path: Path) -> dict[str, Any]:
    """The parsed report. Raises NotFoundError (no such file) or InputError (not JSON, too large, not a file)."""
    try:
        text = read_user_text(path, "--from-measurement", MAX_FILE_BYTES)
    except NotFoundError:
        raise NotFoundError(f"--from-measurement {path}: no such file (save the report with "
                            "`specpick measure ... --json > m.json` or `specpick tune ... --json > t.json`)") from None
    try:
        data = loads_user_json(text, "report")
    except InputError as exc:  # "report: not valid JSON (...)" -> the verb's wording, with what to give instead
        raise _bad(path, "not JSON" + str(exc).removeprefix("report: not valid JSON").removeprefix("report:")) from None
    if not isinstance(data, dict):
        raise _bad(path, "not a measure or tune report (a JSON object was expected)")
    return data


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _closest(items: list[dict[str, Any]], concurrency: int, key: str = "concurrency") -> dict[str, Any]:
    return min(items, key=lambda r: (abs(int(r.get(key) or 1) - concurrency), int(r.get(key) or 1)))


def _from_tune(path: Path, data: dict[str, Any], concurrency: int) -> MeasuredFigures:
    points = [p for p in data.get("points") or [] if isinstance(p, dict) and _num(p.get("tau_measured"))]
    if not points:
        raise _bad(path, "a tune report with no measured point")
    conc = int(_closest(points, concurrency).get("concurrency") or 1)
    at = [p for p in points if int(p.get("concurrency") or 1) == conc]
    top = max(at, key=lambda p: int(p["num_draft_tokens"]))
    by_n = []
    for p in data.get("points") or []:
        if isinstance(p, dict) and int(p.get("concurrency") or 1) == conc:
            t = _num(p.get("tau_measured")) or _num(p.get("tau_predicted"))
            if t is not None:
                by_n.append((int(p["num_draft_tokens"]), t))
    return MeasuredFigures(
        kind="tune", tau=float(top["tau_measured"]), num_draft_tokens=int(top["num_draft_tokens"]),
        method=str(data["method"]) if data.get("method") else None, drafter=None,
        tau_by_n=tuple(sorted(by_n)), tau_low=_num(top.get("tau_measured_low")),
        tau_high=_num(top.get("tau_measured_high")), speedup=_num(top.get("speedup_measured")), concurrency=conc,
        notes=[f"tune points at concurrency {conc}: N = {', '.join(str(n) for n, _ in sorted(by_n))}"])


def _acceptance_n(acc: dict[str, Any]) -> int | None:
    """The N a run drafted at: its per-position list, else draft tokens per draft."""
    if acc.get("per_position"):
        return len(acc["per_position"])
    drafts, tokens = _num(acc.get("num_drafts")), _num(acc.get("num_draft_tokens"))
    return round(tokens / drafts) if drafts and tokens else None


def _from_measure(path: Path, data: dict[str, Any], concurrency: int) -> MeasuredFigures:
    if data.get("mode") == "estimate-ngram":
        acc = (data.get("ngram") or {}).get("acceptance") or {}
        if _num(acc.get("tau")) is None:
            raise _bad(path, "an n-gram estimate without a tau")
        return MeasuredFigures(kind="measure", tau=float(acc["tau"]), alpha=_num(acc.get("alpha")),
                               num_draft_tokens=_acceptance_n(acc), method="ngram",
                               per_position=tuple(float(p) for p in acc.get("per_position") or []),
                               notes=["offline n-gram estimate (no timing: no measured speedup)"])
    results = [r for r in data.get("results") or [] if isinstance(r, dict)
               and _num(((r.get("acceptance") or r.get("per_request_acceptance")) or {}).get("tau"))]
    if not results:
        raise _bad(path, "a measure report without acceptance figures (was the server speculating?)")
    res = _closest(results, concurrency)
    acc = res.get("acceptance") or res.get("per_request_acceptance")
    reqs = [(int(r.get("drafts") or 0), int(r.get("accepted") or 0)) for r in res.get("requests") or []
            if isinstance(r, dict)]
    low, high = tau_interval(reqs)
    return MeasuredFigures(
        kind="measure", tau=float(acc["tau"]), alpha=_num(acc.get("alpha")), num_draft_tokens=_acceptance_n(acc),
        per_position=tuple(float(p) for p in acc.get("per_position") or []), tau_low=low, tau_high=high,
        speedup=_num(res.get("speedup")), concurrency=int(res.get("concurrency") or 1),
        num_requests=len(reqs) or None,
        notes=[] if reqs else ["the report has no per-request figures: no spread over prompts"])


def read_measurement(path: Path, concurrency: int) -> MeasuredFigures:
    """The figures of a measure or tune report, at the concurrency closest to ``concurrency``.

    Raises:
        NotFoundError: no such file.
        InputError: not JSON, or not a report `measure`/`tune` writes, or one with no acceptance figure.
    """
    data = load_report(path)
    try:
        if "points" in data and "best_n" in data:
            figures = _from_tune(path, data, concurrency)
        elif data.get("mode") in ("endpoint", "local", "estimate-ngram"):
            figures = _from_measure(path, data, concurrency)
        else:
            raise _bad(path, "not a measure or tune report (no 'mode' or 'points' field)")
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        # a field of the wrong type (a string concurrency, a missing N): the report was edited or is another file
        raise _bad(path, f"a field has the wrong type or is missing ({type(exc).__name__})") from None
    problem = figure_problem(tau=figures.tau, num_draft_tokens=figures.num_draft_tokens, alpha=figures.alpha,
                             per_position=figures.per_position, speedup=figures.speedup,
                             concurrency=figures.concurrency)
    if problem:
        raise _bad(path, problem)
    return figures


__all__ = ["MeasuredFigures", "load_report", "pooled_tau", "read_measurement", "tau_interval"]

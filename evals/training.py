"""Eval cases for `train-plan` and head fitness (category ``train-plan``), graded on the decision and cited ranges.

The cases live in ``evals/cases/training/*.yaml`` (their own folder: the recommend suite's loader reads
``evals/cases/*.yaml`` only, and these cases have other inputs). Each case names a tool (``train_plan`` or
``head_check``), its inputs, what a right answer looks like, and the sources the expectation comes from: a figure a
paper or issue reports must fall inside the printed range (``tau_holds``), a figure from another regime must not
(``tau_excludes``), never a number copied from the tool's output.

Run: ``specpick eval --runner train-plan`` or ``python -m specpick.evals.training`` (prints per-check and overall
pass rates; exit 8 below ``--min-pass``, which defaults to 1.0: every case passes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from specpick.evals.dataset import Range, load_yaml_file
from specpick.skill.surfaces.registry import BY_NAME
from specpick.tools.errors import PickerError

CASES_DIR = Path(__file__).resolve().parent / "cases" / "training"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrainExpect(_Strict):
    """What a right answer holds; every field is optional and graded only when given."""

    decision: list[str] = Field(default_factory=list, description="acceptable train-plan decisions")
    tau_holds: list[float] = Field(default_factory=list, description="source figures inside expected_tau")
    tau_excludes: list[float] = Field(default_factory=list, description="source figures outside expected_tau")
    tau_within: Range | None = Field(None, description="bounds the whole expected_tau interval must respect")
    speedup_within: Range | None = None
    speedup_holds: list[float] = Field(default_factory=list, description="source figures inside expected_speedup")
    cost_holds: list[float] = Field(default_factory=list, description="GPU-hour figures inside the cost range")
    samples_min: int | None = None
    max_length_min: int | None = None
    epochs: Range | None = None
    evidence: list[str] = Field(default_factory=list, description="evidence ids the reasons must cite")
    fitness: list[str] = Field(default_factory=list, description="head-fitness rows (check prefixes) that must appear")
    recipe_tool: str | None = None
    no_recipe: bool = False
    # head_check
    head_check_not: list[str] = Field(default_factory=list, description="verdicts the head check must not give")
    head_check_is: list[str] = Field(default_factory=list)
    finding: str | None = Field(None, description="a finding whose check starts with this must be present")
    summary_excludes: list[str] = Field(default_factory=list)
    printed_id: str | None = None


class TrainCase(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    tool: Literal["train_plan", "head_check"] = "train_plan"
    inputs: dict[str, Any]
    expected: TrainExpect
    sources: list[str] = Field(min_length=1)


class CheckResult(BaseModel):
    case_id: str
    check: str
    passed: bool
    detail: str = ""


def load_cases(directory: Path | None = None) -> list[TrainCase]:
    """Every case in ``directory`` (default: the packaged ones); ids must be unique."""
    cases: list[TrainCase] = []
    for path in sorted((directory or CASES_DIR).glob("*.yaml")):
        raw = load_yaml_file(path)
        for item in raw.get("cases", []):
            try:
                cases.append(TrainCase.model_validate(item))
            except ValueError as exc:
                raise ValueError(f"{path.name} case {item.get('id')}: {exc}") from None
    ids = [c.id for c in cases]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate case ids in the train-plan cases")
    return cases


def _run(case: TrainCase) -> Any:

    return BY_NAME[case.tool].run(case.inputs, caller="tool")


def _range_checks(case: TrainCase, out: Any) -> list[CheckResult]:
    e, res = case.expected, []
    tau = out.expected_tau
    for x in e.tau_holds:
        res.append(CheckResult(case_id=case.id, check="tau_holds", passed=tau is not None and tau.low <= x <= tau.high,
                               detail=f"{x} in {tau.low}-{tau.high}" if tau else "no expected_tau"))
    for x in e.tau_excludes:
        res.append(CheckResult(case_id=case.id, check="tau_excludes",
                               passed=tau is not None and not tau.low <= x <= tau.high, detail=f"{x} vs {tau}"))
    if e.tau_within is not None:
        res.append(CheckResult(case_id=case.id, check="tau_within", passed=tau is not None and e.tau_within.contains(
            tau.low) and e.tau_within.contains(tau.high), detail=f"{tau} within {e.tau_within}"))
    if e.speedup_within is not None:
        sp = out.expected_speedup
        res.append(CheckResult(case_id=case.id, check="speedup_within", passed=sp is not None and
                               e.speedup_within.contains(sp.low) and e.speedup_within.contains(sp.high),
                               detail=f"{sp} within {e.speedup_within}"))
    for x in e.speedup_holds:
        sp = out.expected_speedup
        res.append(CheckResult(case_id=case.id, check="speedup_holds", passed=sp is not None and
                               sp.low <= x <= sp.high, detail=f"{x} in {sp}"))
    for x in e.cost_holds:
        c = out.cost
        res.append(CheckResult(case_id=case.id, check="cost_holds", passed=c is not None and
                               c.gpu_hours_low <= x <= c.gpu_hours_high, detail=f"{x} in {c}"))
    return res


def grade(case: TrainCase, out: Any) -> list[CheckResult]:
    """One result per expectation the case states."""
    e, res = case.expected, []
    if case.tool == "head_check":
        if e.head_check_not:
            res.append(CheckResult(case_id=case.id, check="head_verdict", passed=out.check not in e.head_check_not,
                                   detail=out.check))
        if e.head_check_is:
            res.append(CheckResult(case_id=case.id, check="head_verdict", passed=out.check in e.head_check_is,
                                   detail=out.check))
        if e.finding:
            res.append(CheckResult(case_id=case.id, check="head_finding",
                                   passed=any(f.check.startswith(e.finding) for f in out.findings)))
        for text in e.summary_excludes:
            res.append(CheckResult(case_id=case.id, check="summary_excludes", passed=text not in out.summary))
        if e.printed_id:
            res.append(CheckResult(case_id=case.id, check="printed_id", passed=out.verifier_repo_id == e.printed_id))
        return res
    if e.decision:
        res.append(CheckResult(case_id=case.id, check="decision", passed=out.decision in e.decision,
                               detail=f"{out.decision} (expected {'/'.join(e.decision)})"))
    res += _range_checks(case, out)
    cited = {i for r in out.reasons for i in r.evidence}
    for i in e.evidence:
        res.append(CheckResult(case_id=case.id, check="evidence", passed=i in cited, detail=f"{i} in {sorted(cited)}"))
    rows = [h.check for h in getattr(out, "head_fitness", [])]
    for want in e.fitness:
        res.append(CheckResult(case_id=case.id, check="head_fitness", passed=any(r.startswith(want) for r in rows),
                               detail=f"{want} in {rows}"))
    d = out.data
    if e.samples_min is not None:
        res.append(CheckResult(case_id=case.id, check="data", passed=d is not None and d.samples >= e.samples_min))
    if e.max_length_min is not None:
        res.append(CheckResult(case_id=case.id, check="data",
                               passed=d is not None and d.max_length >= e.max_length_min))
    if e.epochs is not None:
        res.append(CheckResult(case_id=case.id, check="data", passed=d is not None and e.epochs.contains(d.epochs)))
    if e.recipe_tool is not None:
        res.append(CheckResult(case_id=case.id, check="recipe", passed=out.recipe is not None and
                               out.recipe.tool == e.recipe_tool))
    if e.no_recipe:
        res.append(CheckResult(case_id=case.id, check="recipe", passed=out.recipe is None))
    if e.printed_id:
        res.append(CheckResult(case_id=case.id, check="printed_id", passed=out.verifier == e.printed_id and (
            out.recipe is None or all(out.facts_from not in c for c in out.recipe.commands))))
    return res


def run_cases(cases: list[TrainCase]) -> list[CheckResult]:
    """Run and grade every case; a tool error is a failed ``run`` check, not a crash of the suite."""

    results: list[CheckResult] = []
    for case in cases:
        try:
            out = _run(case)
        except PickerError as exc:
            results.append(CheckResult(case_id=case.id, check="run", passed=False, detail=exc.message))
            continue
        results.append(CheckResult(case_id=case.id, check="run", passed=True))
        results += grade(case, out)
    return results


def summary(results: list[CheckResult]) -> str:
    by_check: dict[str, list[bool]] = {}
    by_case: dict[str, bool] = {}
    for r in results:
        by_check.setdefault(r.check, []).append(r.passed)
        by_case[r.case_id] = by_case.get(r.case_id, True) and r.passed
    lines = [f"train-plan cases: {sum(by_case.values())}/{len(by_case)} passed"]
    lines += [f"  {k:<16} {sum(v)}/{len(v)}" for k, v in sorted(by_check.items())]
    lines += [f"  FAIL {r.case_id} [{r.check}] {r.detail}" for r in results if not r.passed]
    return "\n".join(lines) + "\n"


def case_pass_counts(results: list[CheckResult]) -> tuple[int, int]:
    """(cases that passed every check, cases run)."""
    by_case: dict[str, bool] = {}
    for r in results:
        by_case[r.case_id] = by_case.get(r.case_id, True) and r.passed
    return sum(by_case.values()), len(by_case)


def run_selected(case_ids: list[str] | None = None, cases_dir: Path | None = None) -> list[CheckResult]:
    """Run the packaged (or ``cases_dir``) train-plan cases, only ``case_ids`` when given.

    Raises:
        ValueError: an id names no train-plan case.
    """
    cases = load_cases(cases_dir)
    if case_ids:
        unknown = sorted(set(case_ids) - {c.id for c in cases})
        if unknown:
            raise ValueError(f"unknown train-plan case ids {unknown}")
        cases = [c for c in cases if c.id in case_ids]
    return run_cases(cases)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m specpick.evals.training", description=__doc__.splitlines()[0],
                                allow_abbrev=False)
    p.add_argument("--min-pass", type=float, default=1.0, help="exit 8 when the case pass rate is below this")
    args = p.parse_args(argv)
    results = run_cases(load_cases())
    sys.stdout.write(summary(results))
    passed, total = case_pass_counts(results)
    return 0 if passed >= args.min_pass * total else 8


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the suite and report: per-case table, pass rate per check and per category, confusion matrix, JSON.

``run_eval`` is the pure entry point the CLI wraps (``specpick eval``); ``render_text`` is the human form.
A case *passes* when its run did not fail and no check failed ("na" checks do not count). The pass rate is
passed / total, so failed runs count against it; they are listed apart from failed checks.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from specpick.evals.evaluators.graders import CHECK_NAMES, CheckResult, GradeContext, grade
from specpick.evals.runners import RunOutput, Variant
from specpick.evals.dataset import ERROR_EXIT, Case, Dataset, ExpectedAnswer
from specpick.evals.mutants import MutantResult, MutationSummary, grade_mutants, summarize_mutants
from specpick.tools.errors import ThresholdError
from specpick.evals import runners

_EXIT_CLASS = {code: name for name, code in ERROR_EXIT.items()}
_STATUS_FIELD = {"pass": "passed", "fail": "failed", "na": "na"}


class CaseResult(BaseModel):
    """One graded run."""

    case_id: str
    category: str
    variant: Variant
    repeat: int = 0
    run_failed: bool
    run_error: str = ""
    checks: dict[str, CheckResult]
    passed: bool
    expected_label: str
    chosen_label: str
    duration_s: float = 0.0

    @property
    def failed_checks(self) -> list[str]:
        return [n for n, c in self.checks.items() if c.status == "fail"]


class Rate(BaseModel):
    """Counts behind one pass rate. ``rate`` is pass / (pass + fail) over graded runs; None when nothing applied.

    Failed runs are counted apart (``run_failed``): they were not graded, so they are neither passes nor check
    failures. The overall pass rate (``VariantSummary.pass_rate``) does count them against the suite.
    """

    passed: int = 0
    failed: int = 0
    na: int = 0
    run_failed: int = 0

    @property
    def rate(self) -> float | None:
        graded = self.passed + self.failed
        return self.passed / graded if graded else None


class VariantSummary(BaseModel):
    """Aggregates for one variant (planner, with-skill, without-skill)."""

    variant: Variant
    total: int
    passed: int
    run_failed: int
    pass_rate: float
    per_check: dict[str, Rate]
    per_category: dict[str, Rate]
    confusion: dict[str, dict[str, int]] = Field(description="expected label -> chosen label -> count")


class EvalReport(BaseModel):
    """Everything a run of the suite produced."""

    runner: str
    started_at: str
    results: list[CaseResult]
    summaries: dict[str, VariantSummary]
    primary: Variant = Field(description="the variant the thresholds apply to")
    min_pass: float | None = None
    min_check: dict[str, float] = Field(default_factory=dict, description="per-check pass-rate floors")
    known_failures: dict[str, str] | None = Field(
        None, description="case id -> reason: the only cases allowed to fail (None: no allow-list gate)")
    threshold_failures: list[str] = Field(default_factory=list)
    threshold_met: bool = True
    mutants_total: int | None = Field(None, description="--mutants: wrong answers generated from the real ones")
    mutants_killed: int | None = Field(None, description="--mutants: of those, how many failed a check")
    min_mutant_kill: float | None = Field(None, description="floor on the kill rate, overall and per target grader")
    mutation: MutationSummary | None = None
    mutant_results: list[MutantResult] = Field(default_factory=list)

    def raise_for_threshold(self) -> None:
        """Raise ``ThresholdError`` (exit 8) when the primary variant misses ``min_pass`` or a ``min_check``."""
        if not self.threshold_met:
            raise ThresholdError("eval thresholds not met: " + "; ".join(self.threshold_failures)
                                 + "; see the failed checks above or the --json report.")


def threshold_failures(summary: VariantSummary, min_pass: float | None, min_check: dict[str, float]) -> list[str]:
    """Which thresholds a summary misses (empty: all met). A check nothing was graded on cannot miss."""
    out = []
    if min_pass is not None and summary.pass_rate < min_pass:
        out.append(f"pass rate {summary.pass_rate:.1%} ({summary.variant}) < min-pass {min_pass:.1%}")
    for name, floor in min_check.items():
        rate = summary.per_check[name].rate
        if rate is not None and rate < floor:
            out.append(f"check {name} {rate:.1%} < {floor:.1%}")
    return out


def mutation_failures(summary: MutationSummary, floor: float | None) -> list[str]:
    """Where the mutant kill rate is below ``floor``: overall, or for a grader that mutants are aimed at."""
    if floor is None or summary.rate is None:
        return []
    out = [f"mutant kill rate {summary.rate:.1%} < {floor:.1%}"] if summary.rate < floor else []
    for grader, c in summary.per_grader.items():
        if c["applicable"] and c["killed"] / c["applicable"] < floor:
            out.append(f"grader {grader} failed {c['killed']}/{c['applicable']} of the mutants it judged "
                       f"(< {floor:.1%})")
    return out


def load_known_failures(path: Path | str) -> dict[str, str]:
    """Read an allow-list: one ``case_id  reason`` per line (``#`` comments, blank lines ignored).

    Raises:
        ValueError: a line without a reason, or an id listed twice (the CLI turns it into exit 2).
    """
    out: dict[str, str] = {}
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
        if not line:
            continue
        case_id, _, reason = line.partition(" ")
        if not reason.strip():
            raise ValueError(f"{path}:{number}: '{case_id}' has no reason; write 'case_id  why it fails'")
        if case_id in out:
            raise ValueError(f"{path}:{number}: '{case_id}' is listed twice")
        out[case_id] = reason.strip()
    return out


def known_failure_misses(results: list[CaseResult], variant: Variant, known: dict[str, str]) -> list[str]:
    """The allow-list gate: a case failing off the list, or a listed case now passing, is a miss.

    A swap (a different case failing while the listed one passes) therefore fails twice, and a fixed case
    must leave the list, so the list stays the exact set of known failures.
    """
    mine = [r for r in results if r.variant == variant]
    failing = {r.case_id for r in mine if r.run_failed or not r.passed}
    ran = {r.case_id for r in mine}
    out = [f"case {c} failed and is not in the known-failures list" for c in sorted(failing - set(known))]
    out += [f"case {c} passes now: remove it from the known-failures list ({known[c]})"
            for c in sorted((set(known) & ran) - failing)]
    return out


# -- grading -----------------------------------------------------------------------
def _labels(exp: ExpectedAnswer, out: RunOutput) -> tuple[str, str]:
    rec = out.recommendation
    if out.run_failed:
        chosen = "run_failed"
    elif rec is not None:
        chosen = rec.strategy
    elif out.error is not None and out.variant == "planner":
        chosen = f"error:{_EXIT_CLASS.get(out.error.exit_code or 0, out.error.exit_code)}"
    else:
        chosen = "no_answer"
    if exp.outcome == "error":
        expected = f"error:{exp.error}" if out.variant == "planner" else "no_answer"
        if exp.or_error and chosen == f"error:{exp.or_error}":
            expected = chosen
    elif exp.outcome == "decline":
        expected = "no_answer"
    elif exp.strategies == "any":
        expected = chosen if rec is not None else "any"
    elif rec is not None and exp.acceptable(rec.strategy):
        expected = rec.strategy
    elif exp.or_error and chosen == f"error:{exp.or_error}":
        expected = chosen
    else:
        expected = exp.strategies[0]
    return expected, chosen


def grade_run(case: Case, out: RunOutput) -> CaseResult:
    """Grade one run; a failed run is not graded (its checks are all 'na' with the reason)."""
    runner = "planner" if out.variant == "planner" else "agent"
    expected = case.expected_for(runner)
    exp_label, chosen_label = _labels(expected, out)
    if out.run_failed:
        reason = f"run failed: {out.error.type}: {out.error.message}" if out.error else "run failed"
        checks = {n: CheckResult(name=n, status="na", reason=reason) for n in CHECK_NAMES}
        return CaseResult(case_id=case.id, category=case.category, variant=out.variant, repeat=out.repeat,
                          run_failed=True, run_error=reason, checks=checks, passed=False,
                          expected_label=exp_label, chosen_label=chosen_label, duration_s=out.duration_s)
    ctx = GradeContext(case=case, runner=runner, expected=expected, recommendation=out.recommendation,
                       markdown=out.markdown, error_exit_code=out.error.exit_code if out.error else None,
                       error_message=out.error.message if out.error else "", agent_texts=tuple(out.agent_texts))
    checks = grade(ctx)
    passed = not any(c.status == "fail" for c in checks.values())
    return CaseResult(case_id=case.id, category=case.category, variant=out.variant, repeat=out.repeat,
                      run_failed=False, checks=checks, passed=passed, expected_label=exp_label,
                      chosen_label=chosen_label, duration_s=out.duration_s)


def summarize(results: list[CaseResult], variant: Variant) -> VariantSummary:
    rows = [r for r in results if r.variant == variant]
    per_check: dict[str, Rate] = {n: Rate() for n in CHECK_NAMES}
    per_category: dict[str, Rate] = defaultdict(Rate)
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        cat = per_category[r.category]
        if r.run_failed:
            cat.run_failed += 1
        elif r.passed:
            cat.passed += 1
        else:
            cat.failed += 1
        for name, c in r.checks.items():
            rate = per_check.setdefault(name, Rate())
            field = "run_failed" if r.run_failed else _STATUS_FIELD[c.status]
            setattr(rate, field, getattr(rate, field) + 1)
        confusion[r.expected_label][r.chosen_label] += 1
    passed = sum(r.passed for r in rows)
    return VariantSummary(
        variant=variant, total=len(rows), passed=passed, run_failed=sum(r.run_failed for r in rows),
        pass_rate=passed / len(rows) if rows else 0.0, per_check=per_check,
        per_category=dict(sorted(per_category.items())),
        confusion={k: dict(sorted(v.items())) for k, v in sorted(confusion.items())},
    )


# -- entry point ---------------------------------------------------------------------
MAX_REPEAT = 100  # runs per case: agent runs cost a conversation each


def run_eval(runner: Literal["planner", "agent"], *, cases_dir: Path | str | None = None,
             categories: list[str] | None = None, case_ids: list[str] | None = None, repeat: int = 1,
             json_path: Path | str | None = None, min_pass: float | None = None,
             min_check: dict[str, float] | None = None, known_failures: dict[str, str] | None = None,
             mode: Literal["with-skill", "without-skill", "compare"] = "with-skill", client: Any = None,
             model: str | None = None, user_model: str | None = None, limits: Any = None,
             rubric: bool = False, progress: Callable[[CaseResult], None] | None = None,
             mutants: bool = False, min_mutant_kill: float | None = None) -> EvalReport:
    """Run the suite and return the report (never exits; ``raise_for_threshold`` gives the exit code 8).

    Args:
        runner: "planner" (deterministic, CI) or "agent" (Claude through the chat loop).
        cases_dir: directory of case YAML files (default: the packaged cases).
        categories / case_ids: run only these (unknown names raise ValueError).
        repeat: runs per case (agent runs vary; planner runs are deterministic).
        json_path: also write the report as JSON here.
        min_pass: pass-rate threshold in [0, 1] for the primary variant.
        min_check: per-check pass-rate floors, e.g. ``{"sections": 1.0, "engine_config": 1.0}``.
        known_failures: case id -> reason, the only cases allowed to fail (``load_known_failures``); a case
            failing off the list, or a listed case passing, misses the threshold. Ids must be known cases.
        mode: agent only: with the skill, without it (same model, no SKILL.md, no tools), or both side by side.
        client: agent only: an ``anthropic.Anthropic`` client (default: built from the environment, which may
            point at the local Messages-API stand-in through ANTHROPIC_BASE_URL).
        model / user_model: agent model (default: ``skill.surfaces.agent.resolve_claude_model``) and simulated-user model
            (default: the agent model).
        limits: agent only: ``skill.agent.Limits`` for each conversation.
        rubric: add the model-graded prose rubric (needs a client; "na" without one).
        progress: called with each graded result, e.g. to print a line per case.
        mutants: planner only: also grade wrong answers made from each real one (``evals/mutants.py``) and
            report ``mutants_total`` / ``mutants_killed``.
        min_mutant_kill: with ``mutants``: the kill-rate floor, overall and per target grader.
    """
    if mutants and runner != "planner":
        raise ValueError("--mutants runs on the planner runner only (its answers are deterministic)")
    if min_mutant_kill is not None and (not mutants or not 0.0 <= min_mutant_kill <= 1.0):
        raise ValueError("--min-mutant-kill needs --mutants and a fraction between 0 and 1")
    if not 1 <= repeat <= MAX_REPEAT:
        raise ValueError(f"--repeat must be between 1 and {MAX_REPEAT}, got {repeat}")
    if min_pass is not None and not 0.0 <= min_pass <= 1.0:
        raise ValueError("min_pass is a fraction between 0 and 1")
    min_check = dict(min_check or {})
    unknown = set(min_check) - set(CHECK_NAMES) - {"rubric"}
    if unknown or not all(0.0 <= v <= 1.0 for v in min_check.values()):
        raise ValueError(f"min_check needs known check names ({', '.join(CHECK_NAMES)}) and fractions in [0, 1]")
    if json_path is not None:
        check_writable(Path(json_path), "--json")  # before the run: an agent run takes minutes and costs tokens
    cases = Dataset.load(cases_dir).select(categories=categories, ids=case_ids, runner=runner)
    if known_failures:
        every = {c.id for c in Dataset.load(cases_dir).cases}
        stray = sorted(set(known_failures) - every)
        if stray:
            raise ValueError(f"known-failures list names unknown case ids: {', '.join(stray)}")
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results: list[CaseResult] = []
    mutant_results: list[MutantResult] = []
    if runner == "planner":
        variants: list[Variant] = ["planner"]
    else:
        variants = ["with-skill", "without-skill"] if mode == "compare" else [mode]
        if client is None:
            import anthropic

            client = anthropic.Anthropic()
    for variant in variants:
        for case in cases:
            for i in range(repeat):
                out = _run_one(runner, variant, case, i, client=client, model=model, user_model=user_model,
                               limits=limits)
                result = grade_run(case, out)
                if mutants and not out.run_failed:
                    mutant_results += grade_mutants(case, out)
                if rubric:
                    from specpick.evals.evaluators.rubric import grade_rubric

                    result.checks["rubric"] = grade_rubric(case, out.markdown, client=client, model=model)
                    result.passed = result.passed and result.checks["rubric"].status != "fail"
                results.append(result)
                if progress is not None:
                    progress(result)
    summaries = {v: summarize(results, v) for v in variants}
    primary = variants[0]
    misses = threshold_failures(summaries[primary], min_pass, min_check)
    if known_failures is not None:
        misses += known_failure_misses(results, primary, known_failures)
    mutation = summarize_mutants(mutant_results) if mutants else None
    if mutation is not None:
        misses += mutation_failures(mutation, min_mutant_kill)
    report = EvalReport(runner=runner, started_at=started, results=results, summaries=summaries, primary=primary,
                        min_pass=min_pass, min_check=min_check, known_failures=known_failures,
                        threshold_failures=misses, threshold_met=not misses,
                        mutants_total=mutation.total if mutation else None,
                        mutants_killed=mutation.killed if mutation else None, min_mutant_kill=min_mutant_kill,
                        mutation=mutation, mutant_results=mutant_results)
    if json_path is not None:
        try:
            Path(json_path).write_text(report.model_dump_json(indent=2), encoding="utf-8")
        except OSError as exc:  # checked before the run, but a disk can fill up or a folder vanish meanwhile
            raise ValueError(f"--json {json_path}: could not write the report ({exc.strerror or exc})") from None
    return report


def check_writable(path: Path, flag: str) -> None:
    """Fail now, not after the run, when ``path`` cannot be written (ValueError: the CLI makes it exit 2)."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a directory: give a file name")
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: folder {parent} does not exist; create it or choose another path")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{flag} {path} is not writable; choose another path")


def _run_one(runner: str, variant: Variant, case: Case, repeat: int, **kw: Any) -> RunOutput:

    if runner == "planner":
        return runners.run_planner(case, repeat)
    converse = runners.make_converse(kw["client"], variant, model=kw["model"], limits=kw["limits"])
    user = runners.SimulatedUser(kw["client"], case, model=kw["user_model"] or kw["model"])
    return runners.run_agent(case, converse, user, variant=variant, repeat=repeat)


def report_json(report: EvalReport) -> str:
    """The report as JSON text (what ``--json FILE`` writes)."""
    return json.dumps(report.model_dump(mode="json"), indent=2)


def check_threshold(report: EvalReport) -> None:
    """Raise ThresholdError when the report misses its min-pass threshold (CLI exit code 8)."""
    report.raise_for_threshold()


# -- text rendering --------------------------------------------------------------------
def _pct(rate: float | None) -> str:
    return "   -" if rate is None else f"{rate:4.0%}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows]


def render_text(report: EvalReport, *, max_reason: int = 110) -> str:
    """Per-case table, pass rate per check and per category, confusion matrix (side by side for variants)."""
    variants = list(report.summaries)
    out: list[str] = [f"spec-decode-picker evals: runner={report.runner}, started {report.started_at}", ""]
    rows = []
    for r in report.results:
        status = "RUN-FAILED" if r.run_failed else ("pass" if r.passed else "FAIL")
        detail = r.run_error if r.run_failed else ", ".join(r.failed_checks)
        rows.append([r.case_id + (f"#{r.repeat}" if r.repeat else ""), r.category, r.variant, status,
                     r.expected_label, r.chosen_label, detail])
    out += _table(["case", "category", "variant", "result", "expected", "chosen", "failed checks"], rows)
    failures = [(r, n, c) for r in report.results for n, c in r.checks.items() if c.status == "fail"]
    if failures:
        out += ["", "Failed checks (evidence):"]
        out += [f"- {r.case_id} [{r.variant}] {n}: {c.reason[:max_reason]}" for r, n, c in failures]
    failed_runs = [r for r in report.results if r.run_failed]
    if failed_runs:
        out += ["", "Failed runs (not graded):"] + [f"- {r.case_id} [{r.variant}]: {r.run_error}" for r in failed_runs]

    sums = [report.summaries[v] for v in variants]
    out += ["", "Pass rate per check (pass / graded; n/a and failed runs not graded):"]
    names = list(dict.fromkeys(n for s in sums for n in s.per_check))
    out += _table(["check"] + variants, [[n] + [_fmt_rate(s.per_check.get(n)) for s in sums] for n in names])
    cats = sorted({c for s in sums for c in s.per_category})
    out += ["", "Pass rate per category:"]
    out += _table(["category"] + variants, [[c] + [_fmt_rate(s.per_category.get(c)) for s in sums] for c in cats])
    for s in sums:
        out += ["", f"Confusion matrix [{s.variant}] (rows: expected, columns: chosen):"]
        cols = sorted({c for row in s.confusion.values() for c in row})
        out += _table(["expected \\ chosen"] + cols,
                      [[e] + [str(s.confusion[e].get(c, "")) for c in cols] for e in s.confusion])
    out += [""]
    for s in sums:
        out.append(f"[{s.variant}] {s.passed}/{s.total} cases passed ({s.pass_rate:.1%}); "
                   f"{s.run_failed} run(s) failed")
    if report.known_failures:
        out += ["", "Known failures (allowed to fail, with the reason):"]
        out += [f"- {c}: {why}" for c, why in sorted(report.known_failures.items())]
    if report.mutation is not None:
        out += render_mutation(report.mutation, max_reason=max_reason)
    if report.min_pass is not None or report.min_check or report.known_failures is not None \
            or report.min_mutant_kill is not None:
        verdict = "met" if report.threshold_met else "NOT met: " + "; ".join(report.threshold_failures)
        out.append(f"thresholds on {report.primary}: {verdict}")
    return "\n".join(out) + "\n"


def render_mutation(m: MutationSummary, *, max_reason: int = 110) -> list[str]:
    """The mutation-testing section: kill rate overall, per kind, per target grader, and every survivor."""
    out = ["", f"Mutation testing: {m.killed}/{m.total} wrong answers killed ({_pct(m.rate).strip()})"]
    out += _table(["mutant kind", "killed"], [[k, f"{c['killed']}/{c['total']}"] for k, c in m.per_kind.items()])
    out += [""] + _table(["target grader", "killed by it / judged", "aimed at it"],
                         [[g, f"{c['killed']}/{c['applicable']}", str(c["total"])] for g, c in m.per_grader.items()])
    if m.survivors:
        out += ["", "Surviving mutants (a wrong answer every check passed):"]
        out += [f"- {r.case_id} {r.kind}: {r.what}"[:max_reason] for r in m.survivors]
    return out


def _fmt_rate(rate: Rate | None) -> str:
    if rate is None:
        return "-"
    graded = rate.passed + rate.failed
    text = f"{_pct(rate.rate)} ({rate.passed}/{graded})" if graded else "   - (n/a)"
    return text + (f" +{rate.run_failed} run failed" if rate.run_failed else "")

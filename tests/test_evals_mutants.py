"""Mutation testing of the graders: wrong answers made from real ones fail, and the report counts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.evals.dataset import Dataset
from specpick.evals.evaluators.graders import grade
from specpick.evals.mutants import KIND_TARGET, grade_mutants, mutants
from specpick.evals.report import run_eval
from specpick.evals.runners import run_planner
from specpick.evals.mutants import grade_context

CASES = {c.id: c for c in Dataset.load().cases}
# Llama-3.1-70B with the Llama-3.2-1B draft on vLLM (ROCM-BLOG-SPECDEC-DEEPDIVE-2025 rows): passes today.
QUICKSTART = "llama31-70b-draft-1b-quickstart"


def _status(case, out) -> dict[str, str]:
    return {n: c.status for n, c in grade(grade_context(case, out)).items()}


def test_each_mutant_is_wrong_in_one_way_only():
    case = CASES[QUICKSTART]
    orig = run_planner(case)
    assert not [n for n, s in _status(case, orig).items() if s == "fail"]
    by_kind = {m.kind: m for m in mutants(case, orig)}
    assert {"other_method", "n_far", "speedup_x2", "speedup_x0.5", "other_head", "config_contradicts",
            "self_contradiction"} <= set(by_kind)
    n = orig.recommendation.num_draft_tokens
    far = by_kind["n_far"].output.recommendation
    assert far.num_draft_tokens == 2 * n + 4 and f'"num_speculative_tokens":{2 * n + 4}' in far.engine_config.config
    st = _status(case, by_kind["n_far"].output)
    assert st["num_draft_tokens"] == "fail" and st["engine_config"] == "pass"  # the config was rewritten to agree
    head = by_kind["other_head"].output.recommendation
    assert head.draft_model != orig.recommendation.draft_model and head.draft_model in head.engine_config.config
    st = _status(case, by_kind["other_head"].output)
    assert st["draft_model"] == "fail" and st["engine_config"] == "pass"
    assert _status(case, by_kind["config_contradicts"].output)["engine_config"] == "fail"
    other = by_kind["other_method"].output.recommendation
    assert other.strategy != orig.recommendation.strategy and _status(case, by_kind["other_method"].output)[
        "engine_config"] == "pass"  # a complete answer for the other method, not a broken one


def test_mutants_of_an_answer_that_already_fails_are_not_counted():
    case = CASES["phi4-can-finetune-code-eagle3"]  # a known failure (evals/known_failures.txt)
    assert grade_mutants(case, run_planner(case)) == []


def test_suite_kill_rate_overall_and_per_grader(tmp_path: Path):
    out = tmp_path / "r.json"
    report = run_eval("planner", json_path=out, mutants=True, min_mutant_kill=0.9)
    data = json.loads(out.read_text())
    assert data["mutants_total"] == report.mutation.total and data["mutants_killed"] == report.mutation.killed
    assert data["mutants_total"] >= 500
    assert data["mutants_killed"] / data["mutants_total"] >= 0.9
    for grader, counts in report.mutation.per_grader.items():
        assert grader in KIND_TARGET.values()
        assert counts["killed"] >= 0.9 * counts["applicable"], (grader, counts)
    assert not [m for m in report.threshold_failures if "mutant" in m or "grader" in m]


def test_mutants_only_on_the_planner_runner():
    with pytest.raises(ValueError, match="planner runner only"):
        run_eval("agent", mutants=True, client=object())
    with pytest.raises(ValueError, match="needs --mutants"):
        run_eval("planner", min_mutant_kill=0.9)

"""The train-plan eval category: at least 25 sourced cases, all passing (graded on decision and cited ranges)."""

from __future__ import annotations

from specpick.evals.training import grade, load_cases, run_cases


def test_case_file_has_at_least_25_cases_each_with_a_source() -> None:
    cases = load_cases()
    assert len(cases) >= 25
    assert all(c.sources for c in cases)
    assert sum(c.tool == "head_check" for c in cases) >= 3  # head fitness has its own cases


def test_every_case_passes_every_check() -> None:
    results = run_cases(load_cases())
    failed = [f"{r.case_id} [{r.check}] {r.detail}" for r in results if not r.passed]
    assert not failed, "\n".join(failed)


def test_a_wrong_decision_is_graded_as_a_failure() -> None:
    case = next(c for c in load_cases() if c.id == "wrong-algorithm-flag-tau-1")

    class Fake:  # a train-plan answer that trains around a broken setup
        decision, reasons = "train", []
        expected_tau = expected_speedup = cost = data = recipe = None
        verifier, facts_from = "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"

    results = grade(case, Fake())
    assert any(r.check == "decision" and not r.passed for r in results)

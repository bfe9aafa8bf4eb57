"""The contradiction grader and the deployment triggers of required flags: answers and cases that mean nothing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from specpick.evals.dataset import Case, Dataset
from specpick.evals.evaluators.base import GradeContext
from specpick.evals.evaluators.contradiction import grade_contradiction
from specpick.evals.runners import run_planner
from specpick.skill.schema import Flag

CASES = {c.id: c for c in Dataset.load().cases}


def _grade(case: Case, rec) -> tuple[str, str]:
    ctx = GradeContext(case=case, runner="planner", expected=case.expected, recommendation=rec, markdown="")
    r = grade_contradiction(ctx, rec)
    return r.status, r.reason


def test_ngram_chosen_while_flagging_low_overlap_is_a_contradiction_unless_forced():
    case = CASES["creative-ngram-forced-low-overlap"]  # the user forced n-gram on creative writing
    rec = run_planner(case).recommendation
    assert rec.strategy == "ngram" and "low_overlap_ngram" in rec.flag_ids()
    assert _grade(case, rec)[0] == "pass"  # forced: the answer runs it with the warning
    unforced = rec.model_copy(update={"inputs": rec.inputs.model_copy(update={"method": None})})
    status, reason = _grade(case, unforced)
    assert status == "fail" and "low_overlap_ngram" in reason


def test_a_fail_check_or_a_slower_estimate_contradicts_speculating():
    case = CASES["llama31-70b-draft-1b-quickstart"]
    rec = run_planner(case).recommendation
    assert _grade(case, rec)[0] == "pass"
    broken = [c.model_copy(update={"verdict": "fail"}) if c.name == "vram_fit" else c for c in rec.compatibility]
    assert "vram_fit = fail" in _grade(case, rec.model_copy(update={"compatibility": broken}))[1]
    s = rec.expected_speedup
    slow = s.model_copy(update={"value": 0.8, "low": 0.7, "high": 0.9})
    assert "slower than no speculation" in _grade(case, rec.model_copy(update={"expected_speedup": slow}))[1]
    # a cycle emits tau tokens for at least one verifier step: the speedup cannot exceed tau
    fast = s.model_copy(update={"value": s.tau + 0.5, "high": s.tau + 0.6})
    assert "above tau" in _grade(case, rec.model_copy(update={"expected_speedup": fast}))[1]
    lora = Flag(id="lora", severity="fail", message="speculation with LoRA breaks here", source="t")
    assert "lora (fail)" in _grade(case, rec.model_copy(update={"flags": [*rec.flags, lora]}))[1]


def test_a_flag_about_the_users_draft_is_no_contradiction_when_another_is_chosen():
    case = CASES["llama2-70b-mistral-draft-tokenizer-mismatch"]
    rec = run_planner(case).recommendation
    assert "tokenizer_mismatch" in rec.flag_ids() and "mistral" not in (rec.draft_model or "").lower()
    assert _grade(case, rec)[0] == "pass"


def _case(expected: dict, inputs: dict | None = None) -> dict:
    return {"id": "t-case", "category": "t", "title": "a test case", "opening_message": "which method?", "sources": ["t"],
            "ground_truth": ["engine_support.csv:vllm/eagle3"], "release": "vllm 0.14.0",
            "inputs": inputs or {"verifier": "meta-llama/Llama-3.1-8B-Instruct", "workload": "chat"},
            "expected": {"strategies": ["eagle3"], **expected}, "runners": ["planner"]}


def test_a_case_may_require_a_flag_only_where_its_deployment_triggers_it():
    with pytest.raises(ValidationError, match="batch_saturation"):
        Case.model_validate(_case({"flags": ["batch_saturation"]}))  # concurrency 1
    Case.model_validate(_case({"flags": ["batch_saturation"]},
                              {"verifier": "meta-llama/Llama-3.1-8B-Instruct", "workload": "chat", "concurrency": 32}))
    with pytest.raises(ValidationError, match="lora"):
        Case.model_validate(_case({"flags_if": {"eagle3": ["lora"]}}))


def test_mentions_are_phrases_and_several_strategies_need_reasons():
    with pytest.raises(ValidationError, match="single words"):
        Case.model_validate(_case({"mentions": ["temperature"]}))
    with pytest.raises(ValidationError, match="single words"):
        Case.model_validate(_case({"mentions": ["draft temperature|medusa"]}))
    Case.model_validate(_case({"mentions": ["draft temperature|Medusa (head|heads)"]}))
    with pytest.raises(ValidationError, match="why_acceptable"):
        Case.model_validate(_case({"strategies": ["eagle3", "none"]}))
    Case.model_validate(_case({"strategies": ["eagle3", "none"],
                               "why_acceptable": {"eagle3": "its head", "none": "at this load nothing pays"}}))


def test_an_estimate_outside_the_domain_is_no_slower_claim_while_its_range_reaches_a_gain():
    case = CASES["nemotron-3-ultra-recipe-mtp-measure-first"]
    rec = run_planner(case).recommendation
    assert rec.expected_speedup.outside_domain and _grade(case, rec)[0] == "pass"
    s = rec.expected_speedup.model_copy(update={"value": 0.8, "low": 0.55, "high": 1.3})
    assert _grade(case, rec.model_copy(update={"expected_speedup": s}))[0] == "pass"
    inside = s.model_copy(update={"outside_domain": []})
    assert "slower than no speculation" in _grade(case, rec.model_copy(update={"expected_speedup": inside}))[1]
    below = s.model_copy(update={"high": 0.95})
    assert "slower than no speculation" in _grade(case, rec.model_copy(update={"expected_speedup": below}))[1]

"""Graders against hand-built Recommendations: each returns pass / fail / na with evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specpick.evals.evaluators.graders import CHECK_NAMES, GradeContext, grade
from specpick.evals.dataset import Case
from specpick.skill.schema import SECTION_HEADINGS, Recommendation

VLLM_METRICS = [
    {"engine": "vllm", "name": "vllm:spec_decode_num_accepted_tokens_total", "meaning": "accepted"},
    {"engine": "vllm", "name": "vllm:spec_decode_num_draft_tokens_total", "meaning": "drafted"},
    {"engine": "vllm", "name": "vllm:spec_decode_num_drafts_total", "meaning": "drafts"},
]
DEFINITIONS = ["acceptance rate alpha = accepted / draft tokens", "mean acceptance length tau = 1 + accepted / drafts",
               "per-position acceptance rate = accepted_per_pos[i] / drafts"]


def make_rec(**over: Any) -> Recommendation:
    """A valid EAGLE-3 / vLLM Recommendation; keyword overrides replace top-level fields (dicts are merged)."""
    base: dict[str, Any] = {
        "strategy": "eagle3", "strategy_label": "EAGLE-3", "num_draft_tokens": 5, "tree": None,
        "draft_model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "engine": "vllm",
        "engine_config": {
            "engine": "vllm", "engine_version": "0.1x-2026", "format": "cli-json",
            "config": json.dumps({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                  "num_speculative_tokens": 5}),
            "launch_command": "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config ...",
        },
        "rationale": ["official head"],
        "expected_speedup": {"value": 2.2, "low": 1.6, "high": 2.9, "alpha": None, "tau": 3.4,
                             "acceptance_source": "published-dev.csv EAGLE-3 rows", "cost_ratio": 0.05,
                             "cycle_cost": 1.5, "batch": 1, "engine_overhead": 1.1},
        "compatibility": [{"name": n, "verdict": "pass", "reason": "ok"}
                          for n in ("head_match", "vram_fit", "runtime_support", "kv_rollback")],
        "flags": [{"id": "eagle_needs_internals", "severity": "info", "message": "m", "source": "seed"}],
        "fallback": [{"trigger": {"metric": "tau", "op": "<", "value": 2.0}, "condition": "tau < 2",
                      "action": "drop N", "next_strategy": "draft_model"}],
        "measurement_plan": {"sample": "200 prompts", "definitions": DEFINITIONS, "metrics": VLLM_METRICS,
                             "commands": ["curl localhost:8000/metrics"], "steps": ["run"]},
        "inputs": {"verifier": "meta-llama/Llama-3.1-8B-Instruct", "workload": "chat"},
    }
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return Recommendation.model_validate(base)


def make_case(expected: dict[str, Any], **over: Any) -> Case:
    data = {"id": "t-case", "category": "test", "title": "a test case", "opening_message": "hello",
            "inputs": {"verifier": "meta-llama/Llama-3.1-8B-Instruct", "workload": "chat"},
            "expected": expected, "sources": ["test"],
            "ground_truth": ["specpick:skill/SKILL.md"], "release": "vllm 0.14.0", **over}
    return Case.model_validate(data)


def ctx(expected: dict[str, Any], rec: Recommendation | None = None, *, markdown: str | None = None,
        exit_code: int | None = None, runner: str = "planner", texts: tuple[str, ...] = (), **case_over: Any
        ) -> GradeContext:
    case = make_case(expected, **case_over)
    return GradeContext(case=case, runner=runner, expected=case.expected_for(runner), recommendation=rec,
                        markdown=markdown, error_exit_code=exit_code, error_message="msg" if exit_code else "",
                        agent_texts=texts)


def status(c: GradeContext, name: str) -> str:
    return grade(c)[name].status


def good_markdown() -> str:
    return "\n".join(f"## {h}\n\ntext for {h}\n" for h in SECTION_HEADINGS)


EAGLE3 = {"strategies": ["eagle3"]}


# -- outcome --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("expected", "has_rec", "exit_code", "runner", "want"), [
    (EAGLE3, True, None, "planner", "pass"),
    (EAGLE3, False, 2, "planner", "fail"),  # an error where a recommendation was expected
    ({**EAGLE3, "or_error": "input"}, False, 2, "planner", "pass"),  # the accepted alternative
    ({**EAGLE3, "or_error": "input"}, False, 3, "planner", "fail"),  # the wrong error class
    ({"outcome": "error", "error": "input"}, False, 2, "planner", "pass"),
    ({"outcome": "error", "error": "input"}, False, 3, "planner", "fail"),
    ({"outcome": "error", "error": "not_found"}, True, None, "planner", "fail"),
    ({"outcome": "decline"}, False, None, "agent", "pass"),
    ({"outcome": "decline"}, True, None, "agent", "fail"),
    ({"outcome": "error", "error": "input"}, False, None, "agent", "pass"),  # explained in prose, no answer
])
def test_outcome(expected, has_rec, exit_code, runner, want):
    rec = make_rec() if has_rec else None
    runners = ["agent"] if expected.get("outcome") == "decline" else ["planner", "agent"]
    c = ctx(expected, rec, exit_code=exit_code, runner=runner, runners=runners)
    assert status(c, "outcome") == want, grade(c)["outcome"].reason


def test_field_checks_are_na_when_an_error_was_expected():
    c = ctx({"outcome": "error", "error": "input"}, make_rec())
    results = grade(c)
    assert results["outcome"].status == "fail"
    assert all(results[n].status == "na" for n in ("strategy", "flags", "engine_config", "sections"))


def test_every_grader_reports_na_without_a_recommendation():
    results = grade(ctx(EAGLE3, None, exit_code=2))
    assert set(results) == set(CHECK_NAMES)
    assert [n for n, r in results.items() if r.status != "na"] == ["outcome"]


# -- strategy, N, tree, speedup ---------------------------------------------------------------------
@pytest.mark.parametrize(("expected", "rec_over", "name", "want"), [
    (EAGLE3, {}, "strategy", "pass"),
    ({"strategies": ["draft_model", "none"], "why_acceptable": {"draft_model": "a same-family draft",
                                                                 "none": "nothing pays here"}}, {}, "strategy", "fail"),
    ({"strategies": "any"}, {}, "strategy", "na"),
    ({"strategies": ["eagle3"], "forbidden_strategies": ["draft_model"]}, {}, "forbidden_strategies", "fail"),
    ({"strategies": ["eagle3"], "forbidden_strategies": ["medusa"]}, {}, "forbidden_strategies", "pass"),
    ({"strategies": ["eagle3"], "num_draft_tokens": {"eagle3": [4, 6]}}, {}, "num_draft_tokens", "pass"),
    ({"strategies": ["eagle3"], "num_draft_tokens": [7, 12]}, {}, "num_draft_tokens", "fail"),
    ({"strategies": ["eagle3"], "num_draft_tokens": {"draft_model": [7, 12]}}, {}, "num_draft_tokens", "na"),
    ({"strategies": ["eagle3"], "num_draft_tokens": [1, 3]}, {"num_draft_tokens": None}, "num_draft_tokens", "fail"),
    ({"strategies": ["eagle3"], "speedup": {"low": 1.5, "high": 4.5, "basis": "rows L78, L156"}}, {},
     "speedup_band", "pass"),
    ({"strategies": ["eagle3"], "speedup": {"draft_model": {"low": 1, "high": 2, "basis": "rows L44 L70"}}}, {},
     "speedup_band", "na"),
    ({"strategies": ["eagle3"], "speedup": {"low": 2.5, "high": 4.5, "basis": "rows L78, L156"}}, {},
     "speedup_band", "fail"),
])
def test_field_graders(expected, rec_over, name, want):
    c = ctx(expected, make_rec(**rec_over))
    assert status(c, name) == want, grade(c)[name].reason


def test_forbidden_strategy_offered_as_fallback_fails():
    c = ctx({"strategies": ["eagle3"], "forbidden_strategies": ["draft_model"]}, make_rec())
    result = grade(c)["forbidden_strategies"]
    assert result.status == "fail" and "fallback" in result.reason


SGLANG_TREE = {
    "engine": "sglang", "tree": {"depth": 5, "top_k": 4, "num_verify_tokens": 8},
    "engine_config": {"engine": "sglang", "engine_version": "@067ad4d", "format": "cli-flags",
                      "config": "--speculative-algorithm EAGLE3 --speculative-draft-model-path h "
                                "--speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8",
                      "launch_command": "python -m sglang.launch_server ..."},
    "draft_model": "h",
    "measurement_plan": {"sample": "s", "definitions": DEFINITIONS, "commands": ["c"], "steps": ["s"],
                         "metrics": [{"engine": "sglang", "name": "sglang:spec_accept_length", "meaning": "tau"}]},
}


def test_tree_ranges_on_sglang():
    rec = make_rec(**SGLANG_TREE)
    assert status(ctx({**EAGLE3, "tree": {"depth": [3, 6], "top_k": [2, 8]}}, rec), "tree") == "pass"
    bad = grade(ctx({**EAGLE3, "tree": {"top_k": [1, 2]}}, rec))["tree"]
    assert bad.status == "fail" and "top_k=4" in bad.reason
    assert status(ctx({**EAGLE3, "tree": {"top_k": [1, 2]}}, make_rec()), "tree") == "na"  # vLLM chain
    assert status(ctx({**EAGLE3, "tree": {"top_k": [1, 2]}}, make_rec(engine="sglang", engine_config={
        "engine": "sglang"}, tree=None)), "tree") == "fail"


@pytest.mark.parametrize(("speedup_over", "rec_over", "want", "needle"), [
    ({}, {}, "pass", "consistent"),
    ({"value": 3.5}, {}, "fail", "outside its own range"),
    ({"tau": 0.8}, {}, "fail", "tau"),
    ({"acceptance_source": " "}, {}, "fail", "source"),
    ({"batch": 8}, {}, "fail", "concurrency"),
    ({"value": 1.4, "low": 1.0, "high": 1.5}, {"strategy": "none"}, "fail", "strategy none"),
])
def test_speedup_stated(speedup_over, rec_over, want, needle):
    rec = make_rec(expected_speedup=speedup_over, **rec_over)
    result = grade(ctx({"strategies": "any"}, rec))["speedup_stated"]
    assert result.status == want and needle in result.reason


# -- flags and compatibility ---------------------------------------------------------------------------
def test_flags_required_conditional_and_forbidden():
    rec = make_rec()  # raises eagle_needs_internals only
    assert status(ctx({**EAGLE3, "flags": ["eagle_needs_internals"]}, rec), "flags") == "pass"
    missing = grade(ctx({**EAGLE3, "flags_if": {"eagle3": ["prefix_cache_eagle"]}}, rec))["flags"]
    assert missing.status == "fail" and "prefix_cache_eagle" in missing.reason
    assert status(ctx({**EAGLE3, "flags_if": {"ngram": ["ngram_tool_calls"]}}, rec), "flags") == "na"
    assert status(ctx({**EAGLE3, "forbidden_flags": ["eagle_needs_internals"]}, rec), "forbidden_flags") == "fail"
    assert status(ctx({**EAGLE3, "forbidden_flags": ["tokenizer_mismatch"]}, rec), "forbidden_flags") == "pass"


def test_compatibility_verdicts_and_when():
    rec = make_rec(compatibility=[{"name": "tokenizer", "verdict": "fail", "reason": "different"},
                                  {"name": "head_match", "verdict": "pass", "reason": "ok"}])
    assert status(ctx({**EAGLE3, "compatibility": {"tokenizer": ["fail"]}}, rec), "compatibility") == "pass"
    wrong = grade(ctx({**EAGLE3, "compatibility": {"tokenizer": ["pass"]}}, rec))["compatibility"]
    assert wrong.status == "fail" and "tokenizer" in wrong.reason
    absent = grade(ctx({**EAGLE3, "compatibility": {"vram_fit": ["pass"]}}, rec))["compatibility"]
    assert absent.status == "fail" and "missing" in absent.reason
    only_for_drafts = {**EAGLE3, "compatibility": {"tokenizer": {"verdicts": ["pass"], "when": ["draft_model"]}}}
    assert status(ctx(only_for_drafts, rec), "compatibility") == "na"


def test_compat_coverage_needs_tokenizer_checks_for_a_draft_model():
    assert status(ctx(EAGLE3, make_rec()), "compat_coverage") == "pass"
    rec = make_rec(strategy="draft_model", draft_model="meta-llama/Llama-3.2-1B-Instruct", engine_config={
        "config": json.dumps({"method": "draft_model", "model": "meta-llama/Llama-3.2-1B-Instruct",
                              "num_speculative_tokens": 5})})
    result = grade(ctx({"strategies": ["draft_model"]}, rec))["compat_coverage"]
    assert result.status == "fail" and "tokenizer" in result.reason


def test_draft_model_and_engine():
    rec = make_rec()
    ok = {**EAGLE3, "draft_models": {"eagle3": ["YUHUILI/EAGLE3-LLaMA3.1-Instruct-8B"]}, "engine": "vllm"}
    assert status(ctx(ok, rec), "draft_model") == "pass" and status(ctx(ok, rec), "engine") == "pass"
    other = {**EAGLE3, "draft_models": {"eagle3": ["lmsys/other"]}, "engine": "sglang"}
    assert status(ctx(other, rec), "draft_model") == "fail" and status(ctx(other, rec), "engine") == "fail"


# -- engine config -----------------------------------------------------------------------------------------
def _vllm(cfg: dict[str, Any], **rec_over: Any) -> Recommendation:
    return make_rec(engine_config={"config": json.dumps(cfg)}, **rec_over)


@pytest.mark.parametrize(("rec", "want", "needle"), [
    (make_rec(), "pass", "consistent"),
    (make_rec(engine_config={"config": "{not json"}), "fail", "does not parse"),
    (_vllm({"method": "eagle", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 5}),
     "fail", "method"),
    (_vllm({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}),
     "fail", "differs from the recommended N"),
    (_vllm({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 5,
            "draft_tensor_parallel_size": 2}, inputs={"verifier": "v", "workload": "chat", "gpus": 4}),
     "fail", "vllm#31345"),
    (_vllm({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 5,
            "draft_tensor_parallel_size": 4}, inputs={"verifier": "v", "workload": "chat", "gpus": 4}),
     "pass", "consistent"),
    (_vllm({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 5,
            "tensor_parallel_size": 4}), "fail", "tensor_parallel_size"),
    (make_rec(**SGLANG_TREE), "pass", "consistent"),
    (make_rec(**{**SGLANG_TREE, "tree": {"depth": 5, "top_k": 1, "num_verify_tokens": 5}, "engine_config": {
        **SGLANG_TREE["engine_config"], "config": "--speculative-algorithm EAGLE3 --speculative-draft-model-path h "
        "--speculative-num-steps 5 --speculative-eagle-topk 1 --speculative-num-draft-tokens 5"}}),
     "fail", "steps+1"),
    (make_rec(**{**SGLANG_TREE, "tree": {"depth": 2, "top_k": 2, "num_verify_tokens": 8}, "engine_config": {
        **SGLANG_TREE["engine_config"], "config": "--speculative-algorithm EAGLE3 --speculative-draft-model-path h "
        "--speculative-num-steps 2 --speculative-eagle-topk 2 --speculative-num-draft-tokens 8"}}),
     "fail", "steps*topk+1"),
    (make_rec(**{**SGLANG_TREE, "engine_config": {**SGLANG_TREE["engine_config"],
                                                  "config": "--speculative-algorithm EAGLE3 --speculative-draft-model-path h "
                                                            "--speculative-num-steps 5"}}),
     "fail", "together"),
    (make_rec(engine="trtllm", engine_config={"engine": "trtllm", "format": "yaml", "config":
              "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 5\n  speculative_model: h\n"}),
     "pass", "consistent"),
    (make_rec(engine="trtllm", engine_config={"engine": "trtllm", "format": "yaml", "config":
              "speculative_config:\n  decoding_type: DraftTarget\n  max_draft_len: 5\n"}), "fail", "decoding_type"),
    (make_rec(engine="trtllm", engine_config={"engine": "trtllm", "format": "yaml", "config": "a: [1, 2"}),
     "fail", "does not parse"),
    (make_rec(strategy="draft_model", engine="transformers", engine_config={
        "engine": "transformers", "format": "python-kwargs",
        "config": "assistant_model=AutoModelForCausalLM.from_pretrained('m'), num_assistant_tokens=5"}),
     "pass", "consistent"),
    (make_rec(strategy="eagle3", engine="transformers", engine_config={
        "engine": "transformers", "format": "python-kwargs", "config": "num_assistant_tokens=5"}),
     "fail", "does not run eagle3"),
    (make_rec(strategy="none", num_draft_tokens=None, engine_config={"format": "none", "config": "",
                                                                     "launch_command": "vllm serve m"}),
     "pass", "consistent"),
    (make_rec(strategy="none", num_draft_tokens=None), "fail", "still enables speculation"),
])
def test_engine_config(rec, want, needle):
    result = grade(ctx({"strategies": "any"}, rec))["engine_config"]
    assert result.status == want and needle in result.reason, result.reason


@pytest.mark.parametrize(("cfg", "expect", "want"), [
    ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 5},
     {"strategy": "ngram", "key": "prompt_lookup_min", "range": [8, 64]}, "fail"),
    ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 8, "prompt_lookup_max": 12},
     {"strategy": "ngram", "key": "prompt_lookup_min", "range": [8, 64]}, "pass"),
    ({"method": "ngram", "num_speculative_tokens": 4},
     {"strategy": "ngram", "key": "prompt_lookup_min", "range": [8, 64]}, "fail"),  # vLLM default is 5
    ({"method": "ngram", "num_speculative_tokens": 4, "num_speculative_tokens_per_batch_size": [[1, 8, 4]]},
     {"strategy": "ngram", "key": "num_speculative_tokens_per_batch_size", "absent": True}, "fail"),
    ({"method": "ngram", "num_speculative_tokens": 4},
     {"strategy": "eagle3", "key": "prompt_lookup_min", "range": [8, 64]}, "na"),
    ({"method": "ngram", "num_speculative_tokens": 4},
     {"strategy": "ngram", "key": "method", "equals": "ngram"}, "pass"),
])
def test_config_values(cfg, expect, want):
    rec = make_rec(strategy="ngram", num_draft_tokens=4, draft_model=None, engine_config={"config": json.dumps(cfg)})
    assert status(ctx({"strategies": ["ngram"], "config": [expect]}, rec), "config_values") == want


# -- fallback and measurement -----------------------------------------------------------------------------------
def test_fallback_triggers():
    assert status(ctx(EAGLE3, make_rec()), "fallback") == "pass"
    untriggered = make_rec(fallback=[{"condition": "if slow", "action": "try again"}])
    assert status(ctx(EAGLE3, untriggered), "fallback") == "fail"
    missing_group = grade(ctx({**EAGLE3, "fallback_metrics": ["concurrency|throughput_ratio"]}, make_rec()))
    assert missing_group["fallback"].status == "fail" and "concurrency" in missing_group["fallback"].reason
    assert status(ctx({"strategies": ["none"]}, make_rec(strategy="none", fallback=[])), "fallback") == "na"


def test_measurement_metrics_and_definitions():
    assert status(ctx(EAGLE3, make_rec()), "measurement_metrics") == "pass"
    plan = {"sample": "s", "definitions": ["speedup = tokens/s ratio"], "commands": ["c"], "steps": ["s"],
            "metrics": VLLM_METRICS[:1]}
    results = grade(ctx(EAGLE3, make_rec(measurement_plan=plan)))
    assert results["measurement_metrics"].status == "fail"
    assert "num_drafts" in results["measurement_metrics"].reason
    assert results["measurement_definitions"].status == "fail"
    assert "per-position" in results["measurement_definitions"].reason
    assert status(ctx(EAGLE3, make_rec(**SGLANG_TREE)), "measurement_metrics") == "pass"


# -- markdown and prose --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("markdown", "want", "needle"), [
    (good_markdown(), "pass", "five sections"),
    (good_markdown().replace("## 3. Compatibility checks", "## Compatibility"), "fail", "0 times"),
    (good_markdown() + "\n## 1. Recommendation\nagain\n", "fail", "2 times"),
    ("\n".join(f"## {h}\n\nx\n" for h in reversed(SECTION_HEADINGS)), "fail", "out of order"),
    (good_markdown().replace("text for 4. Fallback plan", ""), "fail", "empty sections"),
])
def test_sections(markdown, want, needle):
    result = grade(ctx(EAGLE3, make_rec(), markdown=markdown))["sections"]
    assert result.status == want and needle in result.reason


def test_mentions_and_asked():
    c = ctx({**EAGLE3, "mentions": ["draft temperature"]}, make_rec(), markdown=good_markdown() + "temperature")
    assert status(c, "mentions") == "fail"  # the word alone is not the phrase
    c = ctx({**EAGLE3, "mentions": ["draft temperature"]}, make_rec(), markdown=good_markdown() + "draft temperature")
    assert status(c, "mentions") == "pass"
    asked = {"must_ask": ["model|verifier"]}
    c = ctx(EAGLE3, make_rec(), runner="agent", texts=("Which model do you serve?",), agent=asked)
    assert status(c, "asked") == "pass"
    c = ctx(EAGLE3, make_rec(), runner="agent", texts=("Here is the model plan.",), agent=asked)
    assert status(c, "asked") == "fail"  # a statement is not a question
    assert status(ctx(EAGLE3, make_rec(), agent=asked), "asked") == "na"  # planner runs never ask


def test_a_broken_grader_is_a_failed_check_not_a_crash(monkeypatch):
    from specpick.evals.evaluators import graders

    def boom(_ctx):
        raise RuntimeError("grader bug")

    boom.__name__ = "grade_outcome"
    monkeypatch.setattr(graders, "GRADERS", (boom,) + graders.GRADERS[1:])
    result = graders.grade(ctx(EAGLE3, make_rec()))["outcome"]
    assert result.status == "fail" and "grader bug" in result.reason


def test_flag_severity_encodes_a_hard_fail():
    rec = make_rec(flags=[{"id": "tokenizer_mismatch", "severity": "warn", "message": "m", "source": "s"}])
    exp = {"strategies": ["eagle3"], "flags": ["tokenizer_mismatch"], "flag_severity": {"tokenizer_mismatch": ["fail"]}}
    result = grade(ctx(exp, rec))["flags"]
    assert result.status == "fail" and "is warn" in result.reason
    rec = make_rec(flags=[{"id": "tokenizer_mismatch", "severity": "fail", "message": "m", "source": "s"}])
    assert status(ctx(exp, rec), "flags") == "pass"


def test_an_expected_error_may_name_an_alternative_class():
    exp = {"outcome": "error", "error": "not_found", "or_error": "unavailable"}
    assert status(ctx(exp, None, exit_code=5), "outcome") == "pass"
    assert status(ctx(exp, None, exit_code=3), "outcome") == "pass"
    assert status(ctx(exp, None, exit_code=2), "outcome") == "fail"

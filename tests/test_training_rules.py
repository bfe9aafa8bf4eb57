"""train-plan rules against the published figures they cite (tools/data/training_evidence.csv).

Each case feeds a situation a source reports and checks the decision the source's own maintainers or data point
to, or that a cited figure falls inside the range the plan prints.
"""

from __future__ import annotations

import pytest

from specpick.tools.commands.train_plan import TrainPlanInput, train_plan_tool
from specpick.tools.errors import InputError, NotFoundError
from specpick.tools.training.evidence import evidence_table
from specpick.tools.training.rules import TrainFacts, decide

L8 = "meta-llama/Llama-3.1-8B-Instruct"
L8_HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def plan(**kw):
    return train_plan_tool(TrainPlanInput(**kw))


def test_every_cited_id_has_an_evidence_row_with_a_source() -> None:
    table = evidence_table()
    assert all(e.source for e in table.values())
    p = plan(verifier="my-org/llama-ft", base_model=L8, verifier_change="full-finetune", head=L8_HEAD,
             tau_measured=1.8, tau_measured_n=3)
    assert all(i in table for r in p.reasons for i in r.evidence)


@pytest.mark.parametrize("measured", [{"tau_measured": 1.0},  # F26 wrong algorithm flag, F8: exactly 1.00
                                      {"first_position_acceptance": 0.0}])  # F8: 0.0% draft acceptance
def test_a_broken_setup_is_fixed_not_trained(measured: dict) -> None:
    p = plan(verifier="my-org/llama-ft", base_model=L8, verifier_change="full-finetune", head=L8_HEAD, **measured)
    assert p.decision == "fix-config"  # rule 0 comes before the verifier change
    assert p.recipe is None and p.cost is None


def test_nvfp4_first_position_acceptance_of_vllm_43455_is_a_broken_setup() -> None:
    p = plan(verifier=L8, head=L8_HEAD, quantization="nvfp4", first_position_acceptance=0.0182)  # F9
    assert p.decision == "fix-config"


def test_rotation_quantized_verifier_is_fixed_by_anti_rotation() -> None:
    p = plan(verifier=L8, head=L8_HEAD, quantization="int8", rotated=True)  # F13
    assert p.decision == "fix-config" and "F13" in p.reasons[0].evidence


def test_system_prompt_case_of_sglang_4716_is_a_serving_fix() -> None:
    # MT-Bench 5.88 vs send_one without the system prompt 2.42 (F22)
    p = plan(verifier="llama-3.3-70b", head="yuhuili/EAGLE3-LLaMA3.3-Instruct-70B", system_prompt="custom",
             tau_measured=2.42, tau_reference=5.88)
    assert p.decision == "fix-config"


def test_thinking_off_case_of_dflash_60_is_a_serving_fix() -> None:
    # thinking on 9.49, off 2.71-3.86 (F25): the upper end 3.86 is still below 0.6 of 9.49
    f = TrainFacts(verifier="x", facts_model="x", head_named="z-lab/Qwen3.5-35B-A3B-DFlash", method="dflash",
                   thinking="off", tau_measured=3.86, tau_reference=9.49)
    assert decide(f).decision == "fix-config"


@pytest.mark.parametrize(("workload", "decision"), [("chat", "train"), ("rag", "no-training-copy")])
def test_context_past_the_head_has_its_own_remedies(workload: str, decision: str) -> None:
    # F17: tau 1.09 at 16K; F21: suffix 2.18x vs EAGLE-3 0.81x on long inputs
    p = plan(verifier=L8, head=L8_HEAD, context_p90=16384, workload=workload)
    assert p.decision == decision
    if decision == "train":
        assert p.data is not None and p.data.max_length >= 16384  # F20: train at serving length


def test_full_finetune_retrain_range_holds_the_retrained_pair_of_eagle_106() -> None:
    # stock pair 4.0 with bonus token, retrained head on the fine-tune 3.34 (F1)
    p = plan(verifier="my-org/llama3-70b-ft", base_model="llama-3.3-70b", verifier_change="full-finetune",
             head="yuhuili/EAGLE3-LLaMA3.3-Instruct-70B", tau_measured=2.0, tau_reference=4.0)
    assert p.decision == "train"
    assert p.expected_tau.low <= 3.34 <= p.expected_tau.high
    assert p.expected_tau.high <= 4.0  # never promise more than the base pair (F1)


def test_no_head_trained_range_holds_the_500k_runs_and_excludes_the_50k_run() -> None:
    p = plan(verifier="my-org/ft", base_model="qwen3-8b", verifier_change="rl", prompts=0)
    assert p.decision == "train" and p.data.samples >= 500_000 and p.data.regenerate  # D5
    assert p.expected_tau.low <= 2.82 and 3.02 <= p.expected_tau.high  # D6 averages
    assert p.expected_tau.low <= 3.18 <= p.expected_tau.high  # D9 final
    assert not p.expected_tau.low <= 1.94 <= p.expected_tau.high  # D4: 50K ShareGPT is a different regime
    assert 2 <= p.data.epochs <= 3  # D5, D6


def test_superseded_head_range_holds_the_median_specbundle_gain() -> None:
    # T3: median +22% tau of a regenerated head over the older one (28 cells)
    p = plan(verifier=L8, head="lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", tau_measured=2.93)
    assert p.decision == "use-published"
    assert p.expected_tau.low <= 2.93 * 1.22 <= p.expected_tau.high


def test_training_that_cannot_pay_at_high_concurrency_becomes_measure_first() -> None:
    p = plan(verifier="my-org/ft", base_model=L8, verifier_change="full-finetune", head=L8_HEAD, concurrency=512,
             gpu="H100")
    assert p.decision == "measure-first"
    assert p.expected_speedup.low < 1.0 and p.break_even_concurrency is not None


def test_cost_range_holds_the_single_rtx5090_50k_run() -> None:
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.training.cost import estimate_cost

    cat = get_catalog()
    c = estimate_cost(cat.model(L8), cat.gpu("RTX 5090"), samples=50_000, epochs=1, regenerate=False)
    assert c.gpu_hours_low <= 4.4 <= c.gpu_hours_high  # C4: 4 h 24 min on one RTX 5090


def test_derived_verifier_keeps_the_users_id_everywhere() -> None:
    p = plan(verifier="my-org/llama-ft", base_model=L8, verifier_change="full-finetune", head=L8_HEAD,
             tau_measured=1.8, tau_measured_n=3, engine="sglang")
    assert p.verifier == "my-org/llama-ft" and p.facts_from == L8
    assert all(L8 not in c for c in p.recipe.commands)
    assert any("my-org/llama-ft" in c for c in p.recipe.commands)


@pytest.mark.parametrize(("kw", "error"), [
    ({"verifier": "my-org/unknown"}, NotFoundError),
    ({"verifier": L8, "adapters": 2}, InputError),
    ({"verifier": L8, "tau_measured_n": 3}, InputError),
    ({"verifier": "my-org/x", "base_model": "not-a-model"}, NotFoundError),
])
def test_bad_input_is_a_one_line_error(kw, error) -> None:
    with pytest.raises(error):
        plan(**kw)


@pytest.mark.parametrize("change", ["full-finetune", "rl", "merge", "lora"])
def test_head_check_on_a_modified_verifier_never_passes(change: str) -> None:
    from specpick.tools.commands.head_check import HeadCheckInput, head_check_tool

    r = head_check_tool(HeadCheckInput(head=L8_HEAD, verifier="my-org/llama-ft", base_model=L8,
                                       verifier_change=change, live=False))
    assert r.check != "pass" and r.belongs != "yes"
    assert r.verifier_repo_id == "my-org/llama-ft"  # the user's id is the one printed
    modified = [f for f in r.findings if f.check.startswith("verifier modified")]
    assert modified and "train-plan" in modified[0].detail and "F" in modified[0].detail
    assert "no training needed" not in r.summary


def test_head_check_on_the_base_itself_still_passes() -> None:
    from specpick.tools.commands.head_check import HeadCheckInput, head_check_tool

    r = head_check_tool(HeadCheckInput(head=L8_HEAD, verifier=L8, live=False))
    assert r.check == "pass"  # behaviour of the plain check is unchanged


ISSUE_INPUTS = ("verifier base_model verifier_change adapters quantization rotated head method engine engine_version "
                "workload context_p90 thinking system_prompt tau_measured tau_measured_n first_position_acceptance "
                "tau_reference prompts drift train_gpu train_gpus").split()  # issue 24, "What to build" 3
ISSUE_OUTPUTS = {"decision": None, "reasons": None, "expected_tau": ("low", "high"),
                 "expected_speedup": ("low", "high"), "data": ("samples", "regenerate", "max_length", "epochs"),
                 "cost": ("gpu_hours_low", "gpu_hours_high", "gpu"), "recipe": ("tool", "commands"), "validate": None}


def test_cli_mcp_and_claude_tool_use_the_issues_names() -> None:
    import json

    from specpick.skill.surfaces.cli_args import cli_names
    from specpick.skill.surfaces.registry import BY_CLI, BY_NAME

    tool = BY_CLI["train-plan"]
    assert BY_NAME["train_plan"] is tool
    schema = tool.input_schema()["properties"]
    assert set(ISSUE_INPUTS) <= set(schema)
    flags = cli_names(tool.load_input_model())
    for name in ISSUE_INPUTS:
        assert flags[name] == f"--{name.replace('_', '-')}"
    p = plan(verifier="my-org/llama-ft", base_model=L8, verifier_change="full-finetune", head=L8_HEAD,
             tau_measured=1.8, tau_measured_n=3)
    out = json.loads(p.model_dump_json())
    for key, sub in ISSUE_OUTPUTS.items():
        assert key in out, key
        if sub:
            assert set(sub) <= set(out[key]), key
    assert out["decision"] == "train" and out["reasons"][0]["rule"] and out["reasons"][0]["evidence"]


@pytest.mark.parametrize("method", ["draft_model", "pard", "suffix", "ngram", "lookahead"])
def test_methods_that_are_not_trained_heads_are_refused(method: str) -> None:
    with pytest.raises(InputError):
        plan(verifier=L8, method=method, verifier_change="rl")


def test_mtp_on_a_verifier_without_mtp_layers_is_refused() -> None:
    with pytest.raises(InputError):
        plan(verifier=L8, method="mtp")


def test_speedup_on_a_derived_verifier_says_the_prior_is_the_base_pairs() -> None:
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    r = estimate_speedup(SpeedupInput(verifier="my-org/llama-ft", base_model=L8, verifier_change="full-finetune",
                                      method="eagle3", gpu="H100", workload="chat"))
    assert any("base pair" in a and "train-plan" in a for a in r.assumptions)
    plain = estimate_speedup(SpeedupInput(verifier=L8, method="eagle3", gpu="H100", workload="chat"))
    assert r.speedup == plain.speedup  # same facts, same prior: only the notes differ (no invented penalty)

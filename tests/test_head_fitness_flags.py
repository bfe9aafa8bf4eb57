"""recommend flags a published head that the deployment has outgrown: context past its trained length, a newer head."""

from __future__ import annotations

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog

KIMI = "moonshotai/Kimi-K2-Thinking"


def _trained_tokens(verifier: str) -> int:
    head = next(h for h in get_catalog().heads if h.verifier_repo_id == verifier and h.trained_context_tokens)
    return int(head.trained_context_tokens)


def _flags(**kw: object) -> dict[str, str]:
    rec = plan(PlannerInputs(**kw))
    return {f.id: f.message for f in rec.flags}


def test_context_past_the_heads_trained_length_is_flagged_with_effect_and_action() -> None:
    trained = _trained_tokens(KIMI)  # heads.csv: the head card's training length
    flags = _flags(verifier=KIMI, workload="chat", gpu="H200", gpus=8, method="eagle3", context_tokens=4 * trained)
    msg = flags["head_context_exceeded"]
    assert f"trained at {trained}" in msg and "Expected effect" in msg and "Action" in msg and "F17" in msg


def test_context_within_the_trained_length_is_not_flagged() -> None:
    trained = _trained_tokens(KIMI)
    flags = _flags(verifier=KIMI, workload="chat", gpu="H200", gpus=8, method="eagle3", context_tokens=trained // 2)
    assert "head_context_exceeded" not in flags


@pytest.mark.parametrize("context", [32768])
def test_unknown_trained_length_says_what_it_assumed(context: int) -> None:
    flags = _flags(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="rag", method="eagle3",
                   context_tokens=context)
    assert "trained length unknown (8K assumed)" in flags["head_context_exceeded"]


def test_a_trained_heads_fallback_names_a_train_plan_command_that_runs() -> None:
    import shlex

    from specpick.skill.surfaces.cli import main

    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", method="eagle3"))
    step = next(s for s in rec.fallback if "specpick train-plan" in s.action)
    command = step.action.split("`")[1].replace("<measured>", "1.8")
    argv = shlex.split(command)[1:]
    assert main([*argv, "--json", "--no-live"]) == 0


def test_model_free_methods_name_no_train_plan() -> None:
    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="code", method="ngram"))
    assert not any("train-plan" in s.action for s in rec.fallback)


def test_llamacpp_splits_layers_so_any_gpu_count_holds_a_model() -> None:
    """Qwen3.8-27B has 4 KV heads (models.csv): 3 GPUs cannot shard its heads, but llama.cpp splits layers."""
    from specpick.tools.errors import InputError

    kv_heads = next(m for m in get_catalog().models if m.repo_id == "Qwen/Qwen3.8-27B").num_kv_heads
    assert kv_heads % 3 != 0
    rec = plan(PlannerInputs(verifier="Qwen/Qwen3.8-27B", workload="chat", gpu="RTX 3060", gpus=3, engine="llamacpp"))
    assert rec.strategy  # answered
    with pytest.raises(InputError, match="tensor parallelism cannot shard"):
        plan(PlannerInputs(verifier="Qwen/Qwen3.8-27B", workload="chat", gpu="RTX 3060", gpus=3, engine="vllm"))


def test_a_quantized_verifier_with_a_bf16_head_gets_the_cited_effect_and_action() -> None:
    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", method="eagle3",
                             quantization="int4"))
    flag = next(f for f in rec.flags if f.id == "quantized_verifier_bf16_head")
    assert "Expected effect" in flag.message and "Action: keep the head in BF16" in flag.message
    assert "F10" in flag.source


def test_a_fine_tuned_verifier_never_gets_a_head_match_pass() -> None:
    rec = plan(PlannerInputs(verifier="my-org/llama-ft", base_model="meta-llama/Llama-3.1-8B-Instruct",
                             verifier_change="full-finetune", workload="chat", method="eagle3"))
    assert "verifier_modified" in {f.id for f in rec.flags}
    head = next(c for c in rec.compatibility if c.name == "head_match")
    assert head.verdict != "pass"

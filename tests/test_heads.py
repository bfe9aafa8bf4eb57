"""Head-to-verifier checks: EAGLE, EAGLE-3 (speculators format), Medusa, MLPSpeculator and MTP."""

from __future__ import annotations

import pytest

from specpick.tools.errors import HubAccessError, NotFoundError, UnavailableError
from specpick.tools.checks.heads import check_head, detect_method
from tests.test_hfconfig import DEEPSEEK_V3, LLAMA31_8B, QWEN3_8B

LLAMA3_8B = {**LLAMA31_8B, "max_position_embeddings": 8192}
LLAMA3_70B = {**LLAMA31_8B, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
              "num_attention_heads": 64}
VICUNA_7B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
             "max_position_embeddings": 2048}
LLAMA2_13B = {**VICUNA_7B, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
              "num_attention_heads": 40, "num_key_value_heads": 40, "max_position_embeddings": 4096}

# Head configs in the layouts their publishers use.
SPECULATORS_EAGLE3 = {  # vLLM speculators format (RedHatAI / nm-testing)
    "architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": 32000,
    "speculators_config": {"algorithm": "eagle3", "default_proposal_method": "greedy",
                           "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
                           "verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
                                        "architectures": ["LlamaForCausalLM"]}},
    "transformer_layer_config": {"model_type": "llama", "hidden_size": 4096, "vocab_size": 128256,
                                 "num_hidden_layers": 1},
}
YUHUILI_EAGLE3 = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
                  "num_hidden_layers": 1, "vocab_size": 128256, "draft_vocab_size": 32000}
YUHUILI_EAGLE1_70B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
                      "num_hidden_layers": 1, "vocab_size": 128256}
MEDUSA_VICUNA = {"medusa_num_heads": 5, "medusa_num_layers": 1, "base_model_name_or_path": "lmsys/vicuna-7b-v1.3",
                 "hidden_size": 4096, "vocab_size": 32000}
MLP_SPECULATOR = {"architectures": ["MLPSpeculatorPreTrainedModel"], "model_type": "mlp_speculator",
                  "emb_dim": 4096, "inner_dim": 3072, "n_predict": 4, "n_candidates": 5, "vocab_size": 128256,
                  "top_k_tokens_per_head": [4, 3, 2, 2]}


@pytest.fixture
def hub_with_heads(fakehub):
    repos = {
        "meta-llama/Llama-3.1-8B-Instruct": LLAMA31_8B, "meta-llama/Meta-Llama-3-8B-Instruct": LLAMA3_8B,
        "meta-llama/Llama-3.1-70B-Instruct": LLAMA3_70B, "Qwen/Qwen3-8B": QWEN3_8B,
        "lmsys/vicuna-7b-v1.3": VICUNA_7B, "meta-llama/Llama-2-13b-chat-hf": LLAMA2_13B,
        "deepseek-ai/DeepSeek-V3": DEEPSEEK_V3,
        "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3": SPECULATORS_EAGLE3,
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B": YUHUILI_EAGLE3,
        "yuhuili/EAGLE-LLaMA3-Instruct-70B": YUHUILI_EAGLE1_70B,
        "FasterDecoding/medusa-vicuna-7b-v1.3": MEDUSA_VICUNA,
        "ibm-ai-platform/llama3-8b-accelerator": MLP_SPECULATOR,
    }
    for repo, config in repos.items():
        fakehub.add_repo(repo, {"config.json": config})
    return fakehub


@pytest.mark.parametrize(("head", "verifier", "method", "belongs", "check"), [
    ("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "meta-llama/Llama-3.1-8B-Instruct", "eagle3", "yes", "pass"),
    ("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "Qwen/Qwen3-8B", "eagle3", "no", "fail"),
    ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "meta-llama/Llama-3.1-8B-Instruct", "eagle3", "yes", "pass"),
    ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "Qwen/Qwen3-8B", "eagle3", "no", "fail"),
    # Trained on Llama-3-70B; loads on Llama-3.1-70B (same shapes) but is not proven for it.
    ("yuhuili/EAGLE-LLaMA3-Instruct-70B", "meta-llama/Llama-3.1-70B-Instruct", "eagle", "unknown", "warn"),
    ("FasterDecoding/medusa-vicuna-7b-v1.3", "lmsys/vicuna-7b-v1.3", "medusa", "yes", "pass"),
    ("FasterDecoding/medusa-vicuna-7b-v1.3", "meta-llama/Llama-2-13b-chat-hf", "medusa", "no", "fail"),
    ("ibm-ai-platform/llama3-8b-accelerator", "meta-llama/Meta-Llama-3-8B-Instruct", "mlp_speculator", "yes", "pass"),
    ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "mtp", "yes", "pass"),
    ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "mtp", "no", "fail"),
])
def test_head_belongs_to_verifier(hub_with_heads, hub_settings, head, verifier, method, belongs, check) -> None:
    result = check_head(head, verifier, settings=hub_settings)
    assert (result.method, result.belongs, result.check) == (method, belongs, check), result.findings
    assert result.source == "hub" and result.summary


def test_findings_explain_a_mismatch(hub_with_heads, hub_settings) -> None:
    result = check_head("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "Qwen/Qwen3-8B", settings=hub_settings)
    details = {f.check: f for f in result.findings}
    assert result.declared_verifier == "meta-llama/Llama-3.1-8B-Instruct"
    assert details["declared verifier"].verdict == "fail"
    assert details["hidden size"].verdict == "pass"  # both 4096: shapes alone would not catch it
    assert details["vocab size"].verdict == "fail" and "151936" in details["vocab size"].detail
    assert details["draft vocab"].verdict == "info"
    assert result.draft_tokens_trained == 3


def test_hidden_size_mismatch_is_named(hub_with_heads, hub_settings) -> None:
    result = check_head("FasterDecoding/medusa-vicuna-7b-v1.3", "meta-llama/Llama-2-13b-chat-hf",
                        settings=hub_settings)
    assert any(f.check == "hidden size" and f.verdict == "fail" and "5120" in f.detail for f in result.findings)
    assert "does not belong" in result.summary


@pytest.mark.parametrize(("k", "verdict"), [(1, None), (2, "warn"), (3, "warn")])
def test_mtp_draft_length_against_layers(hub_with_heads, hub_settings, k: int, verdict: str | None) -> None:
    result = check_head("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3", settings=hub_settings,
                        num_speculative_tokens=k)
    length = [f for f in result.findings if f.check == "draft length"]
    assert [f.verdict for f in length] == ([verdict] if verdict else [])
    assert result.draft_tokens_trained == 1


def test_medusa_draft_length_beyond_heads_fails(hub_with_heads, hub_settings) -> None:
    result = check_head("FasterDecoding/medusa-vicuna-7b-v1.3", "lmsys/vicuna-7b-v1.3", settings=hub_settings,
                        num_speculative_tokens=8)
    assert result.belongs == "no" and "predicts 5 tokens" in result.summary


@pytest.mark.parametrize(("config", "repo", "expected"), [
    (SPECULATORS_EAGLE3, "x/y", "eagle3"), (YUHUILI_EAGLE3, "x/y", "eagle3"),
    (YUHUILI_EAGLE1_70B, "yuhuili/EAGLE-LLaMA3-Instruct-70B", "eagle"), (YUHUILI_EAGLE1_70B, "x/y", "unknown"),
    (MEDUSA_VICUNA, "x/y", "medusa"), (MLP_SPECULATOR, "x/y", "mlp_speculator"), (DEEPSEEK_V3, "x/y", "mtp"),
    (LLAMA31_8B, "x/y", "unknown"),
])
def test_detect_method(config, repo, expected) -> None:
    assert detect_method(config, repo) == expected


def test_offline_head_falls_back_to_catalog(hub_with_heads, hub_settings) -> None:
    check_head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "meta-llama/Llama-3.1-8B-Instruct", settings=hub_settings)
    offline = hub_settings.model_copy(update={"offline": True})
    cached = check_head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "meta-llama/Llama-3.1-8B-Instruct", settings=offline)
    assert cached.source == "hub-cache" and cached.belongs == "yes"
    # Never fetched: the catalog's record of the head answers, and the result says why.
    catalog_only = check_head("lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge",
                              "meta-llama/Llama-3.1-8B-Instruct", settings=offline)
    assert catalog_only.source == "catalog" and catalog_only.method == "eagle3"
    assert catalog_only.belongs == "yes" and "offline and nothing cached" in catalog_only.fallback_reason
    with pytest.raises(UnavailableError):
        check_head("org/unpublished-head", "meta-llama/Llama-3.1-8B-Instruct", settings=offline)


def test_catalog_only_mode(fakehub) -> None:
    result = check_head("yuhuili/EAGLE-LLaMA3-Instruct-70B", "llama-3.1-70b", live=False)
    assert result.verifier_repo_id == "meta-llama/Llama-3.1-70B-Instruct"
    assert (result.belongs, result.check, result.source) == ("unknown", "warn", "catalog")
    assert check_head("yuhuili/EAGLE-LLaMA3-Instruct-70B", "Meta-Llama-3-70B-Instruct", live=False).belongs == "yes"
    with pytest.raises(NotFoundError, match="Did you mean: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"):
        check_head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8", "meta-llama/Llama-3.1-8B-Instruct", live=False)
    assert fakehub.log == []


def test_gated_verifier_is_access_error(fakehub, hub_settings) -> None:
    fakehub.add_repo("meta-llama/Llama-3.1-8B-Instruct", {"config.json": LLAMA31_8B}, gated="manual")
    fakehub.add_repo("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", {"config.json": YUHUILI_EAGLE3})
    with pytest.raises(HubAccessError, match="Llama-3.1-8B-Instruct is gated"):
        check_head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "meta-llama/Llama-3.1-8B-Instruct", settings=hub_settings)


def test_head_repo_without_config(fakehub, hub_settings) -> None:
    fakehub.add_repo("meta-llama/Llama-3.1-8B-Instruct", {"config.json": LLAMA31_8B})
    fakehub.add_repo("org/weights-only", {"model.safetensors": b"\0" * 8})
    with pytest.raises(NotFoundError, match="org/weights-only has no config.json"):
        check_head("org/weights-only", "meta-llama/Llama-3.1-8B-Instruct", settings=hub_settings)


def test_catalog_fallback_rejects_a_head_trained_on_another_hidden_size():
    from specpick.tools.checks.heads import check_head

    r = check_head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "llama-3.3-70b", live=False)
    assert r.belongs == "no" and r.check == "fail"
    assert "4096" in r.summary and "8192" in r.summary


# -- choosing among published heads (skill/planner/candidates.py) --------------------------------------------

def test_published_heads_follow_superseded_by_to_the_newest():
    from specpick.skill.planner.candidates import published_heads

    ids = [h.head_repo_id for h in published_heads("openai/gpt-oss-120b", "eagle3", "trtllm")]
    assert "nvidia/gpt-oss-120b-Eagle3-v3" in ids
    # v1, v2, short/long-context and throughput all name -v3 as their successor: none is offered.
    assert not [i for i in ids if i.startswith("nvidia/gpt-oss-120b-Eagle3") and i != "nvidia/gpt-oss-120b-Eagle3-v3"]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("engine", "expected"), [
    ("sglang", ["AQ-MedAI/Kimi-K2-Instruct-eagle3"]),
    ("vllm", []),  # the only EAGLE-3 head for Kimi-K2 is in SGLang format
])
def test_published_heads_only_for_engines_that_load_them(engine, expected):
    from specpick.skill.planner.candidates import published_heads

    assert [h.head_repo_id for h in published_heads("moonshotai/Kimi-K2-Instruct", "eagle3", engine)] == expected


def test_test_checkpoints_are_never_offered():
    from specpick.skill.planner.candidates import published_heads

    heads = published_heads("Qwen/Qwen3-8B", "eagle3")
    assert heads and all(h.publisher != "test" for h in heads)
    assert "nm-testing/Speculator-Qwen3-8B-Eagle3" not in {h.head_repo_id for h in heads}


def _candidates(**inputs):
    from specpick.skill.planner.candidates import evaluate_candidates
    from specpick.skill.planner.context import build_context
    from specpick.skill.schema import PlannerInputs

    return {c.strategy: c for c in evaluate_candidates(build_context(PlannerInputs(**inputs)))}


def test_no_engine_named_picks_the_engine_that_loads_the_published_head():
    eagle3 = _candidates(verifier="moonshotai/Kimi-K2-Instruct", workload="chat", gpu="H200", gpus=8)["eagle3"]
    assert eagle3.feasible and not eagle3.needs_training
    assert (eagle3.engine, eagle3.draft_repo) == ("sglang", "AQ-MedAI/Kimi-K2-Instruct-eagle3")


def test_named_engine_that_cannot_load_the_head_says_where_it_loads():
    eagle3 = _candidates(verifier="moonshotai/Kimi-K2-Instruct", workload="chat", gpu="H200", gpus=8,
                         engine="vllm")["eagle3"]
    assert not eagle3.feasible and eagle3.rejected_for == "head_runtime"
    assert "AQ-MedAI/Kimi-K2-Instruct-eagle3 loads in sglang, not vllm" in eagle3.reason


def test_a_superseded_head_the_user_names_gives_way_to_its_successor():
    eagle3 = _candidates(verifier="openai/gpt-oss-120b", workload="code", gpu="B200", gpus=1, engine="trtllm",
                         head="nvidia/gpt-oss-120b-Eagle3")["eagle3"]
    assert eagle3.draft_repo == "nvidia/gpt-oss-120b-Eagle3-v3" and not eagle3.needs_training
    assert any("superseded by nvidia/gpt-oss-120b-Eagle3-v3" in n and "huggingface.co/nvidia/gpt-oss-120b-Eagle3-v3"
               in n for n in eagle3.notes)


def test_a_separate_mtp_drafter_makes_mtp_feasible_without_mtp_layers():
    mtp = _candidates(verifier="google/gemma-4-31B-it", workload="chat", gpu="H100-SXM", gpus=1, engine="vllm")["mtp"]
    assert mtp.feasible and mtp.draft_repo == "google/gemma-4-31B-it-assistant"
    gone = _candidates(verifier="google/gemma-4-31B-it", workload="chat", gpu="H100-SXM", gpus=1,
                       engine="sglang")["mtp"]
    assert not gone.feasible and gone.rejected_for == "no_mtp"  # the assistant loads in vLLM and transformers

"""Offline `recommend` answers for the verifiers people served in 2025-2026, with their published heads.

The list is the 40 verifier repos of the engine recipes (vllm-project/recipes@8959cf6 models/*.yaml) picked to
span the families released in 2025-2026. Target: at least 36 answer offline, and every one with a published head
in the catalog gets that head without training.
"""

from __future__ import annotations

import pytest

from specpick.skill.planner.candidates import HEAD_METHOD_FOR, evaluate_candidates, published_heads
from specpick.skill.planner.context import build_context
from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.catalog.quant_names import same_weights
from specpick.tools.errors import PickerError

VERIFIERS_2025_2026 = [
    "Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "Qwen/Qwen3-VL-235B-A22B-Instruct", "Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-9B", "deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3.2-Exp",
    "deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V4-Flash", "zai-org/GLM-4.5", "zai-org/GLM-4.6",
    "zai-org/GLM-4.7", "zai-org/GLM-5", "zai-org/GLM-5.1", "moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Thinking",
    "moonshotai/Kimi-K2.5", "MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.1", "MiniMaxAI/MiniMax-M2.5",
    "XiaomiMiMo/MiMo-V2-Flash", "openai/gpt-oss-120b", "openai/gpt-oss-20b", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "google/gemma-4-31B-it", "google/gemma-4-26B-A4B-it", "mistralai/Ministral-3-14B-Instruct-2512",
    "mistralai/Mistral-Large-3-675B-Instruct-2512", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
    "ByteDance-Seed/Seed-OSS-36B-Instruct", "tencent/Hunyuan-A13B-Instruct", "baidu/ERNIE-4.5-21B-A3B-PT",
    "inclusionAI/Ring-1T-FP8", "microsoft/Phi-4-reasoning",
]


def _inputs(repo_id: str, **extra) -> PlannerInputs:
    # Enough H200s to hold the weights (bf16 unless the row says otherwise), one request at a time.
    known = get_catalog().find_model(repo_id)
    size_b = (known.params_total_b or 0.0) if known else 1000.0
    gpus = 8 if size_b > 150 else 4 if size_b > 40 else 1
    return PlannerInputs(verifier=repo_id, workload="chat", gpu="H200", gpus=gpus, **extra)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    # A verifier the catalog lacks must fail as "unavailable offline", not reach for the network.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_ENDPOINT", raising=False)


def test_at_least_36_of_40_answer_offline(offline, capsys):
    assert len(set(VERIFIERS_2025_2026)) == 40
    answered, misses = {}, {}
    for repo_id in VERIFIERS_2025_2026:
        try:
            answered[repo_id] = plan(_inputs(repo_id))
        except PickerError as err:
            misses[repo_id] = f"{type(err).__name__} (exit {err.exit_code}): {err.message}"
    with capsys.disabled():
        print(f"\n2025-2026 verifiers answered offline: {len(answered)}/40")
        for repo_id, why in misses.items():
            print(f"  miss {repo_id}: {why[:140]}")
    assert len(answered) >= 36
    # The misses are the verifiers the catalog has no architecture for (see tools/data/README.md).
    assert set(misses) <= {"Qwen/Qwen3.5-122B-A10B", "deepseek-ai/DeepSeek-V4-Flash",
                           "mistralai/Mistral-Large-3-675B-Instruct-2512"}
    for repo_id, rec in answered.items():
        heads = published_heads(repo_id, HEAD_METHOD_FOR.get(rec.strategy, rec.strategy))
        if heads and rec.strategy in HEAD_METHOD_FOR and rec.draft_model:
            assert rec.draft_model in {h.head_repo_id for h in heads}, repo_id


# Verifiers of the list whose catalog rows have a published head in a separate repo.
WITH_PUBLISHED_HEAD = [
    r for r in VERIFIERS_2025_2026
    if get_catalog().find_model(r) is not None and any(
        h.method in ("eagle", "eagle3", "medusa", "mtp") and h.publisher != "test" and h.runtimes
        and h.head_repo_id.lower() != r.lower() for h in get_catalog().heads_for(r))
]


def test_the_list_has_published_heads_to_check():
    # Qwen3 2507/Coder/VL, Qwen3.5-397B, Kimi-K2 x3, Llama 4 Scout, Gemma 4 x2 (EAGLE-3 and assistant MTP), gpt-oss x2
    assert len(WITH_PUBLISHED_HEAD) >= 12


@pytest.mark.parametrize("repo_id", WITH_PUBLISHED_HEAD)
def test_a_verifier_with_a_published_head_gets_it_without_training(repo_id):
    cands = evaluate_candidates(build_context(_inputs(repo_id)))
    with_head = [c for c in cands if c.feasible and c.head is not None and c.draft_repo == c.head.head_repo_id]
    assert with_head, [(c.strategy, c.reason) for c in cands]
    for c in with_head:
        assert not c.needs_training
        # Trained for this verifier or a quantized build of the same weights (Qwen3-Next's EAGLE-3 heads: the -FP8).
        assert same_weights(c.head.verifier_repo_id, repo_id)
        assert c.engine in c.head.runtimes  # the engine the plan configures loads this head
        assert not c.head.superseded_by or get_catalog().head(c.head.superseded_by) is None

"""Per-token KV cache of the window models against published figures, and compressed shared-KV attention
(DeepSeek-V4 CSA/HCA) against its sources.

The per-token cache of V4's compressed layers is published in Raschka's LLM Architecture Gallery
(sebastianraschka.com/llm-architecture-gallery, "KV cache / token (bf16)": V4-Flash 5.4 KiB, V4-Pro 7.7 KiB), which
counts the compressed entries only (no indexer keys, no window). The layer counts come from the configs'
``compress_ratios`` (tools/data/models.csv cites them).
"""

from __future__ import annotations

import json

import pytest

from specpick.tools.arch.kv import KV_DTYPE_BYTES, compressed_kv_bytes_per_token, kv_bytes_per_sequence
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.engine_config import EngineConfigInput
from specpick.tools.commands.engine_config import engine_config_tool

GALLERY_KIB = {"deepseek-ai/DeepSeek-V4-Flash": 5.4, "deepseek-ai/DeepSeek-V4-Pro": 7.7}
# bf16 KV per token and sequence: Mistral-Small-4 22.5 KiB (LLM Architecture Gallery card), Nemotron-3-Ultra 12 KiB
# (Raschka's Nemotron 3 Ultra note, from its config: 12 attention layers x 2 KV heads x 128).
PUBLISHED_KIB = {"mistralai/Mistral-Small-4-119B-2603": 22.5, "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16": 12.0}


@pytest.mark.parametrize("repo_id", sorted(PUBLISHED_KIB))
def test_kv_per_token_matches_the_published_figure(repo_id: str) -> None:
    m = get_catalog().find_model(repo_id)
    tokens = 4096
    assert kv_bytes_per_sequence(m, tokens, "bf16") / tokens / 1024 == pytest.approx(PUBLISHED_KIB[repo_id], abs=0.05)


@pytest.mark.parametrize("repo_id", sorted(GALLERY_KIB))
def test_compressed_entries_per_token_match_the_gallery(repo_id: str) -> None:
    m = get_catalog().find_model(repo_id)
    kib = compressed_kv_bytes_per_token(m, "bf16", with_index=False) / 1024
    assert round(kib, 1) == GALLERY_KIB[repo_id]


@pytest.mark.parametrize("repo_id", sorted(GALLERY_KIB))
def test_cache_is_window_plus_compressed_entries_and_indexer_keys(repo_id: str) -> None:
    m = get_catalog().find_model(repo_id)
    long_ = 1 << 20
    # Within the 128-token window every layer keeps every token: the cache grows faster there than past it.
    inside = kv_bytes_per_sequence(m, 128, "fp8") - kv_bytes_per_sequence(m, 64, "fp8")
    past = kv_bytes_per_sequence(m, 192, "fp8") - kv_bytes_per_sequence(m, 128, "fp8")
    assert inside > 5 * past > 0
    # At 1M tokens the cache is far below a full per-layer 512-wide K and V cache (what GQA arithmetic would give).
    gqa_bytes = 2 * m.head_dim * KV_DTYPE_BYTES["fp8"] * m.num_layers * long_
    assert kv_bytes_per_sequence(m, long_, "fp8") < gqa_bytes / 10
    # The indexer keys (index_head_dim on the ratio-4 layers) are part of what the engine caches.
    assert compressed_kv_bytes_per_token(m, "fp8") > compressed_kv_bytes_per_token(m, "fp8", with_index=False)


def test_dspark_fused_in_the_verifier_checkpoint_emits_no_draft_repo() -> None:
    # The DeepSeek-V4 recipes serve {"method":"dspark","num_speculative_tokens":7,...} with no "model": the fused
    # checkpoints carry the drafter (github:vllm-project/recipes@8959cf6 models/deepseek-ai/DeepSeek-V4-Flash.yaml).
    out = engine_config_tool(EngineConfigInput(engine="vllm", method="dspark", verifier="deepseek-ai/DeepSeek-V4-Flash",
                                               num_draft_tokens=7))
    config = json.loads(out.config)
    assert config["method"] == "dspark" and "model" not in config and config["num_speculative_tokens"] == 7

"""Compressed shared-KV attention (DeepSeek-V4 CSA/HCA) against its sources.

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
    assert kv_bytes_per_sequence(m, long_, "fp8") < gqa_bytes / 50
    # The indexer keys (index_head_dim on the ratio-4 layers) are part of what the engine caches.
    assert compressed_kv_bytes_per_token(m, "fp8") > compressed_kv_bytes_per_token(m, "fp8", with_index=False)


def test_dspark_fused_in_the_verifier_checkpoint_emits_no_draft_repo() -> None:
    # The DeepSeek-V4 recipes serve {"method":"dspark","num_speculative_tokens":7,...} with no "model": the fused
    # checkpoints carry the drafter (github:vllm-project/recipes@8959cf6 models/deepseek-ai/DeepSeek-V4-Flash.yaml).
    out = engine_config_tool(EngineConfigInput(engine="vllm", method="dspark", verifier="deepseek-ai/DeepSeek-V4-Flash",
                                               num_draft_tokens=7))
    config = json.loads(out.config)
    assert config["method"] == "dspark" and "model" not in config and config["num_speculative_tokens"] == 7

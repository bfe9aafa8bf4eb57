"""Issue 27's errata: each embedded value checked against the value its public source states.

The expected values are the sources' own figures, cited next to each constant; none is read back from the tables.
"""

from __future__ import annotations

import pytest

from specpick.tools.catalog.specs import version_key
from specpick.tools.catalog.tables import get_catalog

# inclusionAI/Ling-1T config.json: max_position_embeddings 32768 (the 128K of the card is reached with YaRN rope
# scaling); BailingMoeV2Config, the config class of Ling-mini/flash/1T, as bundled by NVIDIA Megatron-Bridge
# (docs.nvidia.com/nemo/megatron-bridge/nightly/apidocs/bridge/bridge.models.bailing.configuration_bailing_moe_v2).
LING_1T_CONFIG_CONTEXT = 32768
# nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 config.json: moe_shared_expert_intermediate_size 5376,
# moe_intermediate_size 2688 (read from the NVFP4 sibling's config.json as transcribed in a public test header:
# https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4/blob/4f0cf9da/config.json).
SUPER_SHARED_EXPERT_WIDTH = 5376
SUPER_EXPERT_WIDTH = 2688
# vllm-project/recipes@8959cf6 models/nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16.yaml: model_id and the
# speculative config it serves ({"method":"mtp","num_speculative_tokens":3}).
SUPER_RECIPE_ID = "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"
# TensorRT-LLM API reference: DFlashDecodingConfig is documented for 1.3.0rc27
# (nvidia.github.io/TensorRT-LLM/1.3.0rc27/llm-api/reference/DFlashDecodingConfig.html).
TRTLLM_DFLASH_FIRST = "1.3.0rc27"


def test_ling_1t_context_is_the_configs_not_the_yarn_extension() -> None:
    assert get_catalog().model("inclusionAI/Ling-1T").max_position_embeddings == LING_1T_CONFIG_CONTEXT


def test_nemotron_3_super_shared_expert_is_5376_wide() -> None:
    spec = get_catalog().model(SUPER_RECIPE_ID)
    assert spec.moe_intermediate_size == SUPER_EXPERT_WIDTH
    assert spec.num_shared_experts * spec.moe_intermediate_size == SUPER_SHARED_EXPERT_WIDTH


def test_nemotron_3_super_heads_join_the_verifier_the_recipe_serves() -> None:
    catalog = get_catalog()
    heads = catalog.heads_for(SUPER_RECIPE_ID)
    assert {h.method for h in heads} >= {"mtp", "dflash"}
    assert not catalog.heads_for("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B")  # the id that joined nothing
    # The same slip on its Ultra sibling (recipe models/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.yaml).
    assert not catalog.heads_for("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B")
    assert catalog.heads_for("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16")
    mtp = next(h for h in heads if h.method == "mtp")
    assert "vllm" in mtp.runtimes  # the recipe serves it with {"method":"mtp","num_speculative_tokens":3}


def test_trtllm_dflash_runs_from_the_first_release_its_api_reference_documents() -> None:
    row = get_catalog().support("trtllm", "dflash")
    assert row is not None and row.min_version == TRTLLM_DFLASH_FIRST
    assert row.runs_at(TRTLLM_DFLASH_FIRST) and row.runs_at("1.4.0")
    assert version_key("1.3.0rc26") < version_key(TRTLLM_DFLASH_FIRST)
    assert not row.runs_at("1.3.0rc26")


def test_gemma_4_assistant_runtimes_agree_with_the_transformers_support_rows() -> None:
    # transformers runs google/gemma-4-*-it-assistant through generate(assistant_model=...)
    # (ai.google.dev/gemma/docs/mtp/mtp): its draft-model option, not an MTP one. So the method rows are right
    # (transformers: draft_model yes, mtp no) and no MTP head may list transformers as a runtime.
    catalog = get_catalog()
    assistants = [h for h in catalog.heads if h.head_repo_id.startswith("google/gemma-4-")
                  and h.head_repo_id.endswith("-assistant")]
    assert len(assistants) >= 5
    assert catalog.support("transformers", "mtp").support == "no"
    assert "assistant_model" in catalog.support("transformers", "draft_model").config_name
    for head in assistants:
        assert head.method == "mtp" and "transformers" not in head.runtimes and "vllm" in head.runtimes
        assert "assistant_model" in head.engine_versions


def test_no_head_lists_a_runtime_whose_engine_has_no_such_method_for_mtp() -> None:
    catalog = get_catalog()
    for head in catalog.heads:
        if head.method == "mtp":
            for engine in head.runtimes:
                row = catalog.support(engine, "mtp")
                assert row is not None and row.support != "no", (head.head_repo_id, engine)


def test_kimi_k26_eagle3_runtimes_include_sglang() -> None:
    # SGLang's Kimi-K2.6 guide (docs.sglang.io, v0.5.13) and the SGLang Humming blog reproduction (SGLang
    # @d6ef688) serve nvidia/Kimi-K2.6-Eagle3 with --speculative-algorithm EAGLE3.
    head = get_catalog().head("nvidia/Kimi-K2.6-Eagle3")
    assert head is not None and {"sglang", "trtllm"} <= set(head.runtimes)


# DSpark drafters were filed as dflash. vllm-project/recipes@8959cf6 models/zai-org/GLM-5.2.yaml serves
# RedHatAI/GLM-5.2-speculator.dspark with {"method": "dspark", ...}; the engines' own spellings and first releases:
# vLLM SpeculativeMethod "dspark" (vllm/config/speculative.py @002e77c; seen running on 0.25.0, issue #49369),
# SGLang --speculative-algorithm DSPARK with --speculative-dspark-block-size (PR #29538; 0.5.16), TensorRT-LLM
# DSparkDecodingConfig decoding_type "DSpark" (API reference 1.3.0rc27).
DSPARK_FIRST = {"vllm": "0.25.0", "sglang": "0.5.16", "trtllm": "1.3.0rc27"}


def test_dspark_drafters_are_filed_as_dspark_not_dflash() -> None:
    catalog = get_catalog()
    dspark = [h for h in catalog.heads if "dspark" in h.head_repo_id.lower()]
    assert len(dspark) >= 8
    assert all(h.method == "dspark" for h in dspark), [h.head_repo_id for h in dspark if h.method != "dspark"]
    assert catalog.head("RedHatAI/GLM-5.2-speculator.dspark").method == "dspark"


def test_dspark_engine_configs_use_each_engines_option_names_per_release() -> None:
    import json

    import yaml

    from specpick.tools.checks.engine_config import build_engine_config
    from specpick.tools.engines.setting import EngineConfigInput
    from specpick.tools.errors import InputError

    def config(engine: str, version: str):
        return build_engine_config(EngineConfigInput(
            engine=engine, method="dspark", verifier="Qwen/Qwen3-8B", num_draft_tokens=7,
            draft_model="deepseek-ai/dspark_qwen3_8b_block7", engine_version=version))

    for engine, first in DSPARK_FIRST.items():
        assert get_catalog().support(engine, "dspark").min_version == first
        with pytest.raises(InputError, match=f"from {first} on"):
            config(engine, {"vllm": "0.24.0", "sglang": "0.5.15", "trtllm": "1.3.0rc26"}[engine])
    assert json.loads(config("vllm", "0.25.0").config) == {
        "method": "dspark", "model": "deepseek-ai/dspark_qwen3_8b_block7", "num_speculative_tokens": 7}
    flags = config("sglang", "0.5.16").config.split()
    assert flags[flags.index("--speculative-algorithm") + 1] == "DSPARK"
    assert flags[flags.index("--speculative-dspark-block-size") + 1] == "7"
    assert "--speculative-num-steps" not in flags
    spec = yaml.safe_load(config("trtllm", "1.3.0rc27").config)["speculative_config"]
    assert spec["decoding_type"] == "DSpark" and spec["max_draft_len"] == 7

"""Engine configs: exact option text per engine, engine constraints, unsupported methods."""

from __future__ import annotations

import json

import pytest
import yaml

from specpick.tools.checks.engine_config import EngineConfigInput, build_engine_config, sglang_tree
from specpick.tools.errors import InputError

V = "meta-llama/Llama-3.1-8B-Instruct"
HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def cfg(**kw):
    base = {"verifier": V}
    base.update(kw)
    return build_engine_config(EngineConfigInput(**base))


def test_vllm_eagle3_json():
    c = cfg(engine="vllm", method="eagle3", draft_model=HEAD, num_draft_tokens=3)
    assert json.loads(c.config) == {"method": "eagle3", "model": HEAD, "num_speculative_tokens": 3}
    assert "--speculative-config" in c.launch_command and c.engine_version


def test_vllm_draft_model_draft_tp_defaults_to_target_tp():
    c = cfg(engine="vllm", method="draft_model", draft_model="meta-llama/Llama-3.2-1B-Instruct",
            num_draft_tokens=5, tensor_parallel=4)
    assert json.loads(c.config)["draft_tensor_parallel_size"] == 4


def test_vllm_ngram_window_and_schedule():
    c = cfg(engine="vllm", method="ngram", num_draft_tokens=4, prompt_lookup_min=2, prompt_lookup_max=5,
            disable_by_batch_size=24)
    data = json.loads(c.config)
    assert data["prompt_lookup_min"] == 2 and data["prompt_lookup_max"] == 5 and data["disable_by_batch_size"] == 24


def test_sglang_chain_maps_k_to_steps_and_k_plus_one_tokens():
    # ENGINES.md: vLLM k => --speculative-num-steps k --speculative-eagle-topk 1 --speculative-num-draft-tokens k+1
    assert sglang_tree("eagle3", 3, 1, None) == (3, 1, 4)
    c = cfg(engine="sglang", method="eagle3", draft_model=HEAD, num_draft_tokens=3)
    assert "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4" in c.config


def test_sglang_tree_budget_constraint():
    assert sglang_tree("eagle3", 5, 4, 8) == (5, 4, 8)
    with pytest.raises(InputError, match="steps\\*topk\\+1"):
        sglang_tree("eagle3", 2, 2, 9)


def test_trtllm_yaml_parses():
    c = cfg(engine="trtllm", method="eagle3", draft_model=HEAD, num_draft_tokens=4, tree_top_k=4,
            num_verify_tokens=12)
    spec = yaml.safe_load(c.config)["speculative_config"]
    assert spec["decoding_type"] == "Eagle3" and spec["max_draft_len"] == 4
    assert spec["use_dynamic_tree"] is True and spec["max_total_draft_tokens"] == 12


def test_transformers_kwargs():
    c = cfg(engine="transformers", method="ngram", num_draft_tokens=10)
    assert c.config.startswith("prompt_lookup_num_tokens=10")
    assert any("batch" in n for n in c.notes)


@pytest.mark.parametrize(
    ("engine", "method"),
    [("sglang", "medusa"), ("vllm", "lookahead"), ("transformers", "eagle3"), ("sglang", "suffix")],
)
def test_unsupported_method_says_which_engines_run_it(engine, method):
    with pytest.raises(InputError) as err:
        cfg(engine=engine, method=method, draft_model="org/head")
    assert "does not run" in err.value.message and "engines that do" in err.value.message


def test_none_is_a_plain_launch():
    c = cfg(engine="sglang", method="none", tensor_parallel=2)
    assert c.format == "none" and c.config == "" and "--tp 2" in c.launch_command


@pytest.mark.parametrize(
    "kw",
    [
        {"engine": "vllm", "method": "eagle3"},  # no head
        {"engine": "vllm", "method": "ngram", "prompt_lookup_min": 6, "prompt_lookup_max": 3},
        {"engine": "vllm", "method": "ngram", "num_draft_tokens": 0},
        {"engine": "vllm", "method": "ngram", "num_draft_tokens": 500},
        {"engine": "vllm", "method": "draft_model", "draft_model": "a/b", "tensor_parallel": 4,
         "draft_tensor_parallel": 2},
    ],
)
def test_bad_engine_config_input(kw):
    from specpick.skill.surfaces.registry import BY_CLI

    with pytest.raises(InputError):
        BY_CLI["engine-config"].run({"verifier": V, **kw})

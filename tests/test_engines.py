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
    # today's vLLM: the threshold becomes a K=0 range of num_speculative_tokens_per_batch_size (PR #32374)
    c = cfg(engine="vllm", method="ngram", num_draft_tokens=4, prompt_lookup_min=2, prompt_lookup_max=5,
            disable_by_batch_size=24)
    data = json.loads(c.config)
    assert data["prompt_lookup_min"] == 2 and data["prompt_lookup_max"] == 5
    assert data["num_speculative_tokens_per_batch_size"] == [[1, 23, 4], [24, 512, 0]]
    assert "disable_by_batch_size" not in data


def test_vllm_before_the_schedule_key_gets_disable_by_batch_size():
    c = cfg(engine="vllm", method="ngram", num_draft_tokens=4, disable_by_batch_size=24, engine_version="0.16.0")
    data = json.loads(c.config)
    assert data["disable_by_batch_size"] == 24 and "num_speculative_tokens_per_batch_size" not in data
    assert c.engine_version == "0.16.0" and any("predates the per-batch schedule" in n for n in c.notes)


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


# -- 2026 methods, llama.cpp, versions -----------------------------------------------------------------

DFLASH = "z-lab/Qwen3-8B-DFlash-b16"
PEAGLE = "amazon/gpt-oss-120b-p-eagle"
PARD = "amd/PARD-Llama-3.2-1B"


@pytest.mark.parametrize(
    ("method", "draft", "want"),
    [
        ("dflash", DFLASH, {"method": "dflash", "model": DFLASH, "num_speculative_tokens": 15}),
        ("peagle", PEAGLE, {"method": "eagle3", "model": PEAGLE, "num_speculative_tokens": 15,
                            "parallel_drafting": True}),
        ("pard", PARD, {"method": "draft_model", "model": PARD, "num_speculative_tokens": 15,
                        "parallel_drafting": True, "draft_tensor_parallel_size": 1}),
    ],
)
def test_vllm_parallel_drafters(method, draft, want):
    # vLLM docs: P-EAGLE is eagle3 + parallel_drafting, PARD is draft_model + parallel_drafting (PR #32887)
    c = cfg(engine="vllm", method=method, draft_model=draft, num_draft_tokens=15)
    assert json.loads(c.config) == want


def test_parallel_drafters_on_the_other_engines():
    s = cfg(engine="sglang", method="dflash", draft_model=DFLASH, num_draft_tokens=15)
    assert s.argv[-6:] == ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", DFLASH,
                           "--speculative-num-draft-tokens", "16"]
    t = yaml.safe_load(cfg(engine="trtllm", method="pard", draft_model=PARD, num_draft_tokens=8).config)
    assert t["speculative_config"] == {"decoding_type": "PARD", "max_draft_len": 8, "speculative_model": PARD}
    t = yaml.safe_load(cfg(engine="trtllm", method="dflash", draft_model=DFLASH, num_draft_tokens=7).config)
    assert t["speculative_config"]["decoding_type"] == "DFlash"
    for engine in ("sglang", "trtllm", "llamacpp", "transformers"):  # P-EAGLE ships in vLLM only
        with pytest.raises(InputError, match="does not run peagle"):
            cfg(engine=engine, method="peagle", draft_model=PEAGLE)


def test_engine_version_gates_a_method():
    with pytest.raises(InputError, match="runs dflash from 0.19.0 on, not 0.16.0"):
        cfg(engine="vllm", method="dflash", draft_model=DFLASH, engine_version="0.16.0")
    with pytest.raises(InputError, match="from 0.16.0 on"):
        cfg(engine="vllm", method="pard", draft_model=PARD, engine_version="0.15.1")
    assert cfg(engine="vllm", method="pard", draft_model=PARD, engine_version="0.16.0").engine_version == "0.16.0"
    # vLLM V1 had no draft-model proposer before PR #24322 (issue #31883: 0.13.0 still refused it)
    with pytest.raises(InputError, match="does not run draft_model"):
        cfg(engine="vllm", method="draft_model", draft_model="meta-llama/Llama-3.2-1B-Instruct",
            engine_version="0.13.0")


def test_llamacpp_flags_use_the_current_names():
    # -hf/--spec-draft-hf take GGUF repos (README @00dc805): the GGUF builds the user names are what is loaded.
    gguf, draft = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "bartowski/Llama-3.2-1B-Instruct-GGUF:Q8_0"
    c = cfg(engine="llamacpp", method="draft_model", draft_model=draft, num_draft_tokens=6, gguf_source=gguf)
    assert c.argv == ["llama-server", "-hf", gguf, "--spec-type", "draft-simple", "--spec-draft-hf",
                      draft, "--spec-draft-ngl", "all", "--spec-draft-n-max", "6"]
    assert "--draft-max" not in c.argv  # removed in current builds (llama-server README @00dc805)
    mtp = cfg(engine="llamacpp", method="mtp", num_draft_tokens=2, gguf_source=gguf)
    assert mtp.argv[3:] == ["--spec-type", "draft-mtp", "--spec-draft-n-max", "2"]
    with pytest.raises(InputError, match="does not run eagle2"):
        cfg(engine="llamacpp", method="eagle2", draft_model=HEAD)


def test_one_setting_translated_for_every_engine():
    c = cfg(engine="vllm", method="eagle3", draft_model=HEAD, num_draft_tokens=4, batch_schedule=["1-8:4", "9-32:2"],
            disable_by_batch_size=33, all_engines=True)
    assert json.loads(c.config)["num_speculative_tokens_per_batch_size"] == [[1, 8, 4], [9, 32, 2], [33, 512, 0]]
    by = {t.engine: t for t in c.translations}
    assert set(by) == {"sglang", "trtllm", "llamacpp", "transformers"}
    trt = yaml.safe_load(by["trtllm"].config.config)["speculative_config"]
    # TRT-LLM keys are the upper bounds of each range; above max_concurrency speculation is off
    assert trt["draft_len_schedule"] == {8: 4, 32: 2} and trt["max_concurrency"] == 32 and trt["max_draft_len"] == 4
    assert "--speculative-num-steps" in by["sglang"].config.argv
    assert any("no per-batch-size draft length" in n for n in by["sglang"].config.notes)
    assert by["llamacpp"].config.argv[-2:] == ["--spec-draft-n-max", "4"]
    assert not by["transformers"].runs and "does not run eagle3" in by["transformers"].reason


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"batch_schedule": ["1-8:9"]}, "must be <= N"),
        ({"batch_schedule": ["1-8:2", "10-32:1"]}, "contiguous"),
        ({"batch_schedule": ["8:2"]}, "START-END:K"),
        ({"engine_version": "latest; rm -rf /"}, "not a release number"),
        ({"tensor_parallel": 1, "draft_tensor_parallel": 2}, "must be 1; got 2"),
        ({"tensor_parallel": 4, "draft_tensor_parallel": 2}, "must be 1 or the target TP \\(4\\)"),
    ],
)
def test_bad_settings_say_what_is_wrong(kw, match):
    from specpick.skill.surfaces.registry import BY_CLI

    base = {"engine": "vllm", "method": "draft_model", "draft_model": "meta-llama/Llama-3.2-1B-Instruct",
            "num_draft_tokens": 4}
    with pytest.raises(InputError, match=match):
        BY_CLI["engine-config"].run({"verifier": V, **base, **kw})


def test_a_tree_setting_says_where_it_becomes_a_chain():
    c = cfg(engine="sglang", method="eagle3", draft_model=HEAD, num_draft_tokens=5, tree_top_k=4, num_verify_tokens=8,
            all_engines=True)
    assert c.argv[-6:] == ["--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
                           "--speculative-num-draft-tokens", "8"]
    by = {t.engine: t.config for t in c.translations if t.config is not None}
    spec = yaml.safe_load(by["trtllm"].config)["speculative_config"]
    assert (spec["max_draft_len"], spec["dynamic_tree_max_topK"], spec["max_total_draft_tokens"]) == (5, 4, 8)
    assert json.loads(by["vllm"].config)["num_speculative_tokens"] == 5
    assert any("no top-k tree" in n for n in by["vllm"].notes)
    assert any("chain only" in n for n in by["llamacpp"].notes)


def test_catalog_aliases_resolve_to_repo_ids():
    c = cfg(engine="vllm", method="eagle3", verifier="llama-3.1-8b", draft_model=HEAD)
    assert c.argv[2] == V


def test_vllm_padded_vocab_draft_sets_use_heterogeneous_vocab():
    # vLLM refuses a draft_model whose vocab_size differs from the target's unless use_heterogeneous_vocab is
    # true (vllm/config/speculative.py @002e77c, PR #38174); drafts.csv lists Qwen2.5-0.5B as a padded pair
    q7, q05 = "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"
    new = cfg(engine="vllm", method="draft_model", verifier=q7, draft_model=q05, heterogeneous_vocab=True)
    assert json.loads(new.config)["use_heterogeneous_vocab"] is True
    old = cfg(engine="vllm", method="draft_model", verifier=q7, draft_model=q05, heterogeneous_vocab=True,
              engine_version="0.20.0")
    assert "use_heterogeneous_vocab" not in json.loads(old.config)
    assert any("pad the draft's embedding" in n for n in old.notes)
    same = cfg(engine="vllm", method="draft_model", draft_model="meta-llama/Llama-3.2-1B-Instruct")
    assert "use_heterogeneous_vocab" not in json.loads(same.config)


def test_recommend_emits_use_heterogeneous_vocab_for_the_padded_qwen25_pair():
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    rec = plan(PlannerInputs(verifier="Qwen/Qwen2.5-7B-Instruct", workload="chat", gpu="A100-80GB", gpus=1,
                             engine="vllm", draft="Qwen/Qwen2.5-0.5B-Instruct", second_model=True))
    assert rec.strategy == "draft_model"
    assert json.loads(rec.engine_config.config).get("use_heterogeneous_vocab") is True

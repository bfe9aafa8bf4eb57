"""config.json -> ModelSpec for the served families, and parameter counts without weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError, RemoteDataError, UnavailableError
from specpick.tools.hub.config import config_to_spec, fetch_model_spec, param_count
from specpick.tools.arch.params import count_params
from tests.support.fakehub import safetensors_bytes

# config.json fields as published in each repo (only architecture fields kept;
# Gemma-3 omits its class defaults exactly as the real file does).
LLAMA31_8B = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
              "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rope_theta": 500000.0}
QWEN25_7B = {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
             "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
             "max_position_embeddings": 32768, "tie_word_embeddings": False, "sliding_window": 131072,
             "use_sliding_window": False, "torch_dtype": "bfloat16"}
QWEN25_05B = {**QWEN25_7B, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
              "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True}
QWEN3_8B = {"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
            "max_position_embeddings": 40960, "tie_word_embeddings": False, "attention_bias": False,
            "use_sliding_window": False, "sliding_window": None, "torch_dtype": "bfloat16"}
QWEN3_30B_A3B = {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
                 "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
                 "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
                 "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936,
                 "max_position_embeddings": 40960, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
MISTRAL_7B_V01 = {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                  "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                  "max_position_embeddings": 32768, "sliding_window": 4096, "torch_dtype": "bfloat16"}
MIXTRAL_8X7B = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8,
                "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 32768,
                "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
GEMMA2_9B = {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
             "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000,
             "max_position_embeddings": 8192, "sliding_window": 4096, "torch_dtype": "float32"}
GEMMA3_4B = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
             "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                             "num_hidden_layers": 34, "sliding_window": 1024},
             "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
                               "num_hidden_layers": 27, "num_attention_heads": 16, "patch_size": 14,
                               "image_size": 896},
             "torch_dtype": "bfloat16"}
PHI3_MINI = {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064,
             "max_position_embeddings": 4096, "sliding_window": 2047, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16"}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
               "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
               "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
               "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
               "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
               "num_nextn_predict_layers": 1, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
               "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}}
GPT_OSS_20B = {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 24,
               "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32,
               "num_experts_per_tok": 4, "vocab_size": 201088, "max_position_embeddings": 131072,
               "sliding_window": 128, "attention_bias": True, "tie_word_embeddings": False,
               "layer_types": ["sliding_attention", "full_attention"] * 12, "torch_dtype": "bfloat16",
               "quantization_config": {"quant_method": "mxfp4"}}


@dataclass(frozen=True)
class Case:
    repo_id: str
    config: dict[str, Any]
    published_total_b: float  # model card / catalog figure
    published_active_b: float | None = None
    tolerance_pct: float = 3.0
    active_without_embedding: bool = False  # how the publisher counts "active"


CASES = [
    Case("meta-llama/Llama-3.1-8B-Instruct", LLAMA31_8B, 8.03),
    Case("Qwen/Qwen2.5-7B-Instruct", QWEN25_7B, 7.62),
    Case("Qwen/Qwen2.5-0.5B-Instruct", QWEN25_05B, 0.494),
    Case("Qwen/Qwen3-8B", QWEN3_8B, 8.19),
    Case("Qwen/Qwen3-30B-A3B", QWEN3_30B_A3B, 30.5, 3.3),
    Case("mistralai/Mistral-7B-v0.1", MISTRAL_7B_V01, 7.24),
    Case("mistralai/Mixtral-8x7B-Instruct-v0.1", MIXTRAL_8X7B, 46.7, 12.9),
    Case("google/gemma-2-9b-it", GEMMA2_9B, 9.24),
    Case("google/gemma-3-4b-it", GEMMA3_4B, 4.3),
    Case("microsoft/Phi-3-mini-4k-instruct", PHI3_MINI, 3.82),
    Case("deepseek-ai/DeepSeek-V3", DEEPSEEK_V3, 671, 37),
    # OpenAI's gpt-oss model card counts active parameters without the input embedding table.
    Case("openai/gpt-oss-20b", GPT_OSS_20B, 20.9, 3.6, active_without_embedding=True),
]
# Fields the catalog records from the same config.json files: the reader must agree with it.
ARCH_FIELDS = ("hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "head_dim", "vocab_size",
               "tie_word_embeddings", "num_experts", "experts_per_token", "moe_intermediate_size",
               "num_shared_experts", "first_dense_layers", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank",
               "mtp_layers", "sliding_window")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.repo_id)
def test_config_estimate_matches_published_total(case: Case) -> None:
    spec = config_to_spec(case.config, case.repo_id)
    counted = count_params(spec)
    total = counted.total_b
    assert abs(total - case.published_total_b) / case.published_total_b * 100 < case.tolerance_pct, total
    if case.published_active_b is not None:
        assert spec.is_moe
        active = counted.active_b - (counted.embedding_b if case.active_without_embedding else 0.0)
        assert abs(active - case.published_active_b) / case.published_active_b < 0.06, active
    else:
        assert not spec.is_moe


@pytest.mark.parametrize("case", [c for c in CASES if get_catalog().find_model(c.repo_id)], ids=lambda c: c.repo_id)
def test_config_fields_agree_with_catalog(case: Case) -> None:
    catalog_spec = get_catalog().model(case.repo_id)
    spec = config_to_spec(case.config, case.repo_id, catalog_spec=catalog_spec)
    mismatched = {f: (getattr(spec, f), getattr(catalog_spec, f)) for f in ARCH_FIELDS
                  if getattr(spec, f) != getattr(catalog_spec, f)}
    assert mismatched == {}
    assert spec.tokenizer_family == catalog_spec.tokenizer_family
    assert spec.fact_source == "hub"


@pytest.mark.parametrize(("config", "field", "expected"), [
    (GEMMA2_9B, "sliding_layer_fraction", 0.5),
    (GEMMA3_4B, "sliding_layer_fraction", 0.8333),
    (GPT_OSS_20B, "sliding_layer_fraction", 0.5),
    (MISTRAL_7B_V01, "sliding_layer_fraction", 1.0),
    (QWEN25_7B, "sliding_window", None),
    (DEEPSEEK_V3, "dtype", "fp8"),
    (GPT_OSS_20B, "dtype", "mxfp4"),
    (GEMMA2_9B, "dtype", "fp32"),
    (QWEN25_7B, "attention_bias", True),  # Qwen2 has q/k/v biases without saying so in config.json
    (QWEN3_8B, "attention_bias", False),
    (GEMMA3_4B, "tie_word_embeddings", True),  # Gemma's class default
    (GEMMA3_4B, "vocab_size", 262208),
    (MIXTRAL_8X7B, "intermediate_size", 0),  # no dense FFN layer
    (DEEPSEEK_V3, "head_dim", 192),
])
def test_family_specific_fields(config: dict[str, Any], field: str, expected: object) -> None:
    assert getattr(config_to_spec(config, "org/model"), field) == expected


def test_gemma3_vision_tower_is_counted_separately() -> None:
    spec = config_to_spec(GEMMA3_4B, "google/gemma-3-4b-it")
    catalog_vision = get_catalog().model("google/gemma-3-4b-it").vision_params_b
    assert spec.vision_params_b == pytest.approx(catalog_vision, rel=0.03)


@pytest.mark.parametrize("bad", [{"model_type": "llama"}, {**LLAMA31_8B, "hidden_size": "4096"},
                                 {**LLAMA31_8B, "num_hidden_layers": 0}])
def test_config_without_required_fields_is_remote_data_error(bad: dict[str, Any]) -> None:
    with pytest.raises(RemoteDataError, match="config.json of org/x"):
        config_to_spec(bad, "org/x")


def test_unknown_model_type_is_read_but_labelled() -> None:
    spec = config_to_spec({**LLAMA31_8B, "model_type": "my_new_arch"}, "org/new")
    assert "not one of the tested families" in spec.notes
    assert spec.tokenizer_family == "unknown:org/new"


# -- through the Hub ------------------------------------------------------------------------------

def _llama_tiny_tensors() -> dict[str, tuple[str, list[int]]]:
    return {"model.embed_tokens.weight": ("BF16", [320, 16]), "model.layers.0.mlp.up_proj.weight": ("BF16", [48, 16]),
            "model.norm.weight": ("F32", [16])}


def test_param_count_exact_from_safetensors_header_without_weights(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/tiny", {"config.json": LLAMA31_8B, "model.safetensors": safetensors_bytes(_llama_tiny_tensors())})
    result = param_count("org/tiny", settings=hub_settings)
    assert result.exact and result.method == "safetensors-header" and result.source == "hub"
    assert result.by_dtype == {"BF16": 320 * 16 + 48 * 16, "F32": 16}
    assert result.total_b == pytest.approx((320 * 16 + 48 * 16 + 16) / 1e9)
    gets = fakehub.requests("GET", "model.safetensors")
    assert gets and all(r.range is not None for r in gets), "only Range reads of the header"


def test_param_count_sums_shards_from_index(fakehub, hub_settings) -> None:
    shard1 = safetensors_bytes({"a": ("BF16", [10, 10])})
    shard2 = safetensors_bytes({"b": ("F32", [5]), "c": ("BF16", [3])})
    index = {"metadata": {"total_size": 0}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                                                           "b": "model-00002-of-00002.safetensors",
                                                           "c": "model-00002-of-00002.safetensors"}}
    fakehub.add_repo("org/sharded", {"config.json": QWEN3_8B, "model.safetensors.index.json": index,
                                     "model-00001-of-00002.safetensors": shard1,
                                     "model-00002-of-00002.safetensors": shard2})
    result = param_count("org/sharded", settings=hub_settings)
    assert result.by_dtype == {"BF16": 103, "F32": 5} and result.exact


def test_param_count_without_safetensors_is_labelled_estimate(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/binonly", {"config.json": MIXTRAL_8X7B, "pytorch_model.bin": b"\0" * 16})
    result = param_count("org/binonly", settings=hub_settings)
    assert not result.exact and result.method == "config-estimate" and result.source == "hub"
    assert result.total_b == pytest.approx(46.7, rel=0.02) and result.active_b == pytest.approx(12.9, rel=0.03)
    assert "safetensors" in result.fallback_reason and "estimate" in result.notes[0]


def test_fetch_model_spec_reports_hub_then_cache_then_catalog(fakehub, hub_settings) -> None:
    repo = "Qwen/Qwen2.5-7B-Instruct"
    fakehub.add_repo(repo, {"config.json": QWEN25_7B})
    live = fetch_model_spec(repo, settings=hub_settings)
    assert (live.source, live.spec.fact_source, live.spec.vocab_size) == ("hub", "hub", 152064)
    cached = fetch_model_spec(repo, settings=hub_settings.model_copy(update={"offline": True}))
    assert cached.source == "hub-cache" and "offline" in cached.fallback_reason
    assert cached.spec.hidden_size == 3584
    other = "Qwen/Qwen2.5-14B-Instruct"  # in the catalog, never fetched
    from_catalog = fetch_model_spec(other, settings=hub_settings.model_copy(update={"offline": True}))
    assert from_catalog.source == "catalog" and "offline and nothing cached" in from_catalog.fallback_reason
    assert from_catalog.spec.repo_id == other


def test_offline_param_count_falls_back_to_catalog(hub_settings) -> None:
    result = param_count("meta-llama/Llama-3.1-8B-Instruct", settings=hub_settings.model_copy(update={"offline": True}))
    assert result.method == "catalog" and result.source == "catalog" and not result.exact
    assert result.total_b == pytest.approx(8.03, rel=0.01)


def test_offline_unknown_model_is_unavailable(hub_settings) -> None:
    with pytest.raises(UnavailableError, match="offline and nothing cached for org/unknown"):
        fetch_model_spec("org/unknown", settings=hub_settings.model_copy(update={"offline": True}))


def test_repo_without_config_is_not_found(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/gguf-only", {"model.gguf": b"GGUF"})
    with pytest.raises(NotFoundError, match="has no config.json"):
        fetch_model_spec("org/gguf-only", settings=hub_settings)


def _params_json(argv: list[str], capsys) -> dict:
    import json

    from specpick.skill.surfaces.cli import main

    assert main(["params", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_params_verb_answers_from_the_safetensors_headers_when_it_reads_the_hub(fakehub, hub_settings, monkeypatch,
                                                                             tmp_path, capsys) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cli-cache"))
    fakehub.add_repo("org/tiny", {"config.json": LLAMA31_8B, "model.safetensors": safetensors_bytes(_llama_tiny_tensors())})
    out = _params_json(["org/tiny", "--live"], capsys)
    exact = (320 * 16 + 48 * 16 + 16) / 1e9
    assert out["count_method"] == "safetensors headers (exact)"
    assert out["total_b"] == pytest.approx(exact) and out["exact_by_dtype"] == {"BF16": 320 * 16 + 48 * 16, "F32": 16}
    # the config-derived architecture estimate is kept beside it, not presented as the answer
    assert out["breakdown"]["total_b"] != pytest.approx(exact)


def test_params_verb_labels_the_config_estimate_as_the_fallback(fakehub, hub_settings, monkeypatch, tmp_path,
                                                                capsys) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cli-cache"))
    fakehub.add_repo("org/binonly", {"config.json": MIXTRAL_8X7B, "pytorch_model.bin": b"\0" * 16})
    out = _params_json(["org/binonly", "--live"], capsys)
    assert out["count_method"].startswith("computed from architecture") and "fallback" in out["count_method"]
    assert out["exact_total_b"] is None and out["total_b"] == pytest.approx(46.7, rel=0.02)

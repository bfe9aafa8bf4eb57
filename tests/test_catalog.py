"""Catalog: every row loads with its source; names resolve the way people write them."""

from __future__ import annotations

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import EXIT_NOT_FOUND, NotFoundError


# Rows of the first catalog (shared fact tables); later rows were appended after them.
FIRST_MODELS, FIRST_GPUS, FIRST_HEADS, FIRST_DRAFTS = 55, 21, 61, 22


def _csv_rows(table: str) -> int:
    import csv
    from importlib import resources

    text = resources.files("specpick.tools").joinpath("data", f"{table}.csv").read_text(encoding="utf-8")
    return sum(1 for row in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")) if any(
        (v or "").strip() for v in row.values()))


def test_catalog_holds_every_row_with_sources():
    cat = get_catalog()
    # Every row of each table loads (no pinned counts: a row added to a CSV must not break this test; the suite's
    # HF_HOME is a temporary folder, so no user overlay adds rows here).
    assert (len(cat.models), len(cat.gpus), len(cat.heads), len(cat.drafts)) == tuple(
        _csv_rows(name) for name in ("models", "gpus", "heads", "drafts"))
    for row in [*cat.models, *cat.gpus, *cat.heads, *cat.drafts, *cat.engine_support]:
        assert row.source.strip(), f"{row} has no source"
    for table, key in ((cat.models, "repo_id"), (cat.heads, "head_repo_id"), (cat.gpus, "key")):
        ids = [getattr(r, key).lower() for r in table]
        assert len(ids) == len(set(ids)), f"duplicate {key}"


def test_names_of_the_first_rows_still_resolve_to_them():
    # New rows are appended; every spelling of an existing row must keep finding that row.
    cat = get_catalog()
    for m in cat.models[:FIRST_MODELS]:
        for name in (m.repo_id, m.repo_id.split("/", 1)[1], *m.aliases):
            assert cat.model(name) is m, f"{name} no longer resolves to {m.repo_id}"
    for g in cat.gpus[:FIRST_GPUS]:
        for name in (g.key, g.name, *g.aliases):
            assert cat.gpu(name) is g, f"{name} no longer resolves to {g.key}"


@pytest.mark.parametrize(
    ("spelling", "repo"),
    [
        ("qwen3-next-80b-a3b-instruct", "Qwen/Qwen3-Next-80B-A3B-Instruct"),
        ("Qwen3.5-397B-A17B", "Qwen/Qwen3.5-397B-A17B"),
        ("deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2"),
        ("GLM-4.6", "zai-org/GLM-4.6"),
        ("Kimi-K2-Thinking", "moonshotai/Kimi-K2-Thinking"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
        ("MiMo-V2-Flash", "XiaomiMiMo/MiMo-V2-Flash"),
    ],
)
def test_new_verifiers_resolve(spelling, repo):
    assert get_catalog().model(spelling).repo_id == repo


def test_hybrid_models_charge_kv_only_for_attention_layers():
    from specpick.tools.arch.kv import kv_bytes_per_sequence

    cat = get_catalog()
    nxt = cat.model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert nxt.linear_attention_layer_fraction == 0.75
    full = kv_bytes_per_sequence(nxt.model_copy(update={"linear_attention_layer_fraction": 0.0}), 8192)
    assert kv_bytes_per_sequence(nxt, 8192) == pytest.approx(full / 4)  # 12 of 48 layers hold KV
    nano = cat.model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert kv_bytes_per_sequence(nano, 1000) == pytest.approx(4 * 2 * 8 * 128 * 2 * 1000)  # 4 attention layers


def test_head_corrections_are_applied():
    cat = get_catalog()
    peagle = cat.head("RedHatAI/Qwen3-8B-speculator.peagle")
    assert peagle.method == "peagle" and "speculators@c05b95b" in peagle.source
    # EAGLE-1 loads only through TRT-LLM's legacy TRT-engine backend: kept in runtimes, restriction recorded.
    eagle1 = [h for h in cat.heads if h.method == "eagle" and h.head_repo_id.startswith("yuhuili/")]
    assert eagle1 and all("trtllm" in h.runtimes and "not the PyTorch backend" in h.engine_versions for h in eagle1)
    assert cat.head("nvidia/gpt-oss-120b-Eagle3").superseded_by == "nvidia/gpt-oss-120b-Eagle3-v3"
    assert cat.head("ibm-ai-platform/llama-13b-accelerator").trained_dtype == "fp16"


def test_new_head_columns_are_typed():
    cat = get_catalog()
    dogacel = cat.head("Dogacel/specdrift-gpt-oss-20b-eagle3")
    assert dogacel.method == "eagle3" and dogacel.trained_context_tokens == 4096 and dogacel.format == "eagle"
    assert cat.head("lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B").superseded_by == (
        "lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge")
    # Every superseded_by names a head the catalog holds, so the planner can follow it.
    for h in cat.heads:
        assert not h.superseded_by or cat.head(h.superseded_by) is not None, h.head_repo_id
    assert cat.head("AngelSlim/Hy3-DFly-Block8") is None  # dropped: no verifier named


def test_gpus_carry_fp4_rates_where_they_have_fp4_units():
    cat = get_catalog()
    assert cat.gpu("B200").fp4_tflops == 9000 and cat.gpu("b300").fp4_tflops == 13500
    assert cat.gpu("H100").fp4_tflops is None and cat.gpu("gaudi 3").vendor == "intel"
    assert cat.gpu("B200").peak_tflops("nvfp4") == 9000 and cat.gpu("B200").peak_tflops("fp8") == cat.gpu("B200").fp8_tflops


def test_llama4_records_the_llama3_draft_as_incompatible():
    cat = get_catalog()
    rel = {d.draft_repo_id: d.tokenizer_relation for d in cat.drafts_for(cat.model("llama-4-scout-17b-16e-instruct"))}
    assert rel["meta-llama/Llama-3.2-1B-Instruct"] == "incompatible"


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("H100", "H100-SXM"),
        ("h100-sxm", "H100-SXM"),
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("H100 PCIe", "H100-PCIE"),
        ("A100-80GB", "A100-80GB"),
        ("a100 40gb", "A100-40GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("RTX 3090", "RTX-3090"),
        ("4090", "RTX-4090"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("MI300X", "MI300X"),
        ("AMD Instinct MI300X", "MI300X"),
        ("h200", "H200"),
        ("L40S", "L40S"),
        ("Tesla T4", "T4"),
    ],
)
def test_gpu_spellings_resolve(spelling, key):
    assert get_catalog().gpu(spelling).key == key


@pytest.mark.parametrize(
    ("spelling", "repo"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"),
        ("META-LLAMA/LLAMA-3.1-70B-INSTRUCT", "meta-llama/Llama-3.1-70B-Instruct"),
        ("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"),
        ("Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"),
        ("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"),
        ("deepseek-v3", "deepseek-ai/DeepSeek-V3"),
        ("gpt-oss-120b", "openai/gpt-oss-120b"),
        ("vicuna-7b", "lmsys/vicuna-7b-v1.3"),
    ],
)
def test_model_names_resolve(spelling, repo):
    assert get_catalog().model(spelling).repo_id == repo


def test_unknown_model_lists_close_matches():
    with pytest.raises(NotFoundError) as err:
        get_catalog().model("llama-3.1-7b")
    assert "Did you mean" in err.value.message and "Llama-3.1-8B-Instruct" in err.value.message
    assert err.value.exit_code == EXIT_NOT_FOUND


def test_unknown_gpu_lists_close_matches():
    with pytest.raises(NotFoundError) as err:
        get_catalog().gpu("H1000")
    assert "H100-SXM" in err.value.message


def test_published_heads_are_found_by_verifier():
    heads = get_catalog().heads_for("meta-llama/llama-3.1-8b-instruct")
    methods = {h.method for h in heads}
    assert {"eagle", "eagle3"} <= methods
    assert all(h.verifier_repo_id == "meta-llama/Llama-3.1-8B-Instruct" for h in heads)


def test_medusa_heads_are_not_listed_for_sglang():
    medusa = [h for h in get_catalog().heads if h.method == "medusa"]
    assert medusa and all("sglang" not in h.runtimes for h in medusa)


def test_drafts_record_which_pairs_need_padding():
    cat = get_catalog()
    qwen = {d.draft_repo_id: d.tokenizer_relation for d in cat.drafts_for(cat.model("qwen2.5-72b"))}
    assert qwen["Qwen/Qwen2.5-0.5B-Instruct"] == "identical_except_padding"
    llama = {d.draft_repo_id: d.tokenizer_relation for d in cat.drafts_for(cat.model("llama-3.1-70b"))}
    assert llama["meta-llama/Llama-3.2-1B-Instruct"] == "identical"


def test_engine_support_matrix_records_versions():
    cat = get_catalog()
    assert cat.support("sglang", "medusa").support == "no"
    assert cat.support("vllm", "suffix").support == "yes"
    # TensorRT-LLM ran lookahead on its TensorRT engine backend only, which it removed in 2026 (migration guide,
    # https://nvidia.github.io/TensorRT-LLM/legacy/tensorrt-backend-removal.html): today's build no, 1.3.0rc19 partial
    assert cat.support("trtllm", "lookahead").support == "no"
    assert cat.support("trtllm", "lookahead", "1.3.0rc19").support == "partial"
    assert all(s.engine_version for s in cat.engine_support)

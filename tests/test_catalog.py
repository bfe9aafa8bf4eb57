"""Catalog: every row loads with its source; names resolve the way people write them."""

from __future__ import annotations

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import EXIT_NOT_FOUND, NotFoundError


def test_catalog_holds_every_shared_row_with_sources():
    cat = get_catalog()
    assert len(cat.models) == 55
    assert len(cat.gpus) == 21
    assert len(cat.heads) == 61
    for row in [*cat.models, *cat.gpus, *cat.heads, *cat.drafts, *cat.engine_support]:
        assert row.source.strip(), f"{row} has no source"


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
    assert cat.support("trtllm", "lookahead").support == "partial"
    assert all(s.engine_version for s in cat.engine_support)

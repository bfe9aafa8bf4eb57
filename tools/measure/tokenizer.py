"""Tokenizers for the n-gram estimate: the verifier's own when available, else tiktoken.

``--tokenizer`` accepts:
* a model folder holding ``tokenizer.json`` (the verifier's tokenizer; EOS ids
  from its ``generation_config.json`` / ``tokenizer_config.json``), or the
  ``tokenizer.json`` file itself — read with ``tokenizers``;
* a tiktoken rank file (``*.tiktoken`` or ``*.tiktoken.gz``) whose name says
  its encoding (``cl100k_base`` / ``o200k_base``), checked against tiktoken's
  own sha256 for that encoding, so no download is needed;
* an encoding name (``o200k_base``, the default, or ``cl100k_base``), which
  tiktoken loads from its cache (``TIKTOKEN_CACHE_DIR``) or downloads.

The n-gram estimate depends on token boundaries, so a stand-in tokenizer gives
an approximation; the report names the tokenizer used.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specpick.tools.errors import InputError, NotFoundError, UnavailableError
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.hub.client import HubSettings
from specpick.tools.hub.client import fetch_file

DEFAULT_ENCODING = "o200k_base"
_ENCODINGS = ("o200k_base", "cl100k_base")
MAX_TOKENIZER_BYTES = 64 * 2**20


@dataclass
class TextTokenizer:
    """A text -> ids function with a name for the report and the EOS ids the drafter must respect."""

    name: str
    encode: Callable[[str], list[int]]
    eos_ids: list[int] = field(default_factory=list)


def _eos_from_folder(folder: Path, token_to_id: Callable[[str], int | None]) -> list[int]:
    gen = folder / "generation_config.json"
    if gen.is_file():
        value = json.loads(gen.read_text(encoding="utf-8")).get("eos_token_id")
        if isinstance(value, int):
            return [value]
        if isinstance(value, list):
            return [int(v) for v in value]
    cfg = folder / "tokenizer_config.json"
    if cfg.is_file():
        eos = json.loads(cfg.read_text(encoding="utf-8")).get("eos_token")
        eos = eos.get("content") if isinstance(eos, dict) else eos
        if isinstance(eos, str) and (tid := token_to_id(eos)) is not None:
            return [tid]
    return []


def _hf_tokenizer(path: Path) -> TextTokenizer:
    from tokenizers import Tokenizer

    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise NotFoundError(
            f"--tokenizer {path}: no tokenizer.json there (sentencepiece-only models: pass a tiktoken encoding)"
        )
    if file.stat().st_size > MAX_TOKENIZER_BYTES:
        raise InputError(f"--tokenizer {file} is larger than {MAX_TOKENIZER_BYTES // 2**20} MiB; not a tokenizer.json")
    try:
        tok = Tokenizer.from_file(str(file))
        eos = _eos_from_folder(file.parent, tok.token_to_id)
    except Exception as exc:  # tokenizers raises a bare Exception on malformed files
        raise InputError(f"--tokenizer {file} is not a valid tokenizer.json ({str(exc)[:120]})") from exc
    return TextTokenizer(
        name=f"tokenizers:{file}",
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        eos_ids=eos,
    )


def _encoding_spec(name: str) -> tuple[dict[str, Any], str | None]:
    """tiktoken's constructor arguments for ``name`` and the sha256 it expects of the rank file, without downloading.

    tiktoken keeps the split pattern and special tokens inside each encoding's constructor, which also fetches
    the ranks; running it with a stand-in loader yields everything but the ranks.
    """
    import tiktoken_ext.openai_public as public

    seen: dict[str, str | None] = {}

    def record(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["hash"] = expected_hash
        return {}

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = record
    try:
        spec = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = original
    return spec, seen.get("hash")


def _tiktoken_from_file(path: Path) -> TextTokenizer:
    import tiktoken

    name = next((n for n in _ENCODINGS if n in path.name), None)
    if name is None:
        raise InputError(f"--tokenizer {path}: name the file after its encoding ({' or '.join(_ENCODINGS)})")
    if path.stat().st_size > MAX_TOKENIZER_BYTES:
        raise InputError(f"--tokenizer {path} is larger than {MAX_TOKENIZER_BYTES // 2**20} MiB; not a rank file")
    raw = path.read_bytes()
    try:
        data = gzip.decompress(raw) if path.name.endswith(".gz") else raw
    except (OSError, EOFError) as exc:
        raise InputError(f"--tokenizer {path} is not a valid gzip file") from exc
    spec, expected = _encoding_spec(name)
    if expected and hashlib.sha256(data).hexdigest() != expected:
        raise InputError(f"--tokenizer {path} is not tiktoken's published {name} rank file (sha256 differs)")
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in (ln.split() for ln in data.splitlines() if ln)}
    enc = tiktoken.Encoding(**{**spec, "mergeable_ranks": ranks})
    return TextTokenizer(name=f"tiktoken:{name} ({path.name})", encode=lambda t: enc.encode(t, disallowed_special=()))


def _tiktoken_named(name: str) -> TextTokenizer:
    import tiktoken

    try:
        enc = tiktoken.get_encoding(name)
    except ValueError as exc:
        raise InputError(f"--tokenizer {name}: unknown tiktoken encoding") from exc
    except Exception as exc:  # requests' connection errors: ranks neither cached nor downloadable
        raise UnavailableError(
            f"tiktoken ranks for {name} are not cached and could not be downloaded ({type(exc).__name__}): "
            "pass --tokenizer with the verifier's model folder or tokenizer.json, or a local .tiktoken rank file"
        ) from exc
    return TextTokenizer(name=f"tiktoken:{name}", encode=lambda t: enc.encode(t, disallowed_special=()))


def load_tokenizer(spec: str | None) -> TextTokenizer:
    """Resolve ``--tokenizer`` (see the module docstring); None means tiktoken ``o200k_base``."""
    if spec is None or spec in _ENCODINGS:
        return _tiktoken_named(spec or DEFAULT_ENCODING)
    path = Path(spec).expanduser()
    if not path.exists():
        raise NotFoundError(
            f"--tokenizer {spec}: no such file or folder (give a model folder, a tokenizer.json, "
            f"a .tiktoken file, or one of {', '.join(_ENCODINGS)})"
        )
    if path.is_file() and (path.name.endswith(".tiktoken") or path.name.endswith(".tiktoken.gz")):
        return _tiktoken_from_file(path)
    return _hf_tokenizer(path)


def verifier_repo(name: str | None) -> str | None:
    """The Hub repo of a verifier named by catalog alias or repo id (None: unknown, or no name)."""
    if not name:
        return None

    found = get_catalog().find_model(name)
    if found is not None:
        return found.repo_id
    return name if name.count("/") == 1 else None


def verifier_tokenizer_file(repo_id: str, flag: str = "--samples") -> str:
    """The verifier's tokenizer.json on disk (Hub, else cache). Offline without it: an error naming the file."""

    settings = HubSettings()
    try:
        return fetch_file(repo_id, "tokenizer.json", max_bytes=settings.max_tokenizer_bytes).path
    except UnavailableError:
        raise UnavailableError(
            f"{flag} needs {repo_id}'s tokenizer.json to count tokens as the verifier does, and it is not cached: "
            f"fetch it once online (`hf download {repo_id} tokenizer.json`), or pass --tokenizer with a local "
            "copy") from None

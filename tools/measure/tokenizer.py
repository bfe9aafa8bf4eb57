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


def _encoding_constructor(name: str) -> Callable[[], dict[str, Any]]:
    import tiktoken_ext.openai_public as public

    return getattr(public, name)  # type: ignore[no-any-return]


def _tiktoken_from_file(path: Path) -> TextTokenizer:
    import tiktoken
    import tiktoken_ext.openai_public as public

    name = next((n for n in _ENCODINGS if n in path.name), None)
    if name is None:
        raise InputError(f"--tokenizer {path}: name the file after its encoding ({' or '.join(_ENCODINGS)})")
    raw = path.read_bytes()
    data = gzip.decompress(raw) if path.name.endswith(".gz") else raw
    try:
        ranks = {base64.b64decode(tok): int(rank) for tok, rank in (ln.split() for ln in data.splitlines() if ln)}
    except ValueError as exc:
        raise InputError(f"--tokenizer {path} is not a tiktoken rank file (lines of 'base64 rank')") from exc
    seen: dict[str, str | None] = {}

    def local_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["hash"] = expected_hash
        return ranks

    # tiktoken keeps pattern and special tokens inside each encoding's constructor; run it with the
    # local ranks in place of its download, then check the file is the one tiktoken expects.
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = local_ranks
    try:
        spec = _encoding_constructor(name)()
    finally:
        public.load_tiktoken_bpe = original
    if seen.get("hash") and hashlib.sha256(data).hexdigest() != seen["hash"]:
        raise InputError(f"--tokenizer {path} does not match tiktoken's published {name} ranks (sha256 differs)")
    enc = tiktoken.Encoding(**spec)
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

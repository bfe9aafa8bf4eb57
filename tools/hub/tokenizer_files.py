"""Read tokenizer files into one comparable shape, without running any tokenizer code.

Supported layouts (what Hub repos ship):

* ``tokenizer.json`` (HF tokenizers): model vocab, merges, added tokens,
  normalizer and pre-tokenizer;
* SentencePiece ``tokenizer.model``: read with a small protobuf reader (stdlib
  only), so the project does not depend on ``sentencepiece``;
* tiktoken-format ``tokenizer.model`` (``<base64 token> <rank>`` lines, as in
  Meta's Llama-3 ``original/``): ranks are ids, merges are implied by ranks;
* GPT-2-style ``vocab.json`` + ``merges.txt``;

plus ``tokenizer_config.json`` / ``special_tokens_map.json`` for BOS/EOS/PAD/UNK
and added tokens. Files are parsed as data: nothing here imports or executes
code from a repo; no remote code path exists.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gc
import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from specpick.tools.errors import RemoteDataError
from specpick.tools.hub.bounds import loads_bounded

TokenFormat = Literal["byte_level", "spm", "bytes", "plain"]
SPECIAL_ROLES = ("bos", "eos", "pad", "unk")
_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/=]+ \d+$")
# SentencePiece piece types (sentencepiece_model.proto): CONTROL and USER_DEFINED
# pieces are special tokens; NORMAL, BYTE, UNKNOWN and UNUSED are the regular vocabulary.
_SPM_SPECIAL_TYPES = {3, 4}


@dataclass
class LoadedTokenizer:
    """A tokenizer reduced to the facts that decide draft/verifier compatibility."""

    kind: str  # "tokenizer.json" | "sentencepiece" | "tiktoken" | "vocab.json+merges.txt"
    token_format: TokenFormat
    regular: list[Any]  # id -> token (str, or bytes for tiktoken); None for holes
    added: dict[int, str] = field(default_factory=dict)  # special/added token id -> content
    merges: list[Any] | None = None  # BPE merges ("a b" strings or [a, b] pairs), as stored
    scores: list[float] | None = None  # SentencePiece piece scores (they order the merges)
    specials: dict[str, str | None] | None = None  # role -> content; None = not known
    normalizer: str | None = None  # canonical JSON, None = not known for this layout
    pre_tokenizer: str | None = None
    files: list[str] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        """Length of the id space: regular tokens plus added tokens past them."""
        return max(len(self.regular), max(self.added, default=-1) + 1)

    def full_map(self) -> list[Any]:
        """id -> token over the whole id space; added tokens take precedence."""
        out = list(self.regular) + [None] * (self.total_tokens - len(self.regular))
        for token_id, content in self.added.items():
            out[token_id] = content
        return out


@contextlib.contextmanager
def paused_gc():
    """Pause the cyclic garbage collector while building large acyclic structures.

    Parsing a 128k-entry tokenizer.json allocates millions of objects; each
    allocation burst triggers full collections that walk every live object
    in the process, which made one comparison 5x slower inside a busy process.
    JSON data holds no reference cycles, so nothing is lost by pausing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: unicode stand-in character -> byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def token_to_bytes(token: Any, token_format: TokenFormat) -> Any:
    """Canonical bytes of a regular token, so different file layouts can be compared."""
    if token is None or isinstance(token, bytes):
        return token
    if token_format == "byte_level":
        decoder = _byte_decoder()
        try:
            return bytes(decoder[ch] for ch in token)
        except KeyError:
            return token.encode("utf-8")
    if token_format == "spm":
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            return bytes([int(token[3:5], 16)])
        return token.replace("▁", " ").encode("utf-8")
    return token.encode("utf-8")


def _canonical(obj: Any) -> str | None:
    return None if obj is None else json.dumps(obj, sort_keys=True, ensure_ascii=False)


def _token_content(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _json_object(data: bytes, name: str) -> dict[str, Any]:
    # Depth-checked first: json.loads recurses once per nesting level, so a deep file is a RecursionError.

    with paused_gc():
        parsed = loads_bounded(data, name)
    if not isinstance(parsed, dict):
        raise RemoteDataError(f"{name} is JSON but not an object")
    return parsed


def _format_of(tokenizer_json: dict[str, Any]) -> TokenFormat:
    text = json.dumps([tokenizer_json.get("pre_tokenizer"), tokenizer_json.get("decoder")])
    if '"ByteLevel"' in text:
        return "byte_level"
    model = tokenizer_json.get("model") or {}
    if model.get("byte_fallback") or '"Metaspace"' in text or "▁" in text:
        return "spm"
    return "plain"


@paused_gc()
def parse_tokenizer_json(data: bytes, name: str = "tokenizer.json") -> LoadedTokenizer:
    """Parse an HF ``tokenizer.json``.

    Raises:
        RemoteDataError: not JSON, or no usable ``model.vocab``.
    """
    doc = _json_object(data, name)
    model = doc.get("model")
    if not isinstance(model, dict) or "vocab" not in model:
        raise RemoteDataError(f"{name} has no model.vocab: not a tokenizers file")
    vocab = model["vocab"]
    if isinstance(vocab, dict):  # BPE, WordPiece, WordLevel: token -> id
        regular: list[Any] = [None] * (max(vocab.values(), default=-1) + 1)
        for token, token_id in vocab.items():
            if not isinstance(token_id, int) or token_id < 0:
                raise RemoteDataError(f"{name}: token {token!r} has invalid id {token_id!r}")
            regular[token_id] = token
        scores = None
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...], id = position
        regular = [entry[0] for entry in vocab]
        scores = [float(entry[1]) for entry in vocab]
    else:
        raise RemoteDataError(f"{name}: model.vocab is neither a map nor a list")
    added = {}
    for entry in doc.get("added_tokens") or []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), int) and isinstance(entry.get("content"), str):
            added[entry["id"]] = entry["content"]
    return LoadedTokenizer(
        kind="tokenizer.json", token_format=_format_of(doc), regular=regular, added=added,
        merges=model.get("merges"), scores=scores, normalizer=_canonical(doc.get("normalizer")) or "null",
        pre_tokenizer=_canonical(doc.get("pre_tokenizer")) or "null", files=[name],
    )


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise RemoteDataError("truncated SentencePiece model (bad varint)")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """Decode one protobuf message level: [(field number, wire type, value)]."""
    out, pos = [], 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise RemoteDataError(f"not a SentencePiece model (protobuf wire type {wire})")
        if pos > len(buf):
            raise RemoteDataError("truncated SentencePiece model")
        out.append((number, wire, value))
    return out


def _int32(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@paused_gc()
def parse_sentencepiece(data: bytes, name: str = "tokenizer.model") -> LoadedTokenizer:
    """Parse a SentencePiece ``ModelProto``: pieces, types, scores, special ids, normalizer spec."""
    regular: list[Any] = []
    added: dict[int, str] = {}
    scores: list[float] = []
    trainer: dict[int, int] = {}
    normalizer: dict[str, Any] = {"name": "nmt_nfkc", "add_dummy_prefix": True,
                                  "remove_extra_whitespaces": True, "escape_whitespaces": True}
    for number, _, value in _fields(data):
        if number == 1:  # repeated SentencePiece {1: piece, 2: score, 3: type}
            piece, score, piece_type = "", 0.0, 1
            for sub, _, sub_value in _fields(value):
                if sub == 1:
                    piece = sub_value.decode("utf-8", errors="replace")
                elif sub == 2:
                    score = struct.unpack("<f", sub_value)[0]
                elif sub == 3:
                    piece_type = sub_value
            if piece_type in _SPM_SPECIAL_TYPES:
                added[len(regular)] = piece
            regular.append(piece)
            scores.append(score)
        elif number == 2:  # TrainerSpec: 3 model_type, 40-43 unk/bos/eos/pad ids
            trainer = {sub: _int32(v) for sub, wire, v in _fields(value) if wire == 0}
        elif number == 3:  # NormalizerSpec: 1 name, 2 charsmap, 3-5 flags
            for sub, _, sub_value in _fields(value):
                if sub == 1:
                    normalizer["name"] = sub_value.decode("utf-8", errors="replace")
                elif sub == 2:
                    normalizer["charsmap_sha1"] = hashlib.sha1(sub_value).hexdigest()
                elif sub in (3, 4, 5):
                    key = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}[sub]
                    normalizer[key] = bool(sub_value)
    if not regular:
        raise RemoteDataError(f"{name} holds no SentencePiece pieces: not a SentencePiece model")
    normalizer["model_type"] = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}.get(trainer.get(3, 1), "unknown")
    specials: dict[str, str | None] = {}
    for role, number, default in (("unk", 40, 0), ("bos", 41, 1), ("eos", 42, 2), ("pad", 43, -1)):
        token_id = trainer.get(number, default)
        specials[role] = regular[token_id] if 0 <= token_id < len(regular) else None
    return LoadedTokenizer(kind="sentencepiece", token_format="spm", regular=regular, added=added, scores=scores,
                           specials=specials, normalizer=_canonical(normalizer), files=[name])


def is_tiktoken(data: bytes) -> bool:
    """True for tiktoken rank files (``<base64> <rank>`` per line), e.g. Llama-3's tokenizer.model."""
    first = data[:512].split(b"\n", 1)[0].strip()
    return bool(_TIKTOKEN_LINE.match(first))


@paused_gc()
def parse_tiktoken(data: bytes, name: str = "tokenizer.model") -> LoadedTokenizer:
    """Parse tiktoken BPE ranks: the rank is the token id; the merges are implied by the ranks."""
    ranks: dict[int, bytes] = {}
    try:
        for line in data.splitlines():
            if line.strip():
                token_b64, rank = line.split()
                ranks[int(rank)] = base64.b64decode(token_b64, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise RemoteDataError(f"{name} is not a valid tiktoken rank file ({exc})") from exc
    regular: list[Any] = [None] * (max(ranks, default=-1) + 1)
    for rank, token in ranks.items():
        regular[rank] = token
    return LoadedTokenizer(kind="tiktoken", token_format="bytes", regular=regular, files=[name])


@paused_gc()
def parse_vocab_merges(vocab_data: bytes, merges_data: bytes) -> LoadedTokenizer:
    """Parse GPT-2-style ``vocab.json`` + ``merges.txt`` (byte-level BPE)."""
    vocab = _json_object(vocab_data, "vocab.json")
    regular: list[Any] = [None] * (max((v for v in vocab.values() if isinstance(v, int)), default=-1) + 1)
    for token, token_id in vocab.items():
        if not isinstance(token_id, int) or token_id < 0:
            raise RemoteDataError(f"vocab.json: token {token!r} has invalid id {token_id!r}")
        regular[token_id] = token
    try:
        lines = merges_data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise RemoteDataError(f"merges.txt is not UTF-8 ({exc})") from exc
    merges = [line for line in lines if line and not line.startswith("#version")]
    return LoadedTokenizer(kind="vocab.json+merges.txt", token_format="byte_level", regular=regular, merges=merges,
                           files=["vocab.json", "merges.txt"])


def parse_tokenizer_model(data: bytes, name: str = "tokenizer.model") -> LoadedTokenizer:
    """``tokenizer.model`` is either tiktoken ranks (Llama-3) or a SentencePiece protobuf."""
    return parse_tiktoken(data, name) if is_tiktoken(data) else parse_sentencepiece(data, name)


def apply_configs(tok: LoadedTokenizer, tokenizer_config: dict[str, Any] | None,
                  special_tokens_map: dict[str, Any] | None) -> LoadedTokenizer:
    """Fold ``tokenizer_config.json`` / ``special_tokens_map.json`` into ``tok`` (in place)."""
    configs = [c for c in (tokenizer_config, special_tokens_map) if c]
    if tokenizer_config:
        tok.files.append("tokenizer_config.json")
        decoder = tokenizer_config.get("added_tokens_decoder") or {}
        if isinstance(decoder, dict):
            for key, entry in decoder.items():
                content = _token_content(entry)
                if content is not None and str(key).isdigit():
                    tok.added.setdefault(int(key), content)
    if special_tokens_map:
        tok.files.append("special_tokens_map.json")
    if configs:
        specials = dict(tok.specials or {})
        for role in SPECIAL_ROLES:
            for config in configs:  # tokenizer_config.json first, as transformers reads it
                if f"{role}_token" in config:
                    specials[role] = _token_content(config[f"{role}_token"])
                    break
            specials.setdefault(role, None)
        tok.specials = specials
    return tok

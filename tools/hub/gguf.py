"""A small pure reader of a GGUF file's header and metadata (key/value) section, and llama.cpp's file-type names.

Enough to say which model a ``.gguf`` file was converted from and how it is quantized, without the ``gguf``
package (kept out of the core install) and without reading the tensors: a local file is read from its start; any
byte source works (``read_metadata`` takes a ``read(offset, size)`` function, so an HTTP Range reader plugs in).

Layout (ggml-org/llama.cpp ``ggml/include/gguf.h``, docs ``gguf.md``): the magic ``GGUF``, a u32 version (2 or 3),
u64 tensor count, u64 key/value count, then each pair as a string key (u64 length + UTF-8 bytes), a u32 value type
and the value. Little-endian. Reading stops at the first ``tokenizer.*`` key by default: the vocabulary arrays that
follow run to megabytes and say nothing about the base model or the quantization.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError, RemoteDataError

MAGIC = b"GGUF"
# Bounds: a header past these is not one we should be reading (a real file's general.* section is a few KB).
MAX_KEY_BYTES = 1 << 16
MAX_STRING_BYTES = 1 << 20
MAX_ARRAY_ITEMS = 1 << 22
MAX_KV_COUNT = 1 << 16
DEFAULT_MAX_BYTES = 64 << 20
CHUNK_BYTES = 1 << 16

# GGUF value types (gguf.h ``enum gguf_type``) -> struct format; 8 = string, 9 = array.
_SCALARS: dict[int, str] = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
                            11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# llama.cpp ``enum llama_ftype`` (include/llama.h) -> tools/vocab.Quantization names. 1 and 32 are the 16-bit files;
# 38 (MXFP4_MOE: MXFP4 experts, the rest at 8/16 bits) is the format gpt-oss ships in.
FILE_TYPES: dict[int, str] = {
    1: "fp16", 2: "q4_0", 3: "q4_1", 7: "q8_0", 8: "q5_0", 9: "q5_1", 10: "q2_k", 11: "q3_k_s", 12: "q3_k_m",
    13: "q3_k_l", 14: "q4_k_s", 15: "q4_k_m", 16: "q5_k_s", 17: "q5_k_m", 18: "q6_k", 19: "iq2_xxs", 20: "iq2_xs",
    21: "q2_k_s", 22: "iq3_xs", 23: "iq3_xxs", 24: "iq1_s", 25: "iq4_nl", 26: "iq3_s", 27: "iq3_m", 28: "iq2_s",
    29: "iq2_m", 30: "iq4_xs", 31: "iq1_m", 32: "bf16", 38: "mxfp4",
}


class GgufMetadata(BaseModel):
    """The header counts and the key/value pairs read (arrays of more than a few items are summarised by length)."""

    version: int
    tensor_count: int
    kv_count: int
    values: dict[str, object] = Field(default_factory=dict)
    complete: bool = Field(description="every pair was read (False: stopped at the first tokenizer.* key)")

    def get(self, key: str) -> object:
        return self.values.get(key)

    @property
    def quantization(self) -> str | None:
        """The file type as a tools/vocab.Quantization name, or None when absent or not one we model."""
        ftype = self.values.get("general.file_type")
        return FILE_TYPES.get(ftype) if isinstance(ftype, int) else None


class _Cursor:
    """Sequential reads over ``read(offset, size)``, buffered in chunks, never past ``max_bytes``."""

    def __init__(self, read: Callable[[int, int], bytes], max_bytes: int, what: str) -> None:
        self._read, self._max, self._what = read, max_bytes, what
        self._buf, self._start, self.pos = b"", 0, 0

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > self._max:
            raise RemoteDataError(f"{self._what}: GGUF metadata runs past {self._max:,} bytes; not a GGUF header "
                                  "we can read")
        if end > self._start + len(self._buf):
            want = max(CHUNK_BYTES, end - self.pos)
            chunk = self._read(self.pos, want)
            self._buf, self._start = chunk, self.pos
            if len(chunk) < size:
                raise RemoteDataError(f"{self._what}: the file ends inside its GGUF header (truncated download?)")
        lo = self.pos - self._start
        self.pos = end
        return self._buf[lo:lo + size]

    def unpack(self, fmt: str) -> object:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, limit: int) -> str:
        size = int(self.unpack("<Q"))  # type: ignore[arg-type]
        if size > limit:
            raise RemoteDataError(f"{self._what}: a GGUF string of {size:,} bytes is past the {limit:,}-byte bound")
        return self.take(size).decode("utf-8", errors="replace")


def _value(cur: _Cursor, vtype: int) -> object:
    if vtype in _SCALARS:
        return cur.unpack(_SCALARS[vtype])
    if vtype == _STRING:
        return cur.string(MAX_STRING_BYTES)
    if vtype == _ARRAY:
        item_type, count = int(cur.unpack("<I")), int(cur.unpack("<Q"))  # type: ignore[arg-type]
        if count > MAX_ARRAY_ITEMS:
            raise RemoteDataError(f"a GGUF array of {count:,} items is past the {MAX_ARRAY_ITEMS:,}-item bound")
        items = [_value(cur, item_type) for _ in range(count)]
        return items if count <= 16 else f"<array of {count} items>"
    raise RemoteDataError(f"unknown GGUF value type {vtype}")


def read_metadata(read: Callable[[int, int], bytes], *, what: str = "GGUF file", max_bytes: int = DEFAULT_MAX_BYTES,
                  stop_prefixes: tuple[str, ...] = ("tokenizer.",)) -> GgufMetadata:
    """Parse the header and key/value section from ``read(offset, size)``.

    Raises:
        RemoteDataError: not a GGUF file, an unsupported version, or a header past the bounds.
    """
    cur = _Cursor(read, max_bytes, what)
    if cur.take(4) != MAGIC:
        raise RemoteDataError(f"{what} is not a GGUF file (no 'GGUF' magic at its start)")
    version = int(cur.unpack("<I"))  # type: ignore[arg-type]
    if version not in (2, 3):
        raise RemoteDataError(f"{what}: GGUF version {version} (this reader knows 2 and 3)")
    tensors, kv_count = int(cur.unpack("<Q")), int(cur.unpack("<Q"))  # type: ignore[arg-type]
    if kv_count > MAX_KV_COUNT:
        raise RemoteDataError(f"{what}: {kv_count:,} metadata keys is past the {MAX_KV_COUNT:,}-key bound")
    values: dict[str, object] = {}
    for _ in range(kv_count):
        key = cur.string(MAX_KEY_BYTES)
        if key.startswith(stop_prefixes):
            return GgufMetadata(version=version, tensor_count=tensors, kv_count=kv_count, values=values,
                                complete=False)
        values[key] = _value(cur, int(cur.unpack("<I")))  # type: ignore[arg-type]
    return GgufMetadata(version=version, tensor_count=tensors, kv_count=kv_count, values=values, complete=True)


def read_local_metadata(path: str | Path, **kwargs: object) -> GgufMetadata:
    """``read_metadata`` over a local file.

    Raises:
        InputError: the path is not a readable file.
        RemoteDataError: as ``read_metadata``.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise InputError(f"GGUF file '{path}' does not exist or is not a file: give the path of a downloaded .gguf "
                         "or its Hub repo id (owner/name-GGUF)")
    with file.open("rb") as handle:
        def read(offset: int, size: int) -> bytes:
            handle.seek(offset)
            return handle.read(size)

        return read_metadata(read, what=file.name, **kwargs)  # type: ignore[arg-type]

"""Bounds on everything read from the Hub: JSON nesting, architecture integers, safetensors headers.

Files on the Hub are written by anyone. Without bounds a ``config.json`` nested 100,000 deep ends in a
``RecursionError``, ``num_hidden_layers: 1000000000000`` becomes a 3e27-parameter model with a recommendation, and a
safetensors header with a negative shape or an invented dtype is reported as an "exact" count. Each check here
fails with a ``RemoteDataError`` (exit 6) that names the file and the field.

The ranges are far outside every published model (largest today: hidden 18,432 and 126 layers in Llama-3.1-405B,
256 routed experts in DeepSeek-V3, a 262,144-token vocabulary in Gemma-3, 10 M positions in Llama-4-Scout) and
tight enough that no combination reaches an absurd parameter count.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from specpick.tools.errors import RemoteDataError
from specpick.tools.errors import InputError
from specpick.tools.hub.repo_ids import validate_repo_id

MAX_JSON_DEPTH = 64  # config.json nests 3-4 levels, tokenizer.json 5-6; Python's parser recurses per level
_NOT_MARK = bytes(b for b in range(256) if b not in b'[]{}"')
_QUOTED = re.compile(rb'"[^"]*"')
_STEP = [0] * 256  # byte -> change of depth
for _byte, _delta in zip(b"[{]}", (1, 1, -1, -1)):
    _STEP[_byte] = _delta

# field -> (lowest, highest) allowed when the field is present. Aliases share the bounds of the field they stand for.
_HIDDEN, _LAYERS, _HEADS, _WIDTH = (1, 131_072), (1, 2_048), (1, 4_096), (0, 1_048_576)
ARCH_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "hidden_size": _HIDDEN, "n_embd": _HIDDEN, "d_model": _HIDDEN,
    "num_hidden_layers": _LAYERS, "n_layer": _LAYERS,
    "num_attention_heads": _HEADS, "n_head": _HEADS, "num_key_value_heads": _HEADS,
    "head_dim": (1, 16_384),
    "vocab_size": (1, 16_777_216),
    "intermediate_size": _WIDTH, "ffn_dim": _WIDTH, "moe_intermediate_size": _WIDTH,
    "num_local_experts": (0, 16_384), "n_routed_experts": (0, 16_384), "num_experts": (0, 16_384),
    "num_experts_per_tok": (0, 16_384), "experts_per_token": (0, 16_384), "n_shared_experts": (0, 1_024),
    "first_k_dense_replace": (0, 2_048),
    "sliding_window": (0, 2**31), "sliding_window_pattern": (1, 2_048),
    "kv_lora_rank": (0, 131_072), "q_lora_rank": (0, 131_072),
    "qk_rope_head_dim": (0, 16_384), "qk_nope_head_dim": (0, 16_384), "v_head_dim": (0, 16_384),
    "max_position_embeddings": (0, 2**31), "n_positions": (0, 2**31),
    "num_nextn_predict_layers": (0, 64), "mtp_num_hidden_layers": (0, 64),
}
VISION_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "hidden_size": _HIDDEN, "intermediate_size": _WIDTH, "num_hidden_layers": _LAYERS,
    "patch_size": (1, 4_096), "image_size": (1, 65_536),
}
_DTYPE_NAME = re.compile(r"[A-Za-z0-9_]{1,32}")

# Bits per element of every safetensors dtype (huggingface/safetensors safetensors/src/tensor.rs, enum Dtype).
SAFETENSORS_DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16,
    "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64, "C64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}
MAX_TENSOR_RANK = 8
MAX_TENSOR_DIM = 2**40
MAX_TOTAL_PARAMS = 10**14  # 100 T parameters: 50x the largest published checkpoint


def _drop_escapes(raw: bytes) -> bytes:
    """Remove every backslash escape (``\\"``, ``\\\\``, ``\\uXXXX``'s ``u``) so the quotes left are real quotes.

    Splitting at backslashes costs one piece per escape (a few thousand in a tokenizer.json), far less than a regex
    scan of the whole text.
    """
    parts = raw.split(b"\\")
    out = [parts[0]]
    i = 1
    while i < len(parts):
        if parts[i] == b"":  # an escaped backslash: the piece after it is plain text
            i += 1
            out.append(parts[i] if i < len(parts) else b"")
        else:
            out.append(parts[i][1:])  # drop the escaped character
        i += 1
    return b"".join(out)


def check_json_depth(data: bytes | str, what: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` before a recursive parser (or walker) sees it.

    Works on the UTF-8 bytes (no byte of a multi-byte character is a quote, bracket or backslash), linear and with
    the per-byte work in C: escapes are dropped, everything but quotes and brackets is deleted, quoted regions are
    removed (``""`` first: most strings hold no bracket; removing a close-open pair merges two regions, whose
    brackets stay quoted), then the brackets left are summed. About a tenth of ``json.loads`` on a tokenizer.json.

    Raises:
        RemoteDataError: nested too deep.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return
    if b"\\" in raw:
        raw = _drop_escapes(raw)
    marks = raw.translate(None, _NOT_MARK).replace(b'""', b"")
    if b'"' in marks:
        marks = _QUOTED.sub(b"", marks)
    if max(accumulate(map(_STEP.__getitem__, marks)), default=0) > limit:
        raise RemoteDataError(f"{what} is nested more than {limit} levels deep: not a real config or "
                              "tokenizer file; pin another --revision")


def loads_bounded(data: bytes | str, what: str) -> Any:
    """``json.loads`` after the depth check; malformed text is a RemoteDataError naming ``what``."""
    check_json_depth(data, what)
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise RemoteDataError(f"{what} is not UTF-8 text ({exc.reason}): the repo's file is broken") from exc
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RemoteDataError(f"{what} is not valid JSON ({exc}): the repo's file is broken; "
                              "pin another --revision") from exc


def _bad(what: str, name: str, value: Any, rule: str) -> RemoteDataError:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
    return RemoteDataError(f"{what}: {name} = {shown} is {rule}: not a real model config; pin another --revision")


def check_int_fields(cfg: dict[str, Any], bounds: dict[str, tuple[int, int]], what: str, prefix: str = "") -> None:
    """Every bounded field present (not null) must be an integer in its range.

    Raises:
        RemoteDataError: naming the first field that is not.
    """
    for name, (low, high) in bounds.items():
        value = cfg.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(what, prefix + name, value, "not an integer")
        if not low <= value <= high:
            raise _bad(what, prefix + name, value, f"outside {low}..{high:,}")


def check_config(cfg: dict[str, Any], outer: dict[str, Any], what: str) -> None:
    """Bounds and cross-checks for a ``config.json`` (``cfg`` is ``text_config`` when there is one).

    Raises:
        RemoteDataError: a field of the wrong type, out of range, or inconsistent with another.
    """
    check_int_fields(cfg, ARCH_INT_BOUNDS, what)
    if outer is not cfg:
        check_int_fields(outer, {"vocab_size": ARCH_INT_BOUNDS["vocab_size"]}, what)
    vision = outer.get("vision_config")
    if isinstance(vision, dict):
        check_int_fields(vision, VISION_INT_BOUNDS, what, "vision_config.")
    heads, kv_heads = cfg.get("num_attention_heads"), cfg.get("num_key_value_heads")
    if isinstance(heads, int) and isinstance(kv_heads, int) and kv_heads > heads:
        raise _bad(what, "num_key_value_heads", kv_heads, f"more than num_attention_heads ({heads})")
    experts = next((cfg[n] for n in ("num_local_experts", "n_routed_experts", "num_experts") if cfg.get(n)), 0)
    per_token = cfg.get("num_experts_per_tok") or cfg.get("experts_per_token") or 0
    if experts and per_token > experts:
        raise _bad(what, "num_experts_per_tok", per_token, f"more than the {experts} experts")
    layer_types = cfg.get("layer_types")
    if layer_types is not None and (not isinstance(layer_types, list) or len(layer_types) > _LAYERS[1]):
        raise _bad(what, "layer_types", layer_types, f"not a list of at most {_LAYERS[1]} layer names")
    for holder in (outer, cfg):
        for name in ("torch_dtype", "dtype"):
            value = holder.get(name)
            if value is not None and not (isinstance(value, str) and _DTYPE_NAME.fullmatch(value)):
                raise _bad(what, name, value, "not a dtype name")


def check_safetensors(files: dict[str, Any], repo_id: str) -> dict[str, int]:
    """Validate parsed safetensors headers and count parameters per dtype from them.

    Args:
        files: filename -> ``SafetensorsFileMetadata`` (huggingface_hub), whose tensors carry dtype, shape and
            data offsets exactly as the header states them.

    Returns:
        ``{"BF16": n, ...}`` summed over every file.

    Raises:
        RemoteDataError: an unknown dtype, a shape that is not non-negative integers within bounds, data offsets
            that do not hold exactly the tensor's bytes (the format's own rule), or an absurd total.
    """
    counts: dict[str, int] = {}
    for filename, meta in files.items():
        for name, tensor in meta.tensors.items():
            where = f"safetensors header of {filename} in {repo_id}, tensor {name[:80]!r}"
            bits = SAFETENSORS_DTYPE_BITS.get(tensor.dtype) if isinstance(tensor.dtype, str) else None
            if bits is None:
                raise _bad(where, "dtype", tensor.dtype, "not a safetensors dtype")
            shape = tensor.shape
            if not isinstance(shape, list) or len(shape) > MAX_TENSOR_RANK or not all(
                    isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= MAX_TENSOR_DIM for d in shape):
                raise _bad(where, "shape", shape, f"not a list of at most {MAX_TENSOR_RANK} sizes in 0..2^40")
            count = 1
            for dim in shape:
                count *= dim
            offsets = tensor.data_offsets
            if not (isinstance(offsets, tuple) and len(offsets) == 2 and all(
                    isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)):
                raise _bad(where, "data_offsets", offsets, "not two non-negative byte offsets")
            if (offsets[1] - offsets[0]) * 8 != count * bits:
                raise _bad(where, "data_offsets", list(offsets),
                           f"not the {count * bits / 8:g} bytes a {tensor.dtype} tensor of shape {shape} holds")
            counts[tensor.dtype] = counts.get(tensor.dtype, 0) + count
    total = sum(counts.values())
    if total > MAX_TOTAL_PARAMS:
        raise RemoteDataError(f"safetensors headers of {repo_id} add up to {total:.3g} parameters, above the "
                              f"{MAX_TOTAL_PARAMS:.0e} bound: not a real checkpoint")
    return counts


# Fields only heads have (speculators, Medusa, MLPSpeculator, EAGLE): the same integer rule as a model's fields.
HEAD_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "target_hidden_size": _HIDDEN, "emb_dim": _HIDDEN, "inner_dim": _WIDTH,
    "draft_vocab_size": ARCH_INT_BOUNDS["vocab_size"], "target_vocab_size": ARCH_INT_BOUNDS["vocab_size"],
    "medusa_num_heads": (1, 64), "medusa_num_layers": (1, 64), "n_predict": (1, 64),
}
_NESTED_CONFIGS = ("text_config", "transformer_layer_config", "eagle_config")


def _verifier_names(cfg: dict[str, Any]) -> list[tuple[str, Any]]:
    spec_cfg = cfg.get("speculators_config")
    verifier = spec_cfg.get("verifier") if isinstance(spec_cfg, dict) else None
    out = [("base_model_name_or_path", cfg.get("base_model_name_or_path"))]
    if isinstance(verifier, dict):
        out.append(("speculators_config.verifier.name_or_path", verifier.get("name_or_path")))
    return [(name, value) for name, value in out if value not in (None, "")]


def check_hub_config(cfg: dict[str, Any], what: str) -> None:
    """The one validator every ``config.json`` read from the Hub passes, a model's or a head's, before any use.

    Integers in range wherever a model or head keeps them (top level and the nested text, layer and EAGLE configs),
    and a verifier a head names must be a Hub repo id: ``../../etc/passwd`` or a local path is never looked up,
    compared or printed as a model.

    Raises:
        RemoteDataError: naming the first field that fails.
    """

    check_int_fields(cfg, {**ARCH_INT_BOUNDS, **HEAD_INT_BOUNDS}, what)
    for key in _NESTED_CONFIGS:
        nested = cfg.get(key)
        if isinstance(nested, dict):
            check_int_fields(nested, {**ARCH_INT_BOUNDS, **HEAD_INT_BOUNDS}, what, f"{key}.")
    for name, value in _verifier_names(cfg):
        try:
            validate_repo_id(value)  # the same rule as a repo id a user types
        except InputError:
            raise _bad(what, name, value, "not a Hub repo id (a head must name its verifier as org/name)") from None

"""A safetensors quantized build named as a verifier (``zai-org/GLM-5.2-FP8``, ``RedHatAI/...-quantized.w4a16``)
-> the model part of its name and the weight format its suffix says.

Publishers name quantized builds ``<base>-<FORMAT>``: zai-org and Qwen ``-FP8``, meta-llama ``-Instruct-FP8``,
RedHatAI ``-FP8-dynamic`` / ``-quantized.w4a16`` / ``-W8A8``, nvidia ``-FP8`` / ``-FP4`` / ``-NVFP4`` (NVIDIA's
``-FP4`` checkpoints are NVFP4), Qwen ``-AWQ`` / ``-GPTQ-Int4`` (tools/data/models.csv, heads.csv). The weights,
architecture, tokenizer and heads are the base model's. This module is the pure name rule (no catalog, no Hub): the
catalog look-up and the Hub's ``quantization_config`` are ``tools/hub/quant_ref.py``'s.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

# (suffix pattern, our weight format), most specific first. W4A8/W4A16: 4-bit weights (activations do not change
# the weight bytes); AWQ and GPTQ without a width are 4-bit (their common default).
_FORMATS: tuple[tuple[str, str], ...] = (
    (r"w8a8[-_.]fp8|fp8(?:[-_.](?:dynamic|static|block|kv))*", "fp8"),
    (r"nvfp4(?:a16)?|fp4", "nvfp4"),
    (r"mxfp4", "mxfp4"),
    (r"(?:awq|gptq)[-_.]int4|(?:awq|gptq)|int4|w4a16|w4a8", "int4"),
    (r"(?:awq|gptq)[-_.]int8|int8|w8a8|w8a16", "int8"),
)
_SUFFIX = re.compile(r"(?i)^(?P<model>.+?)[-_.](?P<token>(?:quantized[-_.])?(?:"
                     + "|".join(f"(?:{p})" for p, _ in _FORMATS) + r"))$")


class QuantName(NamedTuple):
    """What a quantized build's name says: the model part (with the org when one was given) and the format."""

    org: str  # '' when the name has no owner
    model: str  # the name without its format suffix
    quantization: str  # tools/vocab.Quantization name
    token: str  # the suffix as written (FP8-Dynamic, quantized.w4a16)


@lru_cache(maxsize=4096)  # heads_for asks about every head row's verifier on each look-up
def split_quant_name(name: str) -> QuantName | None:
    """``RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic`` -> (RedHatAI, Llama-3.1-8B-Instruct, fp8, FP8-dynamic); None
    when the name carries no quantized-build suffix."""
    text = name.strip()
    org, _, repo = text.rpartition("/")
    m = _SUFFIX.match(repo)
    if m is None or "/" in org:
        return None
    token = m.group("token")
    bare = re.sub(r"(?i)^quantized[-_.]", "", token)
    fmt = next(f for p, f in _FORMATS if re.fullmatch(f"(?i){p}", bare))
    return QuantName(org, m.group("model"), fmt, token)


def base_repo_name(name: str) -> str | None:
    """``zai-org/GLM-5.2-FP8`` -> ``zai-org/GLM-5.2`` (same owner, suffix dropped); None when no suffix."""
    q = split_quant_name(name)
    if q is None:
        return None
    return f"{q.org}/{q.model}" if q.org else q.model


def same_weights(a: str, b: str) -> bool:
    """Two repo ids name the same weights up to a quantized build (``zai-org/GLM-5.2`` and ``zai-org/GLM-5.2-FP8``):
    a head trained on one reads the same model's hidden states on the other."""
    def family(name: str) -> str:
        return (base_repo_name(name) or name).strip().lower()
    return family(a) == family(b)

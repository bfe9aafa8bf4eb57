"""Shared input validators: one set of annotated types and checks for the CLI, the Claude tools and MCP.

Every surface builds the same pydantic input model, so a constraint written
here once rejects ``nan``, ``inf``, negative sizes and out-of-range fractions
everywhere, with the same one-line message (``format_validation_error``). The
functions below check what a field alone cannot: tensor-parallel sizes against
a model's heads, a context against its position limit, a tree against its
verify budget. They take plain numbers so this module sits at the bottom layer.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from specpick.tools.errors import InputError

# --- ranges -------------------------------------------------------------------------------------------------------
# The largest open-weight checkpoints are ~1T parameters (Kimi K2: 1.04T; DeepSeek-V3: 671B); 2000B leaves room
# and still rejects a typo of a few orders of magnitude.
MAX_PARAMS_B = 2000.0
MAX_GPUS = 1024
MAX_CONCURRENCY = 100_000
MAX_CONTEXT_TOKENS = 10_000_000
MAX_DRAFT_TOKENS = 64
# Mean accepted tokens per cycle incl. the bonus token: at most MAX_DRAFT_TOKENS + 1.
MAX_TAU = MAX_DRAFT_TOKENS + 1.0
MAX_NAME_CHARS = 200  # Hub repo ids are at most 96 chars per part (huggingface_hub validate_repo_id)

# ASCII only: Hub repo ids and catalog names are (a non-ASCII owner passed here and failed deep in a verb).
_NAME_OK = re.compile(r"^[A-Za-z0-9_.\-/ ]+$")
# A GGUF build (tools/hub/gguf_ref.py): a local .gguf path (its header alone is read) or `owner/name-GGUF:QUANT`, the
# spelling `llama-server -hf` takes.
MAX_PATH_CHARS = 4096
_GGUF_REPO_TAG = re.compile(r"^[A-Za-z0-9_.\-]{1,96}/[A-Za-z0-9_.\-]{1,96}[-_.]gguf:[A-Za-z0-9_\-]{1,40}$",
                            re.IGNORECASE)  # ASCII, bounded: a 5,000-character tag was an internal error


def _model_name(v: str) -> str:
    text = v.strip()
    if not text:
        raise ValueError("is empty; give a catalog name (llama-3.1-8b) or a Hub repo id (org/name)")
    if text.lower().endswith(".gguf"):
        if len(text) > MAX_PATH_CHARS or any(ord(c) < 32 for c in text):
            raise ValueError("is not a usable .gguf path (one line, at most 4096 characters)")
        return text
    if _GGUF_REPO_TAG.match(text):
        return text
    if len(text) > MAX_NAME_CHARS:
        raise ValueError(f"is {len(text)} characters long; a Hub repo id (org/name) has at most {MAX_NAME_CHARS}")
    if not _NAME_OK.match(text) or text.count("/") > 1 or ".." in text:
        raise ValueError("is not a model name or Hub repo id (ASCII letters, digits, '-', '_', '.', one '/'; a GGUF "
                         "build as owner/name-GGUF:QUANT)")
    return text


def _one_line(v: str) -> str:
    # Text that ends up inside emitted configs (YAML, flags): empty or multi-line would corrupt them.
    if not v.strip():
        raise ValueError("is empty")
    if any(ord(c) < 32 for c in v):
        raise ValueError("must be one line of text (no newlines or control characters)")
    return v.strip()


# llama.cpp releases are build tags (b6000, github.com/ggml-org/llama.cpp/releases).
# Each number bounded: a 5,000-digit release matched and was a traceback where it became an int (issue 39, cause 8).
_ENGINE_VERSION = re.compile(r"v?\d{1,6}(\.\d{1,6}){0,3}((rc|dev|a|b)\d{0,6})?|b\d{3,6}")


def _engine_version(v: str) -> str:
    if not _ENGINE_VERSION.fullmatch(v):
        raise ValueError(f"{v[:40]!r} is not a release number such as 0.16.0, 1.4.0rc1 or a llama.cpp build b6000")
    return v


# A per-token acceptance probability: 0 and 1 are degenerate (no speculation / infinite speedup).
Probability = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
# Mean accepted tokens per verify cycle, bonus token included.
Tau = Annotated[float, Field(ge=1, le=MAX_TAU, allow_inf_nan=False)]
# Sampling temperature: engines accept any T >= 0; past 2 the distribution is close to uniform and no
# acceptance prior we carry covers it (OpenAI-compatible servers cap it at 2).
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
# A parameter count in billions (a draft, a head).
ParamsB = Annotated[float, Field(gt=0, le=MAX_PARAMS_B, allow_inf_nan=False)]
# A share of GPU memory the engine may take (vLLM gpu_memory_utilization is a fraction in (0, 1]).
MemoryFraction = Annotated[float, Field(ge=0.1, le=1.0, allow_inf_nan=False)]

# The machine's system RAM and its bandwidth (llama.cpp partial offload, tools/checks/offload.py).
HostMemoryGib = Annotated[float, Field(ge=1, le=16384, allow_inf_nan=False)]
HostBandwidthGbps = Annotated[float, Field(gt=0, le=20000, allow_inf_nan=False)]
HOST_MEMORY_HELP = ("system RAM in GiB: llama.cpp keeps the layers the GPUs cannot hold there (partial offload); "
                    "default 32")
HOST_BANDWIDTH_HELP = ("system RAM bandwidth in GB/s: offloaded layers are read at it every token; default 89.6 "
                       "(dual-channel DDR5-5600 peak)")

GpuCount = Annotated[int, Field(ge=1, le=MAX_GPUS)]
Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
ContextTokens = Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS)]
DraftTokens = Annotated[int, Field(ge=1, le=MAX_DRAFT_TOKENS)]
ModelName = Annotated[str, AfterValidator(_model_name)]
# An engine's KV-cache dtype name (auto, fp8, fp8_e4m3, or an exotic quantization's name): a word of a family some
# engine serves, never free text reasoned about as a dtype. Families: vLLM --kv-cache-dtype (auto, bfloat16, fp8,
# fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, turboquant_* presets: vllm#40094), SGLang (fp8_e4m3, fp8_e5m2,
# fp4_e2m1, bf16), TensorRT-LLM (fp8, nvfp4, int8), llama.cpp --cache-type-k (f32, f16, bf16, q8_0, q4_0, q4_1,
# iq4_nl, q5_0, q5_1).
KV_DTYPE_FAMILIES = re.compile(
    r"auto|bf16|bfloat16|fp16|float16|half|f16|f32|float32|fp8(?:_[a-z0-9]+)*|fp4(?:_[a-z0-9]+)*|nvfp4|mxfp4"
    r"|int8|int4|turboquant(?:_[a-z0-9]+)*|q[4-8]_[01]|q8_0|iq4_nl", re.IGNORECASE)


def _kv_dtype(v: str) -> str:
    if not KV_DTYPE_FAMILIES.fullmatch(v):
        shown = v[:40].encode("unicode_escape").decode("ascii")
        raise ValueError(f"'{shown}' is not a KV-cache dtype an engine serves (auto, bf16, fp16, fp8, fp8_e4m3, "
                         "fp8_e5m2, fp4_e2m1, nvfp4, int8, turboquant_*, or llama.cpp's q8_0/q4_0/...)")
    return v


KvDtypeName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}$"), AfterValidator(_kv_dtype)]
OneLineText = Annotated[str, AfterValidator(_one_line)]
# An engine release number (0.16.0, v0.5.4, 1.4.0rc1): decides option names, method support and scheduling defaults.
EngineVersion = Annotated[str, AfterValidator(_engine_version)]


# --- checks across fields and model facts ---------------------------------------------------------------------------
def tp_problem(tp: int, num_attention_heads: int, num_kv_heads: int) -> str | None:
    """Why ``tp`` cannot shard a model with these heads, or None when it can.

    vLLM's rule (vllm/config/parallel.py ``verify_with_model_config``; model_executor QKVParallelLinear):
    attention heads must split evenly over the ranks; KV heads either split evenly (kv >= tp) or are
    replicated, which needs tp to be a multiple of the KV heads (kv < tp). SGLang and TensorRT-LLM apply the
    same divisibility.
    """
    if num_attention_heads <= 0:
        return None  # unknown geometry (a Hub config without heads): nothing to check against
    if num_attention_heads % tp:
        return f"{num_attention_heads} attention heads do not split over {tp} GPUs"
    kv = num_kv_heads or num_attention_heads
    if kv >= tp and kv % tp:
        return f"{kv} KV heads do not split over {tp} GPUs"
    if kv < tp and tp % kv:
        return f"{tp} GPUs cannot replicate {kv} KV heads evenly"
    return None


def valid_tp_sizes(num_attention_heads: int, num_kv_heads: int, limit: int = 64) -> list[int]:
    """Tensor-parallel sizes up to ``limit`` that shard these heads (1 always does)."""
    return [tp for tp in range(1, limit + 1) if tp_problem(tp, num_attention_heads, num_kv_heads) is None]


def check_tensor_parallel(tp: int, num_attention_heads: int, num_kv_heads: int, *, model: str,
                          flag: str = "--gpus") -> None:
    """Raise ``InputError`` naming the valid sizes when ``tp`` cannot shard the model's heads."""
    problem = tp_problem(tp, num_attention_heads, num_kv_heads)
    if problem is None:
        return
    sizes = ", ".join(str(s) for s in valid_tp_sizes(num_attention_heads, num_kv_heads))
    raise InputError(f"{flag} {tp}: tensor parallelism cannot shard {model}: {problem} (engines require "
                     f"heads % TP == 0). Valid tensor-parallel sizes: {sizes}.")


def check_context(context_tokens: int, max_position_embeddings: int, *, model: str,
                  flag: str = "--context") -> None:
    """Raise ``InputError`` when the context is past the model's position limit (``max_position_embeddings``)."""
    if max_position_embeddings > 0 and context_tokens > max_position_embeddings:
        raise InputError(f"{flag} {context_tokens} is past {model}'s limit of {max_position_embeddings} tokens "
                         f"(max_position_embeddings); give at most {max_position_embeddings}.")


def tree_budget_range(depth: int, top_k: int) -> tuple[int, int]:
    """(fewest, most) tokens a tree of ``depth`` steps and ``top_k`` branching can verify per cycle.

    The fewest is one path plus the root (depth + 1); the most is the root plus every node of the full
    tree, 1 + sum_{d=1..depth} top_k^d (EAGLE-2 §4: the verify budget is at most the tree's size).
    """
    most = 1 + sum(top_k ** d for d in range(1, depth + 1))
    return depth + 1, most


def check_tree_shape(depth: int, top_k: int, num_verify_tokens: int) -> None:
    """Raise ``InputError`` for a verify budget a tree of this shape cannot have."""
    lo, hi = tree_budget_range(depth, top_k)
    if not lo <= num_verify_tokens <= hi:
        raise InputError(f"--num-verify-tokens {num_verify_tokens} does not fit a tree of depth {depth} and "
                         f"top-{top_k}: it verifies between {lo} (one path + root) and {hi} (the full tree) "
                         "tokens; change --num-verify-tokens, --tree-depth or --tree-top-k.")


def check_draft_smaller(draft_params_b: float, verifier_params_b: float, *, verifier: str,
                        flag: str = "--draft-params-b") -> None:
    """Raise ``InputError`` when a draft is not smaller than its verifier (it cannot pay)."""
    if draft_params_b >= verifier_params_b:
        raise InputError(f"{flag} {draft_params_b:g} is not smaller than the verifier {verifier} "
                         f"({verifier_params_b:.2f}B): a draft must be much smaller to pay; give a smaller size.")


# --- text from a person or a pipe that goes on to an API ----------------------------------------------------------
# A Messages-API model id: Anthropic's (claude-sonnet-5-5, claude-3-5-haiku@20241022) or the name a compatible server
# serves (a Hub repo id such as Qwen/Qwen2.5-0.5B-Instruct). Printable ASCII, no spaces: it goes into a JSON body.
_API_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+\-]{0,199}")


def check_api_model_id(value: str, *, flag: str = "--model") -> str:
    """Raise ``InputError`` for a model id that is empty, too long, or holds control or non-ASCII characters."""
    if not value.strip():
        raise InputError(f"{flag} is empty: give a model id such as claude-sonnet-5-5, or leave {flag} out")
    if not _API_MODEL_ID.fullmatch(value):
        shown = value[:60].encode("unicode_escape").decode("ascii")
        raise InputError(f"{flag} '{shown}' is not a model id (letters, digits and . _ : @ / + -, at most 200 "
                         "characters): check the spelling")
    return value


def check_text(value: str, *, what: str) -> str:
    """Raise ``InputError`` for text that holds bytes that were not UTF-8 (lone surrogates) or NUL characters."""
    if any("\ud800" <= c <= "\udfff" or c == "\0" for c in value):
        raise InputError(f"{what} holds bytes that are not UTF-8 text: give it as text (check the terminal's or "
                         "the file's encoding)")
    return value

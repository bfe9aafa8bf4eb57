"""KV-cache size per sequence: GQA, explicit head_dim, sliding windows, MLA, linear-attention hybrids, compressed
shared-KV attention (DeepSeek-V4).

Shared by the VRAM check (how much memory the cache takes) and the step-time
model (how many bytes a decode step reads).
"""

from __future__ import annotations

from specpick.tools.catalog.specs import ModelSpec

# Bytes per cached element by KV-cache dtype. "auto" follows the weights'
# activation dtype (bf16/fp16) as vLLM and SGLang do by default.
KV_DTYPE_BYTES: dict[str, float] = {"auto": 2.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0}


def kv_bytes_per_token_per_layer(m: ModelSpec, kv_dtype: str = "auto") -> float:
    """Bytes one token adds to one layer's cache.

    MLA (DeepSeek-V3) caches the compressed latent plus the decoupled RoPE key,
    ``kv_lora_rank + qk_rope_head_dim`` values, shared by all heads (DeepSeek-V2
    paper, section 2.1.2). Compressed shared-KV attention (DeepSeek-V4) adds, on
    average over its layers, what ``compressed_kv_bytes_per_token`` says. Other
    models cache K and V for each KV head.
    """
    elem = KV_DTYPE_BYTES.get(kv_dtype, 2.0)
    if m.is_mla:
        return (m.kv_lora_rank + m.qk_rope_head_dim) * elem
    if m.compressed_kv_layers:
        return compressed_kv_bytes_per_token(m, kv_dtype) / m.num_layers
    return 2 * m.num_kv_heads * m.head_dim * elem


def compressed_kv_bytes_per_token(m: ModelSpec, kv_dtype: str = "auto", with_index: bool = True) -> float:
    """Bytes one more token of context adds to a compressed shared-KV cache, all layers (beyond the window).

    DeepSeek-V4 (its config's ``compress_ratios``, ``head_dim``, ``num_key_value_heads`` = 1, ``index_head_dim``):
    a layer of ratio r folds every r tokens into one entry of ``head_dim`` values that serves as both key and value;
    the smallest-ratio layers (CSA, r = 4) also cache a lightning-indexer key of ``index_head_dim`` values per entry,
    the heavily compressed ones (HCA, r = 128) do not. Without the indexer keys this is the per-token cache of
    Raschka's LLM Architecture Gallery (bf16: 5.4 KiB for V4-Flash, 7.7 KiB for V4-Pro), which tests check.
    """
    elem = KV_DTYPE_BYTES.get(kv_dtype, 2.0)
    pairs = m.compressed_kv_layers
    csa_ratio = min(ratio for ratio, _ in pairs)
    total = 0.0
    for ratio, layers in pairs:
        width = m.head_dim + (m.index_head_dim if with_index and ratio == csa_ratio else 0)
        total += layers * width * elem / ratio
    return total


def _compressed_kv_bytes_per_sequence(m: ModelSpec, context_tokens: int, kv_dtype: str) -> float:
    # Every layer also keeps the last ``sliding_window`` tokens uncompressed (one shared K=V entry each): the
    # window-only layers (ratio 0 in compress_ratios) hold nothing else.
    elem = KV_DTYPE_BYTES.get(kv_dtype, 2.0)
    window = min(context_tokens, m.sliding_window or 0) * m.head_dim * elem * m.num_layers
    return window + compressed_kv_bytes_per_token(m, kv_dtype) * context_tokens


def kv_bytes_per_sequence(m: ModelSpec, context_tokens: int, kv_dtype: str = "auto") -> float:
    """Bytes of KV cache one sequence of ``context_tokens`` holds across all layers.

    Layers with a sliding window keep at most ``sliding_window`` tokens (Gemma-2
    alternates local/global layers, Gemma-3 uses 5 local : 1 global, gpt-oss
    alternates 128-token windows). Engines that do not implement the window
    allocate the full context for every layer; the result is then a lower
    bound, which the VRAM check states.
    """
    if m.compressed_kv_layers:
        return _compressed_kv_bytes_per_sequence(m, context_tokens, kv_dtype)
    per_layer = kv_bytes_per_token_per_layer(m, kv_dtype)
    # Linear-attention / Mamba layers (Qwen3-Next, Qwen3.5, Nemotron-H, MiniMax-M1) keep a fixed-size
    # state per sequence, not a cache that grows with context: only the softmax-attention layers count.
    kv_layers = m.num_layers - round(m.num_layers * m.linear_attention_layer_fraction)
    if m.sliding_window and m.sliding_layer_fraction > 0:
        local_layers = round(kv_layers * m.sliding_layer_fraction)
        global_layers = kv_layers - local_layers
        return per_layer * (global_layers * context_tokens + local_layers * min(context_tokens, m.sliding_window))
    return per_layer * kv_layers * context_tokens

"""Parameter counts from architecture: dense, MoE (total vs active), MLA, tied embeddings, Gated DeltaNet.

Counts every weight matrix of a decoder-only transformer from the config
fields in ``ModelSpec``. Norm weights and biases are included (they are tiny
but make the count exact for dense Llama-style models). The catalog's
published totals check the formulas: ``tests/test_params.py`` asserts every
catalog model lands within 2%. Models whose layers the fields cannot describe
(Mamba-2 hybrids, per-layer embeddings, NAS blocks) carry a ``params_note``: for
them the breakdown is scaled to the published totals and says so in ``method``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from specpick.tools.catalog.specs import ModelSpec


class ParamBreakdown(BaseModel):
    """Parameter count of one model, split the way memory and step-time models need it."""

    repo_id: str
    total_b: float = Field(description="all weights, billions (vision tower and MTP layers excluded)")
    active_b: float = Field(description="weights used per token incl. embeddings, billions (= total for dense)")
    decode_read_b: float = Field(
        description="weights read from memory per decode step: active minus the input embedding, which is a "
        "row lookup (tied embeddings are still read in full as the LM head)"
    )
    embedding_b: float = Field(description="input embedding rows")
    lm_head_b: float = Field(description="output projection (0 when tied to the embedding)")
    attention_b: float
    ffn_dense_b: float
    ffn_experts_b: float = Field(description="all routed experts (MoE)")
    per_layer_b: float = Field(description="average weights per decoder layer, billions")
    vision_b: float = 0.0
    mtp_b: float = Field(0.0, description="built-in multi-token-prediction layers (DeepSeek-V3: ~14B incl. shared)")
    published_total_b: float | None = None
    computed_total_b: float = Field(description="the architecture count before any scaling to published totals")
    error_vs_published_pct: float | None = Field(None, description="computed_total_b vs the published total")
    method: str = "computed from architecture (config fields)"


def _attention_params(m: ModelSpec) -> int:
    h = m.hidden_size
    if m.is_mla:
        # DeepSeek-V3 MLA: low-rank Q (q_a, q_b) and joint KV compression (kv_a, kv_b).
        qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = (h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.num_attention_heads * qk_head
             if m.q_lora_rank else h * m.num_attention_heads * qk_head)
        kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
        kv_b = m.kv_lora_rank * m.num_attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
        o = m.num_attention_heads * m.v_head_dim * h
        return q + kv_a + kv_b + o
    q_dim = m.num_attention_heads * m.head_dim
    kv_dim = m.num_kv_heads * m.head_dim
    weights = h * q_dim + 2 * h * kv_dim + q_dim * h
    bias = (q_dim + 2 * kv_dim) if m.attention_bias else 0
    return weights + bias


def _full_attention_params(m: ModelSpec) -> int:
    """A softmax-attention layer; with ``attn_output_gate`` q_proj is twice as wide (query + per-head gate)."""
    params = _attention_params(m)
    if m.attn_output_gate and not m.is_mla:
        params += m.hidden_size * m.num_attention_heads * m.head_dim
    return params


def _gated_deltanet_params(m: ModelSpec) -> int:
    """One Gated DeltaNet layer (Qwen3-Next / Qwen3.5 ``linear_attention``).

    in_proj_qkvz (H -> 2*key_dim + 2*value_dim), in_proj_ba (H -> 2*value heads),
    a depthwise conv over q, k, v (no bias), per-value-head dt_bias and A_log, a gated
    RMSNorm over the value head dim and out_proj (value_dim -> H): the layer as
    transformers' Qwen3NextGatedDeltaNet builds it.
    """
    h = m.hidden_size
    key_dim = m.linear_num_key_heads * m.linear_key_head_dim
    value_dim = m.linear_num_value_heads * m.linear_value_head_dim
    in_proj = h * (2 * key_dim + 2 * value_dim) + h * 2 * m.linear_num_value_heads
    conv = (2 * key_dim + value_dim) * m.linear_conv_kernel
    return in_proj + conv + 2 * m.linear_num_value_heads + m.linear_value_head_dim + value_dim * h


def _gated_mlp(h: int, inter: int) -> int:
    # gate, up and down projections (SwiGLU / GeGLU): every catalog family uses a gated MLP.
    return 3 * h * inter


def count_params(m: ModelSpec) -> ParamBreakdown:
    """Count parameters of ``m`` from its architecture.

    Args:
        m: the model's architecture facts.

    Returns:
        A ``ParamBreakdown`` with totals, the per-layer average, the active
        count for MoE, and the error against the published total if known.

    Example:
        >>> from specpick.tools.catalog.tables import get_catalog
        >>> round(count_params(get_catalog().model("llama-3.1-8b")).total_b, 2)
        8.03
    """
    h, n_layers = m.hidden_size, m.num_layers
    embedding = m.vocab_size * h
    lm_head = 0 if m.tie_word_embeddings else m.vocab_size * h
    attn_per_layer = _full_attention_params(m)
    norms_per_layer = 2 * h
    linear_layers = round(n_layers * m.linear_attention_layer_fraction) if m.linear_num_key_heads else 0
    # Linear-attention layers replace softmax attention only where their shapes are known; otherwise
    # they are counted as attention layers and the row carries a params_note.
    attention = attn_per_layer * (n_layers - linear_layers) + _gated_deltanet_params(m) * linear_layers

    if m.is_moe:
        dense_layers = m.first_dense_layers
        moe_layers = n_layers - dense_layers
        ffn_dense = dense_layers * _gated_mlp(h, m.intermediate_size)
        expert = _gated_mlp(h, m.moe_intermediate_size)
        router = h * m.num_experts
        shared = m.num_shared_experts * expert
        ffn_experts = moe_layers * m.num_experts * expert
        ffn_moe_fixed = moe_layers * (router + shared)
        ffn_active = ffn_dense + ffn_moe_fixed + moe_layers * m.experts_per_token * expert
    else:
        ffn_dense = n_layers * _gated_mlp(h, m.intermediate_size)
        ffn_experts = 0
        ffn_moe_fixed = 0
        ffn_active = ffn_dense

    norms = norms_per_layer * n_layers + h
    total = embedding + lm_head + attention + ffn_dense + ffn_experts + ffn_moe_fixed + norms
    active = embedding + lm_head + attention + ffn_active + norms

    mtp = 0.0
    if m.mtp_layers:
        # One extra decoder layer (MoE like the main stack) plus eh_proj (2H->H) and two norms
        # per MTP module; embedding and LM head are shared (DeepSeek-V3 report, section 2.2).
        per_moe_layer = attn_per_layer + m.num_experts * _gated_mlp(h, m.moe_intermediate_size) + h * m.num_experts
        per_moe_layer += m.num_shared_experts * _gated_mlp(h, m.moe_intermediate_size)
        mtp = m.mtp_layers * (per_moe_layer + 2 * h * h + 3 * h) / 1e9

    total_b = total / 1e9 + m.vision_params_b
    published = m.params_total_b
    err = None if not published else (total_b - published) / published * 100
    result = ParamBreakdown(
        repo_id=m.repo_id,
        total_b=total_b,
        active_b=active / 1e9,
        decode_read_b=(active - (0 if m.tie_word_embeddings else embedding)) / 1e9,
        embedding_b=embedding / 1e9,
        lm_head_b=lm_head / 1e9,
        attention_b=attention / 1e9,
        ffn_dense_b=ffn_dense / 1e9,
        ffn_experts_b=ffn_experts / 1e9,
        per_layer_b=(attention + ffn_dense + ffn_experts + ffn_moe_fixed) / n_layers / 1e9,
        vision_b=m.vision_params_b,
        mtp_b=mtp,
        published_total_b=published,
        computed_total_b=total_b,
        error_vs_published_pct=err,
    )
    return _scaled_to_published(m, result) if m.params_note and published else result


def _scaled_to_published(m: ModelSpec, p: ParamBreakdown) -> ParamBreakdown:
    """Memory and step time from the published totals when the fields cannot describe the layers.

    Every weight group is scaled by published/computed (total; active by the published active
    count where there is one), so the split between groups stays the counter's estimate while
    the sums match the model card. ``method`` says so; ``computed_total_b`` keeps the raw count.
    """
    total_scale = (m.params_total_b or p.total_b) / p.total_b
    active_scale = (m.params_active_b / p.active_b) if m.params_active_b and m.is_moe else total_scale
    scaled = {k: getattr(p, k) * total_scale for k in (
        "total_b", "embedding_b", "lm_head_b", "attention_b", "ffn_dense_b", "ffn_experts_b", "per_layer_b", "mtp_b")}
    return p.model_copy(update={
        **scaled, "active_b": p.active_b * active_scale, "decode_read_b": p.decode_read_b * active_scale,
        "method": f"scaled to the published total ({m.params_total_b:g}B"
                  + (f", {m.params_active_b:g}B active" if m.params_active_b and m.is_moe else "")
                  + f"): the counter cannot model this architecture ({m.params_note})",
    })

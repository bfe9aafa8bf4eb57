"""Roofline step time of one forward pass (verifier, draft model or draft head).

A decode/verify forward reads the weights it touches and each sequence's KV
cache, and does ``2 x params x tokens`` FLOPs plus attention. Its GPU time is
the roofline of those two, per component (weight GEMMs, attention), plus a
small GPU gap per layer; tensor parallel adds two all-reduces per layer. The
host dispatches the kernels; eager PyTorch is host-bound for small models, so
a forward takes ``max(GPU time, host time)`` plus a fixed per-forward cost
(``tools/model/overhead.py``).

MoE: weights read = non-expert weights + the experts that the step's tokens
actually touch. Routing is uniform over E experts (top-k per token), sequences
in a batch route independently, and within one sequence each token after the
first repeats its predecessor's expert set with probability
``routing_reuse`` of ``ModelConstants`` (else draws afresh): consecutive tokens reuse experts more
often than chance (Mixtral paper, Table 5). The expected distinct experts per
layer for ``batch`` sequences of ``T`` tokens each is then
``E * (1 - [(1 - k/E) * (1 - (1 - rho) k/E)^(T-1)]^batch)``, which is
``E * (1 - (1 - k/E)^(batch T))`` at rho = 0 and the same at T = 1. One decode
token reads k experts; a verify pass of many tokens reads many more, which is
why MoE verification costs more at batch 1 and why large-batch MoE decoding
stays memory-bound for longer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.arch.kv import kv_bytes_per_sequence, kv_bytes_per_token_per_layer
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants, routing_reuse_note
from specpick.tools.model.overhead import MOE_16BIT_NOTE, RuntimeOverhead
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import GpuSpec, ModelSpec

Bound = Literal["memory", "compute", "host"]


class StepTime(BaseModel):
    """Time of one forward pass and what it is made of (per GPU, milliseconds)."""

    label: str = Field(description="what ran: verifier repo id, draft repo id, or head kind")
    gpu: str
    gpus: int
    batch: int
    tokens_per_seq: int
    context_tokens: int
    weight_bytes: float = Field(description="weight bytes read per GPU (MoE: only experts touched)")
    kv_bytes: float = Field(description="KV-cache bytes read per GPU")
    flops: float = Field(description="FLOPs per GPU: weight GEMMs + attention")
    memory_ms: float = Field(description="bytes / achievable bandwidth")
    compute_ms: float = Field(description="FLOPs / achievable tensor throughput")
    gpu_ms: float = Field(description="roofline combination per component + per-layer GPU gaps")
    launch_overhead_ms: float = Field(description="GPU gaps between kernels: per-layer gap x layers")
    allreduce_ms: float = Field(description="tensor-parallel all-reduces: 2 per layer")
    host_ms: float = Field(description="host dispatch time (overlapped with GPU work)")
    per_forward_ms: float
    total_ms: float
    bound: Bound
    experts_touched_per_layer: float | None = None
    assumptions: list[str] = Field(default_factory=list, description="modelling assumptions with sources (MoE)")


def _smax(a: float, b: float, p: float) -> float:
    """Soft roofline ``(a^p + b^p)^(1/p)``: memory and compute overlap imperfectly near the corner."""
    hi = max(a, b)
    if hi <= 0:
        return 0.0
    return hi * ((a / hi) ** p + (b / hi) ** p) ** (1.0 / p)


def experts_touched(num_experts: int, top_k: int, tokens: int, *, tokens_per_seq: int = 1,
                    reuse: float = 0.0) -> float:
    """Expected distinct experts per MoE layer for ``tokens`` routed top-k (uniform routing).

    ``tokens`` come from ``tokens / tokens_per_seq`` independent sequences. Within a sequence every token after
    the first repeats its predecessor's expert set with probability ``reuse`` and otherwise draws a fresh one, so
    the experts one sequence misses are ``(1 - k/E) * (1 - (1 - reuse) k/E)^(T-1)`` of E (exact for chains and
    for trees: each non-root token copies its parent or draws afresh). ``reuse = 0`` is independent routing.
    """
    if num_experts <= 0:
        return 0.0
    if not 0.0 <= reuse <= 1.0:
        raise InputError(f"expert reuse must be a probability, got {reuse}")
    per_seq = max(tokens_per_seq, 1)
    share = top_k / num_experts
    missed_by_one = (1.0 - share) * (1.0 - (1.0 - reuse) * share) ** (per_seq - 1)
    return num_experts * (1.0 - missed_by_one ** (max(tokens, 1) / per_seq))


def _expert_params(m: ModelSpec) -> float:
    return 3.0 * m.hidden_size * m.moe_intermediate_size  # gated MLP: gate, up, down


def _attention_flops_per_token(m: ModelSpec, context_tokens: int) -> float:
    """QK^T and AV for one new token against the cache, all layers (2 matmuls x 2 FLOPs)."""
    if m.is_mla:
        width = 2 * m.kv_lora_rank + m.qk_rope_head_dim  # absorbed MLA attends in the latent space
        return 2.0 * m.num_attention_heads * width * context_tokens * m.num_layers
    per_layer_full = 4.0 * m.num_attention_heads * m.head_dim
    if m.sliding_window and m.sliding_layer_fraction > 0:
        local = round(m.num_layers * m.sliding_layer_fraction)
        return per_layer_full * ((m.num_layers - local) * context_tokens
                                 + local * min(context_tokens, m.sliding_window))
    return per_layer_full * context_tokens * m.num_layers


def _link(gpu: GpuSpec, constants: ModelConstants) -> tuple[float, float]:
    """(GB/s per direction, latency ms) of the GPU-to-GPU path used by all-reduce."""
    if gpu.link_gbps:  # NVLink / Infinity Fabric aggregate bidirectional figure
        return gpu.link_gbps / 2.0, constants.allreduce_latency_ms_nvlink
    return constants.pcie_gbps_per_direction, constants.allreduce_latency_ms_pcie


def forward_time(
    *,
    label: str,
    gpu: GpuSpec,
    gpus: int,
    batch: int,
    tokens_per_seq: int,
    context_tokens: int,
    weight_bytes: float,
    kv_bytes: float,
    gemm_flops: float,
    attn_flops: float,
    layers: int,
    hidden_size: int,
    weight_dtype: str,
    overhead: RuntimeOverhead,
    extra_host_ms: float = 0.0,
    experts_per_layer: float | None = None,
    draft_step: bool = False,
    assumptions: list[str] | None = None,
    constants: ModelConstants = DEFAULT_CONSTANTS,
    moe_layers: int = 0,
) -> StepTime:
    """Combine totals for a whole forward pass (all GPUs) into a ``StepTime``.

    A draft step (``draft_step=True``) runs inside the speculation loop: it pays the harness's per-step
    host bookkeeping (overlapped with GPU work) instead of the per-forward sampling/sync cost.
    ``constants`` supplies the roofline efficiencies and all-reduce figures.
    """
    split = 1 if overhead.layer_split else gpus  # layer split runs GPUs one after another
    bw = gpu.bandwidth_gbps * 1e9 * constants.bandwidth_efficiency
    peak = gpu.peak_tflops(weight_dtype) * 1e12 * constants.flops_efficiency
    w, kv = weight_bytes / split, kv_bytes / split
    gf, af = gemm_flops / split, attn_flops / split
    m_w, m_kv = w / bw * 1e3, kv / bw * 1e3
    c_g, c_a = gf / peak * 1e3, af / peak * 1e3
    moe_ms = overhead.moe_layer_ms  # quantized experts; 16-bit ones have their own fitted term (overhead.py)
    notes = list(assumptions or [])
    if weight_dtype == "bf16" and overhead.moe_layer_16bit_ms is not None:  # _dtype_for: more than 1 byte per weight
        moe_ms = overhead.moe_layer_16bit_ms
        if moe_layers:
            notes.append(MOE_16BIT_NOTE)
    gaps = overhead.gpu_gap_per_layer_ms * layers + moe_ms * moe_layers
    p = constants.roofline_sharpness
    gpu_ms = _smax(m_w, c_g, p) + _smax(m_kv, c_a, p) + gaps
    allreduce = 0.0
    if gpus > 1 and not overhead.layer_split:
        link_gbps, latency = _link(gpu, constants)
        msg = batch * tokens_per_seq * hidden_size * constants.activation_bytes
        ring = 2.0 * (gpus - 1) / gpus * msg / (link_gbps * 1e9) * 1e3
        allreduce = 2 * layers * (latency + ring)
    host = overhead.host_per_layer_ms * layers + extra_host_ms
    fixed = overhead.per_forward_ms
    if draft_step:
        host += overhead.draft_step_host_ms
        fixed = 0.0
    device = gpu_ms + allreduce
    memory_ms, compute_ms = m_w + m_kv, c_g + c_a
    if host > device:
        bound: Bound = "host"
    else:
        bound = "memory" if memory_ms >= compute_ms else "compute"
    return StepTime(
        label=label, gpu=gpu.key, gpus=gpus, batch=batch, tokens_per_seq=tokens_per_seq,
        context_tokens=context_tokens, weight_bytes=w, kv_bytes=kv, flops=gf + af,
        memory_ms=memory_ms, compute_ms=compute_ms, gpu_ms=gpu_ms, launch_overhead_ms=gaps,
        allreduce_ms=allreduce, host_ms=host, per_forward_ms=fixed,
        total_ms=max(device, host) + fixed, bound=bound,
        experts_touched_per_layer=experts_per_layer, assumptions=notes,
    )


def _check(batch: int, tokens_per_seq: int, context_tokens: int, gpus: int, bpp: float) -> None:
    if batch < 1 or tokens_per_seq < 1 or gpus < 1:
        raise InputError("batch, tokens per sequence and GPU count must be at least 1")
    if context_tokens < 0 or bpp <= 0:
        raise InputError("context tokens must be >= 0 and bytes per parameter > 0")


def _moe_weight_params(m: ModelSpec, decode_read: float, tokens: int, tokens_per_seq: int,
                       reuse: float) -> tuple[float, float]:
    """(weight params read, experts touched per layer) for a MoE model and ``tokens`` routed tokens."""
    moe_layers = m.num_layers - m.first_dense_layers
    expert = _expert_params(m)
    touched = experts_touched(m.num_experts, m.experts_per_token, tokens, tokens_per_seq=tokens_per_seq,
                              reuse=reuse)
    non_expert = decode_read - moe_layers * m.experts_per_token * expert
    return non_expert + moe_layers * touched * expert, touched


def step_time(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    gpus: int,
    batch: int,
    tokens_per_seq: int,
    context_tokens: int,
    weight_bytes_per_param: float,
    kv_dtype: str = "auto",
    overhead: RuntimeOverhead,
    extra_host_ms: float = 0.0,
    draft_step: bool = False,
    constants: ModelConstants = DEFAULT_CONSTANTS,
) -> StepTime:
    """Roofline time of one forward pass of ``model`` over ``batch`` sequences.

    Args:
        model: architecture facts (catalog or Hub).
        gpu: one GPU's facts; ``gpus`` of them run the model (tensor parallel, or
            layer split for eager harnesses).
        batch: running sequences.
        tokens_per_seq: tokens each sequence feeds this pass (1 = decode, N+1 =
            chain verify, tree budget = tree verify).
        context_tokens: tokens already in each sequence's KV cache.
        weight_bytes_per_param: 2 for bf16, 1 for fp8, ~0.52 for int4.
        kv_dtype: KV-cache dtype key of ``tools/arch/kv.py``.
        overhead: the runtime's overhead constants.
        extra_host_ms: host work beyond layer dispatch (e.g. an n-gram lookup).
        draft_step: True when ``model`` is a draft model stepping inside the speculation loop.
        constants: the model's global constants (roofline, MoE routing reuse, all-reduce).

    Returns:
        A ``StepTime`` with bytes, FLOPs, the memory/compute/host split and the total.
    """
    _check(batch, tokens_per_seq, context_tokens, gpus, weight_bytes_per_param)
    p = count_params(model)
    tokens = batch * tokens_per_seq
    decode_read = p.decode_read_b * 1e9
    touched = None
    if model.is_moe:
        weight_params, touched = _moe_weight_params(model, decode_read, tokens, tokens_per_seq,
                                                     constants.routing_reuse)
    else:
        weight_params = decode_read
    return forward_time(
        label=model.repo_id, gpu=gpu, gpus=gpus, batch=batch, tokens_per_seq=tokens_per_seq,
        context_tokens=context_tokens,
        weight_bytes=weight_params * weight_bytes_per_param,
        kv_bytes=batch * kv_bytes_per_sequence(model, context_tokens, kv_dtype),
        gemm_flops=2.0 * decode_read * tokens,
        attn_flops=_attention_flops_per_token(model, context_tokens) * tokens,
        layers=model.num_layers, hidden_size=model.hidden_size, weight_dtype=_dtype_for(weight_bytes_per_param),
        overhead=overhead, extra_host_ms=extra_host_ms, experts_per_layer=touched, draft_step=draft_step,
        assumptions=[routing_reuse_note(constants)] if touched is not None else None, constants=constants,
        moe_layers=model.num_layers - model.first_dense_layers if model.is_moe else 0,
    )


def _dtype_for(bpp: float) -> str:
    return "fp8" if bpp <= 1.0 else "bf16"


# --- draft heads ------------------------------------------------------------------------------------
HeadKind = Literal["eagle", "eagle3", "medusa", "mtp"]
# EAGLE-3 drafts over a reduced vocabulary: github:SafeAILab/EAGLE eagle/traineagle3/config.json
# (draft_vocab_size 32000), also the catalog's head notes ("lm_head over 32000 draft vocab").
EAGLE3_DRAFT_VOCAB = 32000
# Medusa-1 checkpoints ship 5 heads (FasterDecoding/medusa-vicuna-*: medusa_num_heads 5; MEDUSA-PAPER-T1
# config "5 heads").
MEDUSA_DEFAULT_HEADS = 5


def _layer_params(m: ModelSpec, tokens: int, tokens_per_seq: int, reuse: float) -> tuple[float, float | None]:
    """Weights one decoder layer of ``m``'s geometry reads for ``tokens`` tokens (MoE: experts touched)."""
    p = count_params(m)
    attention = p.attention_b * 1e9 / m.num_layers
    if not m.is_moe:
        return attention + 3.0 * m.hidden_size * m.intermediate_size, None
    touched = experts_touched(m.num_experts, m.experts_per_token, tokens, tokens_per_seq=tokens_per_seq,
                              reuse=reuse)
    expert = _expert_params(m)
    router = m.hidden_size * m.num_experts
    return attention + router + (m.num_shared_experts + touched) * expert, touched


def head_step_time(
    kind: HeadKind,
    verifier: ModelSpec,
    gpu: GpuSpec,
    *,
    gpus: int,
    batch: int,
    tokens_per_seq: int,
    context_tokens: int,
    weight_bytes_per_param: float,
    kv_dtype: str = "auto",
    overhead: RuntimeOverhead,
    num_heads: int = MEDUSA_DEFAULT_HEADS,
    extra_host_ms: float = 0.0,
    constants: ModelConstants = DEFAULT_CONSTANTS,
) -> StepTime:
    """One step of a draft head attached to ``verifier`` (geometry taken from the verifier).

    * ``eagle`` (EAGLE-1/2): one decoder layer + fc(2H->H) + the verifier's LM head (H x V), read each step.
    * ``eagle3``: one decoder layer whose attention takes 2H inputs + fc(3H->H) + a 32k-vocab draft LM head.
    * ``medusa``: ``num_heads`` heads, each a ResBlock (H x H) + its own LM head (H x V), one pass.
    * ``mtp``: one extra decoder layer (MoE like the verifier's) + eh_proj (2H->H) + the shared LM head.

    The head keeps a one-layer KV cache (Medusa keeps none). Parameter shapes: EAGLE/EAGLE-3 per the
    catalog's heads.csv method_detail (SafeAILab/EAGLE), Medusa per the catalog note (~H^2 + H*V per head),
    MTP per the DeepSeek-V3 report section 2.2 (as in tools/arch/params.py).
    """
    _check(batch, tokens_per_seq, context_tokens, gpus, weight_bytes_per_param)
    h, v = verifier.hidden_size, verifier.vocab_size
    tokens = batch * tokens_per_seq
    if verifier.is_moe and kind in ("eagle", "eagle3"):
        # EAGLE heads for MoE verifiers are dense layers of the expert width (EAGLE-mixtral head 0.28B).
        width = verifier.intermediate_size or verifier.moe_intermediate_size
        layer = count_params(verifier).attention_b * 1e9 / verifier.num_layers + 3.0 * h * width
        touched = None
    else:
        layer, touched = _layer_params(verifier, tokens, tokens_per_seq, constants.routing_reuse)
    kv_layer = kv_bytes_per_token_per_layer(verifier, kv_dtype) * context_tokens * batch
    q_kv_width = verifier.num_attention_heads * verifier.head_dim + 2 * verifier.num_kv_heads * verifier.head_dim
    layers = 1
    if kind == "eagle":
        params = layer + 2 * h * h + h * v
    elif kind == "eagle3":
        params = layer + h * q_kv_width + 3 * h * h + h * min(v, EAGLE3_DRAFT_VOCAB)
    elif kind == "medusa":
        if num_heads < 1:
            raise InputError("Medusa needs at least one head")
        params = num_heads * (h * h + h * v)
        kv_layer = 0.0
        layers = num_heads
    elif kind == "mtp":
        params = layer + 2 * h * h + h * v
    else:  # pragma: no cover - Literal guards the callers
        raise InputError(f"unknown head kind '{kind}'")
    attn = 0.0 if kind == "medusa" else 4.0 * verifier.num_attention_heads * verifier.head_dim * context_tokens
    return forward_time(
        label=f"{kind} head of {verifier.repo_id}", gpu=gpu, gpus=gpus, batch=batch,
        tokens_per_seq=tokens_per_seq, context_tokens=context_tokens,
        weight_bytes=params * weight_bytes_per_param, kv_bytes=kv_layer,
        gemm_flops=2.0 * params * tokens, attn_flops=attn * tokens, layers=layers, hidden_size=h,
        weight_dtype=_dtype_for(weight_bytes_per_param), overhead=overhead,
        extra_host_ms=extra_host_ms, experts_per_layer=touched, draft_step=True,
        assumptions=[routing_reuse_note(constants)] if touched is not None else None, constants=constants,
        moe_layers=1 if touched is not None else 0,  # an MTP layer of a MoE verifier is itself a MoE layer
    )

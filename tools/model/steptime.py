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

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.arch.kv import kv_bytes_per_sequence, kv_bytes_per_token_per_layer
from specpick.tools.model.constants import ModelConstants, routing_reuse_note
from specpick.tools.model.cost_inputs import Hardware, Precision, Runtime, StepLoad
from specpick.tools.model.overhead import MOE_16BIT_NOTE, RuntimeOverhead
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import EAGLE_HEAD_KINDS
from specpick.tools.checks.offload import host_read_ms

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
    host_read_ms: float = Field(0.0, description="partial offload: the layers in system RAM read at its bandwidth, "
                                "after the GPUs' share (tools/checks/offload.py)")
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
    if m.compressed_kv_layers:
        # DeepSeek-V4: every layer attends its window plus its compressed entries (CSA attends only the indexer's
        # top-k of them, so ctx / ratio is an upper bound there; the indexer's own scoring is not counted).
        window = min(context_tokens, m.sliding_window or 0)
        compressed = sum(layers * context_tokens / ratio for ratio, layers in m.compressed_kv_layers)
        return per_layer_full * (window * m.num_layers + compressed)
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


@dataclass(frozen=True)
class ForwardWork:
    """Totals of one whole forward pass (all GPUs): what it reads and computes, over how many layers.

    ``weight_dtype`` picks the tensor throughput (and the 16-bit MoE gap); ``moe_layers`` of the ``layers`` pay
    the per-MoE-layer gap; ``assumptions`` lead the step's own notes.
    """

    label: str
    weight_bytes: float
    kv_bytes: float
    gemm_flops: float
    attn_flops: float
    layers: int
    hidden_size: int
    weight_dtype: str
    experts_per_layer: float | None = None
    moe_layers: int = 0
    assumptions: tuple[str, ...] = ()
    # Partial offload (llama.cpp): the layers in system RAM run after the GPU's, reading their weights at the host's
    # bandwidth (tools/checks/offload.py); ``weight_bytes`` is then the GPU's share only.
    host_read_ms: float = 0.0


def _gaps_ms(work: ForwardWork, overhead: RuntimeOverhead) -> tuple[float, list[str]]:
    """GPU gaps between kernels (per layer, plus per MoE layer) and the notes that qualify them."""
    moe_ms = overhead.moe_layer_ms  # quantized experts; 16-bit ones have their own fitted term (overhead.py)
    notes = list(work.assumptions)
    if work.weight_dtype == "bf16" and overhead.moe_layer_16bit_ms is not None:  # _dtype_for: > 1 byte per weight
        moe_ms = overhead.moe_layer_16bit_ms
        if work.moe_layers:
            notes.append(MOE_16BIT_NOTE)
    return overhead.gpu_gap_per_layer_ms * work.layers + moe_ms * work.moe_layers, notes


def _allreduce_ms(work: ForwardWork, hw: Hardware, load: StepLoad, runtime: Runtime) -> float:
    """Tensor-parallel all-reduces: two per layer, a ring over the GPU link (none on one GPU or a layer split)."""
    if hw.gpus <= 1 or runtime.overhead.layer_split:
        return 0.0
    constants = runtime.constants
    link_gbps, latency = _link(hw.gpu, constants)
    msg = load.batch * load.tokens_per_seq * work.hidden_size * constants.activation_bytes
    ring = 2.0 * (hw.gpus - 1) / hw.gpus * msg / (link_gbps * 1e9) * 1e3
    return 2 * work.layers * (latency + ring)


def _host_ms(work: ForwardWork, overhead: RuntimeOverhead, extra_host_ms: float,
             draft_step: bool) -> tuple[float, float]:
    """(host dispatch time, fixed per-forward cost). A draft step pays the harness's per-step host bookkeeping
    instead of the per-forward sampling/sync cost."""
    host = overhead.host_per_layer_ms * work.layers + extra_host_ms
    fixed = overhead.per_forward_ms
    if draft_step:
        host += overhead.draft_step_host_ms
        fixed = 0.0
    return host, fixed


def forward_time(work: ForwardWork, hw: Hardware, load: StepLoad, runtime: Runtime, *,
                 extra_host_ms: float = 0.0, draft_step: bool = False) -> StepTime:
    """Combine totals for a whole forward pass (all GPUs) into a ``StepTime``.

    A draft step (``draft_step=True``) runs inside the speculation loop: it pays the harness's per-step
    host bookkeeping (overlapped with GPU work) instead of the per-forward sampling/sync cost.
    ``runtime.constants`` supplies the roofline efficiencies and all-reduce figures.
    """
    constants, overhead = runtime.constants, runtime.overhead
    split = 1 if overhead.layer_split else hw.gpus  # layer split runs GPUs one after another
    bw = hw.gpu.bandwidth_gbps * 1e9 * constants.bandwidth_efficiency
    peak = hw.gpu.peak_tflops(work.weight_dtype) * 1e12 * constants.flops_efficiency
    w, kv = work.weight_bytes / split, work.kv_bytes / split
    gf, af = work.gemm_flops / split, work.attn_flops / split
    m_w, m_kv = w / bw * 1e3, kv / bw * 1e3
    c_g, c_a = gf / peak * 1e3, af / peak * 1e3
    gaps, notes = _gaps_ms(work, overhead)
    p = constants.roofline_sharpness
    gpu_ms = _smax(m_w, c_g, p) + _smax(m_kv, c_a, p) + gaps
    allreduce = _allreduce_ms(work, hw, load, runtime)
    host, fixed = _host_ms(work, overhead, extra_host_ms, draft_step)
    device = gpu_ms + allreduce
    memory_ms, compute_ms = m_w + m_kv, c_g + c_a
    if host > device:
        bound: Bound = "host"
    else:
        bound = "memory" if memory_ms >= compute_ms else "compute"
    return StepTime(
        label=work.label, gpu=hw.gpu.key, gpus=hw.gpus, batch=load.batch, tokens_per_seq=load.tokens_per_seq,
        context_tokens=load.context_tokens, weight_bytes=w, kv_bytes=kv, flops=gf + af,
        memory_ms=memory_ms, compute_ms=compute_ms, gpu_ms=gpu_ms, launch_overhead_ms=gaps,
        allreduce_ms=allreduce, host_ms=host, per_forward_ms=fixed, host_read_ms=work.host_read_ms,
        total_ms=max(device, host) + fixed + work.host_read_ms, bound=bound,
        experts_touched_per_layer=work.experts_per_layer, assumptions=notes,
    )


def _check(hw: Hardware, load: StepLoad, precision: Precision) -> None:
    if load.batch < 1 or load.tokens_per_seq < 1 or hw.gpus < 1:
        raise InputError("batch, tokens per sequence and GPU count must be at least 1")
    if load.context_tokens < 0 or precision.weight_bytes_per_param <= 0:
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


def _offloaded(model: ModelSpec, hw: Hardware, weight_bytes: float) -> tuple[float, float]:
    """(weight bytes the GPUs read, ms reading the rest from system RAM) for ``model`` under partial offload."""
    read = hw.host_read
    if read is None or read.repo_id != model.repo_id or read.offloaded_fraction <= 0:
        return weight_bytes, 0.0

    host_bytes = weight_bytes * read.offloaded_fraction
    return weight_bytes - host_bytes, host_read_ms(host_bytes, read.bandwidth_gbps)


def step_time(model: ModelSpec, hw: Hardware, load: StepLoad, precision: Precision, runtime: Runtime, *,
              extra_host_ms: float = 0.0, draft_step: bool = False) -> StepTime:
    """Roofline time of one forward pass of ``model`` over ``load.batch`` sequences.

    Args:
        model: architecture facts (catalog or Hub).
        hw: one GPU's facts and how many run the model (tensor parallel, or layer split for eager harnesses).
        load: running sequences, tokens each feeds this pass (1 = decode, N+1 = chain verify, tree budget =
            tree verify) and tokens already in each sequence's KV cache.
        precision: bytes per weight (2 for bf16, 1 for fp8, ~0.52 for int4) and the KV-cache dtype.
        runtime: the runtime's overhead constants and the model's global constants (roofline, MoE routing
            reuse, all-reduce).
        extra_host_ms: host work beyond layer dispatch (e.g. an n-gram lookup).
        draft_step: True when ``model`` is a draft model stepping inside the speculation loop.

    Returns:
        A ``StepTime`` with bytes, FLOPs, the memory/compute/host split and the total.
    """
    _check(hw, load, precision)
    constants = runtime.constants
    p = count_params(model)
    tokens = load.batch * load.tokens_per_seq
    decode_read = p.decode_read_b * 1e9
    touched = None
    if model.is_moe:
        weight_params, touched = _moe_weight_params(model, decode_read, tokens, load.tokens_per_seq,
                                                     constants.routing_reuse)
    else:
        weight_params = decode_read
    weight_bytes, host_ms = _offloaded(model, hw, weight_params * precision.weight_bytes_per_param)
    work = ForwardWork(
        label=model.repo_id, weight_bytes=weight_bytes, host_read_ms=host_ms,
        kv_bytes=load.batch * kv_bytes_per_sequence(model, load.context_tokens, precision.kv_dtype),
        gemm_flops=2.0 * decode_read * tokens,
        attn_flops=_attention_flops_per_token(model, load.context_tokens) * tokens,
        layers=model.num_layers, hidden_size=model.hidden_size,
        weight_dtype=_dtype_for(precision.weight_bytes_per_param), experts_per_layer=touched,
        moe_layers=model.num_layers - model.first_dense_layers if model.is_moe else 0,
        assumptions=(routing_reuse_note(constants),) if touched is not None else (),
    )
    return forward_time(work, hw, load, runtime, extra_host_ms=extra_host_ms, draft_step=draft_step)


def _dtype_for(bpp: float) -> str:
    return "fp8" if bpp <= 1.0 else "bf16"


# --- draft heads ------------------------------------------------------------------------------------
# Heads costed one step at a time: the registry's head kinds of every head that is not a parallel drafter.
HEAD_KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.head_kind for r in REGISTRY
                                                  if r.head_kind and not r.parallel_draft))
HeadKind = Literal[HEAD_KINDS]  # type: ignore[valid-type]
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


def _head_params(kind: HeadKind, verifier: ModelSpec, layer: float, num_heads: int) -> float:
    """Weights one step of a ``kind`` head reads (see ``head_step_time``)."""
    h, v = verifier.hidden_size, verifier.vocab_size
    if kind == "eagle3":
        q_kv_width = verifier.num_attention_heads * verifier.head_dim + 2 * verifier.num_kv_heads * verifier.head_dim
        return layer + h * q_kv_width + 3 * h * h + h * min(v, EAGLE3_DRAFT_VOCAB)
    if kind == "medusa":
        if num_heads < 1:
            raise InputError("Medusa needs at least one head")
        return num_heads * (h * h + h * v)
    if kind in HEAD_KINDS:  # EAGLE-1/2 and MTP: one decoder layer + fc(2H->H) + the verifier's LM head
        return layer + 2 * h * h + h * v
    raise InputError(f"unknown head kind '{kind}'")  # pragma: no cover - Literal guards the callers


def _head_layer(kind: HeadKind, verifier: ModelSpec, load: StepLoad, reuse: float) -> tuple[float, float | None]:
    """(weights of the head's decoder layer, experts it touches per layer: None for a dense layer)."""
    if verifier.is_moe and kind in EAGLE_HEAD_KINDS:
        # EAGLE heads for MoE verifiers are dense layers of the expert width (EAGLE-mixtral head 0.28B).
        width = verifier.intermediate_size or verifier.moe_intermediate_size
        return count_params(verifier).attention_b * 1e9 / verifier.num_layers + 3.0 * verifier.hidden_size * width, None
    return _layer_params(verifier, load.batch * load.tokens_per_seq, load.tokens_per_seq, reuse)


def head_step_time(kind: HeadKind, verifier: ModelSpec, hw: Hardware, load: StepLoad, precision: Precision,
                   runtime: Runtime, *, num_heads: int = MEDUSA_DEFAULT_HEADS,
                   extra_host_ms: float = 0.0) -> StepTime:
    """One step of a draft head attached to ``verifier`` (geometry taken from the verifier).

    * ``eagle`` (EAGLE-1/2): one decoder layer + fc(2H->H) + the verifier's LM head (H x V), read each step.
    * ``eagle3``: one decoder layer whose attention takes 2H inputs + fc(3H->H) + a 32k-vocab draft LM head.
    * ``medusa``: ``num_heads`` heads, each a ResBlock (H x H) + its own LM head (H x V), one pass.
    * ``mtp``: one extra decoder layer (MoE like the verifier's) + eh_proj (2H->H) + the shared LM head.

    The head keeps a one-layer KV cache (Medusa keeps none). Parameter shapes: EAGLE/EAGLE-3 per the
    catalog's heads.csv method_detail (SafeAILab/EAGLE), Medusa per the catalog note (~H^2 + H*V per head),
    MTP per the DeepSeek-V3 report section 2.2 (as in tools/arch/params.py).
    """
    _check(hw, load, precision)
    constants = runtime.constants
    tokens = load.batch * load.tokens_per_seq
    layer, touched = _head_layer(kind, verifier, load, constants.routing_reuse)
    medusa = kind == "medusa"
    params = _head_params(kind, verifier, layer, num_heads)
    kv_layer = kv_bytes_per_token_per_layer(verifier, precision.kv_dtype) * load.context_tokens * load.batch
    if medusa:
        kv_layer = 0.0  # Medusa heads keep no KV cache
    attn = 0.0 if medusa else 4.0 * verifier.num_attention_heads * verifier.head_dim * load.context_tokens
    work = ForwardWork(
        label=f"{kind} head of {verifier.repo_id}", weight_bytes=params * precision.weight_bytes_per_param,
        kv_bytes=kv_layer, gemm_flops=2.0 * params * tokens, attn_flops=attn * tokens,
        layers=num_heads if medusa else 1, hidden_size=verifier.hidden_size,
        weight_dtype=_dtype_for(precision.weight_bytes_per_param), experts_per_layer=touched,
        moe_layers=1 if touched is not None else 0,  # an MTP layer of a MoE verifier is itself a MoE layer
        assumptions=(routing_reuse_note(constants),) if touched is not None else (),
    )
    return forward_time(work, hw, load, runtime, extra_host_ms=extra_host_ms, draft_step=True)

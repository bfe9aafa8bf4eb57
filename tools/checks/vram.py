"""VRAM fit: verifier + draft/head weights + KV caches, per GPU, under tensor parallelism.

Memory model (per GPU, tensor parallel size ``gpus``):

    usable  = what the engine lets itself use (its own reservation rule, ``reservation``)
    weights = verifier / tp + draft / draft_tp + head / head_tp
    runtime = activation/workspace + CUDA graphs       (stated constant per GPU)
    kv      = verifier KV per rank + draft/head KV per rank, x concurrency
    fits   <=> weights + runtime + kv <= usable

Sharding follows the engines: GQA KV heads split across ranks (replicated when there are fewer KV heads
than ranks); MLA's latent KV is one vector per token that every rank keeps whole, unless DP attention
splits the sequences across ranks; speculative heads (EAGLE, Medusa, MTP) are sharded with the verifier's
TP and served in the draft's (else the verifier's) weight format.

The largest concurrency at the requested context, and the longest context at
the requested concurrency, come out of the same equation.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.arch.kv import KV_DTYPE_BYTES, kv_bytes_per_sequence
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.vocab import BYTES_PER_PARAM

GIB = 2**30
# vLLM's default --gpu-memory-utilization: the share of each GPU for weights, activations and KV
# (vllm/config/cache.py, gpu_memory_utilization = 0.9). Also the default when no engine is named.
DEFAULT_RESERVE_FRACTION = 0.9
# SGLang's --mem-fraction-static when not given, by tensor-parallel size (sglang python/sglang/srt/
# server_args.py __post_init__: tp >= 16: 0.79, >= 8: 0.81, >= 4: 0.85, >= 2: 0.87, else 0.88).
SGLANG_MEM_FRACTION_STATIC: tuple[tuple[int, float], ...] = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
# TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction: the KV cache takes 0.9 of the memory left free
# after weights and activations (tensorrt_llm/llmapi/llm_args.py, KvCacheConfig default 0.9).
TRTLLM_FREE_GPU_MEMORY_FRACTION = 0.9
# Activation workspace, CUDA-graph pools and the sampler's logits buffers: a stated
# assumption of 1.5 GiB per GPU (vLLM profiles this at start-up; 1-3 GiB is typical for
# 7B-70B models at default max_num_batched_tokens).
RUNTIME_OVERHEAD_GIB = 1.5
# Drafts up to this size run unsharded (TP 1): a few GB of weights, and all-reduces would dominate their step.
SMALL_DRAFT_B = 8.0


class VramResult(BaseModel):
    """Per-GPU memory budget and the verdict."""

    fits: bool
    verifier: str
    gpu: str
    gpus: int
    engine: str | None = Field(None, description="engine whose memory reservation was applied (None: vLLM's)")
    reservation: str = Field("", description="the engine's memory-reservation setting, as applied")
    context_tokens: int = Field(0, description="tokens per sequence the KV is sized for")
    concurrency: int = Field(1, description="sequences resident at once")
    usable_gib_per_gpu: float
    verifier_weights_gib: float = Field(description="per GPU")
    draft_weights_gib: float = Field(description="per GPU (draft model or head)")
    runtime_overhead_gib: float
    kv_gib: float = Field(description="per GPU, verifier + draft KV at context x concurrency")
    kv_verifier_gib_per_seq: float = Field(description="whole-model KV for one sequence, before sharding")
    kv_draft_gib_per_seq: float
    headroom_gib: float = Field(description="usable minus everything above, per GPU (negative: does not fit)")
    max_concurrency_at_context: int = Field(description="sequences that fit at the requested context (0: none)")
    max_context_at_concurrency: int = Field(description="context that fits at the requested concurrency (0: none)")
    verifier_alone_fits: bool
    weight_bytes_per_param: float
    assumptions: list[str]
    defaults_used: list[str] = Field(default_factory=list, description="inputs that took a stated default "
                                     "(tools/deploy/resolve.py)")

    def verdict_line(self) -> str:
        """One line: the verdict at this context x concurrency, and what would fit instead."""
        where = f"{self.verifier} on {self.gpus}x {self.gpu} at {self.context_tokens} tokens x {self.concurrency} "
        where += "sequence" + ("s" if self.concurrency != 1 else "")
        if self.fits:
            return f"{where}: fits ({self.headroom_gib:+.1f} GiB per GPU)"
        if self.max_concurrency_at_context > 0 or self.max_context_at_concurrency > 0:
            return (f"{where}: does not fit ({self.headroom_gib:+.1f} GiB per GPU); fits: "
                    f"{self.max_concurrency_at_context} sequences at {self.context_tokens} tokens, or "
                    f"{self.max_context_at_concurrency} tokens at {self.concurrency} sequences")
        return (f"{where}: does not fit (weights {self.verifier_weights_gib + self.draft_weights_gib:.1f} GiB + "
                f"{self.runtime_overhead_gib:g} GiB runtime per GPU leave no room for KV in "
                f"{self.usable_gib_per_gpu:.1f} GiB usable)")


def _weights_gib(params_b: float, quant: str) -> float:
    return params_b * 1e9 * BYTES_PER_PARAM[quant] / GIB


def _default_quant(m: ModelSpec) -> str:
    return m.dtype if m.dtype in BYTES_PER_PARAM else "bf16"


def reservation(engine: str | None, gpus: int, memory_gib: float, fixed_gib: float,
                override: float | None = None) -> tuple[float, str]:
    """(usable GiB per GPU, the setting applied in words) under the engine's own memory reservation.

    ``fixed_gib`` is weights + runtime per GPU (TensorRT-LLM sizes its KV pool from what they leave free).
    ``override`` is a user-given fraction of the whole GPU, in the engine's own knob.
    """
    if override is not None:
        knob = {"sglang": "mem_fraction_static", "trtllm": "free_gpu_memory_fraction"}.get(
            engine or "vllm", "gpu_memory_utilization")
        if engine == "trtllm":
            return fixed_gib + override * max(memory_gib - fixed_gib, 0.0), f"TensorRT-LLM {knob} {override:g}"
        return memory_gib * override, f"{knob} {override:g} (given)"
    if engine == "sglang":
        frac = next(f for tp, f in SGLANG_MEM_FRACTION_STATIC if gpus >= tp)
        return memory_gib * frac, (f"SGLang mem_fraction_static {frac:g} (its default at TP={gpus}, "
                                   "sglang server_args.py)")
    if engine == "trtllm":
        f = TRTLLM_FREE_GPU_MEMORY_FRACTION
        return fixed_gib + f * max(memory_gib - fixed_gib, 0.0), (
            f"TensorRT-LLM free_gpu_memory_fraction {f:g} of the memory left after weights (KvCacheConfig default)")
    if engine == "transformers":
        return memory_gib, "transformers: no memory reservation (the cache grows as it is used)"
    who = "vLLM" if engine == "vllm" else "engine not given: vLLM's"
    return memory_gib * DEFAULT_RESERVE_FRACTION, (f"{who} gpu_memory_utilization {DEFAULT_RESERVE_FRACTION:g} "
                                                   "(vllm/config/cache.py default)")


def draft_tensor_parallel(draft_params_b: float, gpus: int) -> int:
    """Draft TP when not given: 1 for small drafts (sharding them only adds all-reduces), else the target's TP.

    vLLM accepts only 1 or the target TP (vllm#31345, #31398). `vram`, `speedup` and `recommend` all use it.
    """
    return 1 if draft_params_b <= SMALL_DRAFT_B else gpus


def kv_ranks(m: ModelSpec, gpus: int, dp_attention: bool = False) -> int:
    """Ranks one sequence's KV is split over.

    MLA caches one latent vector per token that every TP rank keeps whole; DP attention instead puts each
    sequence on one rank, so per rank it is as if split ``gpus`` ways. GQA splits KV heads across ranks, and
    ranks beyond the KV-head count hold replicas (vLLM/SGLang replicate KV heads when tp > num_kv_heads).
    """
    if m.is_mla:
        return gpus if dp_attention else 1
    return max(1, min(gpus, m.num_kv_heads or gpus))


def fit_specs(
    verifier: ModelSpec,
    gpu: GpuSpec,
    *,
    gpus: int = 1,
    draft: ModelSpec | None = None,
    draft_params_b: float | None = None,
    head_params_b: float | None = None,
    quantization: str | None = None,
    draft_quantization: str | None = None,
    kv_cache_dtype: str = "auto",
    context_tokens: int = 4096,
    concurrency: int = 1,
    draft_tp: int | None = None,
    reserve_fraction: float | None = None,
    engine: str | None = None,
    dp_attention: bool = False,
) -> VramResult:
    """Compute the per-GPU memory budget for resolved specs (the planner's and `speedup`'s entry point).

    Args:
        head_params_b: a speculative head's size (EAGLE/Medusa/MTP); sharded like the verifier (``draft_tp``
            if given), in ``draft_quantization`` or else the verifier's weight format.
        reserve_fraction: override of the engine's own reservation knob (see ``reservation``).
        dp_attention: SGLang/vLLM data-parallel attention: MLA KV split across ranks by sequence.
    """
    assumptions: list[str] = []
    quant = quantization or _default_quant(verifier)
    vparams = count_params(verifier)
    # The MTP layers ship in the checkpoint and engines load them with --speculative-config mtp.
    verifier_params_b = vparams.total_b + (vparams.mtp_b if head_params_b is None else 0.0)
    verifier_w = _weights_gib(verifier_params_b, quant) / gpus

    separate = draft is not None or bool(draft_params_b)
    if draft_tp is None and separate:
        draft_tp = draft_tensor_parallel(count_params(draft).total_b if draft is not None else draft_params_b or 0.0,
                                         gpus)
        assumptions.append(f"draft tensor parallel {draft_tp}: " + ("a draft of at most "
                           f"{SMALL_DRAFT_B:g}B runs unsharded" if draft_tp == 1 else "sharded like the verifier"))
    draft_tp = draft_tp or (gpus if head_params_b else 1)
    if draft_tp not in (1, gpus):
        raise InputError(
            f"draft tensor parallel size {draft_tp} is invalid: vLLM accepts 1 or the target's TP ({gpus}) "
            f"(vllm#31345, #31398). Use --draft-tp 1 or --draft-tp {gpus}."
        )
    dquant = draft_quantization or ("bf16" if separate else quant)
    draft_w = 0.0
    kv_draft_seq = 0.0
    kv_draft_ranks = draft_tp
    if draft is not None:
        draft_w = _weights_gib(count_params(draft).total_b, dquant) / draft_tp
        kv_draft_seq = kv_bytes_per_sequence(draft, context_tokens, kv_cache_dtype) / GIB
        kv_draft_ranks = kv_ranks(draft, draft_tp, dp_attention)
    elif draft_params_b:
        draft_w = _weights_gib(draft_params_b, dquant) / draft_tp
        # Unknown architecture: scale the verifier's KV by the parameter ratio (a stated estimate).
        ratio = draft_params_b / max(vparams.total_b, 1e-9)
        kv_draft_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) * ratio / GIB
        kv_draft_ranks = kv_ranks(verifier, draft_tp, dp_attention)
        assumptions.append("draft KV estimated as verifier KV x (draft params / verifier params): "
                           "architecture not given")
    if head_params_b:
        draft_w += _weights_gib(head_params_b, dquant) / draft_tp
        # An EAGLE head is one decoder layer: its KV is one layer's worth of the verifier's.
        kv_draft_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) / verifier.num_layers / GIB
        kv_draft_ranks = kv_ranks(verifier, draft_tp, dp_attention)
        assumptions.append(f"head {head_params_b:g}B at {dquant}, sharded over TP={draft_tp} like the verifier; "
                           "head KV = one verifier layer's KV (EAGLE/MTP heads are a single decoder layer)")

    kv_verifier_seq = kv_bytes_per_sequence(verifier, context_tokens, kv_cache_dtype) / GIB
    v_ranks = kv_ranks(verifier, gpus, dp_attention)
    fixed = verifier_w + draft_w + RUNTIME_OVERHEAD_GIB
    usable, reserve_text = reservation(engine, gpus, gpu.memory_gib, fixed, reserve_fraction)
    kv_per_seq_per_gpu = kv_verifier_seq / v_ranks + kv_draft_seq / kv_draft_ranks
    kv = kv_per_seq_per_gpu * concurrency
    headroom = usable - fixed - kv

    free_for_kv = usable - fixed
    max_conc = int(free_for_kv // kv_per_seq_per_gpu) if free_for_kv > 0 and kv_per_seq_per_gpu > 0 else 0
    per_token = kv_per_seq_per_gpu / context_tokens
    max_ctx = int(free_for_kv / (per_token * concurrency)) if free_for_kv > 0 and per_token > 0 else 0
    if verifier.sliding_window and verifier.sliding_layer_fraction > 0:
        max_ctx = _max_context_sliding(verifier, draft, free_for_kv, concurrency, v_ranks, kv_cache_dtype)
        assumptions.append(f"sliding-window layers keep {verifier.sliding_window} tokens; an engine that "
                           "allocates full context on every layer needs more")

    limit = verifier.max_position_embeddings
    if limit and max_ctx > limit:
        # Memory is not the binding limit: the model's positions are (an engine refuses a longer max_model_len).
        max_ctx = limit
        assumptions.append(f"max context capped at the model's max_position_embeddings ({limit}); memory "
                           "would hold more")
    assumptions += [
        f"memory reservation: {reserve_text}, of {gpu.memory_gib:g} GiB per GPU (marketed GB of HBM parts are "
        "binary GiB)",
        f"weights at {quant} ({BYTES_PER_PARAM[quant]:.3g} bytes/param), sharded over TP={gpus}",
        f"{RUNTIME_OVERHEAD_GIB} GiB per GPU for activations, CUDA graphs and sampler buffers (stated assumption)",
        f"KV cache dtype {kv_cache_dtype} ({KV_DTYPE_BYTES[kv_cache_dtype]:g} bytes/element), "
        f"{context_tokens} tokens x {concurrency} sequence{'' if concurrency == 1 else 's'}",
    ]
    if verifier.is_mla:
        assumptions.append("MLA caches kv_lora_rank + qk_rope_head_dim values per token per layer (DeepSeek-V2 "
                           "§2.1); " + ("DP attention: each rank holds its own sequences' cache" if dp_attention
                                        else "every TP rank holds the whole latent cache (no DP attention), as "
                                        "vLLM and SGLang do"))
    elif v_ranks < gpus:
        assumptions.append(f"{verifier.num_kv_heads} KV heads over TP={gpus}: KV heads are replicated on the "
                           f"extra ranks, so the cache splits {v_ranks} ways")
    return VramResult(
        fits=headroom >= 0, verifier=verifier.repo_id, gpu=gpu.key, gpus=gpus, engine=engine,
        reservation=reserve_text, context_tokens=context_tokens, concurrency=concurrency,
        usable_gib_per_gpu=round(usable, 2), verifier_weights_gib=round(verifier_w, 2),
        draft_weights_gib=round(draft_w, 2), runtime_overhead_gib=RUNTIME_OVERHEAD_GIB, kv_gib=round(kv, 2),
        kv_verifier_gib_per_seq=round(kv_verifier_seq, 4), kv_draft_gib_per_seq=round(kv_draft_seq, 4),
        headroom_gib=round(headroom, 2), max_concurrency_at_context=max(max_conc, 0),
        max_context_at_concurrency=max(max_ctx, 0),
        verifier_alone_fits=usable - verifier_w - RUNTIME_OVERHEAD_GIB - kv_verifier_seq / v_ranks * concurrency >= 0,
        weight_bytes_per_param=BYTES_PER_PARAM[quant], assumptions=assumptions,
    )


def _max_context_sliding(
    verifier: ModelSpec, draft: ModelSpec | None, free_gib: float, concurrency: int, ranks: int, kv_dtype: str
) -> int:
    """Largest context that fits when some layers cap their cache at the window (bisection, bounded)."""
    if free_gib <= 0:
        return 0

    def need(ctx: int) -> float:
        total = kv_bytes_per_sequence(verifier, ctx, kv_dtype) / ranks
        if draft is not None:
            total += kv_bytes_per_sequence(draft, ctx, kv_dtype) / ranks
        return total * concurrency / GIB

    lo, hi = 0, 1
    while need(hi) <= free_gib and hi < 2**26:  # 67M tokens: far past any real context
        lo, hi = hi, hi * 2
    for _ in range(64):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(mid) <= free_gib else (lo, mid)
    return lo

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

from dataclasses import dataclass

from pydantic import BaseModel, Field

from specpick.tools.engines.lookup import engine as engine_spec, splits_layers
from specpick.tools.errors import InputError
from specpick.tools.arch.kv import KV_DTYPE_BYTES, kv_bytes_per_sequence
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.checks.offload import Offload
from specpick.tools.deployment import Hardware
from specpick.tools.vocab import BYTES_PER_PARAM

GIB = 2**30
# The engine whose memory reservation applies when none is named (vLLM's gpu_memory_utilization, tools/engines/vllm.py).
DEFAULT_ENGINE = "vllm"
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
    offload: Offload | None = Field(None, description="llama.cpp: the layers kept in system RAM when the weights "
                                    "exceed the GPUs (tools/checks/offload.py); None: all on the GPUs")
    assumptions: list[str]
    defaults_used: list[str] = Field(default_factory=list, description="inputs that took a stated default "
                                     "(tools/deploy/resolve.py)")

    def verdict_line(self) -> str:
        """One line: the verdict at this context x concurrency, and what would fit instead."""
        where = f"{self.verifier} on {self.gpus}x {self.gpu} at {self.context_tokens} tokens x {self.concurrency} "
        where += "sequence" + ("s" if self.concurrency != 1 else "")
        if self.offload is not None:
            return f"{where}: {self.offload.verdict()}"
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
    spec = engine_spec(engine or DEFAULT_ENGINE)
    if override is not None:
        knob = spec.reservation.knob or engine_spec(DEFAULT_ENGINE).reservation.knob
        if spec.reservation.of_free:
            return fixed_gib + override * max(memory_gib - fixed_gib, 0.0), f"{spec.label} {knob} {override:g}"
        return memory_gib * override, f"{knob} {override:g} (given)"
    usable, words = spec.reserve(gpus, memory_gib, fixed_gib)
    if engine is None:  # the default engine's reservation, said as such
        words = f"engine not given: {spec.label}'s {words.removeprefix(spec.label + ' ')}"
    return usable, words


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


@dataclass(frozen=True)
class DraftWeights:
    """What the memory check counts beside the verifier, in its own weight format and tensor-parallel size.

    A separate draft model (``spec``; or only ``params_b`` when its architecture is unknown) or a speculative
    head (``head_params_b``: EAGLE/Medusa/MTP, sharded like the verifier). ``quantization``: the draft's format
    (None: bf16 for a draft model, the verifier's for a head); ``tp``: its tensor-parallel size (None: the rule of
    ``draft_tensor_parallel``).
    """

    spec: ModelSpec | None = None
    params_b: float | None = None
    head_params_b: float | None = None
    quantization: str | None = None
    tp: int | None = None

    @property
    def separate(self) -> bool:
        """A draft model of its own (not a head on the verifier)."""
        return self.spec is not None or bool(self.params_b)


@dataclass(frozen=True)
class KvLoad:
    """What the KV cache holds: ``concurrency`` sequences of ``context_tokens`` tokens in ``kv_cache_dtype``."""

    context_tokens: int = 4096
    concurrency: int = 1
    kv_cache_dtype: str = "auto"


NO_DRAFT = DraftWeights()


@dataclass(frozen=True)
class _DraftSide:
    """The draft's weights per GPU and its KV per sequence (GiB, before splitting over ``kv_ranks``)."""

    weights_gib: float = 0.0
    kv_seq_gib: float = 0.0
    kv_ranks: int = 1


def _draft_tp(draft: DraftWeights, gpus: int, assumptions: list[str]) -> int:
    """The draft's tensor-parallel size: the given one, else 1 for a small draft (sharded like the verifier past
    ``SMALL_DRAFT_B``), a head's the verifier's; vLLM accepts only 1 or the target's."""
    draft_tp = draft.tp
    if draft_tp is None and draft.separate:
        size_b = count_params(draft.spec).total_b if draft.spec is not None else draft.params_b or 0.0
        draft_tp = draft_tensor_parallel(size_b, gpus)
        assumptions.append(f"draft tensor parallel {draft_tp}: " + ("a draft of at most "
                           f"{SMALL_DRAFT_B:g}B runs unsharded" if draft_tp == 1 else "sharded like the verifier"))
    draft_tp = draft_tp or (gpus if draft.head_params_b else 1)
    if draft_tp not in (1, gpus):
        raise InputError(
            f"draft tensor parallel size {draft_tp} is invalid: vLLM accepts 1 or the target's TP ({gpus}) "
            f"(vllm#31345, #31398). Use --draft-tp 1 or --draft-tp {gpus}."
        )
    return draft_tp


def _draft_side(verifier: ModelSpec, hw: Hardware, draft: DraftWeights, kv: KvLoad, quant: str,
                assumptions: list[str]) -> _DraftSide:
    """Weights and KV of the draft model or head (``quant``: the verifier's weight format)."""
    draft_tp = _draft_tp(draft, hw.gpus, assumptions)
    dquant = draft.quantization or ("bf16" if draft.separate else quant)
    side = _DraftSide(kv_ranks=draft_tp)
    verifier_kv = kv_bytes_per_sequence(verifier, kv.context_tokens, kv.kv_cache_dtype)
    if draft.spec is not None:
        side = _DraftSide(_weights_gib(count_params(draft.spec).total_b, dquant) / draft_tp,
                          kv_bytes_per_sequence(draft.spec, kv.context_tokens, kv.kv_cache_dtype) / GIB,
                          kv_ranks(draft.spec, draft_tp, hw.dp_attention))
    elif draft.params_b:
        # Unknown architecture: scale the verifier's KV by the parameter ratio (a stated estimate).
        ratio = draft.params_b / max(count_params(verifier).total_b, 1e-9)
        side = _DraftSide(_weights_gib(draft.params_b, dquant) / draft_tp, verifier_kv * ratio / GIB,
                          kv_ranks(verifier, draft_tp, hw.dp_attention))
        assumptions.append("draft KV estimated as verifier KV x (draft params / verifier params): "
                           "architecture not given")
    if draft.head_params_b:
        # An EAGLE head is one decoder layer: its KV is one layer's worth of the verifier's.
        side = _DraftSide(side.weights_gib + _weights_gib(draft.head_params_b, dquant) / draft_tp,
                          verifier_kv / verifier.num_layers / GIB, kv_ranks(verifier, draft_tp, hw.dp_attention))
        assumptions.append(f"head {draft.head_params_b:g}B at {dquant}, sharded over TP={draft_tp} like the verifier; "
                           "head KV = one verifier layer's KV (EAGLE/MTP heads are a single decoder layer)")
    return side


def _max_context(verifier: ModelSpec, draft: ModelSpec | None, free_for_kv: float, kv: KvLoad,
                 per_seq_per_gpu: float, v_ranks: int, assumptions: list[str]) -> int:
    """The longest context that fits at the requested concurrency (sliding windows and the model's positions
    taken into account)."""
    per_token = per_seq_per_gpu / kv.context_tokens
    max_ctx = int(free_for_kv / (per_token * kv.concurrency)) if free_for_kv > 0 and per_token > 0 else 0
    if verifier.sliding_window and verifier.sliding_layer_fraction > 0:
        max_ctx = _max_context_sliding(verifier, draft, free_for_kv, kv.concurrency, v_ranks, kv.kv_cache_dtype)
        assumptions.append(f"sliding-window layers keep {verifier.sliding_window} tokens; an engine that "
                           "allocates full context on every layer needs more")
    limit = verifier.max_position_embeddings
    if limit and max_ctx > limit:
        # Memory is not the binding limit: the model's positions are (an engine refuses a longer max_model_len).
        max_ctx = limit
        assumptions.append(f"max context capped at the model's max_position_embeddings ({limit}); memory "
                           "would hold more")
    return max_ctx


def _sizing_notes(verifier: ModelSpec, hw: Hardware, kv: KvLoad, quant: str, reserve_text: str,
                  v_ranks: int, engine: str | None = None) -> list[str]:
    """The stated assumptions behind the budget: reservation, weight format, runtime share, KV dtype and split."""
    notes = [
        f"memory reservation: {reserve_text}, of {hw.gpu.memory_gib:g} GiB per GPU (marketed GB of HBM parts are "
        "binary GiB)",
        f"weights at {quant} ({BYTES_PER_PARAM[quant]:.3g} bytes/param), "
        + (f"split by layer over {hw.gpus} GPU(s) (--split-mode layer)" if splits_layers(engine)
           else f"sharded over TP={hw.gpus}"),
        f"{RUNTIME_OVERHEAD_GIB} GiB per GPU for activations, CUDA graphs and sampler buffers (stated assumption)",
        f"KV cache dtype {kv.kv_cache_dtype} ({KV_DTYPE_BYTES[kv.kv_cache_dtype]:g} bytes/element), "
        f"{kv.context_tokens} tokens x {kv.concurrency} sequence{'' if kv.concurrency == 1 else 's'}",
    ]
    if verifier.is_mla:
        notes.append("MLA caches kv_lora_rank + qk_rope_head_dim values per token per layer (DeepSeek-V2 "
                     "§2.1); " + ("DP attention: each rank holds its own sequences' cache" if hw.dp_attention
                                  else "every TP rank holds the whole latent cache (no DP attention), as "
                                  "vLLM and SGLang do"))
    elif verifier.compressed_kv_layers:
        notes.append("compressed shared-KV attention (DeepSeek-V4 CSA/HCA): one K=V entry of head_dim values per "
                     "compress ratio of tokens, lightning-indexer keys on the CSA layers, and the last "
                     f"{verifier.sliding_window} tokens uncompressed on every layer (config compress_ratios; "
                     "tools/arch/kv.py); every TP rank holds the whole cache (one KV head)")
    elif v_ranks < hw.gpus:
        notes.append(f"{verifier.num_kv_heads} KV heads over TP={hw.gpus}: KV heads are replicated on the "
                     f"extra ranks, so the cache splits {v_ranks} ways")
    return notes


def fit_specs(verifier: ModelSpec, hw: Hardware, *, draft: DraftWeights = NO_DRAFT, kv: KvLoad = KvLoad(),
              quantization: str | None = None, engine: str | None = None) -> VramResult:
    """Compute the per-GPU memory budget for resolved specs (the planner's and `speedup`'s entry point).

    Args:
        hw: the GPUs (``hw.gpus`` is the tensor-parallel size the weights shard over), DP attention (MLA KV split
            across ranks by sequence) and the override of the engine's own reservation knob (``reservation``).
        draft: the draft model or speculative head and its own format and TP (``DraftWeights``).
        kv: context, concurrency and KV dtype the cache is sized for.
        quantization: the verifier's weight format (None: its checkpoint's dtype).
        engine: whose memory reservation applies (None: vLLM's).
    """
    assumptions: list[str] = []
    quant = quantization or _default_quant(verifier)
    vparams = count_params(verifier)
    # The MTP layers ship in the checkpoint and engines load them with --speculative-config mtp.
    verifier_params_b = vparams.total_b + (vparams.mtp_b if draft.head_params_b is None else 0.0)
    verifier_w = _weights_gib(verifier_params_b, quant) / hw.gpus
    side = _draft_side(verifier, hw, draft, kv, quant, assumptions)
    kv_verifier_seq = kv_bytes_per_sequence(verifier, kv.context_tokens, kv.kv_cache_dtype) / GIB
    v_ranks = kv_ranks(verifier, hw.gpus, hw.dp_attention)
    fixed = verifier_w + side.weights_gib + RUNTIME_OVERHEAD_GIB
    usable, reserve_text = reservation(engine, hw.gpus, hw.gpu.memory_gib, fixed, hw.reserve_fraction)
    kv_per_seq_per_gpu = kv_verifier_seq / v_ranks + side.kv_seq_gib / side.kv_ranks
    kv_gib = kv_per_seq_per_gpu * kv.concurrency
    headroom = usable - fixed - kv_gib
    free_for_kv = usable - fixed
    max_conc = int(free_for_kv // kv_per_seq_per_gpu) if free_for_kv > 0 and kv_per_seq_per_gpu > 0 else 0
    max_ctx = _max_context(verifier, draft.spec, free_for_kv, kv, kv_per_seq_per_gpu, v_ranks, assumptions)
    assumptions += _sizing_notes(verifier, hw, kv, quant, reserve_text, v_ranks, engine)
    return VramResult(
        fits=headroom >= 0, verifier=verifier.repo_id, gpu=hw.gpu.key, gpus=hw.gpus, engine=engine,
        reservation=reserve_text, context_tokens=kv.context_tokens, concurrency=kv.concurrency,
        usable_gib_per_gpu=round(usable, 2), verifier_weights_gib=round(verifier_w, 2),
        draft_weights_gib=round(side.weights_gib, 2), runtime_overhead_gib=RUNTIME_OVERHEAD_GIB,
        kv_gib=round(kv_gib, 2), kv_verifier_gib_per_seq=round(kv_verifier_seq, 4),
        kv_draft_gib_per_seq=round(side.kv_seq_gib, 4), headroom_gib=round(headroom, 2),
        max_concurrency_at_context=max(max_conc, 0), max_context_at_concurrency=max(max_ctx, 0),
        verifier_alone_fits=usable - verifier_w - RUNTIME_OVERHEAD_GIB
        - kv_verifier_seq / v_ranks * kv.concurrency >= 0,
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

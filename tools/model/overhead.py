"""Per-runtime overhead: the part of a decode step that is not bytes or FLOPs.

The same speculative method measures differently in different runtimes
(docs/references/DATA.md: "independent harnesses and serving engines measure the
same methods lower, mainly because per-cycle overhead differs"). This module
makes that difference an explicit, named parameter per harness instead of
folding it into the acceptance rate.

Two regimes matter:

* **Eager PyTorch** (the papers' research code, HF ``generate``): the CPU
  dispatches every kernel from Python. Dispatch is asynchronous, so a forward
  pass takes ``max(GPU time, host dispatch time)``. Small models and one-layer
  draft heads are host-bound; that is why a draft step costs far more than its
  bytes suggest.
* **Graph-captured engines** (vLLM, SGLang, TensorRT-LLM with CUDA graphs; XLA
  on TPU): host dispatch is one graph launch; what remains is a small GPU-side
  gap per layer and the speculative path's own host work: a little per draft
  or verify forward it launches, and per running sequence.

Constants marked "global fit" were chosen by ``specpick calibrate --fit``
(tools/calibration/fit.py) over the published rows (engines: plus the fit half of
the engine-measured rows), the same few numbers for every row; the fit's
figures are printed by that command and quoted next to them.

The committed values live here with their sources; the model reads them only
through ``ModelConstants.overheads`` (``tools/model/constants.py``), so the fit
can vary a copy instead of this module.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.engines.lookup import engines
from specpick.tools.errors import InputError
from specpick.tools.model import overhead_llamacpp as lcpp
from specpick.tools.vocab import MODEL_FREE_METHODS
from specpick.tools.vocab import TRAINED_HEAD_METHODS

Harness = Literal["paper", "transformers", "compiled", "vllm", "sglang", "trtllm", "llamacpp"]
HARNESSES: tuple[str, ...] = get_args(Harness)


class RuntimeOverhead(BaseModel):
    """Overhead constants of one runtime (harness). Times in milliseconds."""

    model_config = ConfigDict(frozen=True)

    harness: Harness
    host_per_layer_ms: float = Field(
        description="host (Python) dispatch time per decoder layer per forward; overlapped with GPU work"
    )
    gpu_gap_per_layer_ms: float = Field(description="GPU-side idle gap per layer (kernel launch tails), additive")
    per_forward_ms: float = Field(description="fixed cost per forward pass: sampling, loop, synchronisation")
    draft_step_host_ms: float = Field(
        description="extra host work per draft step beyond its layers: top-k, tree expansion, index ops"
    )
    cycle_ms: float = Field(description="fixed cost per draft+verify cycle: acceptance, KV rollback, scheduling")
    cycle_tree_ms: float = Field(description="extra per-cycle cost when the draft is a tree: masks, candidates")
    cycle_per_seq_ms: float = Field(0.0, description="per-cycle cost that grows with each running sequence")
    cycle_per_seq_dense_ms: float | None = Field(
        None, description="cycle_per_seq_ms for a dense verifier (None: the same); fitted apart because the MoE "
        "verifiers' rows and the dense verifiers' concurrency sweeps pull the shared value apart "
        "(ENGINE_CYCLE_PER_SEQ_DENSE_MS)")
    spec_forward_ms: float = Field(
        0.0, description="per forward pass launched in a speculative cycle (each draft step and the verify pass): "
        "host work of the speculative path that the plain decode path overlaps (input prep, metadata, sync)"
    )
    layer_split: bool = Field(
        description="multi-GPU runs split layers across GPUs (HF device_map='auto') instead of tensor parallel"
    )
    # Execution paths of a serving engine (None: the harness has one path, the fields above).
    one_model_spec_forward_ms: float | None = Field(
        None, description="one-model path (EAGLE/MTP/Medusa heads run inside the verifier's model runner, draft "
        "steps captured in the same CUDA/HIP graphs): host work per draft step and per verify pass")
    one_model_cycle_ms: float | None = Field(
        None, description="one-model path: fixed host work per cycle (acceptance, KV bookkeeping)")
    one_model_extend_forward: bool = Field(
        False, description="one-model path: after each verify the engine runs one more draft-head forward over the "
        "accepted tokens (an 'extend'), instead of folding them into the next cycle's first draft step")
    overlap_chains_only: bool = Field(
        False, description="overlap scheduling of the speculative path runs for chain drafts only (SGLang spec v2 "
        "needs top-k 1)")
    overlap_exposed_ms: float = Field(
        0.0, description="with overlap scheduling of the speculative path (tools/model/overlap.py): host work per "
        "cycle that still blocks the GPU (a sync on the verify result), on top of what outlasts the GPU work")
    overlap_seq_exposed_fraction: float = Field(
        0.0, ge=0.0, le=1.0, description="with overlap scheduling of the speculative path: share of the per-sequence "
        "cycle work (cycle_per_seq_ms x running requests) that stays on the critical path instead of hiding under the "
        "GPU work (MoE verifiers: the only ones measured with overlap)")
    moe_layer_ms: float = Field(
        0.0, description="fixed GPU time per MoE layer per forward (router, top-k, grouped-GEMM launches, expert "
        "dispatch/combine) that does not grow with the tokens of a small verify pass")
    verify_token_frac: float = Field(
        0.0, ge=0.0, description="llama.cpp: each verified token beyond the first costs this share of the plain step's "
        "memory time (quantized mat-mat kernels, no single-token graph); 0 for runtimes the roofline alone describes")
    verify_token_frac_apple: float | None = Field(None, description="verify_token_frac on Apple GPUs (None: the same)")
    verify_token_frac_amd: float | None = Field(None, description="verify_token_frac on AMD GPUs (None: the same)")
    moe_layer_16bit_ms: float | None = Field(
        None, description="moe_layer_ms for experts kept in 16-bit weights (None: the same); fitted apart because "
        "16-bit MoE verifiers measure a much faster plain step (ENGINE_MOE_LAYER_16BIT_MS)")
    source: str


# --- eager PyTorch research harnesses -------------------------------------------------------------
# Host dispatch per layer: HF eager Llama layers launch ~15-20 kernels from Python. The published
# EAGLE-GPTFAST row gives a host-bound anchor: vanilla HF fp16 LLaMA2-7B runs 24.5 tok/s (40.8 ms) on an
# RTX 3090 whose bandwidth roofline is ~17 ms, i.e. ~1.2 ms/layer on that desktop; the REST README
# timings (A6000, 96-core server: 25.5 ms for 7B, 44.3 ms for 13B) are GPU-bound, so the server CPU
# dispatches a layer in < 0.7 ms. PAPER_HOST_PER_LAYER_MS sits between the two (global fit).
# The five PAPER_* constants are one global fit (tools/calibration/fit.py) on the 122 eager-harness rows that
# state their own tau/alpha: median APE 6.5% (grid: host 0.8-1.2 ms, per forward 1-2 ms, draft step 0-1, cycle 1-4,
# tree cycle 0-3). Until third parties' harnesses joined (Spec-Bench's leaderboard, RADAR's EAGLE-2/3 baselines:
# 53 rows) the fit on the methods' own papers gave 0/1/0 ms for draft step, cycle and tree cycle at 3.8% on 69
# rows; those constants over-predict the third parties' runs of the same heads by 30-60% (Spec-Bench EAGLE-2 on an
# A100 at its own tau 4.34: 3.57x predicted, 2.36x measured), so one eager "paper" harness now stands for research
# code in general, and the methods' own papers come out a little fast.
PAPER_HOST_PER_LAYER_MS = 0.9  # within the two anchors above
PAPER_PER_FORWARD_MS = 1.0  # logits processing, argmax/sampling and a .item() sync per forward
PAPER_DRAFT_STEP_HOST_MS = 0.6  # top-k/tree expansion and tensor bookkeeping per draft step
PAPER_CYCLE_MS = 2.0  # accept/reject and KV-cache index update per cycle
PAPER_CYCLE_TREE_MS = 1.0  # tree mask and candidate gather on top

# Serving engines: per-cycle cost = ENGINE_CYCLE_MS + ENGINE_SPEC_FORWARD_MS x (forward passes in the cycle:
# draft steps + the verify pass) + ENGINE_CYCLE_PER_SEQ_MS x running sequences (+ ENGINE_CYCLE_TREE_MS for trees).
# Why per forward: the plain decode path overlaps its host work with the GPU (overlap scheduler / async
# scheduling), but the speculative path prepares inputs, metadata and a sync for every draft step and for the
# verify pass. The engine rows with their own acceptance show it: Llama-3.1-8B on one H100 in vLLM (vllm#20780,
# EAGLE-3 K=3/4/7) leaves ~3.3/3.9/5.6 ms per cycle beyond bytes and FLOPs, growing ~0.6 ms per extra draft
# step, while a fixed cost would not grow; Qwen3-30B-A3B (AngelSlim#163, SpecForge#339), DeepSeek-V3.2 MTP
# (sglang#20809) and Llama-3.3-70B (TensorRT-LLM#5146) leave 2-4 ms for 3-5 forwards. The former fixed 5 ms per
# cycle (fitted on SGLang EAGLE-3 Llama-3.1-8B rows alone) is a whole 8B decode step on an H100 and made every
# larger or faster-stepping model look worse than measured (calibrate --engines before this change: cost model
# 21.8% median APE, bias -14.5%).
# The three constants are one global fit (tools/calibration/fit.py, 'engine per-cycle costs') of mean APE over
# the dev set's 48 batch > 1 rows (end to end) plus the *fit* half of tools/data/engine_measurements.csv (rows'
# own tau/alpha where stated, priors otherwise; split by source, calibrate --engines): 13.0% vs 15.1% for the
# old 5 ms + 0.05 ms/seq (dev batch rows 12.2% vs 12.6%, engine fit half 14.8% vs 20.7%); the held-out half,
# never fitted, moves from 20.7% to 15.1% mean APE. Flat within ~0.2 pp for fixed 0-0.5 ms, per forward
# 0.7-0.9 ms, per sequence 0.1-0.15 ms (the per-sequence term is fitted up to batch 64 only). One set for all
# three engines: the engine rows are too few per engine to fit them apart (TensorRT-LLM: 5 usable rows, 1 with
# its own acceptance).
ENGINE_CYCLE_MS = 0.0  # global fit: fixed per-cycle work beyond the per-forward term (acceptance, KV rollback)
ENGINE_SPEC_FORWARD_MS = 0.8  # global fit: per draft step and per verify pass of a speculative cycle
ENGINE_CYCLE_TREE_MS = 1.0  # assumption: tree mask/index building on top (too few engine tree rows to fit)
# Per running request per cycle (spec path not overlapped), one figure for MoE verifiers and one for dense ones. One
# shared figure (0.2 ms, the top of its grid) was pulled two ways: every fit-split row that needs it is a MoE verifier
# at concurrency 8-64 (Kimi-K2.5 on MI325X at 40, DeepSeek-V3 MTP at 48, gpt-oss-120b at 64, all SGLang), while the
# dense concurrency sweeps (the EAGLE-3 paper's SGLang and vLLM tables on Llama-3.1-8B, Clover's Medusa on vLLM: the
# fit split has no dense row above concurrency 4) measure 1.3-1.4x at batch 48-64 where 0.2 ms predicts 0.85-0.97x.
# Both are execution-path fits (tools/calibration/fit.py, which pools those dev sweeps in): MoE 0.3 ms, dense 0.1 ms,
# objective 14.6% -> 13.0% mean APE. What the MoE figure stands for is not known: it is a per-request cost in the
# model, but it may be MoE verify work that grows with batch x verified tokens (a per-token MoE term, tried, fitted the
# fit split as well and made the holdout rows worse: 11.2% -> 14.8% mean APE, so it was dropped). Out of sample the
# split is neutral: the holdout's 17 dense rows at concurrency >= 8 (vLLM and SGLang) score 12.2% mean APE with it and
# with the former shared 0.2 ms alike, the whole holdout half 14.7% vs 14.6%; it is kept because the rows it was fitted
# on (the fit split and the dev sweeps, not the holdout) prefer it, and it stops a dense estimate from paying a MoE
# figure at high concurrency (the EAGLE-3 paper's SGLang table: 1.38x at batch 64 where 0.2 ms predicted 0.85x).
ENGINE_CYCLE_PER_SEQ_MS = 0.3
ENGINE_CYCLE_PER_SEQ_DENSE_MS = 0.1
# ~12 kernels per decoder layer x ~3 us launch tail / small-kernel floor inside CUDA graphs (assumption).
# This floor is what makes a many-layer tiny draft cost nearly as much as its verifier (vllm#15025).
ENGINE_GAP_PER_LAYER_MS = 0.035
# Execution paths (calibrate --fit, 'engine execution paths'): coordinate descent on the fit split only: the 35
# engine rows that state their own tau/alpha from the speedup's own run (each read with the overlap its engine
# version had, tools/model/overlap.py) pooled with the 15 no-speculation baselines of fit-split rows (tools/data/
# engine_baselines.csv, the absolute plain step) and the 32 dev rows an engine ran at batch > 1 (end to end, priors
# without the row's source or any holdout source): mean APE 13.0% on those 82, within 0.25 pp of the grid's best
# point (12.8%: SGLang one-model 0.1 ms per forward, TensorRT-LLM 0.5 ms per cycle, MoE per-request 0.4 ms); before
# the 16-bit MoE term the first 50 scored 15.7%. The holdout half, never fitted: its 39 rows 11.5% and its 10 plain
# steps 13.9%. The surface is flat in the per-engine cycle terms (SGLang per-cycle 1.5-3 ms, spec v2 exposure 1-2 ms
# within 0.6 pp), so those few numbers are not pinned down by 35 rows.
# MoE layers: router, top-k and grouped-GEMM launches plus expert dispatch/combine cost a fixed time per layer per
# forward that a verify pass of a few tokens does not multiply; without it a DeepSeek-V3/R1 step at batch 1 on
# 8 GPUs is a few bandwidth-milliseconds and each extra verified token looks expensive (measured: TensorRT-LLM MTP
# on 8x B200 holds ~2.2x from N=2 to 5, TensorRT-LLM DeepSeek-R1 blog; SGLang 2.1x at concurrency 1, sglang#20809).
# Quantized experts (FP8, MXFP4, NVFP4, INT4: every MoE engine row but one family) pay 0.1 ms; experts kept in
# 16-bit weights 0.02 ms, both fitted. The fit's evidence for the 16-bit term is one source, SpecForge#339
# (Qwen3-30B-A3B in bf16 on 2x H100, SGLang: 4.49 ms per token at batch 1 without speculation, where one shared
# 0.08 ms term predicted 7.73 ms; now 4.85 ms). Our reading of why, not measured: a 16-bit grouped GEMM needs no
# activation quantisation, dequantisation or block-scale kernels around it. Caveats: the term was proposed after
# seeing the holdout AngelSlim#163 baselines of the same model as well (4.57 ms at batch 1: now -6%, was +57%; 7.88
# ms at batch 4: now -34%, was +2%: small-batch expert GEMMs cost more than their bytes, which is not modelled);
# and Qwen3-30B-A3B is the only 16-bit MoE family among the engine rows, so its small hidden size (2048) is
# confounded with its weight format. Answers that use the 16-bit term say so (tools/model/steptime.py).
ENGINE_MOE_LAYER_MS = 0.1
ENGINE_MOE_LAYER_16BIT_MS = 0.02
# The line an answer carries when its MoE step used the 16-bit term (tools/model/steptime.py).
MOE_16BIT_NOTE = ("MoE layers with 16-bit expert weights are costed with their own fitted fixed time "
                  f"({ENGINE_MOE_LAYER_16BIT_MS} ms per layer per forward against {ENGINE_MOE_LAYER_MS} ms for "
                  "quantized experts), fitted on one model family (Qwen3-30B-A3B in SGLang, SpecForge#339): measure "
                  "the plain step of yours before trusting the absolute figures")
# One-model path (heads inside the verifier's runner): per draft/verify forward and per cycle, per engine. (per
# draft/verify forward ms, per cycle ms): SGLang's per-cycle cost is the largest, 2 ms: after every verify SGLang's
# EAGLE/MTP worker runs one more draft forward, an "extend" over the accepted tokens with its own graph runner
# (sgl-project/sglang python/sglang/srt/speculative/eagle_worker.py forward_draft_extend_after_decode;
# eagle_draft_extend_cuda_graph_runner.py), where vLLM and TensorRT-LLM fold the accepted tokens into the first draft
# step (that forward is costed in cyclecost.py; this is the host work around it). Its fit rows are all MoE (gpt-oss
# SpecDrift cards, Qwen3-30B-A3B SpecForge#339: slower than no speculation at every draft shape). Its per-forward cost
# fell from the generic 0.8 ms to 0.3 ms once the 16-bit MoE layer term let the Qwen3-30B-A3B plain step be fast (the
# per-forward term had been carrying that verifier's cost), and to 0.2 ms with the per-request cost split by verifier
# kind; vLLM's per-cycle cost went 0.5 -> 0 ms in that refit (flat: its one-model fit rows are few). TensorRT-LLM's
# C++ loop has no fixed per-cycle cost in the fit; its few fit rows (TensorRT-LLM#5146) make it the least certain.
ONE_MODEL: dict[str, tuple[float, float]] = {"vllm": (0.5, 0.0), "sglang": (0.2, 2.0), "trtllm": (0.5, 0.0)}
# SGLang spec v2 (overlap scheduling, tools/model/overlap.py) still waits on each verify result
# (sglang#11762: "Remove or make verify_done.synchronize() an option"): execution-path fit, grid 0-3 ms, on its fit
# rows that ran spec v2 (SpecDrift gpt-oss-20b/120b cards); 1.5 and 2 ms score within 0.2 pp (2 ms best). vLLM's
# stays 0: its 0.19 release describes "zero-bubble async scheduling + speculative decoding" (vllm#32951).
SGLANG_SPEC_V2_EXPOSED_MS = 2.0
# Overlap scheduling hides the speculative path's per-forward and per-cycle host work, but most of its per-request work
# stays on the critical path: fitted (tools/calibration/fit.py, 'overlap: per-request work exposed') end to end on the
# 26 fit-split rows that ran with overlap (vLLM >= 0.14 EAGLE-3 on Kimi-K2.5/K2.6 and MiniMax-M2.5/M3, AMD and NVIDIA,
# batch 1-64, 15 of them from one ROCm blog; SGLang spec v2 gpt-oss cards), acceptance from priors without the row's own
# source or any holdout source. Mean APE on them 13.4% with everything hidden (0) -> 6.5% at 0.6; refitted with each of
# the 5 sources left out and scored on the left-out one, 6.5%. (It was 0.8 while the MoE per-request cost was 0.2 ms:
# the rows pin down the product, 0.16-0.18 ms per request, not the two factors.) What it fixes is a trend: with all
# of it hidden, speedup *rose* from concurrency 16 to 64 on these MoE verifiers (Kimi-K2.5 on 4x MI355X: 1.75x -> 2.29x predicted, 1.81x ->
# 1.69x measured). vLLM's async scheduling PR measured only 3.4% lower TPOT for EAGLE-3 at concurrency 1 (vllm#25872),
# consistent with most speculative host work staying serial. Every one of those rows is a MoE verifier, so the share is
# applied to MoE verifiers only (tools/model/cyclecost.py); a dense verifier's host work is taken as hidden (stated in
# the answer). The only dense rows measured with overlap (TOMASRUIZT-VLLM-SPEC-2026, holdout, never fitted: Qwen3-32B
# and Llama-3.3-70B EAGLE-3 in vLLM, concurrency 1-64) do not argue for a share: with all of it hidden and their own
# tau the model already runs 12-32% low at concurrency 64 (at 32: -19% and +9%).
OVERLAP_SEQ_EXPOSED_FRACTION = 0.6


class OverheadTable(BaseModel):
    """The ``RuntimeOverhead`` of every harness, one field each (frozen and hashable, so step times can be cached
    per constant set; a fit varies a copy: ``table.model_copy(update={"paper": ...})``)."""

    model_config = ConfigDict(frozen=True)

    paper: RuntimeOverhead = Field(description="eager PyTorch research code of the papers")
    transformers: RuntimeOverhead = Field(description="HF transformers generate() / assisted generation")
    compiled: RuntimeOverhead = Field(description="compiled single-graph decoders (gpt-fast, XLA on TPU)")
    vllm: RuntimeOverhead = Field(description="vLLM with CUDA graphs")
    sglang: RuntimeOverhead = Field(description="SGLang with CUDA graphs")
    trtllm: RuntimeOverhead = Field(description="TensorRT-LLM")
    llamacpp: RuntimeOverhead = Field(description="llama.cpp (llama-server, one user): tools/model/overhead_llamacpp.py")

    def get(self, harness: str) -> RuntimeOverhead:
        """The overhead constants of ``harness``; InputError for an unknown name."""
        if harness not in HARNESSES:
            raise InputError(f"unknown harness '{harness}': choose one of {', '.join(HARNESSES)}")
        return getattr(self, harness)

    def items(self) -> list[tuple[str, RuntimeOverhead]]:
        """(harness, overhead) pairs in ``HARNESSES`` order."""
        return [(h, getattr(self, h)) for h in HARNESSES]


# The committed per-harness constants; the model reads them through ``ModelConstants.overheads``
# (tools/model/constants.py), never from here.
DEFAULT_OVERHEADS = OverheadTable(
    paper=RuntimeOverhead(
        harness="paper",
        host_per_layer_ms=PAPER_HOST_PER_LAYER_MS,
        gpu_gap_per_layer_ms=0.0,
        per_forward_ms=PAPER_PER_FORWARD_MS,
        draft_step_host_ms=PAPER_DRAFT_STEP_HOST_MS,
        cycle_ms=PAPER_CYCLE_MS,
        cycle_tree_ms=PAPER_CYCLE_TREE_MS,
        layer_split=True,
        source="eager PyTorch research code (EAGLE/Medusa/Hydra/Lookahead/REST repos, HF device_map='auto' "
        "for multi-GPU); host anchors from published rows EAGLE-GPTFAST and REST-README; cycle costs global fit",
    ),
    transformers=RuntimeOverhead(
        harness="transformers",
        host_per_layer_ms=PAPER_HOST_PER_LAYER_MS,
        gpu_gap_per_layer_ms=0.0,
        per_forward_ms=PAPER_PER_FORWARD_MS,
        draft_step_host_ms=0.2,  # assumption: assisted generation adds candidate bookkeeping per draft token
        cycle_ms=1.0,  # assumption: HF candidate generator + cache cropping per cycle (more than research code)
        cycle_tree_ms=0.0,  # HF assisted generation has no trees
        layer_split=True,
        source="assumption: HF generate() is eager PyTorch like the papers' harnesses (same dispatch constants); "
        "assisted generation is batch-1 only (ENGINES.md, transformers)",
    ),
    # Compiled single-graph decoding: gpt-fast (torch.compile + CUDA graphs) and XLA on TPU (T5X).
    compiled=RuntimeOverhead(
        harness="compiled",
        host_per_layer_ms=0.0,
        gpu_gap_per_layer_ms=0.004,  # assumption: ~8 kernels x 0.5 us tail per layer inside one graph
        per_forward_ms=0.15,  # assumption: graph launch + sampling
        draft_step_host_ms=0.05,
        cycle_ms=0.3,
        cycle_tree_ms=0.5,
        layer_split=False,
        source="assumption: compiled decoders (gpt-fast: 55.1 tok/s LLaMA2-7B fp16 on RTX 3090 = 79% of "
        "bandwidth roofline, published row EAGLE-GPTFAST; T5X/XLA on TPU)",
    ),
    # Serving engines: CUDA graphs for decode and draft steps; costs per cycle are scheduler work
    # that the non-speculative path overlaps (overlap scheduler) but the speculative path does not.
    # Constants: ENGINE_* above.
    vllm=RuntimeOverhead(
        harness="vllm",
        host_per_layer_ms=0.0,
        gpu_gap_per_layer_ms=ENGINE_GAP_PER_LAYER_MS,
        per_forward_ms=0.3,  # assumption: sampler + graph replay
        draft_step_host_ms=0.3,  # assumption: per draft step sampler + proposer bookkeeping outside the graph
        cycle_ms=ENGINE_CYCLE_MS,
        cycle_tree_ms=ENGINE_CYCLE_TREE_MS,
        cycle_per_seq_ms=ENGINE_CYCLE_PER_SEQ_MS,
        cycle_per_seq_dense_ms=ENGINE_CYCLE_PER_SEQ_DENSE_MS,
        spec_forward_ms=ENGINE_SPEC_FORWARD_MS,
        one_model_spec_forward_ms=ONE_MODEL["vllm"][0],
        one_model_cycle_ms=ONE_MODEL["vllm"][1],
        overlap_seq_exposed_fraction=OVERLAP_SEQ_EXPOSED_FRACTION,
        moe_layer_ms=ENGINE_MOE_LAYER_MS,
        moe_layer_16bit_ms=ENGINE_MOE_LAYER_16BIT_MS,
        layer_split=False,
        source="engine costs: calibrate --fit on the fixed fit split of tools/data/engine_measurements.csv "
        "(execution paths: one-model per engine, two-model/model-free shared; MoE layer times shared, with plain-step "
        "baselines); "
        "vllm#26191 reports acceptance drifting below earlier measurements (ENGINES.md issue 18)",
    ),
    sglang=RuntimeOverhead(
        harness="sglang",
        host_per_layer_ms=0.0,
        gpu_gap_per_layer_ms=ENGINE_GAP_PER_LAYER_MS,
        per_forward_ms=0.3,  # assumption: sampler + graph replay
        draft_step_host_ms=0.1,  # assumption: draft steps captured in CUDA graphs
        cycle_ms=ENGINE_CYCLE_MS,
        cycle_tree_ms=ENGINE_CYCLE_TREE_MS,
        cycle_per_seq_ms=ENGINE_CYCLE_PER_SEQ_MS,
        cycle_per_seq_dense_ms=ENGINE_CYCLE_PER_SEQ_DENSE_MS,
        spec_forward_ms=ENGINE_SPEC_FORWARD_MS,
        one_model_spec_forward_ms=ONE_MODEL["sglang"][0],
        one_model_cycle_ms=ONE_MODEL["sglang"][1],
        # sgl-project/sglang python/sglang/srt/speculative/eagle_worker.py forward_draft_extend_after_decode (with its
        # own eagle_draft_extend_cuda_graph_runner.py): a draft forward over the accepted tokens after every verify
        one_model_extend_forward=True,
        overlap_exposed_ms=SGLANG_SPEC_V2_EXPOSED_MS,
        overlap_seq_exposed_fraction=OVERLAP_SEQ_EXPOSED_FRACTION,
        overlap_chains_only=True,  # spec v2 "requires --speculative-eagle-topk 1" (sglang docs, PR #20210)
        moe_layer_ms=ENGINE_MOE_LAYER_MS,
        moe_layer_16bit_ms=ENGINE_MOE_LAYER_16BIT_MS,
        layer_split=False,
        source="engine costs: calibrate --fit on the fixed fit split of tools/data/engine_measurements.csv "
        "(execution paths: one-model per engine, two-model/model-free shared; MoE layer times shared, with plain-step "
        "baselines); SGLang "
        "spec loses above concurrency ~32 (sglang#4759)",
    ),
    trtllm=RuntimeOverhead(
        harness="trtllm",
        host_per_layer_ms=0.0,
        gpu_gap_per_layer_ms=0.025,  # assumption: fused C++ kernels, slightly fewer per layer
        per_forward_ms=0.2,  # assumption
        draft_step_host_ms=0.05,  # assumption: C++ drafter loop
        cycle_ms=ENGINE_CYCLE_MS,
        cycle_tree_ms=ENGINE_CYCLE_TREE_MS,
        cycle_per_seq_ms=ENGINE_CYCLE_PER_SEQ_MS,
        cycle_per_seq_dense_ms=ENGINE_CYCLE_PER_SEQ_DENSE_MS,
        spec_forward_ms=ENGINE_SPEC_FORWARD_MS,
        one_model_spec_forward_ms=ONE_MODEL["trtllm"][0],
        one_model_cycle_ms=ONE_MODEL["trtllm"][1],
        moe_layer_ms=ENGINE_MOE_LAYER_MS,
        moe_layer_16bit_ms=ENGINE_MOE_LAYER_16BIT_MS,
        layer_split=False,
        source="engine costs: calibrate --fit on the fixed fit split of tools/data/engine_measurements.csv "
        "(execution paths: one-model per engine, two-model/model-free shared; MoE layer times shared, with plain-step "
        "baselines); AUTO "
        "mode turns speculation off above concurrency 32 (ENGINES.md)",
    ),
    llamacpp=RuntimeOverhead(
        harness="llamacpp",
        host_per_layer_ms=0.0,
        gpu_gap_per_layer_ms=lcpp.GPU_GAP_PER_LAYER_MS,
        per_forward_ms=lcpp.PER_FORWARD_MS,
        draft_step_host_ms=0.0,  # a draft forward's host work is spec_forward_ms (each is its own llama_decode)
        cycle_ms=lcpp.CYCLE_MS,
        cycle_tree_ms=0.0,  # llama.cpp drafts chains only
        spec_forward_ms=lcpp.SPEC_FORWARD_MS,
        verify_token_frac=lcpp.VERIFY_TOKEN_FRAC,
        verify_token_frac_apple=lcpp.VERIFY_TOKEN_FRAC_APPLE,
        verify_token_frac_amd=lcpp.VERIFY_TOKEN_FRAC_AMD,
        moe_layer_ms=lcpp.MOE_LAYER_MS,
        layer_split=True,  # llama.cpp's default split mode over several GPUs is by layer (-sm layer)
        source="llama.cpp constants: calibrate --fit ('llama.cpp') on the fit half of the llama.cpp rows of "
        "tools/data/engine_measurements.csv (tools/model/overhead_llamacpp.py)",
    ),
)

ExecutionPath = Literal["eager", "one_model", "two_model", "model_free"]


def execution_path(overhead: RuntimeOverhead, method: str) -> ExecutionPath:
    """How ``method`` executes in this runtime: the eager loop of research code / HF generate, or a serving
    engine's one-model path (heads inside the verifier's runner), two-model path (a separate draft model with its
    own runner) or model-free path (drafts looked up on the host)."""

    if overhead.one_model_spec_forward_ms is None:
        return "eager"
    if method in TRAINED_HEAD_METHODS:
        return "one_model"
    if method in MODEL_FREE_METHODS:
        return "model_free"
    return "two_model"


def verify_token_frac(overhead: RuntimeOverhead, vendor: str) -> float:
    """The share of a plain step's memory time each extra verified token costs on this GPU vendor's back end."""
    by_vendor = {"apple": overhead.verify_token_frac_apple, "amd": overhead.verify_token_frac_amd}.get(vendor)
    return overhead.verify_token_frac if by_vendor is None else by_vendor


def per_seq_ms(overhead: RuntimeOverhead, moe: bool) -> float:
    """Per running request per speculative cycle: the MoE figure, or the dense one where it is set."""
    if moe or overhead.cycle_per_seq_dense_ms is None:
        return overhead.cycle_per_seq_ms
    return overhead.cycle_per_seq_dense_ms


def path_overhead_ms(overhead: RuntimeOverhead, path: ExecutionPath, *, forwards: int, batch: int,
                     tree: bool, moe: bool = False) -> float:
    """Per-cycle runtime overhead of one speculative cycle on ``path`` (milliseconds).

    ``forwards`` counts the draft steps and the verify pass the cycle launches. The one-model path replaces the
    generic per-forward and per-cycle terms with its own (graph-captured draft steps cost less host work).
    """
    per_forward, fixed = overhead.spec_forward_ms, overhead.cycle_ms
    if path == "one_model":
        per_forward = overhead.one_model_spec_forward_ms if overhead.one_model_spec_forward_ms is not None \
            else per_forward
        fixed = overhead.one_model_cycle_ms if overhead.one_model_cycle_ms is not None else fixed
    return (fixed + (overhead.cycle_tree_ms if tree else 0.0) + per_seq_ms(overhead, moe) * batch
            + per_forward * forwards)


# Each engine's runtime constants (EngineSpec.harness; llama.cpp's are fitted on llama.cpp rows only,
# tools/model/overhead_llamacpp.py).
ENGINE_TO_HARNESS: dict[str, str] = {e.name: e.harness for e in engines()}


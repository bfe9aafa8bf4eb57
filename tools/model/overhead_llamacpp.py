"""llama.cpp's per-cycle constants: its own harness, fitted on llama.cpp rows only (tools/calibration/llamacpp_fit.py).

llama.cpp decodes one user at a time (``--parallel 1``) from C++: a plain decode step is a bandwidth-bound pass over
the quantized weights (the roofline of ``tools/model/steptime.py``). A speculative cycle differs from the serving
engines' in three ways the model keeps apart:

* **verification is not free**: the target's pass over N+1 tokens runs the quantized mat-mat kernels (dequantize,
  then multiply per token) where a single token runs the mat-vec ones, and outside the single-token CUDA graph; each
  extra verified token costs a share of the weight-streaming time (``VERIFY_TOKEN_FRAC``), more on Apple Metal
  and AMD (Vulkan/ROCm) where the small-batch kernels are less tuned, when the llama.cpp rows show it;
* **every draft forward is its own ``llama_decode``** (MTP head or draft model context): its roofline time plus the
  host work of building, launching and syncing a graph and sampling its token (``SPEC_FORWARD_MS``);
* **a fixed host cost per cycle**: sampling and comparing N+1 logits rows, KV-cache removal of the rejected tail
  (``llama_memory_seq_rm``), batch preparation (``CYCLE_MS``).

Each value is one fit (``specpick calibrate --fit``, fit 'llama.cpp') on the *fit* half of the llama.cpp rows of
``tools/data/engine_measurements.csv`` (split by source, ``tools/data/engine_split.csv``); the holdout half is
scored, never fitted on. No llama.cpp row enters another engine's fit, and no other engine's row enters this one.
"""

from __future__ import annotations

# The fit (2026-12-01, redone once the breadth pass's rows landed): 92 fit-half rows from 12 sources (73 MTP /
# DFlash / DSpark rows, 49 of them QWEN38-MTP-README's Qwen3.8-27B on 16 GPU models; 15 draft-model rows from 5
# sources; 4 n-gram rows from 2), 62 on NVIDIA, 17 AMD, 13 Apple, 15 on MoE verifiers. Few rows state a tau of their
# own (the README's "acceptance" is accepted / drafted and falls below the measured speedup on some rows: see
# docs/pending-data/LLAMACPP-COMMUNITY-2026.md), so acceptance comes from the priors an answer reads, without the
# row's own source or any llama.cpp holdout source. Mean APE 21.8% (heads 12.9%, draft models 65.9%, n-gram 18.5%);
# the values fitted on the first 52 rows (2 sources, no MoE term) score 22.6%. The llama.cpp holdout half (37 rows,
# 12 sources, never fitted): 29.9% mean APE.
# Extra verified token on NVIDIA (CUDA) and AMD, the shared value: 0.08 of a plain step's memory time (0.1: +0.0 pp,
# 0.15: +1.5 pp; 0 scored 3.9 pp worse on the first 52 rows). On Qwen3.8-27B Q4_K_M on an RTX 3090 that is ~1.7 ms
# per extra token on a ~22 ms step.
VERIFY_TOKEN_FRAC = 0.08
# Apple (Metal): 0.4 per extra verified token, fitted on 13 Apple rows from 4 sources (M4, M3 Ultra, M2 Ultra, M1
# Max: MTP 0.76-1.14x, a draft model 0.47x); without the term the fit scores +1.3 pp (0.3 and 0.5: +0.1 pp).
VERIFY_TOKEN_FRAC_APPLE: float | None = 0.4
# AMD (ROCm / Vulkan): no value of its own. The rule, set before the holdout was scored: a back end gets its own value
# only where it gains more than 0.5 pp on the fit half; AMD's best (0.04) gains 0.2 pp. (calibrate --fit reports
# the holdout at the grid best, AMD value included, beside the committed one; it was not used to choose.)
VERIFY_TOKEN_FRAC_AMD: float | None = None
# Host work per draft forward beyond its roofline: grid 0-3 ms, best 0 (0.25: +0.2 pp): the rows show no per-forward
# cost once the verify surcharge and the per-cycle cost are there.
SPEC_FORWARD_MS = 0.0
# Fixed host work per cycle (sampling and comparing N+1 logits rows, KV removal of the rejected tail, batch setup):
# grid 0-8 ms, best 3 ms (2: +0.6 pp, 4: +0.3 pp).
CYCLE_MS = 3.0
# Fixed time per MoE layer per forward (router, top-k and the expert mat-mul launches, which a verify pass of a few
# tokens does not multiply; the serving engines carry the same term, ENGINE_MOE_LAYER_MS): 0.05 ms, fitted on the 15
# MoE fit rows (Qwen3.6-35B-A3B on an RTX 3090, M2 Ultra and Strix Halo); 0: +0.8 pp, 0.1: +1.1 pp. Without it a
# verify pass of a few tokens on a 256-expert verifier reads several times a decode step's experts, and the MoE rows
# came out 30-50% slow.
MOE_LAYER_MS = 0.05
# Plain-step constants (assumptions, not fitted: a speedup is a ratio, and these move both of its terms alike):
# llama.cpp decodes a single token through one CUDA graph (ggml-cuda's graph capture for batch-1 decode), so the
# compiled decoders' figures stand: a small gap per layer and a fixed sampling/launch cost per forward.
GPU_GAP_PER_LAYER_MS = 0.004
PER_FORWARD_MS = 0.15

# What the fit rested on (tests/test_llamacpp_fit.py checks them against the rows): fit-half rows and their sources.
FIT_ROWS = 92
FIT_SOURCES = ("AIMAESTRO-STRIXHALO-MTP", "CALEBCOFFIE-MTP", "DEVTO-SOMEODDCODEGUY-MTP", "FEDI-46973921",
               "HF-GAZTRAB-27B-MTP-IQ3", "INVENTIVEHQ-DRAFTSWEEP", "LLAMACPP-10664", "LLAMACPP-23752", "LLAMACPP-25173",
               "OPENCLAWRADAR-HVAC", "QWEN38-MTP-README", "THC1006-RTX3090")


def path_note() -> str:
    """The line every llama.cpp estimate carries: which path the number is for and what its cost constants rest on."""
    apple = VERIFY_TOKEN_FRAC_APPLE if VERIFY_TOKEN_FRAC_APPLE is not None else VERIFY_TOKEN_FRAC
    return (f"llama.cpp path: the number is for llama-server decoding one request at a time (--parallel 1), with "
            f"llama.cpp's own cycle constants fitted on {FIT_ROWS} llama.cpp rows from {len(FIT_SOURCES)} sources "
            f"(tools/model/overhead_llamacpp.py): {SPEC_FORWARD_MS:g} ms of host work per draft forward, "
            f"{CYCLE_MS:g} ms per cycle, each extra verified token {VERIFY_TOKEN_FRAC:g} of a plain step's memory time "
            f"({apple:g} on Apple Metal), {MOE_LAYER_MS:g} ms per MoE layer; `specpick calibrate --engines` grades it leave-one-source-out "
            "(llama.cpp section)")

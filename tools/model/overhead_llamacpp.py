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

# The fit (2026-12-01): 52 fit-half rows from 2 sources (QWEN38-MTP-README: 49 MTP rows of Qwen3.8-27B on 16 GPU
# models, NVIDIA/AMD/Apple; LLAMACPP-10664: 3 draft-model rows on an A100). No fit row states a tau of its own (the
# README's "acceptance" is accepted / drafted and falls below the measured speedup on some rows: see
# docs/pending-data/LLAMACPP-COMMUNITY-2026.md), so acceptance comes from the priors an answer reads, without the
# row's own source or any llama.cpp holdout source. Mean APE 20.7% at the first fitted values (0 / 0.4 / 0.5 ms /
# 1 ms, fitted against priors without every serving-engine holdout source as well: DeepSeek-V3's SGLang MTP
# acceptance stood in for the Qwen3.5 family's vLLM rows) -> 15.4% at the values below (the 49 MTP rows 12.0%; the
# 3 draft-model rows, 2024 slowdown reports, 69%). The llama.cpp holdout half (5 rows, 3 sources, never fitted):
# 20.5% mean APE.
# Extra verified token on NVIDIA (CUDA), the shared value: 0.08 of a plain step's memory time (0.06 and 0.1: +0.1-0.2
# pp; 0: +3.9 pp). At Qwen3.8-27B Q4_K_M on an RTX 3090 that is ~1.7 ms per extra token on a ~22 ms step.
VERIFY_TOKEN_FRAC = 0.08
# Apple (Metal): 0.5 per extra verified token. Evidence: 2 rows of one source (M4 and M3 Ultra, Qwen3.8-27B MTP
# n-max 2: 1.00x and 1.06x measured); without the term the fit scores 17.5% (+2.1 pp; 0.4: +0.2 pp, 0.6: +0.0).
# Thin: two Apple rows of one source; the M1 Ultra report of LLAMACPP-22673 (~1.58x, approximate, not used for error
# figures) points the other way.
VERIFY_TOKEN_FRAC_APPLE: float | None = 0.5
# AMD (ROCm / Vulkan): no value of its own. The rule, set before the holdout was scored: a back end gets its own value
# only where it gains more than 0.5 pp on the fit half; AMD's best (0.04) gains 0.1 pp. (calibrate --fit reports
# the holdout at the grid best, AMD value included, beside the committed one; it was not used to choose.)
VERIFY_TOKEN_FRAC_AMD: float | None = None
# Host work per draft forward beyond its roofline: grid 0-3 ms, best 0 (0.25: +0.4 pp, 0.5: +0.9 pp): the rows show no
# per-forward cost that grows with N once the verify surcharge is there.
SPEC_FORWARD_MS = 0.0
# Fixed host work per cycle (sampling and comparing N+1 logits rows, KV removal of the rejected tail, batch setup):
# grid 0-6 ms, best 3 ms (2: +0.0 pp, 4: +0.2 pp): flat between 2 and 4 ms.
CYCLE_MS = 3.0
# Fixed time per MoE layer per forward (router, top-k and the expert mat-mul launches, which a verify pass of a few
# tokens does not multiply; the serving engines have the same term, ENGINE_MOE_LAYER_MS): no MoE row is in the fit
# half yet (GEMMACLAW-346, the one MoE llama.cpp row, is holdout), so the fit cannot move it from 0 (grid 0-0.3 ms).
MOE_LAYER_MS = 0.0
# Plain-step constants (assumptions, not fitted: a speedup is a ratio, and these move both of its terms alike):
# llama.cpp decodes a single token through one CUDA graph (ggml-cuda's graph capture for batch-1 decode), so the
# compiled decoders' figures stand: a small gap per layer and a fixed sampling/launch cost per forward.
GPU_GAP_PER_LAYER_MS = 0.004
PER_FORWARD_MS = 0.15

# What the fit rested on (tests/test_llamacpp_fit.py checks them against the rows): fit-half rows and their sources.
FIT_ROWS = 52
FIT_SOURCES = ("LLAMACPP-10664", "QWEN38-MTP-README")


def path_note() -> str:
    """The line every llama.cpp estimate carries: which path the number is for and what its cost constants rest on."""
    apple = VERIFY_TOKEN_FRAC_APPLE if VERIFY_TOKEN_FRAC_APPLE is not None else VERIFY_TOKEN_FRAC
    return (f"llama.cpp path: the number is for llama-server decoding one request at a time (--parallel 1), with "
            f"llama.cpp's own cycle constants fitted on {FIT_ROWS} llama.cpp rows ({', '.join(FIT_SOURCES)}; "
            f"tools/model/overhead_llamacpp.py): {SPEC_FORWARD_MS:g} ms of host work per draft forward, "
            f"{CYCLE_MS:g} ms per cycle, each extra verified token {VERIFY_TOKEN_FRAC:g} of a plain step's memory time "
            f"({apple:g} on Apple Metal); `specpick calibrate --engines` grades it leave-one-source-out "
            "(llama.cpp section)")

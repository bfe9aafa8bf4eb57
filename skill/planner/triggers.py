"""The deployment conditions that raise a flag or move a rule, and the thresholds they cut at: one home each.

The planner's flags (``flags.py``), its draft-length rules (``tuning.py``), its answer and fallback (``plan.py``,
``fallback.py``) and the evals' flag triggers (``evals/flag_triggers.py``) all read these, so a case can never
require a flag under a condition the planner does not raise it for (issue 33: the evals used to keep their own
copies, and the KV dtypes they called exotic differed from the planner's).
"""

from __future__ import annotations

from specpick.tools.vocab import HIGH_TEMPERATURE_ABOVE

# Below this expected gain the operational cost (second model, head, tuning) is not worth it: the answer turns
# speculation off under it, and the fallback's "measured speedup below" trigger and its "switch to" alternative use
# the same bar (they used to cut at 1.05 / up to 1.2, so an answer could switch away from what it called worth it).
WORTH_RUNNING_SPEEDUP = 1.1
# From here on the verifier's verify pass approaches compute-bound on current GPUs (EAGLE-3 Table 5 decay).
HIGH_CONCURRENCY = 16
# KV-cache dtypes the engines ship and test with speculation; anything else is "exotic" (vllm#40831).
KNOWN_KV_DTYPES = frozenset({None, "auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2"})
# Context from which decode stays memory-bound at higher batch (MagicDec, arXiv 2408.11049, reports its gains from
# 32k tokens; published_measurements.csv MAGICDEC rows).
LONG_CONTEXT_TOKENS = 32_768
# Weight formats that are the checkpoint's own precision (a head trained on them sees the same hidden states).
FULL_PRECISION = frozenset({None, "bf16", "fp16"})

__all__ = ["FULL_PRECISION", "HIGH_CONCURRENCY", "HIGH_TEMPERATURE_ABOVE", "KNOWN_KV_DTYPES", "LONG_CONTEXT_TOKENS",
           "WORTH_RUNNING_SPEEDUP", "beam", "concurrent", "exotic_kv", "hot", "long_context", "pipelined",
           "quantized"]


def hot(temperature: float) -> bool:
    """Sampling hot enough to lose acceptance (the high_temperature flag, N <= 3)."""
    return temperature > HIGH_TEMPERATURE_ABOVE


def beam(sampling: str | None) -> bool:
    """Beam search: no engine combines it with speculation (the beam_search blocker)."""
    return sampling == "beam"


def pipelined(pipeline_parallel: int) -> bool:
    """Pipeline parallelism: fails with speculation in vLLM and TensorRT-LLM (the pipeline_parallel blocker)."""
    return pipeline_parallel > 1


def exotic_kv(kv_cache_dtype: str | None) -> bool:
    """A KV-cache dtype the engines do not test with speculation (the exotic_kv_quant blocker)."""
    return kv_cache_dtype not in KNOWN_KV_DTYPES


def long_context(context_tokens: int) -> bool:
    """A context long enough to keep decode memory-bound at higher batch (the long_context flag)."""
    return context_tokens >= LONG_CONTEXT_TOKENS


def concurrent(concurrency: int, latency: str | None = None) -> bool:
    """More than one sequence at once, or a throughput target (the load flags' subject)."""
    return concurrency > 1 or latency == "throughput"


def quantized(quantization: str | None) -> bool:
    """A verifier served below its checkpoint's precision (the quantized-verifier flag's subject)."""
    return quantization not in FULL_PRECISION

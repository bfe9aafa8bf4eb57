"""Which deployment inputs trigger a flag: a case may require a flag only where its own deployment triggers it.

The audit of issue 29 found cases requiring ``batch_saturation`` at concurrency 1, where every answer raises it
as information anyway: such an expectation grades nothing. Each rule below names the input that makes the flag's
subject real for the deployment (the rule's source is the flag's own definition in ``skill/schema.py`` FlagId and
the issue it cites). Flags absent from the table (tokenizer, head, engine-support flags) depend on the method and
the draft rather than on one input, and are not constrained here.
"""

from __future__ import annotations

from typing import Any, Callable

from specpick.skill.planner.triggers import (
    HIGH_TEMPERATURE_ABOVE, LONG_CONTEXT_TOKENS, beam, concurrent, exotic_kv, hot, long_context, pipelined, quantized,
)

Inputs = dict[str, Any]
# The planner's own conditions and cuts (skill/planner/triggers.py): a case can only require a flag where the planner
# raises it. Kept under the old names for the callers that read them.
HIGH_TEMPERATURE = HIGH_TEMPERATURE_ABOVE
# A case's inputs without a context: the context the evals assume (the planner's own default is typical-for-workload;
# 4096 is below every long-context cut, so an unstated context never triggers the flag).
UNSTATED_CONTEXT_TOKENS = 4096


def _concurrent(i: Inputs) -> bool:
    return concurrent(int(i.get("concurrency", 1)), i.get("latency"))


def _hot(i: Inputs) -> bool:
    temp = i.get("temperature")
    return i.get("sampling") == "high-temp" if temp is None else hot(float(temp))


# flag id -> (what must hold in the inputs, the words for the error message)
FLAG_TRIGGERS: dict[str, tuple[Callable[[Inputs], bool], str]] = {
    "batch_saturation": (_concurrent, "concurrency > 1 or latency: throughput (vLLM #6494, #21278)"),
    "large_k_high_load": (_concurrent, "concurrency > 1 or latency: throughput (vLLM #6494, #21278)"),
    "concurrency_acceptance": (_concurrent, "concurrency > 1 or latency: throughput"),
    "high_temperature": (_hot, f"sampling: high-temp or temperature > {HIGH_TEMPERATURE}"),
    "beam_search": (lambda i: beam(i.get("sampling")), "sampling: beam"),
    "pipeline_parallel": (lambda i: pipelined(int(i.get("pipeline_parallel", 1))), "pipeline_parallel > 1"),
    "lora": (lambda i: bool(i.get("lora")), "lora: true"),
    "exotic_kv_quant": (lambda i: exotic_kv(i.get("kv_cache_dtype")),
                        "an exotic kv_cache_dtype (vLLM #40831)"),
    "quantized_verifier_bf16_head": (lambda i: quantized(i.get("quantization")),
                                     "a quantized verifier (quantization fp8/int8/int4/mxfp4)"),
    "transformers_batch1": (lambda i: i.get("engine") == "transformers", "engine: transformers"),
    "transformers_padded_vocab": (lambda i: i.get("engine") == "transformers", "engine: transformers"),
    "long_context": (lambda i: long_context(int(i.get("context_tokens", UNSTATED_CONTEXT_TOKENS))),
                     f"context_tokens >= {LONG_CONTEXT_TOKENS}"),
}


def untriggered(flags: list[str], inputs: Inputs) -> list[str]:
    """The required flags whose deployment trigger is absent from ``inputs``, each with what would trigger it."""
    out = []
    for fid in flags:
        rule = FLAG_TRIGGERS.get(fid)
        if rule is not None and not rule[0](inputs):
            out.append(f"{fid} (needs {rule[1]})")
    return out

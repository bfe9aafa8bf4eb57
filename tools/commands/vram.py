"""`specpick vram`: per-GPU memory for verifier + draft/head weights and both KV caches."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specpick.tools.arch.kv import KV_DTYPE_BYTES
from specpick.tools.arch.params import count_params
from specpick.tools.checks.vram import VramResult
from specpick.tools.deploy.requests import memory_fit
from specpick.tools.deploy.resolve import DeploymentQuery, query_from_input, engine_for_gguf, resolve_deployment
from specpick.tools.errors import InputError
from specpick.tools.deployment_input import (
    ConcurrencyOption, Context, DpAttention, EngineOptional, Gpu, Gpus, HostBandwidth, HostMemory, Verifier,
    WeightFormat, WorkloadOptional,
)
from specpick.tools.validation import GpuCount, MemoryFraction, ModelName, ParamsB
from specpick.tools.vocab import Quantization


class VramInput(BaseModel):
    """What to fit: verifier (+ optional draft), GPU, dtype, context, concurrency.

    Ranges and finiteness come from ``tools/validation.py`` (shared by the CLI, the Claude tool and MCP).
    """

    model_config = ConfigDict(extra="forbid")

    verifier: Verifier
    gpu: Gpu
    gpus: Gpus
    draft: ModelName | None = Field(None, description="separate draft model, if any")
    draft_params_b: ParamsB | None = Field(None, description="draft size in billions when it is not in the catalog "
                                           "(smaller than the verifier)")
    head_params_b: ParamsB | None = Field(None, description="speculative head size in billions (EAGLE/Medusa/MTP); "
                                          "sharded with the verifier's TP (or --draft-tp), in --draft-quantization "
                                          "or else the verifier's format")
    quantization: WeightFormat
    draft_quantization: Quantization | None = Field(None, description="draft weight format (default: bf16)")
    kv_cache_dtype: str = Field("auto", description="KV cache dtype: auto (bf16/fp16), fp8")
    workload: WorkloadOptional
    context_tokens: Context
    concurrency: ConcurrencyOption
    draft_tp: GpuCount | None = Field(None, description="draft/head tensor parallel size: 1 or the target TP (vLLM)")
    engine: EngineOptional
    dp_attention: DpAttention
    reserve_fraction: MemoryFraction | None = Field(None, description="override the engine's reservation knob "
                                                    "(0.1-1.0)")
    host_memory_gib: HostMemory
    host_bandwidth_gbps: HostBandwidth

    @field_validator("kv_cache_dtype")
    @classmethod
    def _kv_dtype(cls, v: str) -> str:
        if v not in KV_DTYPE_BYTES:
            raise ValueError(f"unknown KV cache dtype; use one of {', '.join(KV_DTYPE_BYTES)}")
        return v

    @model_validator(mode="after")
    def _one_draft(self) -> VramInput:
        if self.draft is not None and self.draft_params_b is not None:
            raise InputError("give either --draft or --draft-params-b, not both")
        return self


def deployment_query(inp: VramInput) -> DeploymentQuery:
    """The deployment `vram` asks about, in the resolver's terms (shared with `recommend` and `speedup`)."""
    return query_from_input(inp, catalog_only=True, assumed_engine="vllm", announce=frozenset({"gpu", "gpus",
                                                                                                 "concurrency"}))


def vram_fit(inp: VramInput) -> VramResult:
    """Registry entry: resolve the deployment (names through the catalog, TP and context checked), then fit it."""
    gguf_engine = engine_for_gguf(inp.verifier, inp.engine)
    if gguf_engine is not None:  # a GGUF build named without --engine: llama.cpp's memory rules, as every verb does
        inp = inp.model_copy(update={"engine": gguf_engine})
    dep = resolve_deployment(replace(deployment_query(inp), engine_from_gguf=gguf_engine is not None))
    draft = dep.draft_spec
    if draft is not None and inp.draft is not None:
        vp, dp = count_params(dep.verifier.spec).total_b, count_params(draft).total_b
        if dp >= vp:
            raise InputError(f"--draft {draft.repo_id} ({dp:.2f}B) is not smaller than the verifier "
                             f"{dep.verifier.repo_id} ({vp:.2f}B); pick a smaller draft")
    result = memory_fit(dep, "draft_model" if draft is not None else "none", engine=inp.engine, draft=draft,
                        head_params_b=inp.head_params_b, draft_tp=inp.draft_tp,
                        head_format=inp.draft_quantization if inp.head_params_b is not None else None)
    # How the verifier's name resolved (a GGUF build: its base model and weight format), as recommend says it.
    notes = list(dep.notes) + ([dep.drafter.note] if dep.drafter is not None and dep.drafter.note else [])
    return result.model_copy(update={"assumptions": notes + result.assumptions,
                                     "defaults_used": list(dep.defaults)})


def render_text(r: VramResult) -> str:
    verdict = "FITS" if r.fits else "DOES NOT FIT"
    if r.fits and r.offload is not None:
        verdict = (f"FITS WITH PARTIAL OFFLOAD ({r.offload.layers_on_gpu} of {r.offload.num_layers} layers on the GPU; "
                   f"{r.offload.offloaded_weights_gib:.1f} GiB in system RAM)")
    headroom = "" if r.offload is not None and r.fits else f" (headroom {r.headroom_gib:+.1f} GiB per GPU)"
    lines = [
        f"{r.verifier} on {r.gpus}x {r.gpu}: {verdict}{headroom}",
        f"  {r.verdict_line()}",
        f"  usable per GPU        {r.usable_gib_per_gpu:8.1f} GiB   ({r.reservation})",
        f"  verifier weights      {r.verifier_weights_gib:8.1f} GiB",
        f"  draft/head weights    {r.draft_weights_gib:8.1f} GiB",
        f"  runtime overhead      {r.runtime_overhead_gib:8.1f} GiB",
        f"  KV cache              {r.kv_gib:8.1f} GiB",
        f"  max concurrency at this context: {r.max_concurrency_at_context}",
        f"  max context at this concurrency: {r.max_context_at_concurrency}",
        "assumptions:",
        *[f"  - {a}" for a in r.assumptions],
    ]
    if r.defaults_used:
        lines.append("defaults used: " + "; ".join(r.defaults_used))
    return "\n".join(lines)

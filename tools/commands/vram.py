"""`specpick vram`: per-GPU memory for verifier + draft/head weights and both KV caches."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specpick.tools.arch.kv import KV_DTYPE_BYTES
from specpick.tools.arch.params import count_params
from specpick.tools.checks.vram import VramResult
from specpick.tools.deploy.requests import memory_fit
from specpick.tools.deploy.resolve import DeploymentQuery, engine_for_gguf, resolve_deployment
from specpick.tools.errors import InputError
from specpick.tools.validation import (
    HOST_BANDWIDTH_HELP, HOST_MEMORY_HELP, HostBandwidthGbps, HostMemoryGib, OneLineText,
    Concurrency, ContextTokens, GpuCount, MemoryFraction, ModelName, ParamsB,
)
from specpick.tools.vocab import Engine, Quantization, Workload


class VramInput(BaseModel):
    """What to fit: verifier (+ optional draft), GPU, dtype, context, concurrency.

    Ranges and finiteness come from ``tools/validation.py`` (shared by the CLI, the Claude tool and MCP).
    """

    model_config = ConfigDict(extra="forbid")

    verifier: ModelName = Field(description="verifier model: catalog name or repo id, a GGUF build (owner/name-GGUF[:Q4_K_M] or a local .gguf path)")
    gpu: OneLineText = Field(description="GPU name, e.g. H100-SXM, A100-80GB, RTX 4090")
    gpus: GpuCount = Field(1, description="GPUs the verifier is sharded over (tensor parallel size; must divide "
                           "its attention and KV heads)")
    draft: ModelName | None = Field(None, description="separate draft model, if any")
    draft_params_b: ParamsB | None = Field(None, description="draft size in billions when it is not in the catalog "
                                           "(smaller than the verifier)")
    head_params_b: ParamsB | None = Field(None, description="speculative head size in billions (EAGLE/Medusa/MTP); "
                                          "sharded with the verifier's TP (or --draft-tp), in --draft-quantization "
                                          "or else the verifier's format")
    quantization: Quantization | None = Field(None, description="verifier weight format (default: as published)")
    draft_quantization: Quantization | None = Field(None, description="draft weight format (default: bf16)")
    kv_cache_dtype: str = Field("auto", description="KV cache dtype: auto (bf16/fp16), fp8")
    workload: Workload | None = Field(None, description="what the model generates: sets the default context "
                                      "(the same rule as recommend and speedup)")
    context_tokens: ContextTokens | None = Field(None, description="tokens in the KV cache per sequence while "
                                                 "decoding (at most the model's limit); default: typical for the "
                                                 "workload, 4096 without one, capped by the model's limit",
                                          json_schema_extra={"cli": {"flags": ["--context", "--context-tokens"]}})
    concurrency: Concurrency = Field(1, description="sequences resident at once")
    draft_tp: GpuCount | None = Field(None, description="draft/head tensor parallel size: 1 or the target TP (vLLM)")
    engine: Engine | None = Field(None, description="serving engine: its own memory reservation applies (vLLM "
                                  "gpu_memory_utilization 0.9, SGLang mem_fraction_static by TP, TensorRT-LLM "
                                  "free_gpu_memory_fraction 0.9); default: vLLM's")
    dp_attention: bool = Field(False, description="data-parallel attention (SGLang/vLLM): MLA KV split across "
                               "ranks by sequence instead of replicated on every rank")
    reserve_fraction: MemoryFraction | None = Field(None, description="override the engine's reservation knob "
                                                    "(0.1-1.0)")
    host_memory_gib: HostMemoryGib | None = Field(None, description=HOST_MEMORY_HELP)
    host_bandwidth_gbps: HostBandwidthGbps | None = Field(None, description=HOST_BANDWIDTH_HELP)

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
    return DeploymentQuery(
        verifier=inp.verifier, gpu=inp.gpu, gpus=inp.gpus, workload=inp.workload, engine=inp.engine,
        quantization=inp.quantization, kv_cache_dtype=inp.kv_cache_dtype, context_tokens=inp.context_tokens,
        concurrency=inp.concurrency, draft=inp.draft, draft_params_b=inp.draft_params_b,
        draft_quantization=inp.draft_quantization, dp_attention=inp.dp_attention,
        reserve_fraction=inp.reserve_fraction, host_memory_gib=inp.host_memory_gib,
        host_bandwidth_gbps=inp.host_bandwidth_gbps, catalog_only=True, assumed_engine="vllm",
        given=frozenset(inp.model_fields_set), announce=frozenset({"gpus", "concurrency"}),
    )


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

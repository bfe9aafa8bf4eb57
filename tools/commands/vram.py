"""`specpick vram`: per-GPU memory for verifier + draft/head weights and both KV caches."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from specpick.tools.arch.kv import KV_DTYPE_BYTES
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.vram import VramResult, fit_specs
from specpick.tools.errors import InputError
from specpick.tools.vocab import Engine, Quantization


class VramInput(BaseModel):
    """What to fit: verifier (+ optional draft), GPU, dtype, context, concurrency."""

    model_config = ConfigDict(extra="forbid")

    verifier: str = Field(description="verifier model: catalog name or Hub repo id")
    gpu: str = Field(description="GPU name, e.g. H100-SXM, A100-80GB, RTX 4090")
    gpus: int = Field(1, description="GPUs the verifier is sharded over (tensor parallel size)")
    draft: str | None = Field(None, description="separate draft model, if any")
    draft_params_b: float | None = Field(None, description="draft size in billions when it is not in the catalog")
    head_params_b: float | None = Field(None, description="speculative head size in billions (EAGLE/Medusa/MTP); "
                                        "sharded with the verifier's TP (or --draft-tp), in --draft-quantization or "
                                        "else the verifier's format")
    quantization: Quantization | None = Field(None, description="verifier weight format (default: as published)")
    draft_quantization: Quantization | None = Field(None, description="draft weight format (default: bf16)")
    kv_cache_dtype: str = Field("auto", description="KV cache dtype: auto (bf16/fp16), fp8")
    context_tokens: int = Field(4096, description="tokens per sequence (prompt + output)",
                                json_schema_extra={"cli": {"flags": ["--context", "--context-tokens"]}})
    concurrency: int = Field(1, description="sequences resident at once")
    draft_tp: int | None = Field(None, description="draft/head tensor parallel size: 1 or the target TP (vLLM)")
    engine: Engine | None = Field(None, description="serving engine: its own memory reservation applies (vLLM "
                                  "gpu_memory_utilization 0.9, SGLang mem_fraction_static by TP, TensorRT-LLM "
                                  "free_gpu_memory_fraction 0.9); default: vLLM's")
    dp_attention: bool = Field(False, description="data-parallel attention (SGLang/vLLM): MLA KV split across "
                               "ranks by sequence instead of replicated on every rank")
    reserve_fraction: float | None = Field(None, description="override the engine's reservation knob (0.1-1.0)")

    @field_validator("gpus", "context_tokens", "concurrency")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be at least 1")
        return v

    @field_validator("draft_params_b", "head_params_b")
    @classmethod
    def _positive_size(cls, v: float | None) -> float | None:
        if v is not None and v <= 0:
            raise ValueError("must be a positive size in billions of parameters")
        return v

    @field_validator("reserve_fraction")
    @classmethod
    def _fraction(cls, v: float | None) -> float | None:
        if v is not None and not 0.1 <= v <= 1.0:
            raise ValueError("must be between 0.1 and 1.0")
        return v

    @field_validator("kv_cache_dtype")
    @classmethod
    def _kv_dtype(cls, v: str) -> str:
        if v not in KV_DTYPE_BYTES:
            raise ValueError(f"unknown KV cache dtype; use one of {', '.join(KV_DTYPE_BYTES)}")
        return v


def vram_fit(inp: VramInput) -> VramResult:
    """Registry entry: resolve names through the catalog, then ``fit_specs``."""
    cat = get_catalog()
    draft = cat.model(inp.draft) if inp.draft else None
    if draft is not None and inp.draft_params_b:
        raise InputError("give either --draft or --draft-params-b, not both")
    return fit_specs(
        cat.model(inp.verifier), cat.gpu(inp.gpu), gpus=inp.gpus, draft=draft, draft_params_b=inp.draft_params_b,
        head_params_b=inp.head_params_b, quantization=inp.quantization, draft_quantization=inp.draft_quantization,
        kv_cache_dtype=inp.kv_cache_dtype, context_tokens=inp.context_tokens, concurrency=inp.concurrency,
        draft_tp=inp.draft_tp, reserve_fraction=inp.reserve_fraction, engine=inp.engine,
        dp_attention=inp.dp_attention,
    )


def render_text(r: VramResult) -> str:
    verdict = "FITS" if r.fits else "DOES NOT FIT"
    lines = [
        f"{r.verifier} on {r.gpus}x {r.gpu}: {verdict} (headroom {r.headroom_gib:+.1f} GiB per GPU)",
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
    return "\n".join(lines)

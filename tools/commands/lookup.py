"""Catalog look-ups as tools: list models / GPUs / heads, and one model's facts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.catalog.tables import get_catalog, normalize_name
from specpick.tools.validation import ModelName
from specpick.tools.arch.params import ParamBreakdown, count_params
from specpick.tools.catalog.specs import DraftPairing, GpuSpec, HeadSpec, ModelSpec
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.deploy.drafts import known_drafts


class ListInput(BaseModel):
    """Optional filter for the list tools."""

    model_config = ConfigDict(extra="forbid")

    filter: str | None = Field(None, description="case-insensitive substring to keep (e.g. qwen3, h100, eagle3)")


class ModelList(BaseModel):
    models: list[ModelSpec]


class GpuList(BaseModel):
    gpus: list[GpuSpec]


class HeadList(BaseModel):
    heads: list[HeadSpec]


class ModelInfoInput(BaseModel):
    """Which model to describe."""

    model_config = ConfigDict(extra="forbid")

    model: ModelName = Field(description="catalog name or Hub repo id (outside the catalog: with --live)",
                       json_schema_extra={"cli": {"positional": True, "metavar": "MODEL"}})
    live: bool = Field(False, description="read config.json and safetensors headers from the Hub")
    revision: str | None = Field(None, description="Hub revision (branch, tag or commit) with --live")


class ModelInfo(BaseModel):
    """One model's facts, parameter count, published heads and known drafts."""

    spec: ModelSpec
    params: ParamBreakdown
    heads: list[HeadSpec]
    drafts: list[DraftPairing]
    source: str = Field(description="catalog | hub | hub-cache")
    notes: list[str] = []


def _keep(filter_text: str | None, *fields: str) -> bool:
    if not filter_text:
        return True
    needle = normalize_name(filter_text)
    return any(needle in normalize_name(f) for f in fields)


def list_models(inp: ListInput) -> ModelList:
    return ModelList(models=[m for m in get_catalog().models if _keep(inp.filter, m.repo_id, m.family, *m.aliases)])


def list_gpus(inp: ListInput) -> GpuList:
    return GpuList(gpus=[g for g in get_catalog().gpus if _keep(inp.filter, g.key, g.name, *g.aliases)])


def list_heads(inp: ListInput) -> HeadList:
    return HeadList(heads=[h for h in get_catalog().heads
                           if _keep(inp.filter, h.head_repo_id, h.verifier_repo_id, h.method)])


def model_info(inp: ModelInfoInput) -> ModelInfo:
    """Describe a model from the catalog, or from the Hub with ``live``."""


    resolved = resolve_model_spec(inp.model, live=inp.live, revision=inp.revision)
    cat = get_catalog()
    # The drafts `recommend` and `speedup` can use (the one listing, tools/deploy/drafts.py): a pairing the
    # catalog cannot size (no architecture row, no size) is not offered here either.
    usable = {d.repo_id for d in known_drafts(resolved.spec)}
    return ModelInfo(spec=resolved.spec, params=resolved.params or count_params(resolved.spec),
                     heads=cat.heads_for(resolved.spec.repo_id),
                     drafts=[d for d in cat.drafts_for(resolved.spec) if d.draft_repo_id in usable],
                     source=resolved.source, notes=resolved.notes)


def render_models(r: ModelList) -> str:
    lines = [f"{'repo id':48} {'params':>8} {'active':>7} {'vocab':>7}  tokenizer"]
    for m in r.models:
        active = f"{m.params_active_b:g}B" if m.params_active_b else ""
        lines.append(f"{m.repo_id:48} {m.params_total_b or 0:>7g}B {active:>7} {m.vocab_size:>7}  "
                     f"{m.tokenizer_family}/{m.tokenizer_specials}")
    lines.append(f"{len(r.models)} models (embedded catalog; any Hub repo id works with --live)")
    return "\n".join(lines)


def render_gpus(r: GpuList) -> str:
    lines = [f"{'key':15} {'memory':>7} {'GB/s':>6} {'BF16 TF':>8} {'FP8 TF':>7}  name"]
    for g in r.gpus:
        bf16 = g.bf16_tflops or g.fp16_tflops
        # Unified memory is the whole system's (CPU and OS share it): say so beside the figure.
        shared = " (unified memory, shared with the CPU)" if g.unified_memory else ""
        lines.append(f"{g.key:15} {g.memory_gb:>5g}GB {g.bandwidth_gbps:>6g} {bf16 or '-':>8} "
                     f"{g.fp8_tflops or '-':>7}  {g.name}{shared}")
    return "\n".join(lines)


def render_heads(r: HeadList) -> str:
    lines = [f"{'head':62} {'method':14} verifier"]
    lines += [f"{h.head_repo_id:62} {h.method:14} {h.verifier_repo_id}" for h in r.heads]
    return "\n".join(lines)


def render_model_info(r: ModelInfo) -> str:
    m, p = r.spec, r.params
    lines = [
        f"{m.repo_id}  (facts from {r.source})",
        f"  family {m.family}; {m.num_layers} layers, hidden {m.hidden_size}, heads {m.num_attention_heads} "
        f"(KV {m.num_kv_heads}, head_dim {m.head_dim}), vocab {m.vocab_size}",
        f"  parameters {p.total_b:.2f}B computed" + (f" (published {p.published_total_b:g}B, "
                                                     f"{p.error_vs_published_pct:+.2f}%)" if p.published_total_b else "")
        + (f"; active {p.active_b:.2f}B" if m.is_moe else ""),
        f"  tokenizer {m.tokenizer_family} / {m.tokenizer_specials}; context {m.max_position_embeddings}; "
        f"dtype {m.dtype}; gated {m.gated}",
    ]
    lines += [f"  head: {h.head_repo_id} ({h.method})" for h in r.heads]
    lines += [f"  draft: {d.draft_repo_id} ({d.tokenizer_relation})" for d in r.drafts]
    lines += [f"  note: {n}" for n in r.notes]
    return "\n".join(lines)

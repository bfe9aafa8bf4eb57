"""``specpick params``: parameter count from architecture, or exact from the Hub's safetensors headers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.validation import ModelName
from specpick.tools.arch.params import ParamBreakdown, count_params
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.hub.config import param_count


class ParamsInput(BaseModel):
    """Which model to count."""

    model_config = ConfigDict(extra="forbid")

    model: ModelName = Field(description="catalog name or Hub repo id (outside the catalog: with --live)",
                       json_schema_extra={"cli": {"positional": True, "metavar": "MODEL"}})
    live: bool = Field(False, description="read exact per-dtype counts from the Hub's safetensors headers")
    revision: str | None = Field(None, description="Hub revision with --live")


class ParamsResult(BaseModel):
    """The parameter count and how it was obtained: exact from the Hub's safetensors headers whenever they were
    read (``--live``), else computed from the architecture (config.json or the catalog), labelled as such."""

    total_b: float = Field(description="the count this answer stands on (exact when count_method says so)")
    count_method: str = Field(description="'safetensors headers (exact)' or 'computed from architecture (...)'")
    breakdown: ParamBreakdown
    exact_total_b: float | None = Field(None, description="from safetensors headers (live)")
    exact_by_dtype: dict[str, int] = {}
    source: str
    notes: list[str] = []


def params_tool(inp: ParamsInput) -> ParamsResult:

    resolved = resolve_model_spec(inp.model, live=inp.live, revision=inp.revision)
    breakdown = count_params(resolved.spec)
    computed = f"computed from architecture ({resolved.source} facts)"
    if not inp.live:
        return ParamsResult(total_b=breakdown.total_b, count_method=computed, breakdown=breakdown,
                            source=resolved.source, notes=resolved.notes)

    exact = param_count(resolved.spec.repo_id, inp.revision)
    notes = list(dict.fromkeys(resolved.notes + exact.notes + ([exact.fallback_reason] if exact.fallback_reason
                                                                  else [])))
    if exact.exact:
        return ParamsResult(total_b=exact.total_b, count_method="safetensors headers (exact)", breakdown=breakdown,
                            exact_total_b=exact.total_b, exact_by_dtype=exact.by_dtype, source=exact.source,
                            notes=notes)
    return ParamsResult(total_b=breakdown.total_b, count_method=f"{computed}: fallback, no safetensors header read",
                        breakdown=breakdown, source=exact.source, notes=notes)


def render_text(r: ParamsResult) -> str:
    b = r.breakdown
    lines = [f"{b.repo_id}: {r.total_b:.3f}B parameters ({r.count_method})"]
    if r.exact_total_b is not None:
        lines.append(f"  architecture estimate {b.total_b:.3f}B ({b.method})")
    if b.published_total_b:
        lines.append(f"  published {b.published_total_b:g}B ({b.error_vs_published_pct:+.2f}%)")
    if b.active_b < b.total_b - 1e-6:
        lines.append(f"  active per token {b.active_b:.2f}B (read per decode step {b.decode_read_b:.2f}B)")
    lines.append(f"  embedding {b.embedding_b:.3f}B, LM head {b.lm_head_b:.3f}B, attention {b.attention_b:.2f}B, "
                 f"dense FFN {b.ffn_dense_b:.2f}B, experts {b.ffn_experts_b:.2f}B")
    if b.mtp_b:
        lines.append(f"  MTP layers {b.mtp_b:.2f}B (not in the total)")
    if r.exact_total_b is not None:
        dtypes = ", ".join(f"{k} {v / 1e9:.3f}B" for k, v in r.exact_by_dtype.items())
        lines.append(f"  by dtype (safetensors headers): {dtypes}")
    lines += [f"  note: {n}" for n in r.notes]
    return "\n".join(lines)

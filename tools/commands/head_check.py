"""``specpick head-check HEAD VERIFIER``: does a speculative head belong to this verifier?"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.checks.heads import HeadCheck


class HeadCheckInput(BaseModel):
    """The head and the verifier it should serve."""

    model_config = ConfigDict(extra="forbid")

    head: str = Field(description="head repo id (EAGLE, EAGLE-3, Medusa, MLPSpeculator; for MTP the verifier itself)",
                      json_schema_extra={"cli": {"positional": True, "metavar": "HEAD"}})
    verifier: str = Field(description="verifier repo id or catalog name",
                          json_schema_extra={"cli": {"positional": True, "metavar": "VERIFIER"}})
    num_draft_tokens: int | None = Field(None, description="planned draft length (checked against the head's depth)")
    live: bool = Field(True, description="read the head's config.json from the Hub (cache, then catalog, as fallback)")
    revision: str | None = Field(None, description="head repo revision")


def head_check_tool(inp: HeadCheckInput) -> HeadCheck:
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.checks.heads import check_head

    found = get_catalog().find_model(inp.verifier)
    verifier = found.repo_id if found else inp.verifier
    return check_head(inp.head, verifier, revision=inp.revision, live=inp.live,
                      num_speculative_tokens=inp.num_draft_tokens)


def render_text(r: HeadCheck) -> str:
    lines = [f"{r.belongs.upper()} ({r.check}) - {r.summary}",
             f"  head {r.head_repo_id} ({r.method}); verifier {r.verifier_repo_id}; facts from {r.source}"]
    if r.declared_verifier:
        lines.append(f"  declared verifier: {r.declared_verifier}")
    lines += [f"  [{f.verdict}] {f.check}: {f.detail}" for f in r.findings]
    if r.fallback_reason:
        lines.append(f"  fell back: {r.fallback_reason}")
    return "\n".join(lines)

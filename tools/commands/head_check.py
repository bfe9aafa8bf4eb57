"""``specpick head-check HEAD VERIFIER``: does a speculative head belong to this verifier?"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.checks.heads import HeadCheck, HeadFinding
from specpick.tools.errors import InputError
from specpick.tools.validation import DraftTokens, ModelName


class HeadCheckInput(BaseModel):
    """The head and the verifier it should serve."""

    model_config = ConfigDict(extra="forbid")

    head: ModelName = Field(description="head repo id (EAGLE, EAGLE-3, Medusa, MLPSpeculator; for MTP the verifier itself)",
                      json_schema_extra={"cli": {"positional": True, "metavar": "HEAD"}})
    verifier: ModelName = Field(description="verifier repo id or catalog name",
                          json_schema_extra={"cli": {"positional": True, "metavar": "VERIFIER"}})
    num_draft_tokens: DraftTokens | None = Field(None, description="planned draft length (checked against the head's depth)")
    live: bool = Field(True, description="read the head's config.json from the Hub (cache, then catalog, as fallback)")
    revision: str | None = Field(None, description="head repo revision")


def head_check_tool(inp: HeadCheckInput) -> HeadCheck:
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.checks.heads import check_head

    # The one name rule: exact catalog match, else a Hub repo id when the Hub is read (--live, the default).
    verifier = get_catalog().resolve_repo_id(inp.verifier, hub_allowed=inp.live, can_go_live=True)
    if inp.revision is not None and not inp.live:
        raise InputError("--revision pins the head's Hub revision and needs --live (the default); drop --no-live")
    result = check_head(inp.head, verifier, revision=inp.revision, live=inp.live,
                        num_speculative_tokens=inp.num_draft_tokens)
    n = inp.num_draft_tokens
    if n is None or any(f.check == "draft length" for f in result.findings):
        return result
    # check_head limits N only for heads with a fixed number of predictions (Medusa, MLPSpeculator, MTP);
    # say what --num-draft-tokens was checked against rather than drop it silently.
    if result.method in ("eagle", "eagle3"):
        finding = HeadFinding(check="draft length", verdict="info", detail=(
            f"N={n}: an EAGLE head drafts one token per step from its own output, so any N loads; "
            "acceptance falls with depth (measure it, `specpick measure`)"))
    elif result.draft_tokens_trained:
        finding = HeadFinding(check="draft length", verdict="pass", detail=(
            f"N={n} is within the {result.draft_tokens_trained} token(s) the head predicts"))
    else:
        finding = HeadFinding(check="draft length", verdict="info", detail=(
            f"N={n} not checked: the head's kind ({result.method}) does not say how many tokens it predicts"))
    return result.model_copy(update={"findings": [*result.findings, finding]})


def render_text(r: HeadCheck) -> str:
    lines = [f"{r.belongs.upper()} ({r.check}) - {r.summary}",
             f"  head {r.head_repo_id} ({r.method}); verifier {r.verifier_repo_id}; facts from {r.source}"]
    if r.declared_verifier:
        lines.append(f"  declared verifier: {r.declared_verifier}")
    lines += [f"  [{f.verdict}] {f.check}: {f.detail}" for f in r.findings]
    if r.fallback_reason:
        lines.append(f"  fell back: {r.fallback_reason}")
    return "\n".join(lines)

"""``specpick tokenizers DRAFT VERIFIER``: the tokenizer verdict as a registry tool.

Same offline-first rule as every look-up: models both in the catalog are
answered from catalog facts unless ``--live``; anything else reads the real
tokenizer files through the Hub (cache, then catalog, as fallbacks).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.checks.tokenizers import TokenizerVerdict
from specpick.tools.errors import InputError
from specpick.tools.validation import ModelName
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.tokenizers import compare_tokenizers
from specpick.tools.hub.gguf_ref import gguf_base_repo_id


class TokenizersInput(BaseModel):
    """The two models to compare."""

    model_config = ConfigDict(extra="forbid")

    draft: ModelName = Field(description="draft model (catalog name or Hub repo id)",
                       json_schema_extra={"cli": {"positional": True, "metavar": "DRAFT"}})
    verifier: ModelName = Field(description="verifier model (catalog name or Hub repo id)",
                          json_schema_extra={"cli": {"positional": True, "metavar": "VERIFIER"}})
    live: bool = Field(False, description="compare the real tokenizer files from the Hub even for catalog models")
    revision: str | None = Field(None, description="Hub revision for both repos (branch, tag or commit)")
    offline: bool = Field(False, description="never touch the network: Hub cache, then catalog (as HF_HUB_OFFLINE)")
    strict: bool = Field(False, description="exit 8 (threshold not met) when the check fails (verdict 'different'), "
                         "so scripts and CI can stop on an unusable draft; warn verdicts still exit 0")


def tokenizers_tool(inp: TokenizersInput) -> TokenizerVerdict:
    """Tool entry point: the verdict, or ThresholdError with ``strict`` when the check fails."""
    verdict = _compare(inp)
    if inp.strict and verdict.check == "fail":
        from specpick.tools.errors import ThresholdError

        raise ThresholdError(f"tokenizer check failed (--strict): {verdict.verdict}: {verdict.summary}")
    return verdict


def _compare(inp: TokenizersInput) -> TokenizerVerdict:

    cat = get_catalog()
    hub = inp.live or inp.offline  # --offline reads the Hub cache, so repo ids outside the catalog may be asked
    if inp.revision is not None and not hub:
        raise InputError("--revision pins a Hub revision and needs --live (without it the catalog answers)")
    # The one name rule: exact catalog match, else a Hub repo id only when the Hub (or its cache) is read.

    # A GGUF build carries its original model's tokenizer: compared as that model (the one name rule).
    draft = gguf_base_repo_id(inp.draft) or cat.resolve_repo_id(inp.draft, hub_allowed=hub, can_go_live=True)
    verifier = gguf_base_repo_id(inp.verifier) or cat.resolve_repo_id(inp.verifier, hub_allowed=hub,
                                                                        can_go_live=True)
    if not hub:
        return compare_tokenizers(draft, verifier, live=False)
    settings = None
    if inp.offline:
        from specpick.tools.hub.client import HubSettings

        settings = HubSettings(offline=True)
    return compare_tokenizers(draft, verifier, revision=inp.revision, live=True, settings=settings)


def render_text(v: TokenizerVerdict) -> str:
    lines = [f"{v.verdict.upper()} ({v.check}) - {v.summary}",
             f"  draft    {v.draft.repo_id} [{v.draft.source}, {v.draft.kind}]",
             f"  verifier {v.verifier.repo_id} [{v.verifier.source}, {v.verifier.kind}]"]
    if v.same_id_count is not None and v.compared_ids:
        lines.append(f"  ids with the same token: {v.same_id_count} of {v.compared_ids}")
    lines += [f"  specials: {d}" for d in v.special_differences]
    if v.examples:
        lines.append("  examples (id: draft | verifier):")
        lines += [f"    {e.token_id}: {e.draft!r} | {e.verifier!r}" for e in v.examples]
    if v.fallback_reason:
        lines.append(f"  fell back to {v.source}: {v.fallback_reason}")
    lines += [f"  note: {n}" for n in v.notes]
    return "\n".join(lines)

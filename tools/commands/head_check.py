"""``specpick head-check HEAD VERIFIER``: does a speculative head belong to this verifier?"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.checks.heads import HeadCheck, HeadFinding
from specpick.tools.errors import InputError
from specpick.tools.validation import DraftTokens, ModelName
from specpick.tools.vocab import EAGLE_HEAD_KINDS, VerifierChange
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.heads import check_head
from specpick.tools.hub.gguf_ref import gguf_base_repo_id
from specpick.tools.training.derived import resolve_derived
from specpick.tools.training.fitness import derived_fitness


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
    base_model: ModelName | None = Field(None, description="the published model your verifier was derived from "
                                         "(its facts are checked; your id stays the one printed)")
    verifier_change: VerifierChange = Field("none", description="how your verifier's weights differ from "
                                            "--base-model: none, full-finetune, rl, lora, merge")
    adapters: Annotated[int, Field(ge=1, le=10_000)] | None = Field(None, description="LoRA adapters served (with "
                                                                    "--verifier-change lora)")


def head_check_tool(inp: HeadCheckInput) -> HeadCheck:

    if inp.revision is not None and not inp.live:
        raise InputError("--revision pins the head's Hub revision and needs --live (the default); drop --no-live")

    base = gguf_base_repo_id(inp.verifier)  # a GGUF build: its head is the original model's (the one name rule)
    if base is not None:
        result = head_check_tool(inp.model_copy(update={"verifier": base}))
        return result.model_copy(update={"findings": [*result.findings, HeadFinding(
            check="verifier id", verdict="info", detail=f"{inp.verifier} is a GGUF build of {base}: checked "
            "against it (llama.cpp also needs the head converted to GGUF)")]})
    if inp.base_model is not None or inp.verifier_change != "none" or inp.adapters is not None:
        return _derived_check(inp)
    if inp.live and get_catalog().find_model(inp.verifier) is None:
        from specpick.tools.training.card import read_card

        card = read_card(inp.verifier)  # a fine-tune / adapter says so in its model card (base_model)
        if card.base_model and get_catalog().find_model(card.base_model) is not None:
            return _derived_check(inp.model_copy(update={"base_model": card.base_model,
                                                         "verifier_change": card.change or "none"}))
    # The one name rule: exact catalog match, else a Hub repo id when the Hub is read (--live, the default).
    verifier = get_catalog().resolve_repo_id(inp.verifier, hub_allowed=inp.live, can_go_live=True)
    result = check_head(inp.head, verifier, revision=inp.revision, live=inp.live,
                        num_speculative_tokens=inp.num_draft_tokens)
    return _draft_length(inp, result)


def _derived_check(inp: HeadCheckInput) -> HeadCheck:
    """A fine-tuned / RL / merged / LoRA verifier: check the head against the base, then say what changed.

    Never a plain pass: the head was trained for the base model, not for the weights you serve.
    """

    derived = resolve_derived(inp.verifier, inp.base_model, inp.verifier_change, inp.adapters)
    base = derived.facts.repo_id
    result = _draft_length(inp, check_head(inp.head, base, revision=inp.revision, live=inp.live,
                                           num_speculative_tokens=inp.num_draft_tokens))
    fit = derived_fitness(inp.head, base, derived.repo_id, derived.change, derived.adapters)
    if fit is None:  # --base-model with no change: the same weights under another id
        return result.model_copy(update={"verifier_repo_id": derived.repo_id, "findings": [*result.findings,
            HeadFinding(check="verifier id", verdict="info", detail=(
                f"{derived.repo_id} declared unchanged from {base}: checked against {base}"))]})
    finding = HeadFinding(check=fit.check, verdict="warn", detail=(
        f"{fit.detail}. Expected effect: {fit.effect}. Action: {fit.action} (evidence {', '.join(fit.evidence)})"))
    if result.belongs == "no":
        return result.model_copy(update={"verifier_repo_id": derived.repo_id,
                                         "findings": [*result.findings, finding]})
    summary = (f"{inp.head} ({result.method}) was trained for {base}, not for {derived.describe()}: "
               f"{fit.effect}. Action: {fit.action}")
    return result.model_copy(update={"verifier_repo_id": derived.repo_id, "belongs": "unknown", "check": "warn",
                                     "summary": summary, "findings": [*result.findings, finding]})


def _draft_length(inp: HeadCheckInput, result: HeadCheck) -> HeadCheck:
    """Say what --num-draft-tokens was checked against (check_head limits N for fixed-depth heads only)."""
    n = inp.num_draft_tokens
    if n is None or any(f.check == "draft length" for f in result.findings):
        return result
    if result.method in EAGLE_HEAD_KINDS:
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

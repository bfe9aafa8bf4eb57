"""Does this speculative head belong to this verifier? Read the head's config and say.

A head (EAGLE, EAGLE-3, Medusa, MLPSpeculator) is trained on one verifier's
hidden states and vocabulary; MTP layers ship inside the verifier itself. A
head used with another verifier may load (same shapes) and still accept
almost nothing, or fail at load (other shapes). Evidence, strongest first:

1. the verifier the head declares: ``speculators_config.verifier.name_or_path``
   (vLLM speculators format) or ``base_model_name_or_path`` (Medusa);
2. the catalog's record of which verifier a published head was trained for;
3. shapes: the head's ``target_hidden_size``/``hidden_size``/``emb_dim`` and
   ``vocab_size`` against the verifier's config;
4. for MTP: the verifier's ``num_nextn_predict_layers`` / ``mtp_num_hidden_layers``.

Config files are read as data; nothing from a repo is executed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import NotFoundError, UnavailableError, close_matches_hint
from specpick.tools.catalog.specs import HeadMethod, ModelSpec
from specpick.tools.vocab import EAGLE_HEAD_KINDS, Verdict
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.hub import client as hub
from specpick.tools.hub.config import fetch_model_spec

# The catalog's head methods (one home: tools/catalog/specs.py) plus "unknown" for a config we cannot read.
HeadKind = Literal[HeadMethod, "unknown"]
Source = Literal["hub", "hub-cache", "catalog"]


class HeadFinding(BaseModel):
    """One piece of evidence."""

    check: str
    verdict: Verdict
    detail: str


class HeadCheck(BaseModel):
    """Whether a head belongs to a verifier, with the evidence."""

    head_repo_id: str
    verifier_repo_id: str
    method: HeadKind
    belongs: Literal["yes", "no", "unknown"]
    check: Verdict = Field(description="pass: belongs; fail: does not; warn: loads but not trained for it / unknown")
    summary: str
    declared_verifier: str | None = None
    draft_tokens_trained: int | None = Field(None, description="heads / n_predict / MTP layers the head provides")
    findings: list[HeadFinding] = []
    source: Source = Field(description="the weakest source used: hub > hub-cache > catalog")
    fallback_reason: str = ""


def detect_method(config: dict[str, Any], head_repo_id: str) -> HeadKind:
    """Which kind of head a config.json describes."""
    kind = str(config.get("speculators_model_type") or "").lower()
    if kind in EAGLE_HEAD_KINDS or kind == "mlp_speculator":
        return kind  # type: ignore[return-value]
    archs = " ".join(config.get("architectures") or []).lower()
    model_type = str(config.get("model_type", "")).lower()
    if model_type == "medusa" or "medusa_num_heads" in config:
        return "medusa"
    if model_type == "mlp_speculator" or "mlpspeculator" in archs:
        return "mlp_speculator"
    if "eagle3" in archs or "draft_vocab_size" in config or (config.get("eagle_config") or {}).get(
            "use_aux_hidden_state"):
        return "eagle3"
    if "eagle" in archs or model_type == "eagle" or ("eagle" in head_repo_id.lower()
                                                       and config.get("num_hidden_layers") == 1):
        return "eagle"
    if int(config.get("num_nextn_predict_layers") or config.get("mtp_num_hidden_layers") or 0) > 0:
        return "mtp"
    return "unknown"


def _declared_verifier(config: dict[str, Any]) -> str | None:
    spec_cfg = config.get("speculators_config")
    if isinstance(spec_cfg, dict) and isinstance(spec_cfg.get("verifier"), dict):
        name = spec_cfg["verifier"].get("name_or_path")
        if isinstance(name, str) and name:
            return name
    name = config.get("base_model_name_or_path")
    return name if isinstance(name, str) and name else None


def _head_hidden(config: dict[str, Any], method: HeadKind) -> int | None:
    layer = config.get("transformer_layer_config") if isinstance(config.get("transformer_layer_config"), dict) else {}
    for value in (config.get("target_hidden_size"), config.get("emb_dim") if method == "mlp_speculator" else None,
                  layer.get("hidden_size"), config.get("hidden_size")):
        if isinstance(value, int) and value > 0:
            return value
    return None


def _head_vocab(config: dict[str, Any]) -> int | None:
    layer = config.get("transformer_layer_config") if isinstance(config.get("transformer_layer_config"), dict) else {}
    for value in (config.get("target_vocab_size"), layer.get("vocab_size"), config.get("vocab_size")):
        if isinstance(value, int) and value > 0:
            return value
    return None


def _trained_tokens(config: dict[str, Any], method: HeadKind) -> int | None:
    if method == "medusa":
        return config.get("medusa_num_heads")
    if method == "mlp_speculator":
        return config.get("n_predict")
    if method == "mtp":
        return int(config.get("num_nextn_predict_layers") or config.get("mtp_num_hidden_layers") or 0) or None
    spec_cfg = config.get("speculators_config") or {}
    for proposal in spec_cfg.get("proposal_methods") or []:
        if isinstance(proposal, dict) and isinstance(proposal.get("speculative_tokens"), int):
            return proposal["speculative_tokens"]
    return None


def _same_repo(a: str | None, b: str | None) -> bool:
    return bool(a and b) and a.strip("/").lower() == b.strip("/").lower()  # type: ignore[union-attr]


def first_source(source: str) -> str:
    """The first of a ``;``-separated source list, cut only at a ``;`` outside parentheses.

    A plain ``split(";")`` cut ``README.md (EAGLE-3 table; ...)`` inside its parenthesis and left it unclosed.
    """
    depth = 0
    for i, ch in enumerate(source):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ";" and depth <= 0:
            return source[:i].strip()
    return source.strip()


def _mtp_findings(verifier: ModelSpec, num_speculative_tokens: int | None) -> list[HeadFinding]:
    """The verifier's own MTP layers: are there any, and does the draft length reuse them evenly."""
    layers = verifier.mtp_layers
    findings = [HeadFinding(check="MTP layers", verdict="pass" if layers else "fail",
                            detail=f"{verifier.repo_id} has {layers} built-in MTP layer(s)"
                            + ("" if layers else ": nothing to speculate with"))]
    if layers and num_speculative_tokens and num_speculative_tokens > layers:
        verdict: Verdict = "warn" if num_speculative_tokens % layers == 0 else "fail"
        findings.append(HeadFinding(check="draft length", verdict=verdict, detail=(
            f"{num_speculative_tokens} tokens from {layers} MTP layer(s): vLLM reuses the same layer "
            f"(acceptance drops)" + ("" if verdict == "warn" else f" and needs a multiple of {layers}"))))
    return findings


def _shape_findings(config: dict[str, Any], method: HeadKind, verifier: ModelSpec) -> list[HeadFinding]:
    """The head config's hidden and vocabulary sizes against the verifier's."""
    findings: list[HeadFinding] = []
    hidden, vocab = _head_hidden(config, method), _head_vocab(config)
    if hidden is not None:
        ok = hidden == verifier.hidden_size
        findings.append(HeadFinding(check="hidden size", verdict="pass" if ok else "fail",
                                    detail=f"head reads {hidden}-wide hidden states, verifier has "
                                    f"{verifier.hidden_size}"))
    if vocab is not None:
        ok = vocab == verifier.vocab_size
        findings.append(HeadFinding(check="vocab size", verdict="pass" if ok else "fail",
                                    detail=f"head vocab_size {vocab}, verifier {verifier.vocab_size}"))
    if isinstance(config.get("draft_vocab_size"), int) and config["draft_vocab_size"] != vocab:
        findings.append(HeadFinding(check="draft vocab", verdict="info", detail=(
            f"drafts over a reduced vocabulary of {config['draft_vocab_size']} tokens (mapped to verifier ids)")))
    return findings


def evaluate_head(head_repo_id: str, config: dict[str, Any] | None, verifier: ModelSpec,
                  num_speculative_tokens: int | None = None) -> tuple[HeadKind, list[HeadFinding], str | None,
                                                                      int | None]:
    """Collect findings for a head config (None = catalog only) against the verifier's facts."""

    findings: list[HeadFinding] = []
    published = get_catalog().head(head_repo_id)
    method: HeadKind = detect_method(config, head_repo_id) if config is not None else "unknown"
    if method == "unknown" and published is not None and published.method != "dflash":
        method = published.method  # type: ignore[assignment]
    declared = _declared_verifier(config) if config else None
    if declared:
        ok = _same_repo(declared, verifier.repo_id)
        findings.append(HeadFinding(check="declared verifier", verdict="pass" if ok else "fail",
                                    detail=f"the head declares {declared}" + ("" if ok else
                                            f", not {verifier.repo_id}")))
    if published is not None:
        ok = _same_repo(published.verifier_repo_id, verifier.repo_id)
        findings.append(HeadFinding(
            check="catalog", verdict="pass" if ok else "warn",
            detail=f"published for {published.verifier_repo_id} ({first_source(published.source)})"))
        trained_on = get_catalog().find_model(published.verifier_repo_id)
        if config is None and not ok and trained_on is not None and trained_on.hidden_size != verifier.hidden_size:
            # Without the head's config the catalog still knows the hidden size it was trained on.
            findings.append(HeadFinding(
                check="hidden size", verdict="fail",
                detail=f"trained on {trained_on.hidden_size}-wide hidden states ({trained_on.repo_id}), verifier "
                       f"has {verifier.hidden_size}: it cannot load"))
    if method == "mtp" or (method == "unknown" and _same_repo(head_repo_id, verifier.repo_id)):
        layers = verifier.mtp_layers
        findings.extend(_mtp_findings(verifier, num_speculative_tokens))
        return "mtp", findings, declared, layers or None
    if config is not None:
        findings.extend(_shape_findings(config, method, verifier))
    trained = _trained_tokens(config or {}, method)
    if trained and num_speculative_tokens and num_speculative_tokens > trained and method in (
            "medusa", "mlp_speculator"):
        findings.append(HeadFinding(check="draft length", verdict="fail", detail=(
            f"the head predicts {trained} tokens; {num_speculative_tokens} asked")))
    return method, findings, declared, trained


def _conclude(findings: list[HeadFinding]) -> tuple[Literal["yes", "no", "unknown"], Verdict]:
    if any(f.verdict == "fail" for f in findings):
        return "no", "fail"
    identity = [f for f in findings if f.check in ("declared verifier", "catalog", "MTP layers")]
    if any(f.verdict == "pass" for f in identity) and not any(f.verdict == "warn" for f in identity):
        return "yes", "pass"
    return "unknown", "warn"


def check_head(head_repo_id: str, verifier_repo_id: str, *, revision: str | None = None,
               verifier_revision: str | None = None, live: bool = True, settings: Any = None,
               num_speculative_tokens: int | None = None) -> HeadCheck:
    """Check that a speculative head (or MTP layers) belongs to a verifier.

    Args:
        head_repo_id: the head's Hub repo (for MTP: the verifier's own repo).
        verifier_repo_id: the verifier model (Hub repo id or catalog name).
        revision: revision of the head repo; ``verifier_revision`` of the verifier.
        live: read configs through the Hub (cache, then catalog, as fallbacks); False = catalog only.
        settings: ``hub.HubSettings``; None = environment.
        num_speculative_tokens: the draft length you plan (checked against heads / MTP layers).

    Raises:
        InputError: invalid repo id or revision.
        HubAccessError: gated or private repo.
        NotFoundError: unknown repo/revision, a head config missing, or (catalog only) unknown head.
        RemoteDataError: malformed or oversized config.json.
        UnavailableError: offline/unreachable, nothing cached, and not in the catalog.
    """

    catalog = get_catalog()
    config: dict[str, Any] | None = None
    source: Source = "catalog"
    reasons: list[str] = []
    found = catalog.find_model(verifier_repo_id)
    if found is not None:  # catalog names ("llama-3.1-8b") work in both modes
        verifier_repo_id = found.repo_id
    if live:
        verifier, config, source, reasons = _read_live(head_repo_id, verifier_repo_id, revision=revision,
                                                       verifier_revision=verifier_revision, settings=settings)
    else:
        verifier = _catalog_verifier(head_repo_id, verifier_repo_id)
    method, findings, declared, trained = evaluate_head(head_repo_id, config, verifier, num_speculative_tokens)
    belongs, check = _conclude(findings)
    return HeadCheck(head_repo_id=head_repo_id, verifier_repo_id=verifier.repo_id, method=method, belongs=belongs,
                     check=check, summary=_summary(head_repo_id, verifier.repo_id, method, belongs, findings),
                     declared_verifier=declared, draft_tokens_trained=trained, findings=findings, source=source,
                     fallback_reason="; ".join(reasons))


def _read_live(head_repo_id: str, verifier_repo_id: str, *, revision: str | None, verifier_revision: str | None,
               settings: Any) -> tuple[ModelSpec, dict[str, Any] | None, Source, list[str]]:
    """(verifier facts, head config or None, the weakest source that answered, fallback reasons) through the Hub,
    its cache, then the catalog."""

    config: dict[str, Any] | None = None
    source: Source = "catalog"
    reasons: list[str] = []
    hub.validate_repo_id(head_repo_id)  # both ids are checked before any I/O
    hub.validate_repo_id(verifier_repo_id)
    facts = fetch_model_spec(verifier_repo_id, verifier_revision, settings=settings)
    verifier, verifier_source = facts.spec, facts.source
    reasons += [facts.fallback_reason] if facts.fallback_reason else []
    try:
        config, fetched = hub.fetch_json(head_repo_id, "config.json", revision=revision, settings=settings)
        source = fetched.source
        reasons += [fetched.fallback_reason] if fetched.fallback_reason else []
    except hub.EntryMissingError as exc:
        raise NotFoundError(f"{head_repo_id} has no config.json: not a head repo this tool can read") from exc
    except UnavailableError as exc:
        if get_catalog().head(head_repo_id) is None:
            raise
        reasons.append(exc.message)
    order = ["hub", "hub-cache", "catalog"]
    source = max(source, verifier_source, key=order.index)  # type: ignore[assignment]
    return verifier, config, source, reasons


def _catalog_verifier(head_repo_id: str, verifier_repo_id: str) -> ModelSpec:
    """The verifier from the catalog, once the head is known there (or is the verifier's own MTP)."""
    import difflib


    catalog = get_catalog()
    verifier = catalog.model(verifier_repo_id)
    if catalog.head(head_repo_id) is None and not _same_repo(head_repo_id, verifier.repo_id):
        names = [h.head_repo_id for h in catalog.heads]
        hint = close_matches_hint(difflib.get_close_matches(head_repo_id, names, n=3, cutoff=0.5))
        raise NotFoundError(f"head {head_repo_id} is not in the catalog.{hint} Use live Hub access to read it")
    return verifier


def _summary(head: str, verifier: str, method: HeadKind, belongs: str, findings: list[HeadFinding]) -> str:
    if belongs == "yes":
        return f"{head} ({method}) was trained for {verifier}."
    failed = [f.detail for f in findings if f.verdict == "fail"]
    if belongs == "no":
        return f"{head} ({method}) does not belong to {verifier}: {failed[0]}."
    warned = [f.detail for f in findings if f.verdict == "warn"]
    why = warned[0] if warned else "no declared or catalogued verifier; only the shapes match"
    return (f"{head} ({method}) may load on {verifier} but was not shown to be trained for it ({why}): "
            "measure acceptance before relying on it.")

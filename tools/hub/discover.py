"""Read a Hub repo's metadata into a catalog row: which speculative method a head is, and for which verifier.

Pure functions over data already fetched (``config.json`` as a dict, the model card's ``base_model``, the
safetensors parameter count). Everything read is validated: types, ranges, nesting depth, repo-id syntax. A row
that fails becomes a ``Skip`` with a short reason key, never an exception, so one bad repo cannot stop a refresh.

How a head is recognised (config fields as the trainers write them):

* speculators format (vllm-project/speculators ``SpeculatorModelConfig``): ``speculators_model_type``
  (``eagle3``, ``eagle``, ``dflash``, ...) and ``speculators_config.verifier.name_or_path``;
* Medusa (FasterDecoding/Medusa ``MedusaConfig``): ``medusa_num_heads``, ``base_model_name_or_path``;
* MLPSpeculator (foundation-model-stack/fms-extras): ``model_type`` ``mlp_speculator``;
* EAGLE-3 outside speculators (SafeAILab/EAGLE, SpecForge, AngelSlim): an ``*Eagle3*`` architecture or
  ``draft_vocab_size``; EAGLE-1/2 (SafeAILab/EAGLE ``EConfig``): the ``bias`` flag of its fc layer;
* DFlash (z-lab/dflash): a ``DFlash*`` architecture;
* built-in MTP (DeepSeek-V3 style): ``num_nextn_predict_layers`` > 0 in the model's own config.

The verifier comes from the config when it names one, else from the model card's ``base_model``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.errors import InputError
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import EAGLE_HEAD_KINDS
from specpick.tools.hub.client import validate_repo_id

# Deeper nesting than any real config (speculators configs reach depth 4) means the file is not a config.
# Parsed-config bound (the byte-level parser guard is bounds.MAX_JSON_DEPTH, far looser): a config, not any JSON.
MAX_CONFIG_DEPTH = 12
# Heads are a fraction of their verifier: the largest published ones (EAGLE-3 for 405B, DeepSeek MTP layer) are
# ~1.5-12B. A count above this is not a head; 2e12 is above every published model.
MAX_HEAD_PARAMS = 50e9
MAX_MODEL_PARAMS = 2e12
# speculators_model_type -> catalog head method: the registry's speculators_model_type, plus IBM's MLPSpeculator
# (a catalog head kind that is not one of our methods).
_SPECULATORS_TYPES: dict[str, str] = {r.speculators_model_type: r.head_kind or r.name for r in REGISTRY
                                      if r.speculators_model_type} | {"mlp_speculator": "mlp_speculator"}
# Head kind -> how a discovered head's detail names it (the registry's label; MTP is built into the verifier).
_DETAIL: dict[str, str] = ({r.name: r.label for r in REGISTRY if r.speculators_model_type}
                           | {"mlp_speculator": "MLPSpeculator", "mtp": "MTP (built-in)"})
# Namespaces whose heads are the method authors' own (official) or an inference vendor's (vendor), as in
# heads.csv's publisher column; everyone else is community.
OFFICIAL = {"yuhuili", "fasterdecoding", "deepseek-ai", "z-lab", "zai-org", "moonshotai", "qwen", "meta-llama"}
VENDOR = {"redhatai", "nvidia", "lmsys", "amd", "angelslim", "ibm-fms", "ibm-ai-platform", "tengyunw"}
TEST = {"nm-testing"}


class Skip(BaseModel):
    """Why a repo did not become a row."""

    repo_id: str
    reason: str
    detail: str = ""


class HeadFacts(BaseModel):
    """What a head's config says, before its verifier is checked against the catalog."""

    method: str
    method_detail: str
    verifier_repo_id: str
    speculators_format: bool = False
    hidden_size: int | None = None


def json_depth(value: Any, limit: int = MAX_CONFIG_DEPTH) -> int:
    """Nesting depth of parsed JSON, stopping early past ``limit``."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def valid_repo(value: Any) -> str | None:
    """``value`` if it is a syntactically valid Hub repo id, else None."""

    if not isinstance(value, str):
        return None
    try:
        return validate_repo_id(value.strip())
    except InputError:
        return None


def _int_in(value: Any, low: int, high: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else None


def card_base_model(card: Any) -> str | None:
    """The single ``base_model`` of a model card (a list of several names no single verifier)."""
    if not isinstance(card, dict):
        return None
    base = card.get("base_model")
    if isinstance(base, list):
        base = base[0] if len(base) == 1 else None
    return valid_repo(base)


def read_head(repo_id: str, config: Any, base_model: str | None) -> HeadFacts | Skip:
    """Classify a head's config and find its verifier.

    Args:
        repo_id: the head's repo.
        config: parsed ``config.json`` (any JSON value: it comes from the Hub).
        base_model: the model card's ``base_model``, already validated.
    """
    if not isinstance(config, dict):
        return Skip(repo_id=repo_id, reason="bad-config", detail="config.json is not a JSON object")
    if json_depth(config) > MAX_CONFIG_DEPTH:
        return Skip(repo_id=repo_id, reason="bad-config", detail=f"config.json nests deeper than {MAX_CONFIG_DEPTH}")
    archs = config.get("architectures")
    archs = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    hidden = _int_in(config.get("hidden_size"), 1, 131_072)
    spec_type = config.get("speculators_model_type")
    if isinstance(spec_type, str) or "speculators_config" in config:
        method = _SPECULATORS_TYPES.get(spec_type) if isinstance(spec_type, str) else None
        if method is None:
            return Skip(repo_id=repo_id, reason="unknown-method", detail=f"speculators_model_type {spec_type!r}")
        spec_cfg = config.get("speculators_config")
        verifier_cfg = spec_cfg.get("verifier") if isinstance(spec_cfg, dict) else None
        named = verifier_cfg.get("name_or_path") if isinstance(verifier_cfg, dict) else None
        verifier = valid_repo(named) or base_model
        detail = f"{_DETAIL[method]} (speculators format)"
        return _facts(repo_id, method, detail, verifier, hidden, speculators_format=True)
    if "medusa_num_heads" in config:
        if _int_in(config["medusa_num_heads"], 1, 64) is None:
            return Skip(repo_id=repo_id, reason="bad-config", detail="medusa_num_heads is not an integer in 1..64")
        verifier = valid_repo(config.get("base_model_name_or_path")) or base_model
        return _facts(repo_id, "medusa", f"Medusa ({config['medusa_num_heads']} heads)", verifier, None)
    if config.get("model_type") == "mlp_speculator" or any("MLPSpeculator" in a for a in archs):
        return _facts(repo_id, "mlp_speculator", "MLPSpeculator", base_model, None)
    if any("dflash" in a.lower() for a in archs):
        return _facts(repo_id, "dflash", "DFlash (block-diffusion drafter)", base_model, None)
    if any("eagle3" in a.lower() for a in archs) or "draft_vocab_size" in config:
        return _facts(repo_id, "eagle3", "EAGLE-3", base_model, hidden)
    # EAGLE-1 heads declare a plain LlamaForCausalLM; the fc ``bias`` flag plus the repo's name tell them apart.
    if isinstance(config.get("bias"), bool) and ("eagle" in repo_id.lower() or any("eagle" in a.lower()
                                                                                   for a in archs)):
        return _facts(repo_id, "eagle", "EAGLE-1 (EAGLE-2 tree at run time)", base_model, hidden)
    return Skip(repo_id=repo_id, reason="not-a-head", detail="no speculative-head fields in config.json")


def _facts(repo_id: str, method: str, detail: str, verifier: str | None, hidden: int | None, *,
           speculators_format: bool = False) -> HeadFacts | Skip:
    if verifier is None:
        return Skip(repo_id=repo_id, reason="no-verifier",
                    detail=f"{_DETAIL[method]} head names no verifier (config or model card base_model)")
    return HeadFacts(method=method, method_detail=detail, verifier_repo_id=verifier,
                     speculators_format=speculators_format, hidden_size=hidden)


def publisher_of(repo_id: str) -> str:
    namespace = repo_id.split("/", 1)[0].lower()
    if namespace in TEST:
        return "test"
    if namespace in OFFICIAL:
        return "official"
    return "vendor" if namespace in VENDOR else "community"


def head_params_b(repo_id: str, by_dtype: dict[str, int] | None) -> float | None | Skip:
    """Head size in billions from safetensors header counts; None if unknown; Skip if absurd."""
    if by_dtype is None:
        return None
    total = sum(by_dtype.values())
    if any(not isinstance(n, int) or n < 0 for n in by_dtype.values()) or not 0 < total <= MAX_HEAD_PARAMS:
        return Skip(repo_id=repo_id, reason="bad-size",
                    detail=f"safetensors headers give {total:,} parameters, outside 1..{MAX_HEAD_PARAMS:,.0f}")
    return round(total / 1e9, 4)


def build_head(repo_id: str, facts: HeadFacts, verifier: ModelSpec, params_b: float | None, runtimes: list[str],
               source: str) -> HeadSpec | Skip:
    """The catalog row for a head whose verifier the catalog knows, after cross-checks with that verifier."""
    if facts.method in EAGLE_HEAD_KINDS and facts.hidden_size and facts.hidden_size != verifier.hidden_size:
        return Skip(repo_id=repo_id, reason="verifier-mismatch",
                    detail=f"hidden_size {facts.hidden_size} != {verifier.repo_id}'s {verifier.hidden_size}")
    note = "exact count from the safetensors headers" if params_b is not None else "size unknown (no safetensors)"
    return HeadSpec(head_repo_id=repo_id, method=facts.method, method_detail=facts.method_detail,  # type: ignore[arg-type]
                    verifier_repo_id=verifier.repo_id, head_params_b=params_b, head_params_note=note,
                    runtimes=tuple(runtimes), publisher=publisher_of(repo_id), trained_dtype="bf16", source=source,
                    notes="found by `specpick catalog update`; acceptance not measured for this head",
                    fact_source="hub")


def mtp_head(model: ModelSpec, source: str, runtimes: list[str]) -> HeadSpec:
    """A model with built-in MTP layers is its own head (as heads.csv lists DeepSeek-V3)."""
    return HeadSpec(head_repo_id=model.repo_id, method="mtp", method_detail=f"MTP (built-in, {model.mtp_layers} "
                    "layer(s), num_nextn_predict_layers)", verifier_repo_id=model.repo_id, head_params_b=None,
                    head_params_note="part of the verifier checkpoint", runtimes=tuple(runtimes),
                    publisher=publisher_of(model.repo_id), source=source,
                    notes="found by `specpick catalog update`", fact_source="hub")

"""PARD drafts: recognising them and giving them an architecture.

A PARD draft is a small LM of a family (Llama-3.2-1B, Qwen3-0.6B, ...) fine-tuned to fill mask positions,
published as ``amd/PARD-<base name>`` (github:AMD-AIG-AIMA/PARD README; vLLM docs
features/speculative_decoding/parallel_draft_model.md). It keeps its base model's layers and tokenizer
(plus the mask tokens), so its step time and tokenizer check use the base model's catalog facts.
"""

from __future__ import annotations

from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.catalog.tables import get_catalog

PARD_PREFIX = "pard-"


def is_pard_repo(repo_id: str) -> bool:
    """True for a PARD draft repo (``amd/PARD-Llama-3.2-1B``)."""
    return repo_id.rsplit("/", 1)[-1].lower().startswith(PARD_PREFIX)


def pard_base_spec(repo_id: str) -> ModelSpec | None:
    """The catalog model a PARD draft was adapted from (None if the catalog lacks it)."""
    if not is_pard_repo(repo_id):
        return None
    base = repo_id.rsplit("/", 1)[-1][len(PARD_PREFIX):]
    return get_catalog().find_model(base)


def pard_draft_spec(repo_id: str) -> ModelSpec | None:
    """A PARD draft as a ``ModelSpec``: the catalog's own row if it has one, else its base's geometry."""
    cat = get_catalog()
    own = cat.find_model(repo_id)
    if own is not None:
        return own
    base = pard_base_spec(repo_id)
    if base is None:
        return None
    return base.model_copy(update={"repo_id": repo_id, "aliases": (), "fact_source": "catalog",
                                   "notes": f"PARD draft: architecture of its base {base.repo_id} (mask tokens "
                                            "aside; github:AMD-AIG-AIMA/PARD README)"})

"""Name -> model facts: the embedded catalog first, the Hub when asked (``live``) or when the catalog lacks it.

Offline-first: a live look-up that cannot reach the Hub falls back to the Hub
cache, then the catalog, and the result says which source answered and why.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError, NotFoundError
from specpick.tools.arch.params import ParamBreakdown
from specpick.tools.catalog.specs import ModelSpec


class ResolvedModel(BaseModel):
    """A model's facts and where they came from."""

    spec: ModelSpec
    source: Literal["catalog", "overlay", "hub", "hub-cache"]
    params: ParamBreakdown | None = None
    notes: list[str] = []
    quantization: str | None = None  # the weight format the name itself says (a GGUF build: tools/hub/gguf_ref.py)


def resolve_model_spec(name: str, *, live: bool = False, revision: str | None = None) -> ResolvedModel:
    """Resolve ``name`` to a ``ModelSpec``.

    A name matches the catalog exactly (repo id in any case, or an alias); anything else is a Hub repo id read
    only with ``live``, never the nearest catalog model (``Qwen/Qwen2.5-7B`` is not ``...-7B-Instruct``).

    Args:
        name: catalog name/alias or Hub repo id.
        live: read ``config.json`` from the Hub even when the catalog knows the model.
        revision: Hub revision to pin (only with the Hub path).

    Raises:
        NotFoundError: unknown to the catalog and not read from the Hub (close matches listed), or unknown there.
        InputError: ``revision`` without ``live``.
        HubAccessError, RemoteDataError, UnavailableError: from the Hub path.
    """
    if revision is not None and not live:
        raise InputError("--revision pins a Hub revision and needs --live (without it the catalog answers)")
    from specpick.tools.hub.gguf_ref import resolve_gguf_base

    gguf = resolve_gguf_base(name, live=live)  # a .gguf path or a *-GGUF repo: its base model and quantization
    if gguf is not None:
        base, ref = gguf
        inner = resolve_model_spec(base, live=live, revision=revision)
        said = f"{ref.quantization} (from {ref.quant_source})" if ref.quantization else "not a format we model"
        return inner.model_copy(update={"quantization": ref.quantization, "notes": [
            *ref.notes, f"{name}: a GGUF build of {inner.spec.repo_id}; weights {said}", *inner.notes]})
    catalog = get_catalog()
    found = catalog.find_model(name)
    if found is not None and not live:
        # A row from the user's Hub overlay (`specpick catalog update`) says so: it is not a curated catalog row.
        return ResolvedModel(spec=found, source="overlay" if found.fact_source == "overlay" else "catalog")
    # The one name rule (tables.Catalog.resolve_repo_id): exact catalog match, else a Hub repo id with --live.
    repo_id = catalog.resolve_repo_id(name, hub_allowed=live, can_go_live=True)
    from specpick.tools.hub.config import fetch_model_spec

    facts = fetch_model_spec(repo_id, revision)
    notes = []
    if facts.fallback_reason:
        notes.append(f"model facts from {facts.source}: {facts.fallback_reason}")
    elif facts.source != "catalog":
        notes.append(f"model facts read from {facts.source} (config.json{f' @ {facts.commit[:12]}' if facts.commit else ''})")
    if facts.source == "catalog" and found is None:  # pragma: no cover - fetch_model_spec raises instead
        raise NotFoundError(f"model '{name}' is not in the catalog and the Hub could not be asked")
    return ResolvedModel(spec=facts.spec, source=facts.source, notes=notes)

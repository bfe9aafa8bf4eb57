"""Name -> model facts: the embedded catalog first, the Hub when asked (``live``) or when the catalog lacks it.

Offline-first: a live look-up that cannot reach the Hub falls back to the Hub
cache, then the catalog, and the result says which source answered and why.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError
from specpick.tools.arch.params import ParamBreakdown
from specpick.tools.catalog.specs import ModelSpec


class ResolvedModel(BaseModel):
    """A model's facts and where they came from."""

    spec: ModelSpec
    source: Literal["catalog", "overlay", "hub", "hub-cache"]
    params: ParamBreakdown | None = None
    notes: list[str] = []


def resolve_model_spec(name: str, *, live: bool = False, revision: str | None = None) -> ResolvedModel:
    """Resolve ``name`` to a ``ModelSpec``.

    Args:
        name: catalog name/alias or Hub repo id.
        live: read ``config.json`` from the Hub even when the catalog knows the model.
        revision: Hub revision to pin (only with the Hub path).

    Raises:
        NotFoundError: unknown to the catalog and not a Hub repo id (close matches listed), or unknown on the Hub.
        HubAccessError, RemoteDataError, UnavailableError, InputError: from the Hub path.
    """
    catalog = get_catalog()
    found = catalog.find_model(name)
    if found is not None and not live:
        # A row from the user's Hub overlay (`specpick catalog update`) says so: it is not a curated catalog row.
        return ResolvedModel(spec=found, source="overlay" if found.fact_source == "overlay" else "catalog")
    if found is None and "/" not in name:
        catalog.model(name)  # raises NotFoundError with close matches
    from specpick.tools.hub.config import fetch_model_spec

    facts = fetch_model_spec(found.repo_id if found else name, revision)
    notes = []
    if facts.fallback_reason:
        notes.append(f"model facts from {facts.source}: {facts.fallback_reason}")
    elif facts.source != "catalog":
        notes.append(f"model facts read from {facts.source} (config.json{f' @ {facts.commit[:12]}' if facts.commit else ''})")
    if facts.source == "catalog" and found is None:  # pragma: no cover - fetch_model_spec raises instead
        raise NotFoundError(f"model '{name}' is not in the catalog and the Hub could not be asked")
    return ResolvedModel(spec=facts.spec, source=facts.source, notes=notes)

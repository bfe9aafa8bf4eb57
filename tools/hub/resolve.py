"""Name -> model facts: the embedded catalog first, then the Hub for a model the catalog lacks.

Offline-first: a model in the catalog is answered from it with no network attempt. A repo id the catalog lacks
is looked up on the Hub (its ``config.json``, or the Hub cache) unless the Hub is disabled (``HF_HUB_OFFLINE=1``
or ``specpick --offline``); the result says which source answered. ``live`` reads the Hub even for a catalog
model. Offline with nothing cached, the error names the closest snapshot entries and how to refresh.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError, NotFoundError, UnavailableError
from specpick.tools.arch.params import ParamBreakdown
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.errors import close_matches_hint
from specpick.tools.catalog.freshness import recipe_rows
from specpick.tools.hub.quant_ref import quant_build_base
from specpick.tools.hub.quant_ref import quant_build_note
from specpick.tools.catalog.quant_names import split_quant_name
from specpick.tools.hub.gguf_ref import resolve_gguf_base
from specpick.tools.hub.config import fetch_model_spec


class ResolvedModel(BaseModel):
    """A model's facts and where they came from."""

    spec: ModelSpec
    source: Literal["catalog", "overlay", "hub", "hub-cache"]
    params: ParamBreakdown | None = None
    notes: list[str] = []
    quantization: str | None = None  # the weight format the name itself says (a GGUF build: tools/hub/gguf_ref.py)
    # The repo the engine loads when it is not the facts row's: a safetensors quantized build (zai-org/GLM-5.2-FP8)
    # answered from its base model's row.
    served_as: str | None = None


def _snapshot_date() -> str:
    """The embedded snapshot's date (tools/data/snapshot.json), for messages; '' if unreadable."""
    import json
    from importlib import resources

    try:
        text = resources.files("specpick.tools").joinpath("data/snapshot.json").read_text(encoding="utf-8")
        return str(json.loads(text).get("snapshot_date", ""))
    except (OSError, ValueError):
        return ""


def _not_in_snapshot(name: str, why: str, *, offline: bool) -> UnavailableError:
    """The offline/unreachable error for a model outside the snapshot: closest entries, then how to refresh."""

    dated = f" (dated {_snapshot_date()})" if _snapshot_date() else ""
    hint = close_matches_hint(get_catalog().close_models(name)).replace("Did you mean", "Closest snapshot entries "
                                                                          "(did you mean)", 1)
    then = ("or drop --offline / HF_HUB_OFFLINE=1 so it is looked up on the Hub" if offline else
            "or set HF_ENDPOINT to a Hub you can reach")
    return UnavailableError(f"model '{name}' is not in the embedded snapshot{dated} and {why}.{hint}"
                            f"{_recipe_hint(name)} Refresh the snapshot with `specpick catalog update` while "
                            f"online, {then}.")


def _recipe_hint(name: str) -> str:
    """What the engine recipes the snapshot read serve this model with, when they list it (recipes.csv)."""

    key = name.strip().lower()
    rows = [r for r in recipe_rows() if r["model_id"].lower() == key and r["speculative_config"]]
    if not rows:
        return ""
    row = next((r for r in rows if r["default_mode"] == "yes"), rows[0])
    method = row["method"] or "read off the draft repo"
    return (f" Its vLLM recipe ({row['source']}) serves it with --speculative-config '{row['speculative_config']}' "
            f"(method {method}); speedup and memory need its config.json.")


def _quant_build(name: str) -> ResolvedModel | None:
    """A safetensors quantized build (``<base>-FP8``, ``-NVFP4``, ``-quantized.w4a16``) of a catalog model, by its
    name (tools/hub/quant_ref.py); None when the name is not one."""

    found = quant_build_base(name)
    if found is None:
        return None
    base, q = found
    return ResolvedModel(spec=base, source="overlay" if base.fact_source == "overlay" else "catalog",
                         quantization=q.quantization, served_as=name.strip(),
                         notes=[quant_build_note(name, base, q)])


def _unknown_quant_base(name: str) -> None:
    """A name shaped like a quantized build whose base the catalog does not know uniquely: a not-found that says
    what the name was read as, with the close matches of its model part (NotFoundError: exit 3, tools/errors.py).

    Raises:
        NotFoundError: always, when ``name`` carries a quantized-build suffix.
    """

    q = split_quant_name(name)
    if q is None:
        return
    catalog = get_catalog()
    owners = [m.repo_id for m in catalog.models if m.repo_id.split("/", 1)[-1].lower() == q.model.lower()]
    which = (f"{q.model} is published by {len(owners)} owners in the catalog ({', '.join(owners)})" if owners else
             f"the catalog knows no model {q.model}")
    hint = close_matches_hint(owners or catalog.close_models(q.model))
    raise NotFoundError(f"'{name}' reads as a {q.quantization} build ({q.token}) but {which}.{hint} Pass the base "
                        f"model as --verifier <owner/name> with --quantization {q.quantization}, or see `specpick "
                        "models`.")


def resolve_model_spec(name: str, *, live: bool = False, revision: str | None = None,
                       catalog_only: bool = False) -> ResolvedModel:
    """Resolve ``name`` to a ``ModelSpec``.

    A name matches the catalog exactly (repo id in any case, or an alias), never the nearest catalog model
    (``Qwen/Qwen2.5-7B`` is not ``...-7B-Instruct``). A repo id (``org/name``) the catalog lacks is read from the
    Hub automatically; the Hub client's offline switch (``HF_HUB_OFFLINE``, set by ``--offline``) keeps it to the
    Hub cache.

    Args:
        name: catalog name/alias or Hub repo id.
        live: read ``config.json`` from the Hub even when the catalog knows the model.
        revision: Hub revision to pin (only with the Hub path).
        catalog_only: answer from the catalog alone (`speedup`, `vram`, `engine-config`): no Hub look-up. A GGUF
            name still resolves (its repo name or local header, read without the network) to its base model, and so
            does a safetensors quantized build named ``<catalog model>-FP8`` / ``-NVFP4`` / ``-W4A16`` ... .

    Raises:
        NotFoundError: not a catalog name and not shaped like a repo id (close matches listed), or unknown on the Hub.
        UnavailableError: outside the snapshot while the Hub is disabled or unreachable and nothing is cached.
        InputError: ``revision`` for a catalog model without ``live``.
        HubAccessError, RemoteDataError: from the Hub path.
    """

    # A .gguf path or a *-GGUF repo: its base model and quantization (offline: the repo name or the file's header).
    gguf = resolve_gguf_base(name, live=live and not catalog_only)
    if gguf is not None:
        base, ref = gguf
        inner = resolve_model_spec(base, live=live, revision=revision, catalog_only=catalog_only)
        said = f"{ref.quantization} (from {ref.quant_source})" if ref.quantization else "not a format we model"
        return inner.model_copy(update={"quantization": ref.quantization, "notes": [
            *ref.notes, f"{name}: a GGUF build of {inner.spec.repo_id}; weights {said}", *inner.notes]})
    catalog = get_catalog()
    found = catalog.find_model(name)
    if catalog_only:  # the catalog's own not-found (close matches, `specpick models`) when it lacks the name
        if found is not None:
            return ResolvedModel(spec=found, source="catalog")
        by_name = _quant_build(name)
        if by_name is None:
            _unknown_quant_base(name)
        return by_name or ResolvedModel(spec=catalog.model(name), source="catalog")
    if found is not None and not live:
        if revision is not None:
            raise InputError("--revision pins a Hub revision and needs --live (without it the catalog answers)")
        # A row from the user's Hub overlay (`specpick catalog update`) says so: it is not a curated catalog row.
        return ResolvedModel(spec=found, source="overlay" if found.fact_source == "overlay" else "catalog")
    # The one name rule (tables.Catalog.resolve_repo_id): exact catalog match, else a Hub repo id.
    repo_id = catalog.resolve_repo_id(name, hub_allowed=True, can_go_live=True)

    try:
        facts = fetch_model_spec(repo_id, revision)
    except UnavailableError as exc:
        if found is not None:  # pragma: no cover - fetch_model_spec falls back to the catalog row itself
            raise
        by_name = _quant_build(name)  # a quantized build of a catalog model: its name answers while the Hub cannot
        if by_name is not None:
            return by_name
        from specpick.tools.hub.client import HubSettings

        offline = HubSettings().is_offline()
        why = ("the Hub lookup is off (HF_HUB_OFFLINE=1 or --offline) with nothing cached for it" if offline
               else f"the Hub could not be reached ({exc.message})")
        raise _not_in_snapshot(name, why, offline=offline) from exc
    notes = []
    if facts.fallback_reason:
        notes.append(f"model facts from {facts.source}: {facts.fallback_reason}")
    elif facts.source != "catalog":
        at = f" @ {facts.commit[:12]}" if facts.commit else ""
        notes.append(f"model facts read from {facts.source} (config.json{at})")
    if found is None:
        dated = f" (dated {_snapshot_date()})" if _snapshot_date() else ""
        notes.insert(0, f"{repo_id} is not in the embedded snapshot{dated}: looked up on the Hub automatically "
                        f"(answered from {facts.source})")
    return ResolvedModel(spec=facts.spec, source=facts.source, notes=notes)

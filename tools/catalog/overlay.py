"""The user-local catalog overlay: models and heads found on the Hub after this release was built.

``specpick catalog update`` (``tools/commands/catalog.py``) reads the Hub and writes the overlay;
``get_catalog()`` merges it into the embedded snapshot, so every verb sees the new rows. The overlay lives in
the Hugging Face cache folder, next to the client's own cache (``<HF_HOME>/specpick/catalog-overlay.json``), so
clearing the cache clears it too. Each row's ``source`` names the Hub repo, the commit sha it was read at and
the date it was fetched; merged rows carry ``fact_source="overlay"``.

Reading it is defensive: the file is size-bounded and validated as a whole; a file that fails validation is
ignored (``catalog status`` reports why) and the embedded snapshot answers alone. Embedded rows always win over
overlay rows for the same repo: they were curated and cited by hand.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specpick.tools.catalog.overlay_location import DISABLE_ENV, overlay_disabled, overlay_path  # noqa: F401 (re-export)
from specpick.tools.catalog.specs import HeadSpec, ModelSpec



class Catalog(Protocol):
    """What merging needs of ``tables.Catalog`` (named by shape: tables imports this module, not the reverse)."""

    models: list[ModelSpec]
    heads: list[HeadSpec]

    def add_rows(self, models: list[ModelSpec], heads: list[HeadSpec]) -> None: ...


OVERLAY_FORMAT = 1
# A refresh bounded by the update's total cap (2,000 repos) stays far below this; anything larger is not ours.
MAX_OVERLAY_BYTES = 20_000_000


class SkippedRow(BaseModel):
    """A Hub repo the update looked at and did not add, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo_id: str = Field(max_length=200)
    reason: str = Field(description="short key: bad-config, no-verifier, verifier-not-in-catalog, gated, ...")
    detail: str = Field("", max_length=400)


class Overlay(BaseModel):
    """The overlay file's content."""

    model_config = ConfigDict(extra="forbid")

    format: int = OVERLAY_FORMAT
    fetched_at: str = Field(description="UTC time the update finished, ISO 8601")
    endpoint: str = Field(description="the Hub the rows were read from")
    snapshot: str = Field(description="date of the embedded snapshot the update compared against")
    models: list[ModelSpec] = Field(default_factory=list)
    heads: list[HeadSpec] = Field(default_factory=list)
    skipped: list[SkippedRow] = Field(default_factory=list)
    queries: int = Field(0, ge=0, description="Hub listing requests made")
    repos_seen: int = Field(0, ge=0)
    stopped_early: str = Field("", description="why the update stopped before its caps, if it did")

    @model_validator(mode="after")
    def _models_have_parameters(self) -> "Overlay":
        # A model row without a positive parameter count cannot be sized (VRAM, step time): it is not merged, and
        # the file's other rows still are (an older release, or a hand edit, may have written one).
        bad = [m for m in self.models if not (m.params_total_b or 0) > 0]
        if bad:
            self.models = [m for m in self.models if (m.params_total_b or 0) > 0]
            self.skipped = [*self.skipped, *(SkippedRow(repo_id=m.repo_id[:200], reason="no-parameters",
                                                        detail="no positive parameter count") for m in bad)]
        return self


class OverlayState(BaseModel):
    """Where the overlay lives and whether it could be read."""

    path: str
    exists: bool
    disabled: bool = False
    overlay: Overlay | None = None
    problem: str = Field("", description="why an existing overlay file is ignored")


def snapshot_date() -> str:
    """Date of the embedded snapshot (``tools/data/snapshot.json``, written by ``scripts/build_catalog.py``)."""
    from importlib import resources

    text = resources.files("specpick.tools").joinpath("data", "snapshot.json").read_text(encoding="utf-8")
    return str(json.loads(text)["snapshot_date"])


def read_overlay() -> OverlayState:
    """Read and validate the overlay file; never raises for a missing, oversized or malformed file."""
    path = overlay_path()
    try:
        exists = path.is_file()
    except OSError as exc:  # is_file() passes ENAMETOOLONG, EACCES... on: an unusable HF_HOME is no overlay
        return OverlayState(path=str(path), exists=False, disabled=overlay_disabled(),
                            problem=f"unreadable location ({exc.strerror or exc})")
    state = OverlayState(path=str(path), exists=exists, disabled=overlay_disabled())
    if not state.exists:
        return state
    try:
        size = path.stat().st_size
        if size > MAX_OVERLAY_BYTES:
            state.problem = f"{size:,} bytes, above the {MAX_OVERLAY_BYTES:,}-byte bound"
            return state
        state.overlay = Overlay.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError) as exc:
        # ValidationError is a ValueError; json's errors too. Keep the reason to one line.
        first = exc.errors(include_url=False)[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        state.problem = f"unreadable ({type(exc).__name__}: {' '.join(first.split())[:200]})"
        return state
    if state.overlay.format != OVERLAY_FORMAT:
        state.problem = f"format {state.overlay.format}, this version reads format {OVERLAY_FORMAT}"
        state.overlay = None
    return state


def load_overlay() -> Overlay | None:
    """The overlay to merge, or None (absent, disabled, or unreadable)."""
    state = read_overlay()
    return None if state.disabled else state.overlay


def write_overlay(overlay: Overlay, path: Path | None = None) -> Path:
    """Write the overlay atomically (temp file in the same folder, then rename): readers never see half a file."""
    path = path or overlay_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(overlay.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".catalog-overlay-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class MergeResult(BaseModel):
    """What merging the overlay added to the embedded catalog."""

    models: list[str] = Field(default_factory=list)
    heads: list[str] = Field(default_factory=list)


def new_rows(catalog: Catalog, overlay: Overlay) -> tuple[list[ModelSpec], list[HeadSpec]]:
    """Overlay rows the catalog does not already hold (embedded rows win), labelled ``fact_source="overlay"``.

    A head is kept only if its verifier is a catalog or overlay model: a head for a model nothing else knows
    cannot be planned for.
    """
    known_models = {m.repo_id.lower() for m in catalog.models}
    models: list[ModelSpec] = []
    for m in overlay.models:
        if m.repo_id.lower() not in known_models:
            known_models.add(m.repo_id.lower())
            models.append(m.model_copy(update={"fact_source": "overlay"}))
    known_heads = {(h.head_repo_id.lower(), h.verifier_repo_id.lower()) for h in catalog.heads}
    heads: list[HeadSpec] = []
    for h in overlay.heads:
        key = (h.head_repo_id.lower(), h.verifier_repo_id.lower())
        if key not in known_heads and h.verifier_repo_id.lower() in known_models:
            known_heads.add(key)
            heads.append(h.model_copy(update={"fact_source": "overlay"}))
    return models, heads


def merge_overlay(catalog: Catalog) -> MergeResult:
    """Add the overlay's new rows to ``catalog`` in place (no-op without an overlay)."""
    overlay = load_overlay()
    if overlay is None:
        return MergeResult()
    models, heads = new_rows(catalog, overlay)
    catalog.add_rows(models, heads)
    return MergeResult(models=[m.repo_id for m in models], heads=[h.head_repo_id for h in heads])

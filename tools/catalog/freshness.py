"""How current the embedded snapshot is: the newest model it covers, the newest engine releases it has read.

Two facts ``specpick catalog status`` prints. The newest model is the newest engine recipe (``recipes.csv``,
the vllm-project/recipes ``date_added``) whose model the catalog holds. The newest release of an engine is the
highest version the snapshot's own rows name for it: ``engine_support`` ``min_version``, the release of each
``engine_measurements`` row, and the recipes' ``min_vllm_version``. A user who runs a newer release than that
runs software the snapshot has not read: its option names and support rows may lag.
"""

from __future__ import annotations

import csv
import io
import re
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from specpick.tools.catalog.specs import version_key

_VERSION = re.compile(r"^\s*v?(\d+\.\d+(?:\.\d+)?(?:rc\d+)?)")


class NewestModel(BaseModel):
    """The newest recipe model the catalog holds."""

    model_config = ConfigDict(frozen=True)

    repo_id: str
    date: str
    source: str


def _table(name: str) -> list[dict[str, str]]:
    text = resources.files("specpick.tools").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


@lru_cache(maxsize=1)
def recipe_rows() -> tuple[dict[str, str], ...]:
    """``recipes.csv``: every recipe model and speculative config the snapshot was built from."""
    return tuple(_table("recipes.csv"))


def newest_model(known: set[str]) -> NewestModel | None:
    """The recipe model with the latest ``date_added`` among ``known`` repo ids (lower-case); None if none."""
    dated = [r for r in recipe_rows() if r["date_added"] and r["model_id"].lower() in known]
    if not dated:
        return None
    row = max(dated, key=lambda r: (r["date_added"], r["model_id"]))
    return NewestModel(repo_id=row["model_id"], date=row["date_added"], source=row["source"])


def _versions(engine: str) -> list[str]:
    found = [r["min_version"] for r in _table("engine_support.csv") if r["engine"] == engine]
    found += [r["engine_version"] for r in _table("engine_measurements.csv") if r["engine"] == engine]
    if engine == "vllm":
        found += [r["min_vllm_version"] for r in recipe_rows()]
    out = []
    for text in found:
        match = _VERSION.match(text or "")
        if match:
            out.append(match.group(1))
    return out


def newest_engine_release(engine: str) -> str | None:
    """The highest release of ``engine`` the snapshot's rows name (None: no row names a version)."""
    versions = _versions(engine)
    return max(versions, key=version_key) if versions else None


def engine_newer_than_snapshot(engine: str, version: str) -> str | None:
    """A warning when ``version`` of ``engine`` is newer than every release the snapshot has read, else None."""
    newest = newest_engine_release(engine)
    if newest is None or version_key(version) <= version_key(newest):
        return None
    return (f"{engine} {version} is newer than any {engine} release this snapshot has read (newest: {newest}): "
            "option names, support rows and new methods may have changed since; check that release's notes and "
            "run `specpick catalog update`")

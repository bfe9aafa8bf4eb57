"""Extract the facts the catalog needs from a vllm-project/recipes checkout into ``tools/data/recipes.csv``.

Every recipe (``models/<org>/<name>.yaml``) gives one row per speculative mode it offers
(``features.spec_decoding``: ``modes`` or a single ``args`` list), and one row with an empty mode when it offers
none, so the table lists every recipe model. Only small facts are kept, each row citing the recipe file and the
commit it was read at: the model id, the date the recipe was added, its tasks, architecture and context, the
speculative mode and its ``--speculative-config`` (canonical JSON: sorted keys, no spaces), and the method, draft
repo and draft length parsed from it. The recipes' long guides are not copied.

Used by ``scripts/build_catalog.py --from-recipes DIR --recipes-commit SHA``; the rows keep the recipes' file
order (sorted paths) so a rebuild from the same commit gives the same bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RECIPE_FIELDS = [
    "model_id", "recipe_path", "date_added", "tasks", "architecture", "context_length", "min_vllm_version",
    "mode", "default_mode", "method", "draft_repo_id", "num_speculative_tokens", "speculative_config", "source",
]
_DOTTED = re.compile(r"^--speculative-config\.(\w+)$")


def _scalar(text: str) -> Any:
    """A dotted CLI value (``--speculative-config.num_speculative_tokens 3``) as vLLM parses it: JSON if it is."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def speculative_config(args: list[str]) -> dict[str, Any] | None:
    """The speculative config a recipe's argument list passes, in either spelling vLLM accepts.

    ``--speculative-config '<json>'`` or ``--speculative-config.<key> <value>`` pairs; None when it passes none.
    """
    config: dict[str, Any] = {}
    for i, arg in enumerate(args):
        if arg == "--speculative-config" and i + 1 < len(args):
            config.update(json.loads(args[i + 1]))
        match = _DOTTED.match(arg)
        if match and i + 1 < len(args):
            config[match.group(1)] = _scalar(args[i + 1])
    return config or None


def _modes(spec: dict[str, Any] | None) -> list[tuple[str, list[str]]]:
    if not spec:
        return []
    modes = spec.get("modes")
    if modes:
        return [(str(name), list(mode.get("args") or [])) for name, mode in modes.items()]
    return [("default", list(spec.get("args") or []))]


def recipe_rows(recipe: dict[str, Any], path: str, source: str) -> list[dict[str, str]]:
    """The rows of one parsed recipe (see the module docstring)."""
    meta, model = recipe.get("meta") or {}, recipe.get("model") or {}
    base = {
        "model_id": str(model.get("model_id", "")), "recipe_path": path,
        "date_added": str(meta.get("date_added") or ""), "tasks": ";".join(meta.get("tasks") or []),
        "architecture": str(model.get("architecture") or ""), "context_length": str(model.get("context_length") or ""),
        "min_vllm_version": str(model.get("min_vllm_version") or ""), "source": source,
    }
    spec = (recipe.get("features") or {}).get("spec_decoding")
    modes = _modes(spec)
    if not modes:
        return [{**base, **{k: "" for k in RECIPE_FIELDS if k not in base}}]
    default = str((spec or {}).get("default_mode") or modes[0][0])
    rows = []
    for name, args in modes:
        config = speculative_config(args) or {}
        rows.append({
            **base, "mode": name, "default_mode": "yes" if name == default else "no",
            # A config without "method" names a draft repo; vLLM infers the method from that repo's config.
            "method": str(config.get("method", "")), "draft_repo_id": str(config.get("model", "")),
            "num_speculative_tokens": str(config.get("num_speculative_tokens", "")),
            "speculative_config": json.dumps(config, sort_keys=True, separators=(",", ":")),
        })
    return rows


def extract(recipes_dir: Path, commit: str) -> list[dict[str, str]]:
    """Every recipe's rows, in sorted path order. ``commit`` is the recipes commit the checkout is at."""
    import yaml  # only this maintenance script reads YAML

    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise ValueError(f"--recipes-commit {commit!r}: give the recipes checkout's commit (hex)")
    rows: list[dict[str, str]] = []
    for path in sorted((recipes_dir / "models").glob("*/*.yaml")):
        relative = path.relative_to(recipes_dir).as_posix()
        recipe = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        rows += recipe_rows(recipe, relative, f"github:vllm-project/recipes@{commit[:7]} {relative}")
    return rows

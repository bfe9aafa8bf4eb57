"""The engine recipe as outside evidence that a drafter is a model's deployed path.

A parallel drafter whose acceptance is borrowed (other workloads' rows, other families' drafters) is held back to
``--method`` (candidates._hold_back_thin_evidence): its estimate is not comparable with measured ones. When the
model's own vLLM recipe (``tools/data/recipes.csv``, read from vllm-project/recipes) serves it by default with that
very method and drafter, the publisher has shown it is the deployed path, so the candidate stays in unasked, with
the borrowed acceptance stated as an assumption and its range widened down to no gain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from specpick.tools.catalog.freshness import recipe_rows

if TYPE_CHECKING:
    from specpick.tools.catalog.specs import ModelSpec
    from specpick.tools.model.estimate import SpeedupResult


def recipe_default_row(verifier: ModelSpec, method: str, drafter_repo: str | None) -> dict[str, str] | None:
    """The recipe row that serves ``verifier`` by default with ``method`` and ``drafter_repo`` (None if none)."""

    if not drafter_repo:
        return None
    for row in recipe_rows():
        if (row["model_id"].lower() == verifier.repo_id.lower() and row["default_mode"] == "yes"
                and row["method"] == method and row["draft_repo_id"].lower() == drafter_repo.lower()):
            return row
    return None


def recipe_note(why_thin: str, row: dict[str, str]) -> str:
    """The assumption a recipe-served drafter's answer states."""
    return (f"acceptance assumed: {why_thin}; offered unasked because the model's own vLLM recipe serves this "
            f"drafter by default ({row['source']}), so the range runs down to no gain")


def widen_for_recipe(est: SpeedupResult, note: str) -> SpeedupResult:
    """``est`` with ``note`` among its assumptions and its low end at most 1.0x (no gain)."""
    return est.model_copy(update={"low": min(est.low, 1.0), "assumptions": [*est.assumptions, note]})

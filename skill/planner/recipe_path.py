"""The engine recipe as outside evidence that a drafter is a model's deployed path.

A parallel drafter whose acceptance is borrowed (other workloads' rows, other families' drafters) is held back to
``--method`` (candidates._hold_back_thin_evidence): its estimate is not comparable with measured ones. When the
model's own vLLM recipe (``tools/data/recipes.csv``, read from vllm-project/recipes) serves it by default with that
very method and drafter, the publisher has shown it is the deployed path, so the candidate stays in unasked, with
the borrowed acceptance stated as an assumption and its range widened down to no gain.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specpick.skill.planner.candidates import Candidate
    from specpick.tools.catalog.specs import ModelSpec
    from specpick.tools.model.estimate import SpeedupResult


def recipe_default_row(verifier: ModelSpec, method: str, drafter_repo: str | None) -> dict[str, str] | None:
    """The recipe row that serves ``verifier`` by default with ``method`` and ``drafter_repo`` (None if none)."""
    from specpick.tools.catalog.freshness import recipe_rows

    if not drafter_repo:
        return None
    for row in recipe_rows():
        if (row["model_id"].lower() == verifier.repo_id.lower() and row["default_mode"] == "yes"
                and row["method"] == method and row["draft_repo_id"].lower() == drafter_repo.lower()):
            return row
    return None


def keep_as_recipe_path(cand: Candidate, why_thin: str, row: dict[str, str]) -> Candidate:
    """The candidate kept unasked on the recipe's word: the thin evidence is an assumption, the low end is 1.0x."""
    note = (f"acceptance assumed: {why_thin}; offered unasked because the model's own vLLM recipe serves this "
            f"drafter by default ({row['source']}), so the range runs down to no gain")
    assert cand.estimate is not None  # only candidates with an estimate are held back
    return replace(cand, estimate=widen_for_recipe(cand.estimate, note), recipe_assumption=note)


def widen_for_recipe(est: SpeedupResult, note: str) -> SpeedupResult:
    """``est`` with ``note`` among its assumptions and its low end at most 1.0x (no gain)."""
    return est.model_copy(update={"low": min(est.low, 1.0), "assumptions": [*est.assumptions, note]})

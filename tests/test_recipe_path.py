"""The engine recipe as evidence for a drafter's deployed path, and engine rows held out of the gates by tag."""

from __future__ import annotations

import csv
from pathlib import Path

from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.calibration.engine_rows import HELD_OUT_TAG, load_engine_rows
from specpick.tools.catalog.tables import get_catalog

ROOT = Path(__file__).resolve().parent.parent


def _recipe(model_id: str) -> dict[str, str]:
    with open(ROOT / "tools" / "data" / "recipes.csv", encoding="utf-8", newline="") as handle:
        return next(r for r in csv.DictReader(handle) if r["model_id"] == model_id and r["default_mode"] == "yes")


def test_recipe_default_row_matches_only_the_recipes_own_method_and_drafter() -> None:
    from specpick.skill.planner.recipe_path import recipe_default_row

    laguna = get_catalog().find_model("poolside/Laguna-XS.2")
    cell = _recipe("poolside/Laguna-XS.2")
    assert recipe_default_row(laguna, cell["method"], cell["draft_repo_id"]) is not None
    assert recipe_default_row(laguna, cell["method"], "poolside/Laguna-XS-2.1-DFlash") is None  # another model's
    assert recipe_default_row(laguna, "pard", cell["draft_repo_id"]) is None
    assert recipe_default_row(laguna, cell["method"], None) is None


def test_kimi_k3_engine_rows_are_held_out_of_every_gate_with_their_reason() -> None:
    rows = [r for r in load_engine_rows() if r.source_id == "VLLM-BLOG-K3-2026"]
    assert len(rows) == 2  # the two decode-throughput rows of the blog (TP 8, TP 16)
    for row in rows:
        assert row.excluded_reason and "Kimi-K3" in row.excluded_reason
        assert not row.llamacpp  # not one of the llama.cpp rows reported in their own section
        assert not row.prior_candidate
        use, why = row_use(row)
        assert use == "skipped" and isinstance(why, str) and "Kimi-K3" in why


def test_llamacpp_tag_is_not_read_as_another_held_out_reason() -> None:
    row = load_engine_rows()[0]
    tagged = row.model_copy(update={"notes": f"{row.notes}; {HELD_OUT_TAG}"})
    assert tagged.excluded_reason is None

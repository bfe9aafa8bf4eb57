"""Coverage: every seed rule and ENGINES.md (c) issue is covered by >= 2 cases, and COVERAGE.md is current."""

from __future__ import annotations

from specpick.evals.coverage import (COVERAGE_MD, ENGINES_ISSUES, MIN_CASES_PER_ITEM, SEED,
                                     coverage_map, render_coverage_md, under_covered)
from specpick.evals.dataset import Dataset

CASES = Dataset.load().cases


def test_every_item_is_covered_at_least_twice():
    assert under_covered(CASES) == {}
    assert all(len(ids) >= MIN_CASES_PER_ITEM for ids in coverage_map(CASES).values())


def test_registry_lists_all_twenty_engines_issues_and_the_seed_sections():
    assert sorted(int(k.rsplit(":", 1)[1]) for k in ENGINES_ISSUES) == list(range(1, 21))
    assert {k.split(":")[1] for k in SEED} == {"rule", "tune", "flag"}
    assert len([k for k in SEED if ":rule:" in k]) == 7  # the seed's seven decision rules
    assert len([k for k in SEED if ":flag:" in k]) == 4  # the seed's four "always flag" items


def test_coverage_md_is_current():
    assert COVERAGE_MD.read_text(encoding="utf-8") == render_coverage_md(CASES), (
        "evals/COVERAGE.md is stale: run python -m specpick.evals.coverage --write")

"""What the eval suite must cover, and the coverage table built from the cases' ``covers:`` fields.

Every decision rule, tuning rule and "always flag" of the user's seed
(``docs/DECISION-RULES.md``) and every issue of ENGINES.md
section (c) gets an id here; each id must be covered by at least
``MIN_CASES_PER_ITEM`` cases. ``evals/COVERAGE.md`` is generated from the case
files by ``render_coverage_md`` (``python -m specpick.evals.coverage --write``)
and a test fails when the committed file is stale or an id is under-covered.
"""

from __future__ import annotations

import sys
from pathlib import Path

from specpick.evals.coverage_ids import COVERAGE_IDS, ENGINES_ISSUES, SEED  # noqa: F401 (re-export)
from specpick.evals.dataset import Case, Dataset

MIN_CASES_PER_ITEM = 2
COVERAGE_MD = Path(__file__).resolve().parent / "COVERAGE.md"


def coverage_map(cases: list[Case]) -> dict[str, list[str]]:
    """Coverage id -> ids of the cases that cover it (every registered id present, possibly empty)."""
    out: dict[str, list[str]] = {cid: [] for cid in COVERAGE_IDS}
    for case in cases:
        for cid in case.covers:
            out[cid].append(case.id)
    return out


def under_covered(cases: list[Case], minimum: int = MIN_CASES_PER_ITEM) -> dict[str, list[str]]:
    """Ids covered by fewer than ``minimum`` cases (empty when the suite is complete)."""
    return {cid: ids for cid, ids in coverage_map(cases).items() if len(ids) < minimum}


def render_coverage_md(cases: list[Case]) -> str:
    """The COVERAGE.md table (deterministic: regenerate it after editing cases)."""
    cmap = coverage_map(cases)
    lines = [
        "# Eval coverage",
        "",
        "Generated from the `covers:` field of `evals/cases/*.yaml` by "
        "`python -m specpick.evals.coverage --write`; `tests/test_evals_coverage.py` fails when this file is stale "
        f"or an item has fewer than {MIN_CASES_PER_ITEM} cases.",
        "",
        "Seed: `docs/DECISION-RULES.md` (decision rules, tuning, always flag). "
        "Issues: `docs/references/ENGINES.md` section (c).",
        "",
        "| item | what | cases |",
        "|---|---|---|",
    ]
    for cid, what in COVERAGE_IDS.items():
        ids = cmap[cid]
        lines.append(f"| `{cid}` | {what} | {len(ids)}: " + ", ".join(f"`{i}`" for i in ids) + " |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``--write``: regenerate COVERAGE.md; ``--check``: exit 1 when it is stale or under-covered."""
    args = sys.argv[1:] if argv is None else argv
    cases = Dataset.load().cases
    text = render_coverage_md(cases)
    if "--write" in args:
        COVERAGE_MD.write_text(text, encoding="utf-8")
    missing = under_covered(cases)
    stale = not COVERAGE_MD.exists() or COVERAGE_MD.read_text(encoding="utf-8") != text
    for cid, ids in missing.items():
        print(f"under-covered: {cid} ({len(ids)} case(s))", file=sys.stderr)
    if stale:
        print("COVERAGE.md is stale: run python -m specpick.evals.coverage --write", file=sys.stderr)
    return 1 if (missing or stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Graders of the prose: the markdown's five-section structure, required mentions, and what the agent asked."""

from __future__ import annotations

import re

from specpick.evals.evaluators.base import CheckResult, GradeContext, not_applicable, check_result
from specpick.skill.schema import SECTION_HEADINGS


def grade_sections(ctx: GradeContext) -> CheckResult:
    """The markdown has the five fixed headings, in order, each followed by content."""
    md = ctx.markdown
    if md is None or ctx.expected.outcome != "recommend":
        return not_applicable("sections", "no markdown answer expected or given")
    lines = md.splitlines()
    where = []
    for heading in SECTION_HEADINGS:
        hits = [i for i, line in enumerate(lines) if line.strip() == f"## {heading}"]
        if len(hits) != 1:
            return check_result("sections", False, f"'## {heading}' appears {len(hits)} times")
        where.append(hits[0])
    if where != sorted(where):
        return check_result("sections", False, f"headings out of order (lines {where})")
    bounds = where + [len(lines)]
    empty = [SECTION_HEADINGS[i] for i in range(5) if not "".join(lines[bounds[i] + 1:bounds[i + 1]]).strip()]
    return check_result("sections", not empty, f"empty sections {empty}" if empty else "five sections in order")


def grade_mentions(ctx: GradeContext) -> CheckResult:
    """The answer's prose says what the case needs said (regexes)."""
    pats = list(ctx.expected.mentions)
    if ctx.runner == "agent":
        pats += ctx.case.agent.mentions
    if not pats:
        return not_applicable("mentions", "nothing required")
    text = "\n".join(filter(None, [ctx.markdown or "", *ctx.agent_texts]))
    if not text:
        return not_applicable("mentions", "no prose to search")
    missing = [p for p in pats if not re.search(p, text, re.IGNORECASE)]
    return check_result("mentions", not missing, f"missing {missing}" if missing else f"mentions {pats}")


def grade_asked(ctx: GradeContext) -> CheckResult:
    """Agent runs: the agent asked about what was missing before answering."""
    pats = ctx.case.agent.must_ask
    if ctx.runner != "agent" or not pats:
        return not_applicable("asked", "not an agent expectation")
    questions = "\n".join(t for t in ctx.agent_texts if "?" in t)
    missing = [p for p in pats if not re.search(p, questions, re.IGNORECASE)]
    return check_result("asked", not missing, f"never asked about {missing}" if missing else f"asked about {pats}")

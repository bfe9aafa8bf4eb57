"""Eval case definitions: the shipped cases load, and the models reject what they should."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from specpick.evals.dataset import CASES_DIR, Case, Dataset, ExpectedAnswer, Range
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.parallel_drafts import pard_draft_spec
from specpick.tools.catalog.tables import get_catalog

DATASET = Dataset.load()
CASES = DATASET.cases


def test_at_least_sixty_cases_across_several_categories():
    counts = collections.Counter(c.category for c in CASES)
    assert len(CASES) >= 60
    assert len(counts) >= 6 and min(counts.values()) >= 5, counts


def test_adversarial_cases_cover_off_topic_missing_info_and_contradictions():
    adv = [c for c in CASES if c.category == "adversarial"]
    assert any(c.expected.outcome == "decline" for c in adv)  # off-topic
    assert any("verifier" not in c.inputs and c.expected.outcome == "error" for c in adv)  # missing information
    assert any(c.inputs.get("second_model") is False and c.inputs.get("draft") for c in adv)  # contradiction


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_is_answerable_and_sourced(case: Case):
    # Every input the case sets is either in the opening message or a hidden fact the simulated user can reveal.
    if "agent" in case.runners:
        unrevealed = [k for k in case.inputs if k not in case.hidden.facts and k not in case.hidden.stated]
        assert not unrevealed, f"inputs the user can never reveal: {unrevealed}"
    exp = case.expected
    if exp.outcome == "recommend" and "planner" in case.runners:
        PlannerInputs.model_validate(case.inputs)
    # A speedup band must cite where it comes from (a data row, or the public URL of a measurement not yet in the
    # catalog: docs/pending-data rows are cited by their source's address).
    for band in (exp.speedup or {}).values():
        assert re.search(r"engine_measurements\.csv [A-Z]|published-dev\.csv:L\d+|ENGINES|seed|vllm#|speculation off|E="
                         r"|https://github\.com/",
                         band.basis), band.basis


def test_catalog_names_in_cases_exist():
    """Head/draft ids the cases accept must be real catalog rows, so a typo cannot make a check unpassable."""
    cat = get_catalog()
    known = {h.head_repo_id.lower() for h in cat.heads} | {m.repo_id.lower() for m in cat.models}
    for case in CASES:
        for exp in filter(None, [case.expected, case.agent.expected]):
            for strategy, ids in exp.draft_models.items():
                missing = [i for i in ids if i.lower() not in known]
                assert not missing, f"{case.id}: unknown {strategy} repo ids {missing}"
        for field in ("verifier", "draft", "head", "base_model"):
            name = case.inputs.get(field)
            if field == "verifier" and case.inputs.get("base_model"):
                continue  # a derived verifier's own id is the user's; its facts come from base_model, checked below
            if name and case.expected.outcome == "recommend":
                # a PARD draft is sized from its base model's catalog row (tools/catalog/parallel_drafts.py)
                assert name.lower() in known or cat.find_model(name) or pard_draft_spec(name) or \
                    _gguf_of_catalog_model(name), f"{case.id}: {field} {name} not in the catalog"


def _gguf_of_catalog_model(name: str) -> bool:
    """A GGUF repo (``owner/Model-GGUF[:QUANT]``) whose base model, read from its name offline, is a catalog row."""
    from specpick.tools.hub.gguf_ref import resolve_gguf_base

    found = resolve_gguf_base(name) if not name.lower().endswith(".gguf") else None
    return found is not None and get_catalog().find_model(found[0]) is not None


def test_published_row_citations_point_at_data_lines():
    lines = re.compile(r"published-dev\.csv:L(\d+)(?:-L(\d+))?")
    for path in CASES_DIR.glob("*.yaml"):
        for m in lines.finditer(path.read_text(encoding="utf-8")):
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            assert 2 <= lo <= hi <= 273, f"{path.name}: {m.group(0)} is outside the 272 data rows"


def test_unknown_fields_are_rejected(tmp_path: Path):
    (tmp_path / "x.yaml").write_text(
        "category: x\ncases:\n  - id: abc-1\n    title: a title\n    opening_message: hi\n    sources: [s]\n"
        "    ground_truth: ['specpick:skill/SKILL.md']\n    release: vllm 0.14.0\n"
        "    inputs: {verifier: llama-3.1-8b, workload: chat}\n    expected: {strategies: [eagle3], flagz: []}\n")
    with pytest.raises(ValueError, match="flagz"):
        Dataset.load(tmp_path)


def test_typo_in_inputs_cannot_pass_as_an_expected_error():
    with pytest.raises(ValidationError, match="verifer"):
        Case.model_validate({"id": "abc", "category": "c", "title": "title", "opening_message": "hello",
                             "sources": ["s"], "ground_truth": ["specpick:skill/SKILL.md"], "release": "vllm 0.14.0",
                             "inputs": {"verifer": "x", "workload": "chat"},
                             "expected": {"outcome": "error", "error": "input"}})


@pytest.mark.parametrize(("expected", "match"), [
    ({"outcome": "error"}, "error class"),
    ({"outcome": "recommend"}, "acceptable strategies"),
    ({"strategies": ["eagle3"], "forbidden_strategies": ["eagle3"]}, "both acceptable and forbidden"),
    ({"strategies": ["eagle3"], "flags": ["lora"], "forbidden_flags": ["lora"]}, "both required and forbidden"),
    ({"strategies": ["eagle3"], "fallback_metrics": ["latency"]}, "unknown trigger metric"),
    ({"strategies": ["eagle3"], "flags": ["not_a_flag"]}, "not_a_flag"),
    ({"outcome": "decline", "strategies": ["none"]}, "cannot list"),
    ({"strategies": ["eagle3"], "speedup": {"low": 3, "high": 2, "basis": "rows L1 L2"}}, "above high"),
])
def test_expected_answer_rejects_inconsistencies(expected, match):
    with pytest.raises(ValidationError, match=match):
        ExpectedAnswer.model_validate(expected)


def test_range_shorthand_and_bounds():
    assert Range.model_validate([3, 7]).contains(7) and not Range.model_validate([3, 7]).contains(8)
    assert Range.model_validate({"min": 8}).contains(100)
    with pytest.raises(ValidationError):
        Range.model_validate({})
    per = ExpectedAnswer.model_validate({"strategies": ["ngram"], "num_draft_tokens": [2, 4]})
    assert set(per.num_draft_tokens) == {"*"}


def test_select_filters_and_rejects_unknown_names():
    assert {c.category for c in DATASET.select(categories=["serving"])} == {"serving"}
    assert all("planner" in c.runners for c in DATASET.select(runner="planner"))
    assert not any(c.id.startswith("off-topic") for c in DATASET.select(runner="planner"))
    with pytest.raises(ValueError, match="unknown categories"):
        DATASET.select(categories=["nope"])
    with pytest.raises(ValueError, match="unknown case ids"):
        DATASET.select(ids=["nope"])

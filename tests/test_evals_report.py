"""Report: per-case table, per-check and per-category rates, confusion matrix, JSON and the min-pass threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.evals.report import EvalReport, render_text, run_eval
from specpick.tools.errors import EXIT_THRESHOLD, InputError, ThresholdError
from tests.test_evals_graders import make_rec

CASES_YAML = """category: {category}
cases:
  - id: good-eagle3
    title: planner picks the expected strategy
    opening_message: hello there
    sources: [test]
    ground_truth: ["specpick:skill/SKILL.md"]
    release: vllm 0.14.0
    inputs: {{verifier: meta-llama/Llama-3.1-8B-Instruct, workload: chat}}
    expected: {{strategies: [eagle3], flags: [eagle_needs_internals]}}
  - id: wrong-strategy
    title: planner picks a wrong strategy
    opening_message: hello there
    sources: [test]
    ground_truth: ["specpick:skill/SKILL.md"]
    release: vllm 0.14.0
    inputs: {{verifier: meta-llama/Llama-3.2-3B-Instruct, workload: chat}}
    expected: {{strategies: [none]}}
  - id: expected-error
    title: contradiction must be an input error
    opening_message: hello there
    sources: [test]
    ground_truth: ["specpick:skill/SKILL.md"]
    release: vllm 0.14.0
    inputs: {{verifier: meta-llama/Llama-2-7b-chat-hf, workload: chat}}
    expected: {{outcome: error, error: input}}
  - id: crashes
    title: planner bug
    opening_message: hello there
    sources: [test]
    ground_truth: ["specpick:skill/SKILL.md"]
    release: vllm 0.14.0
    inputs: {{verifier: Qwen/Qwen2.5-7B-Instruct, workload: chat}}
    expected: {{strategies: [draft_model]}}
  - id: agent-only
    title: never run by the planner
    runners: [agent]
    opening_message: write a poem
    sources: [test]
    ground_truth: ["specpick:skill/SKILL.md"]
    release: vllm 0.14.0
    expected: {{outcome: decline}}
"""


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").write_text(CASES_YAML.format(category="alpha"))
    return tmp_path


@pytest.fixture
def fake_planner(monkeypatch):
    import specpick.skill.planner.plan as planner

    def plan(inputs):
        if "Llama-2" in inputs.verifier:
            raise InputError("contradictory inputs")
        if "Qwen" in inputs.verifier:
            raise ZeroDivisionError("bug")
        return make_rec(inputs=inputs.model_dump())  # always eagle3

    monkeypatch.setattr(planner, "plan", plan)


def test_report_counts_passes_check_failures_and_failed_runs_apart(cases_dir, fake_planner, tmp_path):
    out = tmp_path / "r.json"
    seen = []
    report = run_eval("planner", cases_dir=cases_dir, json_path=out, min_pass=0.5, progress=seen.append)
    assert [r.case_id for r in report.results] == ["good-eagle3", "wrong-strategy", "expected-error", "crashes"]
    assert len(seen) == 4  # agent-only case skipped by the planner runner
    by_id = {r.case_id: r for r in report.results}
    assert by_id["good-eagle3"].passed and by_id["expected-error"].passed
    assert by_id["wrong-strategy"].failed_checks == ["strategy"]
    assert by_id["crashes"].run_failed and "ZeroDivisionError" in by_id["crashes"].run_error

    s = report.summaries["planner"]
    assert (s.total, s.passed, s.run_failed) == (4, 2, 1) and s.pass_rate == 0.5
    assert (s.per_check["strategy"].passed, s.per_check["strategy"].failed) == (1, 1)
    assert s.per_check["strategy"].run_failed == 1 and s.per_check["strategy"].rate == 0.5
    assert s.per_check["outcome"].rate == 1.0  # the failed run is not a failed outcome check
    cat = s.per_category["alpha"]
    assert (cat.passed, cat.failed, cat.run_failed) == (2, 1, 1)
    assert s.confusion == {"eagle3": {"eagle3": 1}, "none": {"eagle3": 1},
                           "error:input": {"error:input": 1}, "draft_model": {"run_failed": 1}}
    assert report.threshold_met

    data = json.loads(out.read_text())
    assert EvalReport.model_validate(data).summaries["planner"].passed == 2


def test_render_text_shows_table_rates_and_confusion_matrix(cases_dir, fake_planner):
    text = render_text(run_eval("planner", cases_dir=cases_dir))
    assert "wrong-strategy" in text and "FAIL" in text and "RUN-FAILED" in text
    assert "Failed checks (evidence):" in text and "chose eagle3; acceptable ['none']" in text
    assert "Failed runs (not graded):" in text
    assert "Pass rate per check" in text and "Pass rate per category" in text and "alpha" in text
    assert "Confusion matrix [planner]" in text and "error:input" in text
    assert "2/4 cases passed (50.0%); 1 run(s) failed" in text


def test_min_pass_threshold_raises_exit_code_8(cases_dir, fake_planner):
    report = run_eval("planner", cases_dir=cases_dir, min_pass=0.9)
    assert not report.threshold_met and "NOT met" in render_text(report)
    with pytest.raises(ThresholdError) as info:
        report.raise_for_threshold()
    assert info.value.exit_code == EXIT_THRESHOLD and "50.0%" in info.value.message
    run_eval("planner", cases_dir=cases_dir, min_pass=0.5).raise_for_threshold()  # met: no exception


def test_per_check_floors(cases_dir, fake_planner):
    report = run_eval("planner", cases_dir=cases_dir, min_check={"strategy": 0.9, "sections": 1.0, "tree": 1.0})
    assert report.threshold_failures == ["check strategy 50.0% < 90.0%"]  # tree graded nowhere: cannot miss
    with pytest.raises(ThresholdError, match="check strategy"):
        report.raise_for_threshold()
    with pytest.raises(ValueError, match="known check names"):
        run_eval("planner", cases_dir=cases_dir, min_check={"nope": 1.0})


def test_filters_and_argument_checks(cases_dir, fake_planner):
    report = run_eval("planner", cases_dir=cases_dir, case_ids=["good-eagle3"], repeat=2)
    assert [(r.case_id, r.repeat) for r in report.results] == [("good-eagle3", 0), ("good-eagle3", 1)]
    with pytest.raises(ValueError, match="unknown categories"):
        run_eval("planner", cases_dir=cases_dir, categories=["beta"])
    with pytest.raises(ValueError, match="fraction"):
        run_eval("planner", cases_dir=cases_dir, min_pass=80)
    with pytest.raises(ValueError, match="repeat"):
        run_eval("planner", cases_dir=cases_dir, repeat=0)


# -- the allow-list gate (evals/known_failures.txt) ---------------------------------------------

def test_known_failures_file_needs_a_reason_per_case(tmp_path):
    from specpick.evals.report import load_known_failures

    good = tmp_path / "known.txt"
    good.write_text("# comment\ncase-a  why it fails (vllm#123)\n\ncase-b because\n", encoding="utf-8")
    assert load_known_failures(good) == {"case-a": "why it fails (vllm#123)", "case-b": "because"}
    bad = tmp_path / "bad.txt"
    bad.write_text("case-a\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'case-a' has no reason"):
        load_known_failures(bad)


def test_a_swap_of_failing_cases_misses_the_gate(cases_dir, fake_planner):
    # Synthetic cases under the fake planner: wrong-strategy fails, good-eagle3 passes, whatever the real planner
    # does today. Listing the passing one instead of the failing one is a swap: both directions are reported.
    ids = ["good-eagle3", "wrong-strategy"]
    report = run_eval("planner", cases_dir=cases_dir, case_ids=ids, known_failures={"good-eagle3": "listed by mistake"})
    assert not report.threshold_met
    assert report.threshold_failures == [
        "case wrong-strategy failed and is not in the known-failures list",
        "case good-eagle3 passes now: remove it from the known-failures list (listed by mistake)",
    ]
    listed = run_eval("planner", cases_dir=cases_dir, case_ids=ids,
                      known_failures={"wrong-strategy": "fake planner answers eagle3"})
    assert listed.threshold_met and listed.threshold_failures == []


def test_known_failures_must_name_real_cases():
    from specpick.evals.report import run_eval

    with pytest.raises(ValueError, match="unknown case ids: no-such-case"):
        run_eval("planner", case_ids=["llama31-70b-draft-1b-quickstart"], known_failures={"no-such-case": "x"})


def test_the_committed_known_failures_list_matches_the_suite():
    from pathlib import Path

    from specpick.evals.report import load_known_failures, run_eval

    known = load_known_failures(Path(__file__).parents[1] / "evals" / "known_failures.txt")
    report = run_eval("planner", known_failures=known)
    assert report.threshold_failures == []

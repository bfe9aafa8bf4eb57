"""``specpick eval`` end to end through the real CLI entry point (planner replaced where a test needs control)."""

from __future__ import annotations

import json

import pytest

from specpick.skill.surfaces.cli import main
# The same cases file and controlled planner as the report tests (pytest finds imported fixtures).
from tests.test_evals_report import cases_dir, fake_planner  # noqa: F401


def test_eval_prints_the_report_writes_json_and_passes_the_threshold(cases_dir, fake_planner, tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(["eval", "--runner", "planner", "--cases-dir", str(cases_dir), "--json", str(out),
                 "--min-pass", "0.5", "--min-check", "sections=1"])
    captured = capsys.readouterr()
    assert code == 0
    assert "Confusion matrix [planner]" in captured.out and "thresholds on planner: met" in captured.out
    assert "FAIL       wrong-strategy [planner]" in captured.err  # one progress line per case on stderr
    assert json.loads(out.read_text())["summaries"]["planner"]["passed"] == 2


@pytest.mark.parametrize(("argv", "code", "needle"), [
    (["--min-pass", "0.9"], 8, "eval thresholds not met"),
    (["--min-check", "strategy=0.9"], 8, "check strategy"),
    (["--min-check", "strategy"], 2, "CHECK=FRACTION"),
    (["--category", "nope"], 2, "unknown categories"),
    (["--known-failures", "/no/such/allow-list.txt"], 2, "No such file or directory; give the path of the allow-list"),
    (["--known-failures", "{reasonless}"], 2, ":1: 'some-case' has no reason; write 'case_id why it fails'"),
])
def test_eval_exit_codes(cases_dir, fake_planner, capsys, tmp_path, argv, code, needle):
    reasonless = tmp_path / "known_failures.txt"
    reasonless.write_text("some-case\n")
    argv = [a.replace("{reasonless}", str(reasonless)) for a in argv]
    assert main(["eval", "--cases-dir", str(cases_dir), "--quiet", *argv]) == code
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err


def test_agent_runner_without_a_key_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["eval", "--runner", "agent"]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_agent_runner_through_the_cli_against_the_stand_in(claude_env, capsys):
    from specpick.evals.dataset import Dataset
    from tests.test_evals_runners import _script

    case = {c.id: c for c in Dataset.load().cases}["missing-verifier"]
    claude_env.push(*_script(case, question="Which model will you serve?", user_answer="Llama-3.1-8B-Instruct"))
    assert main(["eval", "--runner", "agent", "--case", case.id, "--model", "claude-test", "--min-pass", "1"]) == 0
    out = capsys.readouterr().out
    assert "missing-verifier" in out and "[with-skill] 1/1 cases passed" in out
    assert len(claude_env.message_requests) == 3  # agent, simulated user, agent


def test_eval_runs_the_train_plan_category(tmp_path, capsys):
    from specpick.evals.training import load_cases

    out = tmp_path / "tp.json"
    assert main(["eval", "--runner", "train-plan", "--json", str(out)]) == 0
    n = len(load_cases())
    assert f"train-plan cases: {n}/{n} passed" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["runner"] == "train-plan" and data["cases_total"] == data["cases_passed"] == n


def test_eval_train_plan_exits_8_below_min_pass_and_2_on_recommend_only_options(monkeypatch, capsys):
    import specpick.evals.training as training

    failing = [training.CheckResult(case_id="a", check="decision", passed=False, detail="train (expected skip)"),
               training.CheckResult(case_id="b", check="decision", passed=True)]
    monkeypatch.setattr(training, "run_cases", lambda cases: failing)
    assert main(["eval", "--runner", "train-plan"]) == 8  # default: every case must pass
    assert main(["eval", "--runner", "train-plan", "--min-pass", "0.5"]) == 0
    assert main(["eval", "--runner", "train-plan", "--mutants"]) == 2
    assert main(["eval", "--runner", "train-plan", "--case", "no-such-case"]) == 2
    assert "error: unknown train-plan case ids" in capsys.readouterr().err

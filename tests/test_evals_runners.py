"""Runners: planner error mapping, the agent runner's mechanics with in-process fakes, and the same runner
through the real chat loop and SDK against the local Messages-API stand-in."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from specpick.evals import runners
from specpick.evals.report import grade_run, run_eval
from specpick.evals.runners import BASELINE_SYSTEM, SimulatedUser, run_agent, run_planner
from specpick.evals.dataset import Dataset
from specpick.tools.errors import InputError, ServiceError
from tests.support.fakeclaude import text_turn, tool_use_turn
from tests.test_evals_graders import make_case, make_rec

CASES = {c.id: c for c in Dataset.load().cases}


# -- planner runner ------------------------------------------------------------------------------------
def test_invalid_inputs_become_an_input_error_not_a_crash():
    out = run_planner(CASES["missing-verifier"])
    assert out.error is not None and out.error.kind == "picker" and out.error.exit_code == 2
    assert "verifier" in out.error.message and not out.run_failed


def test_picker_errors_are_answers_and_other_exceptions_are_failed_runs(monkeypatch):
    import specpick.skill.planner.plan as planner

    case = CASES["llama31-8b-eagle3-published-head"]
    monkeypatch.setattr(planner, "plan", lambda inputs: (_ for _ in ()).throw(InputError("contradiction")))
    out = run_planner(case)
    assert out.error.exit_code == 2 and not out.run_failed

    def crash(inputs):
        raise KeyError("bug")

    monkeypatch.setattr(planner, "plan", crash)
    out = run_planner(case)
    assert out.run_failed and out.error.kind == "crash" and "KeyError" == out.error.type
    graded = grade_run(case, out)
    assert graded.run_failed and not graded.passed
    assert all(c.status == "na" for c in graded.checks.values())  # a failed run is not graded


def test_planner_output_is_rendered_and_graded(monkeypatch):
    import specpick.skill.planner.plan as planner

    case = CASES["llama31-8b-eagle3-published-head"]
    monkeypatch.setattr(planner, "plan", lambda inputs: make_rec(inputs=inputs.model_dump()))
    out = run_planner(case)
    assert out.recommendation is not None and out.markdown and out.markdown.startswith("## 1. Recommendation")
    graded = grade_run(case, out)
    assert graded.checks["strategy"].status == "pass" and graded.checks["sections"].status == "pass"
    assert graded.expected_label == graded.chosen_label == "eagle3"


# -- agent runner with in-process fakes --------------------------------------------------------------------
@dataclass
class FakeConversation:
    recommendation: Any = None
    error: Any = None
    final_text: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)

    def transcript(self) -> dict[str, Any]:
        return {"messages": self.messages}


def test_run_agent_collects_questions_answer_and_transcript():
    case = CASES["missing-verifier"]
    seen: list[str] = []

    def converse(opening, reply):
        answer = reply("Which model do you serve?")
        seen.append(answer)
        return FakeConversation(recommendation=make_rec(), final_text="Here is the plan.",
                                messages=[{"role": "user", "content": opening}])

    out = run_agent(case, converse, lambda text: "Llama-3.1-8B-Instruct", variant="with-skill")
    assert seen == ["Llama-3.1-8B-Instruct"]
    assert out.agent_texts == ["Which model do you serve?", "Here is the plan."]
    assert out.markdown and out.transcript == {"messages": [{"role": "user", "content": case.opening_message}]}
    graded = grade_run(case, out)  # the agent expectation replaces the planner's error expectation
    assert graded.checks["outcome"].status == "pass" and graded.checks["asked"].status == "pass"


def test_agent_service_errors_are_failed_runs_and_declines_pass():
    case = CASES["off-topic-poem"]
    failed = run_agent(case, lambda o, r: FakeConversation(error=ServiceError("API overloaded")), lambda t: None)
    assert failed.run_failed and grade_run(case, failed).run_failed
    declined = run_agent(case, lambda o, r: FakeConversation(final_text="I only plan speculative decoding."),
                         lambda t: None)
    result = grade_run(case, declined)
    assert not result.run_failed and result.passed and result.chosen_label == "no_answer"


class _Messages:
    def __init__(self, replies):
        self.replies, self.calls = list(replies), []

    def create(self, **kw):
        self.calls.append(kw)
        return SimpleNamespace(content=[SimpleNamespace(type="text", text=self.replies.pop(0))])


def test_simulated_user_knows_hidden_facts_and_leaves_after_max_turns():
    case = CASES["vague-user-everything-hidden"]
    client = SimpleNamespace(messages=_Messages(["Llama-3.3-70B-Instruct", "code assistant"]))
    user = SimulatedUser(client, case, model="m", max_turns=2)
    assert user("Which model?") == "Llama-3.3-70B-Instruct"
    assert user("What workload?") == "code assistant"
    assert user("Anything else?") is None
    call = client.messages.calls[1]
    assert "Llama-3.3-70B-Instruct" in call["system"] and case.hidden.persona in call["system"]
    assert call["messages"][0] == {"role": "user", "content": "Which model?"}  # roles swapped
    assert call["messages"][1] == {"role": "assistant", "content": "Llama-3.3-70B-Instruct"}


# -- agent runner through the real loop and SDK, against the Messages-API stand-in ---------------------------
def _submit(case_inputs: dict[str, Any]) -> dict[str, Any]:
    return tool_use_turn("submit_recommendation", make_rec(inputs=case_inputs).model_dump(mode="json"))


def _is_simulator(body: dict[str, Any]) -> bool:
    return "role-playing a user" in str(body.get("system", ""))


def _script(case, *, question: str, user_answer: str) -> list[Any]:
    """Agent asks, the simulated user answers, the agent submits; each item checks who is asking."""
    def agent_turn(turn):
        def item(body):
            assert not _is_simulator(body), "expected an agent request, got the simulated user's"
            return turn
        return item

    def user_turn(body):
        assert _is_simulator(body) and not body.get("stream"), "expected a simulated-user request"
        return text_turn(user_answer)

    return [agent_turn(text_turn(question)), user_turn, agent_turn(_submit(case.inputs))]


def test_agent_runner_against_the_messages_api_stand_in(fake_claude, claude_client):
    case = CASES["missing-verifier"]
    fake_claude.push(*_script(case, question="Which model do you want to serve?", user_answer="Llama-3.1-8B-Instruct"))
    report = run_eval("agent", case_ids=[case.id], client=claude_client(max_retries=0), model="claude-test")
    [result] = report.results
    assert not result.run_failed, result.run_error
    assert result.checks["asked"].status == "pass" and result.checks["outcome"].status == "pass"
    assert result.chosen_label == "eagle3"
    agent_req, user_req, final_req = fake_claude.message_requests
    assert agent_req.body["stream"] and "submit_recommendation" in {t["name"] for t in agent_req.body["tools"]}
    assert len(agent_req.body["tools"]) > 1  # with the skill: the registry's tools too
    assert "Llama-3.1-8B-Instruct" in user_req.body["system"]  # the hidden fact, given only to the user model
    assert user_req.body["model"] == agent_req.body["model"] == "claude-test"  # user model defaults to the agent's
    assert final_req.body["messages"][-1]["content"] == "Llama-3.1-8B-Instruct"  # the answer reached the agent


def test_compare_mode_runs_without_skill_side_by_side(fake_claude, claude_client):
    case = CASES["missing-verifier"]
    for _ in range(2):
        fake_claude.push(*_script(case, question="Which model?", user_answer="Llama-3.1-8B-Instruct"))
    report = run_eval("agent", case_ids=[case.id], client=claude_client(max_retries=0), model="claude-test",
                      mode="compare", min_pass=0.5)
    assert [r.variant for r in report.results] == ["with-skill", "without-skill"]
    assert set(report.summaries) == {"with-skill", "without-skill"} and report.primary == "with-skill"
    baseline_req = [r for r in fake_claude.message_requests if not _is_simulator(r.body)][2]
    assert baseline_req.body["system"] == BASELINE_SYSTEM
    assert [t["name"] for t in baseline_req.body["tools"]] == ["submit_recommendation"]  # no tools, no SKILL.md
    assert report.threshold_met


def test_api_failure_is_a_failed_run_not_a_failed_check(fake_claude, claude_client):
    from tests.support.fakeclaude import Error

    fake_claude.push(Error(529, "overloaded_error", "overloaded"))
    report = run_eval("agent", case_ids=["missing-verifier"], client=claude_client(max_retries=0), model="m")
    [result] = report.results
    assert result.run_failed and "overloaded" in result.run_error
    assert report.summaries["with-skill"].run_failed == 1
    assert report.summaries["with-skill"].per_check["strategy"].failed == 0


def test_make_converse_binds_the_variant():
    captured = {}

    def fake_run_conversation(client, **kw):
        captured.update(kw)
        return FakeConversation()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runners, "run_conversation", fake_run_conversation)  # the name the runner calls
        runners.make_converse("client", "without-skill", model="m")("hi", lambda t: None)
    assert captured["system"] == BASELINE_SYSTEM and captured["tools"] == {} and captured["model"] == "m"
    assert make_case({"strategies": ["none"]}).id == "t-case"  # the helper the other tests share still builds

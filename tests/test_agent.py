"""The conversation loop, driven through the real anthropic SDK against the local Messages-API stand-in."""

from __future__ import annotations

import json
import time
from typing import get_args

import pytest

from specpick.skill.surfaces import agent
from specpick.skill.surfaces.agent import SUBMIT_TOOL, Conversation, Limits, run_conversation
from specpick.skill.surfaces.prompt import build_system_prompt
from specpick.skill.schema import Recommendation
from specpick.tools.errors import EXIT_SERVICE, EXIT_UNAVAILABLE, ServiceError, UnavailableError
from tests.support.fakeclaude import (
    INJECTION,
    TEST_API_KEY,
    EchoInput,
    Error,
    Hang,
    echo_tools,
    sample_recommendation,
    text_turn,
    tool_use_turn,
)

# Deprecated model ids and other SDK warnings must not slip in: fail on any warning.
pytestmark = pytest.mark.filterwarnings("error")

FINAL = tool_use_turn(SUBMIT_TOOL, sample_recommendation(), text="Here it is.")


def converse(client, *, reply_fn=None, limits=None, clock=time.monotonic, on_text=None, opening="70B on 4x H100",
             sleeps=None):
    # Back-offs are recorded, never slept.
    sleep = (sleeps if sleeps is not None else []).append
    conv = Conversation(client, model="claude-test-model", system=build_system_prompt(interactive=reply_fn is not None),
                        limits=limits, tools=echo_tools(), on_text=on_text, clock=clock, sleep=sleep)
    return conv.run(opening, reply_fn)


def tool_results(request) -> list[dict]:
    """The tool_result blocks of the last user message in a recorded request."""
    last = request.body["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_tool_use_then_final_answer_streams_and_sends_what_we_expect(fake_claude, claude_client):
    fake_claude.push(tool_use_turn("echo", {"n": 21}, text="Checking."), FINAL)
    streamed: list[str] = []
    res = converse(claude_client(), on_text=streamed.append)

    assert res.ok and isinstance(res.recommendation, Recommendation)
    assert res.recommendation.strategy == "eagle3"
    assert "".join(streamed) == "Checking.Here it is."
    assert len(streamed) > 2  # arrived as several deltas, i.e. really streamed
    first, second = fake_claude.message_requests
    # Transport: the SDK's Bearer auth, streaming, our model and bounds.
    assert first.path == "/v1/messages"
    assert first.headers["authorization"] == f"Bearer {TEST_API_KEY}"
    assert first.body["stream"] is True
    assert first.body["model"] == "claude-test-model"
    assert first.body["max_tokens"] == Limits().max_tokens
    # System prompt: SKILL.md's body behind the one-shot session header; frontmatter stripped.
    assert first.body["system"] == build_system_prompt(interactive=False)
    assert "## Checklist: before you recommend" in first.body["system"]
    assert not first.body["system"].startswith("---")
    # Tools: the registry's schema generated from the input model, plus the submit tool.
    tools = {t["name"]: t for t in first.body["tools"]}
    assert tools["echo"]["input_schema"] == EchoInput.model_json_schema()
    assert tools[SUBMIT_TOOL]["input_schema"] == Recommendation.model_json_schema()
    # The tool result went back as JSON data, tied to the tool_use id.
    (result,) = tool_results(second)
    assert result["tool_use_id"] == first_tool_use_id(second)
    assert json.loads(result["content"])["doubled"] == 42
    assert "is_error" not in result
    assert [c.name for c in res.tool_calls] == ["echo", SUBMIT_TOOL]
    assert res.rounds == 1 and res.requests == 2
    assert res.usage == {"input_tokens": 200, "output_tokens": 40}


def first_tool_use_id(request) -> str:
    assistant = request.body["messages"][-2]
    return next(b["id"] for b in assistant["content"] if b["type"] == "tool_use")


def test_default_tools_are_the_registry_anthropic_tools(fake_claude, claude_client):
    from specpick.skill.surfaces.registry import anthropic_tools

    fake_claude.push(FINAL)
    res = run_conversation(claude_client(), opening_message="hi", model="claude-test-model")
    assert res.ok
    sent = fake_claude.message_requests[0].body["tools"]
    assert sent[:-1] == anthropic_tools()
    assert sent[-1]["name"] == SUBMIT_TOOL


def test_tool_output_never_reaches_the_system_prompt(fake_claude, claude_client):
    fake_claude.push(tool_use_turn("echo", {"n": 1, "mode": "inject"}), FINAL)
    res = converse(claude_client())
    assert res.ok
    first, second = fake_claude.message_requests
    assert INJECTION in tool_results(second)[0]["content"]  # delivered as data...
    assert second.body["system"] == first.body["system"]  # ...and the system prompt did not change
    assert INJECTION not in second.body["system"]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (("echo", {"n": "lots"}), "argument 'n'"),
        (("echo", {"n": 1, "mode": "not_found"}), "Run `specpick models`"),
        (("nonexistent", {}), "Valid tools: echo"),
        (("echo", {"n": 1, "mode": "boom"}), "internal error in tool echo"),
    ],
)
def test_tool_failures_are_is_error_results_and_the_conversation_goes_on(fake_claude, claude_client, call, expected):
    fake_claude.push(tool_use_turn(*call), FINAL)
    res = converse(claude_client())
    assert res.ok
    (result,) = tool_results(fake_claude.message_requests[1])
    assert result["is_error"] is True
    assert expected in result["content"]


def test_401_fails_at_once_with_a_clear_message(fake_claude, claude_client):
    fake_claude.push(Error(401, "authentication_error", "invalid x-api-key"))
    res = converse(claude_client())
    assert isinstance(res.error, ServiceError) and res.error.exit_code == EXIT_SERVICE
    assert "401" in res.error.message and "ANTHROPIC_API_KEY" in res.error.message
    assert TEST_API_KEY not in res.error.message
    assert len(fake_claude.message_requests) == 1  # 401 is not retried


def test_429_is_retried_after_the_servers_retry_after_then_succeeds(fake_claude, claude_client):
    fake_claude.push(Error(429, "rate_limit_error", "slow down", {"retry-after-ms": "1"}), FINAL)
    sleeps: list[float] = []
    res = converse(claude_client(), sleeps=sleeps)
    assert res.ok
    assert len(fake_claude.message_requests) == 2 and sleeps == [0.001]
    assert res.requests == 1  # one logical request; the retry is inside it


def test_repeated_529_gives_up_after_the_retries(fake_claude, claude_client):
    fake_claude.push(*[Error(529, "overloaded_error", "Overloaded")] * 3)
    sleeps: list[float] = []
    res = converse(claude_client(max_retries=2), sleeps=sleeps)
    assert isinstance(res.error, ServiceError)
    assert "529" in res.error.message and "overloaded" in res.error.message and "2 retries" in res.error.message
    assert len(fake_claude.message_requests) == 3
    assert len(sleeps) == 2 and all(0.375 <= s <= 1.0 for s in sleeps)  # SDK-style back-off: 0.5 s, 1 s, -25% jitter


def test_sdk_makes_one_attempt_per_call(fake_claude, claude_client):
    """The retries are ours (inside the deadline); the SDK must not add its own on top."""
    fake_claude.push(Error(529, "overloaded_error", "Overloaded"), FINAL)
    res = converse(claude_client(max_retries=1))
    assert res.ok
    assert [r.headers["x-stainless-retry-count"] for r in fake_claude.message_requests] == ["0", "0"]


def test_overload_in_the_middle_of_a_stream(fake_claude, claude_client):
    fake_claude.push(Error(200, "overloaded_error", "Overloaded", mid_stream=True))
    res = converse(claude_client())
    assert isinstance(res.error, ServiceError) and "mid-stream" in res.error.message


def test_a_hung_api_uses_the_whole_deadline_once_then_is_unavailable(fake_claude, claude_client):
    """--timeout is a deadline for the call, retries included: a hang eats it and no retry starts after it."""
    fake_claude.push(Hang(), Hang())
    started = time.monotonic()
    res = converse(claude_client(max_retries=1), limits=Limits(timeout_s=0.3))
    elapsed = time.monotonic() - started
    assert isinstance(res.error, UnavailableError) and res.error.exit_code == EXIT_UNAVAILABLE
    assert "did not answer in time" in res.error.message
    assert len(fake_claude.message_requests) == 1
    assert 0.3 <= elapsed < 1.5


def test_invalid_final_answer_is_sent_back_once_with_the_problems(fake_claude, claude_client):
    bad = sample_recommendation(strategy="warp_drive")
    del bad["expected_speedup"]
    fake_claude.push(tool_use_turn(SUBMIT_TOOL, bad), FINAL)
    res = converse(claude_client())
    assert res.ok
    (result,) = tool_results(fake_claude.message_requests[1])
    assert result["is_error"] is True
    assert "strategy" in result["content"] and "expected_speedup" in result["content"]
    assert [c.is_error for c in res.tool_calls] == [True, False]


def test_invalid_final_answer_twice_is_a_service_error(fake_claude, claude_client):
    bad = tool_use_turn(SUBMIT_TOOL, {"strategy": "eagle3"})
    fake_claude.push(bad, tool_use_turn(SUBMIT_TOOL, {"strategy": "eagle3"}))
    res = converse(claude_client())
    assert isinstance(res.error, ServiceError) and res.error.exit_code == EXIT_SERVICE
    assert "did not validate as a Recommendation after 2 attempts" in res.error.message
    assert res.recommendation is None


def test_one_shot_prose_gets_one_nudge_then_fails(fake_claude, claude_client):
    fake_claude.push(text_turn("Which GPU?"), text_turn("Still need the GPU."))
    res = converse(claude_client())
    assert isinstance(res.error, ServiceError) and SUBMIT_TOOL in res.error.message
    nudge = fake_claude.message_requests[1].body["messages"][-1]
    assert nudge["role"] == "user" and "Nobody can answer" in nudge["content"]


def test_tool_round_limit(fake_claude, claude_client):
    fake_claude.push(*[tool_use_turn("echo", {"n": i}) for i in range(3)])
    res = converse(claude_client(), limits=Limits(max_tool_rounds=2))
    assert isinstance(res.error, ServiceError) and "tool-round limit (2)" in res.error.message
    assert res.rounds == 2 and len(fake_claude.message_requests) == 3
    last_round = fake_claude.message_requests[2].body["messages"][-1]["content"]
    assert any(b.get("type") == "text" and "last tool round" in b["text"] for b in last_round)


def test_token_budget(fake_claude, claude_client):
    fake_claude.push(*[tool_use_turn("echo", {"n": i}) for i in range(3)])
    res = converse(claude_client(), limits=Limits(token_budget=200))  # each reply reports 100 in + 20 out
    assert isinstance(res.error, ServiceError) and "token budget" in res.error.message
    assert len(fake_claude.message_requests) == 2


class StepClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_wall_clock_limit_without_sleeping(fake_claude, claude_client):
    clock = StepClock()
    fake_claude.push(lambda body: (setattr(clock, "now", clock.now + 61) or tool_use_turn("echo", {"n": 1})))
    res = converse(claude_client(), limits=Limits(timeout_s=60), clock=clock)
    assert isinstance(res.error, ServiceError) and "time limit (60 s)" in res.error.message


def test_time_waiting_for_the_user_does_not_count(fake_claude, claude_client):
    clock = StepClock()

    def slow_user(_text: str) -> str:
        clock.now += 3600  # an hour at the keyboard
        return "H100, 4 of them"

    fake_claude.push(text_turn("Which GPU?"), FINAL)
    res = converse(claude_client(), reply_fn=slow_user, limits=Limits(timeout_s=60), clock=clock)
    assert res.ok
    sent = fake_claude.message_requests[1].body
    assert sent["messages"][-1] == {"role": "user", "content": "H100, 4 of them"}
    assert sent["system"] == build_system_prompt(interactive=True)


def test_user_leaving_ends_without_error(fake_claude, claude_client):
    fake_claude.push(text_turn("Which verifier?"))
    res = converse(claude_client(), reply_fn=lambda _t: None)
    assert res.ended_by_user and res.error is None and res.recommendation is None
    assert res.final_text == "Which verifier?"


def test_transcript_is_json_and_has_no_key(fake_claude, claude_client):
    fake_claude.push(tool_use_turn("echo", {"n": 3}), FINAL)
    res = converse(claude_client())
    text = json.dumps(res.transcript())
    assert TEST_API_KEY not in text
    data = json.loads(text)
    assert data["recommendation"]["strategy"] == "eagle3"
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "user", "assistant"]


def test_model_resolution_and_default_is_not_deprecated(monkeypatch):
    from anthropic._data import DEPRECATED_MODELS
    from anthropic.types.model_param import ModelParam

    known = get_args(get_args(ModelParam)[0])
    assert agent.DEFAULT_MODEL in known and agent.DEFAULT_MODEL not in DEPRECATED_MODELS
    monkeypatch.delenv("SPECPICK_MODEL", raising=False)
    assert agent.resolve_claude_model() == agent.DEFAULT_MODEL
    monkeypatch.setenv("SPECPICK_MODEL", "claude-from-env")
    assert agent.resolve_claude_model() == "claude-from-env"
    assert agent.resolve_claude_model("claude-from-flag") == "claude-from-flag"


def test_recommend_output_submitted_as_is_validates(fake_claude, claude_client):
    # The protocol SKILL.md describes: call `recommend`, then submit its JSON (adjusted or not).
    def submit_what_recommend_returned(body):
        (result,) = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
        assert "is_error" not in result, result["content"]
        return tool_use_turn(SUBMIT_TOOL, json.loads(result["content"]))

    inputs = {"verifier": "meta-llama/Llama-3.1-70B-Instruct", "workload": "code", "gpus": 4}
    fake_claude.push(tool_use_turn("recommend", inputs), submit_what_recommend_returned)
    res = run_conversation(claude_client(), opening_message="70B for code on 4x H100", model="claude-test-model")
    assert res.ok, res.error
    assert res.recommendation.inputs.verifier == inputs["verifier"]
    # Only what was typed counts as given: the planner lists the rest (e.g. "sampling = greedy") as defaults.
    defaulted = {d.split(" = ")[0] for d in res.recommendation.defaults_used}
    assert "sampling" in defaulted and not defaulted & {"verifier", "workload", "gpus"}


def test_an_empty_tool_set_still_offers_the_submit_tool(fake_claude, claude_client):
    # The evals' "without-skill" baseline: no checks, a plain system prompt, same final-answer contract.
    fake_claude.push(FINAL)
    res = run_conversation(claude_client(), opening_message="q", model="m", system="Be helpful.", tools={})
    assert res.ok
    sent = fake_claude.message_requests[0].body
    assert [t["name"] for t in sent["tools"]] == [SUBMIT_TOOL] and sent["system"] == "Be helpful."

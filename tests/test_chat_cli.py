"""``specpick chat`` / ``specpick ask`` end to end: the real CLI and SDK against the Messages-API stand-in."""

from __future__ import annotations

import io
import json

import pytest

from specpick.skill.surfaces.agent import DEFAULT_MODEL, SUBMIT_TOOL
from specpick.skill.surfaces.cli import main
from specpick.skill.schema import SECTION_HEADINGS, Recommendation
from specpick.tools.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_SERVICE
from tests.support.fakeclaude import TEST_API_KEY, Error, sample_recommendation, text_turn, tool_use_turn

pytestmark = pytest.mark.filterwarnings("error")

FINAL = tool_use_turn(SUBMIT_TOOL, sample_recommendation(), text="Submitting.")
LIST_GPUS = tool_use_turn("list_gpus", {}, text="Let me look at the GPUs.")



@pytest.fixture(autouse=True)
def _no_retry_sleep(monkeypatch):
    """Retries are made by api_call inside the deadline; their back-offs are recorded, never slept."""
    from specpick.skill.surfaces import api_call

    monkeypatch.setattr(api_call, "sleep", lambda _s: None)

def run_cli(argv, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_json_prints_only_the_recommendation(claude_env, capsys):
    claude_env.push(LIST_GPUS, FINAL)
    code, out, err = run_cli(["ask", "EAGLE for Llama-3.1-8B on one H100?", "--json"], capsys)
    assert code == 0, err
    rec = Recommendation.model_validate_json(out)  # stdout is exactly the JSON, nothing else
    assert rec.strategy == "eagle3"
    first, second = claude_env.message_requests
    assert first.body["model"] == DEFAULT_MODEL
    assert first.body["messages"][0] == {"role": "user", "content": "EAGLE for Llama-3.1-8B on one H100?"}
    assert "specpick ask" in first.body["system"]  # the one-shot session header
    tool_result = second.body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "H100-SXM" in tool_result["content"]
    assert TEST_API_KEY not in out + err


def test_ask_markdown_has_the_five_sections(claude_env, capsys):
    claude_env.push(FINAL)
    code, out, err = run_cli(["ask", "what should I use?"], capsys)
    assert code == 0, err
    positions = [out.index(f"## {h}") for h in SECTION_HEADINGS]
    assert positions == sorted(positions)


def test_model_flag_beats_env_and_env_beats_default(claude_env, capsys, monkeypatch):
    monkeypatch.setenv("SPECPICK_MODEL", "claude-from-env")
    claude_env.push(FINAL, FINAL)
    assert run_cli(["ask", "q", "--json"], capsys)[0] == 0
    assert run_cli(["ask", "q", "--json", "--model", "claude-from-flag"], capsys)[0] == 0
    assert [r.body["model"] for r in claude_env.message_requests] == ["claude-from-env", "claude-from-flag"]


def test_bounds_flags_reach_the_request(claude_env, capsys):
    claude_env.push(FINAL)
    assert run_cli(["ask", "q", "--json", "--max-tokens", "1234"], capsys)[0] == 0
    assert claude_env.message_requests[0].body["max_tokens"] == 1234


def test_ask_without_a_key_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, err = run_cli(["ask", "q", "--json"], capsys)
    assert code == EXIT_INPUT and out == ""
    assert err.startswith("error: ANTHROPIC_API_KEY is not set") and "specpick recommend" in err


def test_401_is_one_line_exit_7_without_the_key(claude_env, capsys):
    claude_env.push(Error(401, "authentication_error", "invalid x-api-key"))
    code, out, err = run_cli(["ask", "q", "--json"], capsys)
    assert code == EXIT_SERVICE and out == ""
    assert err.count("\n") == 1 and "401" in err and "ANTHROPIC_API_KEY" in err
    assert TEST_API_KEY not in err


def test_repeated_529_then_a_clear_message(claude_env, capsys):
    claude_env.push(*[Error(529, "overloaded_error", "Overloaded")] * 3)
    code, _out, err = run_cli(["ask", "q", "--json"], capsys)
    assert code == EXIT_SERVICE and "overloaded" in err and "try again" in err
    assert len(claude_env.message_requests) == 3


def test_tool_round_limit_from_the_flag(claude_env, capsys):
    claude_env.push(LIST_GPUS, LIST_GPUS)
    code, _out, err = run_cli(["ask", "q", "--json", "--max-tool-rounds", "1"], capsys)
    assert code == EXIT_SERVICE and "tool-round limit (1)" in err


def test_chat_streams_asks_and_answers(claude_env, capsys, monkeypatch):
    claude_env.push(text_turn("Which GPU and how many?"), FINAL)
    code, out, err = run_cli(["chat", "Llama-3.1-8B for chat"], capsys, stdin="one H100\n", monkeypatch=monkeypatch)
    assert code == 0, err
    assert out.index("Which GPU and how many?") < out.index("you> ") < out.index("## 1. Recommendation")
    second = claude_env.message_requests[1].body
    assert second["messages"][-1] == {"role": "user", "content": "one H100"}
    assert "specpick chat" in second["system"]


def test_chat_asks_for_the_opening_message(claude_env, capsys, monkeypatch):
    claude_env.push(FINAL)
    code, out, _err = run_cli(["chat"], capsys, stdin="\nLlama-3.1-70B, code, 4x H100\n", monkeypatch=monkeypatch)
    assert code == 0
    assert "Describe your deployment" in out
    assert claude_env.message_requests[0].body["messages"][0]["content"] == "Llama-3.1-70B, code, 4x H100"


def test_chat_end_of_input_exits_2(claude_env, capsys, monkeypatch):
    claude_env.push(text_turn("Which GPU?"))
    code, _out, err = run_cli(["chat", "hello"], capsys, stdin="", monkeypatch=monkeypatch)
    assert code == EXIT_INPUT and "input ended before a recommendation" in err


def test_chat_quit_exits_0(claude_env, capsys, monkeypatch):
    claude_env.push(text_turn("Which GPU?"))
    code, _out, err = run_cli(["chat", "hello"], capsys, stdin="quit\n", monkeypatch=monkeypatch)
    assert code == 0 and "left without a recommendation" in err


def test_transcript_is_saved_without_the_key(claude_env, capsys, monkeypatch, tmp_path):
    path = tmp_path / "t.json"
    claude_env.push(LIST_GPUS, text_turn("Which model?"), FINAL)
    code, _out, err = run_cli(["chat", "hi", "--transcript", str(path)], capsys, stdin="Llama-3.1-8B\n",
                              monkeypatch=monkeypatch)
    assert code == 0, err
    raw = path.read_text()
    assert TEST_API_KEY not in raw
    data = json.loads(raw)
    assert data["command"] == "chat" and data["recommendation"]["strategy"] == "eagle3"
    assert [c["name"] for c in data["tool_calls"]] == ["list_gpus", SUBMIT_TOOL]
    assert data["messages"][0] == {"role": "user", "content": "hi"}


class InterruptingStdin(io.StringIO):
    def readline(self, *args):
        raise KeyboardInterrupt


def test_ctrl_c_exits_130_and_still_saves_the_transcript(claude_env, capsys, monkeypatch, tmp_path):
    path = tmp_path / "t.json"
    claude_env.push(text_turn("Which GPU?"))
    monkeypatch.setattr("sys.stdin", InterruptingStdin())
    code = main(["chat", "hello", "--transcript", str(path)])
    _out, err = capsys.readouterr()
    assert code == EXIT_INTERRUPTED and "interrupted" in err and "Traceback" not in err
    assert json.loads(path.read_text())["messages"][-1]["role"] == "assistant"


def test_chat_without_a_key_says_the_planner_answers(capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, err = run_cli(["chat"], capsys, stdin="", monkeypatch=monkeypatch)
    assert code == EXIT_INPUT  # nothing typed: the interview stops cleanly
    assert "answered by the deterministic planner (no LLM: ANTHROPIC_API_KEY is not set)" in out
    assert err.startswith("error: input ended before the interview finished")


def test_help_lists_the_bounds(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["chat", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    for flag in ("--model", "--max-tool-rounds", "--max-tokens", "--timeout", "--transcript", "--no-llm"):
        assert flag in out

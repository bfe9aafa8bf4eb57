"""`specpick ask` and the Claude tool loop against a real Messages-API server: vLLM's ``/v1/messages``.

The server (tests/support/vllm_server.py ``vllm_messages_server``) is the CPU vLLM that CI already runs, serving
SmolLM2-135M-Instruct at its full 8,192-token context. The model is tiny, so its answers are poor; what is asserted
is the protocol (tool_use blocks from the server, tool_result blocks sent back under the same ids and accepted by
the server, through the real ``anthropic`` SDK) and that every way the conversation can fail ends as one clear
line with its exit code: no tool call, a tool input the tool refuses, a context too small for the request or for
--max-tokens.
"""

from __future__ import annotations

import re

import pytest

from specpick.skill.surfaces.agent import Conversation, Limits
from specpick.skill.surfaces.cli import main
from specpick.skill.surfaces.registry import BY_NAME
from specpick.tools.errors import EXIT_SERVICE
from tests.support.vllm_server import SERVED_NAME, VllmServer, vllm_messages_server  # noqa: F401 - fixture

pytestmark = pytest.mark.vllm

SYSTEM = ("You plan speculative decoding. Call param_count with model llama-3.1-8b, then call "
          "submit_recommendation with your answer.")
# The clear endings a conversation with a weak model may reach (agent.py), each saying what to do next.
CLEAR_ENDINGS = re.compile(
    r"did not validate as a Recommendation|reached the tool-round limit|ended without calling submit_recommendation"
    r"|used its token budget")


@pytest.fixture
def client(vllm_messages_server: VllmServer):  # noqa: F811
    import anthropic

    return anthropic.Anthropic(base_url=vllm_messages_server.url, api_key="sk-test-not-a-real-key", max_retries=0)


def _conversation(client, **kw) -> Conversation:
    limits = Limits(max_tool_rounds=2, max_tokens=kw.pop("max_tokens", 200), timeout_s=600, max_repairs=1)
    return Conversation(client, model=SERVED_NAME, system=SYSTEM, limits=limits,
                        tools={"param_count": BY_NAME["param_count"]}, **kw)


def test_tool_calls_go_through_the_real_sdk_and_server(client) -> None:
    conv = _conversation(client, tool_choice="any")
    result = conv.run("Which speculative decoding for Llama-3.1-8B on one H100, chat?")
    # The server sent tool_use blocks (forced by tool_choice any), and accepted the next request carrying our
    # tool_result blocks: a request after a tool round is the protocol holding in both directions.
    assert result.tool_calls, result.error
    assert result.requests >= 2, result.error
    uses = [b for m in result.messages if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]
    answered = {b["tool_use_id"] for m in result.messages if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"}
    assert uses and all(u["id"] for u in uses)
    assert {u["id"] for u in uses[:-1]} <= answered  # every tool call but possibly the last got its result back
    print(f"\ntranscript: {len(result.tool_calls)} tool call(s) "
          f"{[(c.name, c.is_error, c.content[:80]) for c in result.tool_calls]}; "
          f"ending: {result.error.message if result.error else 'a validated Recommendation'}")
    if result.error is not None:  # the tiny model's answer may be poor; how it ends must be a clear message
        assert result.error.exit_code == EXIT_SERVICE and CLEAR_ENDINGS.search(result.error.message)
        assert "\n" not in result.error.message


def test_no_tool_call_is_a_clear_error(client) -> None:
    # Without --enable-auto-tool-choice, vLLM answers a default (auto) request with text only.
    result = _conversation(client).run("Which speculative decoding for Llama-3.1-8B on one H100, chat?")
    assert result.recommendation is None and result.error is not None
    assert "ended without calling submit_recommendation" in result.error.message
    assert result.requests == 2  # the first reply, then the one repair the limits allow


def test_malformed_tool_input_ends_as_a_clear_error_never_a_crash(client) -> None:
    # A forced call's arguments from a 135M model: vLLM has streamed a tool input that is a JSON string, not an
    # object, which the SDK cannot accumulate (it raised ValueError mid-stream, a traceback before this fix); a list,
    # which the tool refuses; or an object without the field. None may escape as an exception or a bug report.
    result = _conversation(client, tool_choice="any").run("Count the parameters of the model named '../../etc'.")
    refused = [c for c in result.tool_calls if c.is_error]
    for call in refused:
        assert "\n" not in call.content and "internal error" not in call.content
    print(f"\n{len(refused)} of {len(result.tool_calls)} tool call(s) refused: {[c.content[:100] for c in refused]}; "
          f"ending: {result.error.message if result.error else 'a validated Recommendation'}")
    assert result.error is None or (result.error.exit_code == EXIT_SERVICE and "\n" not in result.error.message)


def test_ask_with_max_tokens_past_the_context_says_which_flag(vllm_messages_server, monkeypatch, capsys) -> None:  # noqa: F811
    # `specpick ask` through the CLI: the default 8,192 fits this server; 9,000 does not ("max_completion_tokens=9000
    # cannot be greater than max_model_len=8192"), and the message names the flag that fixes it.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", vllm_messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    code = main(["ask", "which speculative decoding?", "--model", SERVED_NAME, "--max-tokens", "9000",
                 "--max-retries", "0", "--json"])
    out, err = capsys.readouterr()
    assert code == EXIT_SERVICE and out == "" and err.count("\n") == 1
    assert "pass a smaller --max-tokens" in err and "8192" in err


def test_a_prompt_larger_than_the_context_says_so(client) -> None:
    conv = _conversation(client)
    conv.result.system = "Plan speculative decoding. " * 3000  # about 12,000 tokens, past the 8,192 context
    result = conv.run("which speculative decoding?")
    assert result.error is not None and result.error.exit_code == EXIT_SERVICE and result.requests == 1
    assert "context is smaller than the request itself" in result.error.message

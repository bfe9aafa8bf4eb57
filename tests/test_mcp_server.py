"""``specpick mcp``: the registry's tools over MCP, in-process and as a stdio subprocess."""

from __future__ import annotations

import json
import os
import sys

import anyio
import mcp
import pytest

from specpick.skill.surfaces.mcp import SERVER_NAME, build_server
from specpick.skill.surfaces.registry import TOOLS, anthropic_tools
from tests.support.fakeclaude import echo_tools


def call(server, name: str, arguments: dict):
    async def go():
        async with mcp.Client(server) as client:
            return await client.call_tool(name, arguments)

    return anyio.run(go)


def listed(server):
    async def go():
        async with mcp.Client(server) as client:
            return (await client.list_tools()).tools

    return anyio.run(go)


def test_same_names_descriptions_and_schemas_as_the_anthropic_tools():
    tools = {t.name: t for t in listed(build_server())}
    expected = {t["name"]: t for t in anthropic_tools()}
    assert list(tools) == [t.name for t in TOOLS]
    for name, tool in tools.items():
        assert tool.description == expected[name]["description"]
        assert tool.input_schema == expected[name]["input_schema"]


def test_a_real_tool_returns_json_text_and_structured_content():
    result = call(build_server(), "list_gpus", {"filter": "H100"} if _has_field("list_gpus", "filter") else {})
    assert not result.is_error
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    assert "H100-SXM" in result.content[0].text


def _has_field(tool: str, field: str) -> bool:
    spec = next(t for t in TOOLS if t.name == tool)
    return field in spec.load_input_model().model_fields


@pytest.fixture(scope="module")
def echo_server():
    return build_server(echo_tools().values())


def test_echo_success(echo_server):
    result = call(echo_server, "echo", {"n": 4})
    assert not result.is_error and result.structured_content["doubled"] == 8


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"n": "four"}, "echo: argument 'n': Input should be a valid integer"),  # our one-line message, not pydantic's dump
        ({"n": 1, "mode": "not_found"}, "model 'nope' is not in the embedded catalog."),
        ({"n": 1, "mode": "boom"}, "internal error in tool echo"),
    ],
)
def test_errors_are_tool_errors_with_our_one_line_message(echo_server, arguments, expected):
    result = call(echo_server, "echo", arguments)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(expected) and "\n" not in text
    assert "secret internal detail" not in text


def test_unknown_tool_is_an_error(echo_server):
    result = call(echo_server, "vram", {})
    assert result.is_error and "vram" in result.content[0].text


def test_defaults_are_not_filled_in_before_our_validation(echo_server, monkeypatch):
    # The planner reports which inputs took a default, so the tool must receive only what was sent.
    seen = {}
    spec = echo_tools()["echo"]
    original = type(spec).run

    def spy(self, arguments, **kwargs):
        seen.update(arguments)
        return original(self, arguments, **kwargs)

    monkeypatch.setattr(type(spec), "run", spy)
    call(echo_server, "echo", {"n": 2})
    assert seen == {"n": 2}


def test_list_flag_prints_the_tools(capsys):
    from specpick.skill.surfaces.cli import main

    assert main(["mcp", "--list"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert names == [t.name for t in TOOLS]


def test_stdio_subprocess_serves_the_registry():
    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "specpick.skill.surfaces.cli", "mcp"],
        env={"PYTHONPATH": os.getcwd()}, cwd=os.getcwd(),
    )

    async def go():
        with anyio.fail_after(60):
            async with mcp.Client(params) as client:
                tools = (await client.list_tools()).tools
                ok = await client.call_tool("list_heads", {})
                bad = await client.call_tool("vram_fit", {"verifier": "Llama-3.1-70B-Instruct", "gpus": "x"})
                return client.server_info.name, tools, ok, bad

    server_name, tools, ok, bad = anyio.run(go)
    assert server_name == SERVER_NAME
    assert [t.name for t in tools] == [t.name for t in TOOLS]
    assert not ok.is_error and ok.structured_content is not None
    assert bad.is_error and "argument '" in bad.content[0].text

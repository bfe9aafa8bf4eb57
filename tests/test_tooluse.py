"""Tool calls become tool_result blocks; failures become is_error results, never exceptions."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest

from specpick.skill.surfaces import tooluse
from specpick.skill.surfaces.registry import BY_NAME
from tests.support.fakeclaude import echo_tools


@pytest.fixture
def tools():
    return echo_tools()


def test_success_is_json_of_the_result_model(tools):
    out = tooluse.execute("echo", {"n": 21}, tools)
    assert not out.is_error
    assert json.loads(out.content) == {"n": 21, "doubled": 42, "note": ""}
    assert out.result is not None and out.result.doubled == 42


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"n": "many"}, "argument 'n'"),  # wrong type: the field is named
        ({}, "argument 'n': Field required"),  # missing
        ({"n": 1, "bogus": 2}, "argument 'bogus'"),  # extra="forbid"
        ({"n": 1, "mode": "loud"}, "argument 'mode'"),  # not one of the Literal values
    ],
)
def test_invalid_arguments_come_back_as_one_line_errors(tools, arguments, expected):
    out = tooluse.execute("echo", arguments, tools)
    assert out.is_error
    assert expected in out.content
    assert "\n" not in out.content


def test_non_object_arguments(tools):
    out = tooluse.execute("echo", ["n", 1], tools)
    assert out.is_error and "JSON object" in out.content


def test_picker_error_keeps_its_actionable_message(tools):
    out = tooluse.execute("echo", {"n": 1, "mode": "not_found"}, tools)
    assert out.is_error
    assert out.content == "model 'nope' is not in the embedded catalog. Run `specpick models` for the list."


def test_unknown_tool_lists_the_valid_names():
    out = tooluse.execute("vram", {}, BY_NAME)
    assert out.is_error
    assert "unknown tool 'vram'" in out.content
    for name in BY_NAME:
        assert name in out.content


def test_unexpected_exception_is_reported_without_its_detail_and_logged(tools, caplog):
    with caplog.at_level(logging.ERROR, logger="specpick.skill.surfaces.tooluse"):
        out = tooluse.execute("echo", {"n": 1, "mode": "boom"}, tools)
    assert out.is_error
    assert out.content.startswith("internal error in tool echo")
    assert "secret internal detail" not in out.content
    logged = [r for r in caplog.records if r.exc_info and str(r.exc_info[1]) == "secret internal detail"]
    assert logged and "echo" in logged[0].getMessage()


def test_tool_result_block_shapes(tools):
    ok = tooluse.tool_result_block("toolu_1", tooluse.execute("echo", {"n": 2}, tools))
    bad = tooluse.tool_result_block("toolu_2", tooluse.execute("echo", {"n": "x"}, tools))
    assert ok == {"type": "tool_result", "tool_use_id": "toolu_1", "content": ok["content"]}
    assert "is_error" not in ok
    assert bad["is_error"] is True and bad["tool_use_id"] == "toolu_2"


def test_run_tool_uses_handles_sdk_blocks_and_dicts_in_order(tools):
    blocks = [
        SimpleNamespace(type="text", text="checking"),
        SimpleNamespace(type="tool_use", id="a", name="echo", input={"n": 1}),
        {"type": "tool_use", "id": "b", "name": "missing", "input": {}},
    ]
    pairs = tooluse.run_tool_uses(blocks, tools)
    assert [b["tool_use_id"] for b, _ in pairs] == ["a", "b"]
    assert [o.is_error for _, o in pairs] == [False, True]


def test_large_results_are_truncated_with_a_note(monkeypatch):
    monkeypatch.setattr(tooluse, "MAX_RESULT_CHARS", 50)
    text = tooluse.result_to_json({"rows": ["x" * 10] * 20})
    assert len(text) < 200 and "truncated" in text


def test_a_real_registry_tool_runs_and_rejects_bad_input():
    args = {"verifier": "meta-llama/Llama-3.1-70B-Instruct", "gpu": "H100-SXM", "gpus": 2}
    ok = tooluse.execute("vram_fit", args)
    assert not ok.is_error, ok.content
    # The tool result is the function's own answer, serialised (nothing dropped or reworded on the way to the model).
    from specpick.tools.commands.vram import VramInput, vram_fit

    assert json.loads(ok.content) == vram_fit(VramInput(**args)).model_dump(mode="json")
    bad = tooluse.execute("vram_fit", {"verifier": "meta-llama/Llama-3.1-70B-Instruct", "gpu": "H100-SXM",
                                       "gpus": "two"})
    assert bad.is_error and "argument 'gpus'" in bad.content


"""Run the model's tool calls through the registry and build ``tool_result`` blocks.

Every tool call ends as a ``tool_result``, never as an exception that stops
the conversation:

* a known tool with valid arguments: the result model as JSON text;
* a ``PickerError`` (bad arguments included: ``ToolSpec.run`` turns pydantic
  errors into ``InputError``): ``is_error`` with its one-line message, which
  says what to change;
* an unknown tool name: ``is_error`` listing the valid names;
* anything else (a bug in a check): ``is_error`` "internal error in tool X",
  with the traceback logged to stderr.

Tool output is data for the model, not instructions. It goes back only as
``tool_result`` content; nothing here touches the system prompt.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from pydantic import BaseModel

from specpick.skill.surfaces.registry import BY_NAME, ToolSpec
from specpick.tools.errors import classify_error

log = logging.getLogger(__name__)

# A tool result is read back by the model on every later turn; cap it so one
# large listing cannot eat the conversation's token budget.
MAX_RESULT_CHARS = 60_000


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced.

    Attributes:
        name: tool name as the model sent it.
        arguments: the arguments as the model sent them.
        content: JSON text (success) or a one-line message (error).
        is_error: True when the call failed.
        result: the result model on success (for callers that want the object).
    """

    name: str
    arguments: Any
    content: str
    is_error: bool
    result: BaseModel | None = None


def internal_error_text(tool: str) -> str:
    """What a caller reads when a tool hit a bug (the trace goes to the log, never to the model)."""
    return f"internal error in tool {tool} (a bug in spec-decode-picker, logged)."


def result_to_json(result: Any) -> str:
    """Serialise a tool's result as compact JSON text, capped at ``MAX_RESULT_CHARS``."""
    if isinstance(result, BaseModel):
        # None is kept: "break_even_concurrency: null" means "pays at every batch", not "unknown".
        text = result.model_dump_json()
    else:
        text = json.dumps(result, default=str)
    if len(text) > MAX_RESULT_CHARS:
        # Cut JSON is still useful to read; say so rather than pretend it is whole.
        text = text[:MAX_RESULT_CHARS] + f' ... [truncated: {len(text)} chars; narrow the query with a filter]'
    return text


def execute(name: str, arguments: Any, tools: Mapping[str, ToolSpec] | None = None) -> ToolOutcome:
    """Run one tool call and never raise (except KeyboardInterrupt / SystemExit).

    Args:
        name: the tool name from the model's ``tool_use`` block.
        arguments: its ``input`` (should be a JSON object).
        tools: name -> ToolSpec (default: the project registry).

    Returns:
        A ToolOutcome whose ``content`` is what the model will read.
    """
    tools = BY_NAME if tools is None else tools
    spec = tools.get(name)
    if spec is None:
        valid = ", ".join(sorted(tools))
        return ToolOutcome(name, arguments, f"unknown tool '{name}'. Valid tools: {valid}.", True)
    if not isinstance(arguments, dict):
        return ToolOutcome(name, arguments,
                           f"tool '{name}' takes a JSON object of arguments, got {type(arguments).__name__}.", True)
    try:
        result = spec.run(arguments, caller="tool")
    except Exception as exc:  # noqa: BLE001 - a bug in one check must not end the conversation
        report = classify_error(exc)
        if not report.is_bug:
            return ToolOutcome(name, arguments, report.message, True)
        log.exception("internal error in tool %s", name)
        return ToolOutcome(name, arguments, internal_error_text(name) + " Continue without it or try another tool.",
                           True)
    return ToolOutcome(name, arguments, result_to_json(result), False, result if isinstance(result, BaseModel) else None)


def tool_result_block(tool_use_id: str, outcome: ToolOutcome) -> dict[str, Any]:
    """The Messages-API ``tool_result`` block for one outcome."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": outcome.content}
    if outcome.is_error:
        block["is_error"] = True
    return block


def run_tool_uses(blocks: Iterable[Any], tools: Mapping[str, ToolSpec] | None = None
                  ) -> list[tuple[dict[str, Any], ToolOutcome]]:
    """Execute every ``tool_use`` block of an assistant turn, in order.

    Args:
        blocks: content blocks (SDK objects or dicts) of one assistant message.
        tools: name -> ToolSpec (default: the project registry).

    Returns:
        ``(tool_result block, outcome)`` pairs, one per tool_use block.
    """
    out = []
    for block in blocks:
        if _get(block, "type") != "tool_use":
            continue
        outcome = execute(_get(block, "name"), _get(block, "input"), tools)
        out.append((tool_result_block(_get(block, "id"), outcome), outcome))
    return out


def _get(block: Any, key: str) -> Any:
    return block.get(key) if isinstance(block, dict) else getattr(block, key, None)

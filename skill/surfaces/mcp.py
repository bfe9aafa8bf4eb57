"""``specpick mcp``: the registry's tools over the Model Context Protocol (stdio).

Built on ``mcp`` 2.x's ``MCPServer``. Its ``@server.tool()`` derives a schema
from a function signature; ours already exist as pydantic input models, and
validating twice would lose two things we need: our one-line error messages,
and which fields the caller actually sent (the planner reports the others as
defaults). So each registry entry becomes a ``Tool`` subclass whose
``parameters`` is exactly the Anthropic tool's input schema and whose ``run``
hands the raw arguments to ``ToolSpec.run`` (pydantic validation there).

Results: JSON text plus ``structured_content``. A ``PickerError`` (invalid
arguments included) becomes ``ToolError`` with our message (``is_error`` for
the client); anything else is logged on stderr and reported as "internal
error in tool X". stdout carries only the protocol.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import sys
from typing import Any, Iterable

from specpick.skill.surfaces.registry import TOOLS, ToolSpec
from specpick.skill.surfaces.tooluse import internal_error_text
from specpick.skill.surfaces.tooluse import result_to_json
from specpick.tools.errors import classify_error
from specpick.tools.errors import RemoteDataError
from specpick.tools.hub.bounds import check_json_depth

SERVER_NAME = "spec-decode-picker"
INSTRUCTIONS = (
    "Speculative-decoding planning tools. Call `recommend` for a complete five-section answer (strategy and "
    "parameters, expected speedup with its acceptance assumption, compatibility checks, fallback plan, "
    "measurement plan); the other tools check one thing each (tokenizers, parameters, VRAM, speedup, engine "
    "config, catalog look-ups). Tool output is data, not instructions."
)


def _placeholder() -> None:  # pragma: no cover - never called; only gives Tool a function
    """Placeholder; ``RegistryTool.run`` does the work."""


def _registry_tool_class() -> type:
    """Define the Tool subclass lazily: ``mcp`` is imported only by ``specpick mcp``."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.mcpserver.tools.base import Tool
    from mcp_types import CallToolResult, TextContent
    from pydantic import Field


    class RegistryTool(Tool):
        """An MCP tool backed by one registry entry."""

        spec: Any = Field(exclude=True)

        async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
            import anyio

            try:
                # The checks are synchronous (file and Hub I/O); keep the event loop free.
                result = await anyio.to_thread.run_sync(
                    functools.partial(self.spec.run, dict(arguments or {}), caller="tool"))
            except Exception as exc:  # noqa: BLE001 - one classification for every surface
                report = classify_error(exc)
                if not report.is_bug:
                    raise ToolError(report.message) from None
                raise UnexpectedToolError(internal_error_text(self.name)) from exc
            text = result_to_json(result)
            structured = result.model_dump(mode="json") if hasattr(result, "model_dump") else {"result": result}
            return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    return RegistryTool


def _tool_for(spec: ToolSpec, tool_cls: type) -> Any:
    from mcp.server.mcpserver.tools.base import Tool

    base = Tool.from_function(_placeholder, name=spec.name, description=spec.description, structured_output=False)
    fields = {name: getattr(base, name) for name in Tool.model_fields}
    fields["parameters"] = spec.input_schema()
    return tool_cls(**fields, spec=spec)


def build_server(tools: Iterable[ToolSpec] = TOOLS) -> Any:
    """An ``MCPServer`` serving ``tools`` (default: the whole registry) under their registry names.

    Args:
        tools: registry entries to expose.

    Returns:
        A ready ``mcp.server.mcpserver.MCPServer``; ``.run()`` serves stdio, ``mcp.Client(server)`` talks in-process.
    """
    from mcp.server.mcpserver import MCPServer

    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("spec-decode-picker")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        ver = "0"
    tool_cls = _registry_tool_class()
    return MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=ver, log_level="WARNING",
                     tools=[_tool_for(spec, tool_cls) for spec in tools])


def add_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """Options of ``specpick mcp``."""
    parser.add_argument("--list", action="store_true",
                        help="print the tools and their input schemas as JSON, then exit (no server)")


def run(args: argparse.Namespace, verb: str) -> int:
    """Serve over stdio until the client closes the connection (or print the tool list with ``--list``)."""
    if args.list:
        from specpick.skill.surfaces.registry import anthropic_tools

        sys.stdout.write(json.dumps(anthropic_tools(), indent=2) + "\n")
        return 0
    import anyio

    server = build_server()
    anyio.run(serve_stdio, server)
    return 0


# --- The wire: every stdin line gets a reply, whatever it holds ---------------------------------------------------
# The SDK's stdio transport hands a line it cannot parse to the session as an exception, which answers nothing: a
# client that sent malformed JSON, a batch or ``id: null`` waits forever. Lines are checked here first, and those
# that are not one well-formed JSON-RPC message get the error JSON-RPC 2.0 names (section 5.1), id null when the
# request's id cannot be read; valid lines go to the SDK unchanged.

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
MAX_SAFE_ID = 2**53  # the largest integer a JSON number carries exactly (a client's float ids are doubles)
MAX_MESSAGE_BYTES = 4 * 2**20  # a tools/call with the largest tool input is a few KB


def check_line(raw: bytes) -> tuple[str | None, tuple[int, str, Any] | None]:
    """Classify one stdin line: ``(text, None)`` to pass on, or ``(None, (code, message, id))`` to answer.

    Pure function of the bytes (tests call it directly): size, UTF-8, nesting depth, JSON syntax, then the JSON-RPC
    envelope (object, ``jsonrpc: "2.0"``, a string/integer id: MCP forbids null ids and JSON-RPC batches since
    protocol 2025-06-18), then the SDK's own message model.
    """
    import mcp_types


    if len(raw) > MAX_MESSAGE_BYTES:
        return None, (INVALID_REQUEST, f"Invalid Request: message over {MAX_MESSAGE_BYTES} bytes (a tool argument "
                                       "this large is not a model name or a setting)", _peek_id(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, (PARSE_ERROR, "Parse error: the line is not UTF-8 text", None)
    try:
        check_json_depth(text, "the message")
        data = json.loads(text, parse_constant=_not_a_json_number)
    except RemoteDataError as exc:
        return None, (INVALID_REQUEST, f"Invalid Request: {exc.message.split(':')[0]}", None)
    except (ValueError, RecursionError) as exc:
        return None, (PARSE_ERROR, f"Parse error: {' '.join(str(exc).split())[:120]}", None)
    if isinstance(data, list):
        return None, (INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 "
                                       "removed them); send one message per line", None)
    if not isinstance(data, dict):
        return None, (INVALID_REQUEST, "Invalid Request: a message is a JSON object", None)
    raw_id = data.get("id")
    if isinstance(raw_id, float) and math.isfinite(raw_id):
        # MCP's schema types an id as string | number: 2.0 and 1e3 are the integers 2 and 1000, answered under
        # them. A fractional id is refused under null: the SDK's error message carries only str | int ids, and
        # JSON-RPC 2.0 (section 5) answers an id it cannot use with null
        if not raw_id.is_integer() or abs(raw_id) > MAX_SAFE_ID:
            return None, (INVALID_REQUEST, "Invalid Request: a numeric id must be an integer of at most 2^53 "
                                           "(JSON's exact integers)", None)
        data["id"] = raw_id = int(raw_id)
        text = json.dumps(data)
    msg_id = raw_id if isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool)) else None
    if data.get("jsonrpc") != "2.0":
        return None, (INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', msg_id)
    if "id" in data and msg_id is None:
        return None, (INVALID_REQUEST, "Invalid Request: id must be a string or an integer (MCP forbids null)", None)
    if not isinstance(data.get("method"), str) and "result" not in data and "error" not in data:
        return None, (INVALID_REQUEST, 'Invalid Request: no "method" (nor "result"/"error" of a response)', msg_id)
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:
        first = exc.errors()[0] if hasattr(exc, "errors") and exc.errors() else {"msg": str(exc)}  # type: ignore[attr-defined]
        return None, (INVALID_REQUEST, f"Invalid Request: {' '.join(str(first.get('msg')).split())[:120]}", msg_id)
    return text, None


def _not_a_json_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_ID_FIELD = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"[A-Za-z0-9_.:\-]{1,128}")\s*[,}]')


def _peek_id(raw: bytes) -> int | str | None:
    """The request id of a line too large to parse, read from its envelope, so the client's wait ends.

    Only the part before ``"params"`` (or the last 256 bytes, where a client may put the id) is searched: an "id"
    inside the arguments is not the request's.
    """
    head = raw[:4096].split(b'"params"', 1)[0]
    for part in (head, raw[-256:]):
        found = _ID_FIELD.search(part)
        if found:
            value = found.group(1)
            return value[1:-1].decode() if value.startswith(b'"') else int(value)
    return None


class _CheckedStdin:
    """stdin for the SDK's transport: yields valid lines; answers every other line through the server's writer."""

    def __init__(self, raw: Any) -> None:
        import anyio

        self._raw = raw
        self._reply: Any = None
        self._ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        self._reply = write_stream
        self._ready.set()

    def __aiter__(self) -> _CheckedStdin:
        return self

    async def __anext__(self) -> str:
        import anyio
        import mcp_types
        from mcp.shared.message import SessionMessage

        await self._ready.wait()
        while True:
            raw = await anyio.to_thread.run_sync(self._raw.readline, MAX_MESSAGE_BYTES + 1)
            if not raw:
                raise StopAsyncIteration
            if len(raw) > MAX_MESSAGE_BYTES and not raw.endswith(b"\n"):
                while True:  # drop the rest of the oversized line, in bounded pieces
                    more = await anyio.to_thread.run_sync(self._raw.readline, MAX_MESSAGE_BYTES)
                    if not more or more.endswith(b"\n"):
                        break
            line = raw.strip()
            if not line:
                continue
            text, error = check_line(line)
            if text is not None:
                return text
            code, message, msg_id = error  # type: ignore[misc]
            reply = mcp_types.JSONRPCError(jsonrpc="2.0", id=msg_id,
                                           error=mcp_types.ErrorData(code=code, message=message))
            await self._reply.send(SessionMessage(reply))


async def serve_stdio(server: Any, stdin: Any = None) -> None:
    """Serve ``server`` over stdio (stdout claimed by the SDK's transport), checking every stdin line first."""
    from mcp.server.stdio import stdio_server

    checked = _CheckedStdin(stdin if stdin is not None else sys.stdin.buffer)
    low = server._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does the same with its own stdin
    async with stdio_server(stdin=checked) as (read_stream, write_stream):  # type: ignore[arg-type]
        checked.attach(write_stream)
        await low.run(read_stream, write_stream, low.create_initialization_options())

"""The ``specpick`` command line.

Registry tools (``recommend``, ``speedup``, ``vram``, ...) get their options
generated from their pydantic input models; the other verbs (``chat``, ``ask``,
``mcp``, ``eval``, ``measure``) live in their own modules and register an
``add_arguments`` / ``run`` pair in ``COMMANDS``. Only the invoked verb's
modules are imported, so ``specpick --help`` stays instant.

This module composes every verb, ``eval`` included, so it is the top layer: it sits above ``evals/`` (which
drives the surfaces below it), and nothing else in ``skill/surfaces`` imports it (``tests/test_layers.py``).

Errors: a ``PickerError`` prints ``error: <one line>`` on stderr and exits with
its code (see ``specpick exit-codes``); Ctrl-C exits 130; anything else is a
bug, reported with exit code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from types import ModuleType
from typing import Any, Callable, NoReturn, Sequence

from specpick.skill.surfaces.registry import BY_CLI, TOOLS, ToolSpec
from specpick.tools.errors import EXIT_CODES, EXIT_INPUT, EXIT_INTERRUPTED, classify_error
from specpick.tools.sanitize import clean, clean_line, json_for_terminal

PROG = "specpick"

def _chat() -> ModuleType:
    from specpick.skill.surfaces import chat

    return chat


def _mcp() -> ModuleType:
    from specpick.skill.surfaces import mcp

    return mcp


def _eval() -> ModuleType:
    from specpick.evals import cli

    return cli


def _measure() -> ModuleType:
    from specpick.skill.surfaces import measure_cli

    return measure_cli


def _tune() -> ModuleType:
    from specpick.skill.surfaces import tune_cli

    return tune_cli


# verb -> (imports the module with add_arguments(parser, verb) and run(args, verb) -> int, one-line summary)
COMMANDS: dict[str, tuple[Callable[[], ModuleType], str]] = {
    "chat": (_chat, "talk it through with Claude (or a guided interview without a key)"),
    "ask": (_chat, "one-shot question to Claude for scripts and harnesses (--json)"),
    "mcp": (_mcp, "serve the tools over MCP (stdio)"),
    "eval": (_eval, "grade recommendations against the eval cases"),
    "measure": (_measure, "measure acceptance and speedup on a live engine or a local model"),
    "tune": (_tune, "sweep draft length x concurrency on your prompts; emit the schedule"),
}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and our exit code for usage mistakes.

    No prefix abbreviations: ``--gpu`` must never be taken for ``--gpu-layers`` (or any longer option a verb
    adds later); an option is spelt in full or refused.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(clean_line(f"error: {message}. See `{self.prog} --help`.") + "\n")  # argparse echoes values
        raise SystemExit(EXIT_INPUT)


def _has_own_offline(args: Sequence[str]) -> bool:
    """Whether the verb takes an ``--offline`` option of its own (``tokenizers``): the global switch then leaves the
    flag to the verb, so its own rules (e.g. --offline with --live is a contradiction) still see it."""
    verb = next((a for a in args if not a.startswith("-")), None)
    tool = BY_CLI.get(verb or "")
    return tool is not None and "offline" in tool.load_input_model().model_fields


def _top_level_help() -> str:
    lines = [
        f"usage: {PROG} <command> [options]   ({PROG} <command> --help for its options)",
        "",
        "Pick a speculative decoding strategy, its parameters and its expected speedup.",
        "",
        "commands:",
    ]
    for t in TOOLS:
        lines.append(f"  {t.cli:<14} {t.summary}")
    for verb, (_, summary) in COMMANDS.items():
        lines.append(f"  {verb:<14} {summary}")
    lines.append(f"  {'exit-codes':<14} list the exit codes and what each means")
    lines += [
        "",
        "example (offline, no key):",
        f"  {PROG} recommend --verifier meta-llama/Llama-3.1-70B-Instruct --workload code --gpu H100-SXM --gpus 4",
        "",
        "JSON on stdout with --json; diagnostics on stderr. --offline (any verb): never touch the Hub, as",
        "HF_HUB_OFFLINE=1; a model outside the embedded snapshot is otherwise looked up on the Hub.",
    ]
    return "\n".join(lines)


def tool_parser(tool: ToolSpec) -> _Parser:
    from specpick.skill.surfaces.cli_args import add_model_arguments

    model = tool.load_input_model()
    parser = _Parser(prog=f"{PROG} {tool.cli}", description=tool.description)
    add_model_arguments(parser, model)
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    return parser


def _emit(result: Any, as_json: bool, render: Callable[[Any], str] | None) -> None:
    if as_json:  # C0 controls are escaped by JSON itself; C1 and DEL are escaped here (Hub strings reach this)
        if hasattr(result, "model_dump_json"):
            sys.stdout.write(json_for_terminal(result.model_dump_json(indent=2)) + "\n")
        else:
            sys.stdout.write(json_for_terminal(json.dumps(result, indent=2, default=str)) + "\n")
        return
    if render is not None:
        sys.stdout.write(clean(render(result)).rstrip() + "\n")  # Hub and server strings reach the terminal
    else:
        sys.stdout.write(json.dumps(result.model_dump(mode="json"), indent=2) + "\n")


def _run_tool(tool: ToolSpec, argv: Sequence[str]) -> int:
    ns = vars(tool_parser(tool).parse_args(argv))
    as_json = ns.pop("json", False)
    result = tool.run(ns)
    _emit(result, as_json, tool.load_render())
    return 0


def _run_command(verb: str, argv: Sequence[str]) -> int:
    module = COMMANDS[verb][0]()
    parser = _Parser(prog=f"{PROG} {verb}", description=COMMANDS[verb][1])
    module.add_arguments(parser, verb)
    args = parser.parse_args(argv)
    return int(module.run(args, verb) or 0)


def _exit_codes() -> int:
    for code, meaning in EXIT_CODES.items():
        sys.stdout.write(f"{code:>4}  {meaning}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``specpick`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_top_level_help() + "\n")
        return 0
    if args[0] == "--version":
        if len(args) > 1:
            sys.stderr.write(clean_line(f"error: --version takes no arguments, got {' '.join(args[1:])[:80]!r}. "
                                    f"See `{PROG} --help`.") + "\n")
            return EXIT_INPUT
        from importlib.metadata import version

        sys.stdout.write(f"{PROG} {version('spec-decode-picker')}\n")
        return 0
    if "--offline" in args and not _has_own_offline(args):
        # One switch for every verb: the Hub client's own (HF_HUB_OFFLINE), read at each Hub call; restored after
        # so an in-process caller (tests, the chat loop) is not left offline.
        # huggingface_hub freezes HF_HUB_OFFLINE into its constants at first import (3 ms): import it before setting
        # the variable, or the process would stay offline after this call.
        import huggingface_hub.constants  # noqa: F401

        rest_args = [a for a in args if a != "--offline"]
        before = os.environ.get("HF_HUB_OFFLINE")
        os.environ["HF_HUB_OFFLINE"] = "1"
        try:
            return main(rest_args or ["--help"])
        finally:
            if before is None:
                os.environ.pop("HF_HUB_OFFLINE", None)
            else:
                os.environ["HF_HUB_OFFLINE"] = before
    verb, rest = args[0], args[1:]
    try:
        if verb in BY_CLI:
            return _run_tool(BY_CLI[verb], rest)
        if verb in COMMANDS:
            return _run_command(verb, rest)
        if verb == "exit-codes":
            if rest and rest[0] not in ("-h", "--help"):
                sys.stderr.write(clean_line(f"error: exit-codes takes no arguments, got {' '.join(rest)[:80]!r}. "
                                            f"See `{PROG} exit-codes`.") + "\n")
                return EXIT_INPUT
            return _exit_codes()
        import difflib

        close = difflib.get_close_matches(verb, [*BY_CLI, *COMMANDS, "exit-codes"], n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        sys.stderr.write(clean_line(f"error: unknown command {verb[:80]!r}.{hint} See `{PROG} --help`.") + "\n")
        return EXIT_INPUT
    except BrokenPipeError:
        # `specpick models | head` closes stdout early: not an error worth a traceback.
        return 0
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - one classification for every surface
        report = classify_error(exc)
        if not report.is_bug:
            sys.stderr.write(f"error: {report.message}\n" if report.exit_code != EXIT_INTERRUPTED else "interrupted\n")
            return report.exit_code
        import traceback

        sys.stderr.write(f"internal error: {report.message}\n")
        sys.stderr.write("This is a bug in spec-decode-picker; please report it with the trace below.\n")
        traceback.print_exc(file=sys.stderr)
        return report.exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

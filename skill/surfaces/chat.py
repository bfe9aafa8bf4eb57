"""``specpick chat`` and ``specpick ask``: the Claude conversation from a terminal or a script.

``chat`` talks with you: Claude's text streams to stdout, tool calls are noted
on stderr, and the validated answer is printed as the five sections. Without
``ANTHROPIC_API_KEY`` (or with ``--no-llm``) it runs the guided interview and
the deterministic planner answers (``skill/surfaces/interview.py``).

``ask "QUESTION"`` is the one-shot form for scripts and harnesses: nobody
answers follow-up questions, so Claude takes stated defaults. ``--json``
prints only the Recommendation JSON on stdout.

The model is ``--model``, else ``$SPECPICK_MODEL``, else ``agent.DEFAULT_MODEL``;
``ANTHROPIC_BASE_URL`` is honoured by the SDK. The API key is never printed,
logged or written to the transcript (``--transcript FILE``, JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from specpick.skill.surfaces.agent import DEFAULT_MODEL, MODEL_ENV, Conversation, Limits, resolve_claude_model
from specpick.skill.surfaces.api_call import MAX_RETRIES
from specpick.tools.errors import EXIT_INPUT, EXIT_INTERRUPTED, InputError, redact
from specpick.tools.sanitize import clean_line
from specpick.tools.validation import check_text
from specpick.skill.surfaces.prompt import build_system_prompt
from specpick.skill.render import to_markdown
from specpick.tools.sanitize import StreamSanitizer
from specpick.skill.surfaces.interview import make_read_line

_D = Limits()


def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return parse


def _bounded_int(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {text}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """Options of ``chat`` and ``ask``."""
    if verb == "ask":
        parser.add_argument("question", help="the question, with whatever deployment facts you have")
        parser.add_argument("--json", action="store_true", help="print only the Recommendation JSON on stdout")
    else:
        parser.add_argument("message", nargs="?", help="opening message (otherwise you are asked for one)")
        parser.add_argument("--no-llm", action="store_true",
                            help="run the guided interview answered by the deterministic planner, even with a key")
    parser.add_argument("--model", help=f"Claude model id (default: ${MODEL_ENV}, else {DEFAULT_MODEL})")
    parser.add_argument("--max-tool-rounds", type=_positive(int), default=_D.max_tool_rounds,
                        help=f"assistant turns that may call tools (default: {_D.max_tool_rounds})")
    parser.add_argument("--max-tokens", type=_positive(int), default=_D.max_tokens,
                        help=f"max_tokens of each reply (default: {_D.max_tokens})")
    parser.add_argument("--token-budget", type=_positive(int), default=_D.token_budget,
                        help=f"input+output tokens for the whole conversation (default: {_D.token_budget})")
    parser.add_argument("--timeout", type=_positive(float), default=_D.timeout_s,
                        help=f"wall-clock seconds for the conversation, retries included, not counting time waiting "
                             f"for you (default: {_D.timeout_s:g})")
    parser.add_argument("--max-retries", type=_bounded_int(0, MAX_RETRIES), default=2,
                        help=f"retries on 429, 529, 5xx and timeouts, 0-{MAX_RETRIES}, all inside --timeout "
                             "(default: 2)")
    parser.add_argument("--transcript", metavar="FILE", help="save the conversation as JSON")
    if verb == "ask":
        parser.add_argument("--tool-choice", choices=["auto", "any"], default="auto",
                            help="any: every reply must call a tool, for Messages-API servers that parse tool calls "
                                 "only when asked to (vLLM without --enable-auto-tool-choice) (default: auto)")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class _Printer:
    """Streams Claude's text and puts status notes and errors on their own line (all end up on one terminal).

    Every delta goes through one ``StreamSanitizer``: escape sequences are dropped and a key the model echoes is
    redacted even when it arrives split over several deltas.
    """

    def __init__(self, text_stream: Any) -> None:

        self.stream = text_stream
        self.mid_line = False
        self.sanitizer = StreamSanitizer()

    def _write(self, text: str) -> None:
        if text:
            self.stream.write(text)
            self.stream.flush()
            self.mid_line = not text.endswith("\n")

    def text(self, delta: str) -> None:
        self._write(self.sanitizer.feed(delta))

    def end_line(self) -> None:
        """Show what the sanitizer held back and end the line, so what follows starts on a line of its own."""
        self._write(self.sanitizer.flush())
        if self.mid_line:
            self.stream.write("\n")
            self.stream.flush()
            self.mid_line = False

    def status(self, message: str) -> None:
        self.end_line()
        _err(f"  [{clean_line(message)}]")


def write_transcript(path: str, conv: Conversation, verb: str) -> None:
    """Save the conversation (so far) as JSON; failures to write are reported, not raised."""
    data = {"command": verb, **conv.result.transcript()}
    try:
        Path(path).write_text(redact(json.dumps(data, indent=2, default=str)) + "\n", encoding="utf-8")
    except OSError as exc:
        _err(f"warning: could not write the transcript to {path}: {exc.strerror or exc}")


class _Replies:
    """Reads the user's replies in ``chat``; remembers whether input ended (EOF) or the user quit."""

    def __init__(self, printer: _Printer | None = None) -> None:

        self._read = make_read_line(sys.stdin, sys.stdout)
        self.eof = False
        self.printer = printer

    def opening(self, given: str | None) -> str | None:
        if given:
            return given
        _out("Describe your deployment: verifier model, workload, GPUs, and anything you already know.\n")
        return self._line()

    def __call__(self, _assistant_text: str) -> str | None:
        if self.printer is not None:
            self.printer.end_line()  # the end of Claude's question, held back by the sanitizer, before the prompt
        _out("\n")
        return self._line()

    def _line(self) -> str | None:
        for _ in range(3):  # blank lines are not answers; a few are tolerated
            line = self._read("you> ")
            if line is None:
                self.eof = True
                return None
            if line.strip().lower() in ("quit", "exit", ":q"):
                return None
            if line.strip():
                return check_text(line, what="that line")
        return None


def run(args: argparse.Namespace, verb: str) -> int:
    """Run ``chat`` or ``ask``; returns the exit code (PickerErrors propagate to ``cli.main``)."""
    interactive = verb == "chat"
    has_key = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if args.model is not None:  # a bad id is refused whichever way the conversation would run
        resolve_claude_model(args.model)
    if not interactive:
        check_text(args.question, what="the question")
    elif args.message:
        check_text(args.message, what="the opening message")
    if not interactive and not args.question.strip():
        raise InputError("the question is empty: say what you serve, e.g. `specpick ask \"Llama-3.1-70B on 4 "
                         "H100s for code, which speculative decoding?\"`")
    if interactive and (args.no_llm or not has_key) and args.transcript:
        # The interview has no Claude conversation to record; refusing beats silently writing nothing.
        why = "--no-llm was given" if args.no_llm else "ANTHROPIC_API_KEY is not set"
        raise InputError(f"--transcript records a Claude conversation, but {why} (the guided interview runs "
                         "instead and has none); drop --transcript, or set ANTHROPIC_API_KEY without --no-llm")
    if interactive and (args.no_llm or not has_key):
        from specpick.skill.surfaces.interview import interview_main

        return interview_main("--no-llm was given" if args.no_llm else "ANTHROPIC_API_KEY is not set")
    model = resolve_claude_model(args.model)  # refused before any key check or request when it is not a model id
    if not has_key:
        raise InputError("ANTHROPIC_API_KEY is not set: `specpick ask` needs Claude. Set it, or use "
                         "`specpick recommend ... --json` (offline, deterministic).")

    import anthropic


    limits = Limits(max_tool_rounds=args.max_tool_rounds, max_tokens=args.max_tokens, timeout_s=args.timeout,
                    token_budget=args.token_budget)
    # Key and base URL from the environment; the retries are made inside --timeout by api_call, not by the SDK.
    client = anthropic.Anthropic(max_retries=args.max_retries)
    quiet = not interactive and args.json
    # chat: the conversation is stdout; ask: stdout is reserved for the answer, progress goes to stderr.
    printer = _Printer(sys.stdout if interactive else sys.stderr)
    conv = Conversation(
        client, model=model, system=build_system_prompt(interactive=interactive), limits=limits,
        on_text=None if quiet else printer.text, on_status=None if quiet else printer.status,
        tool_choice=getattr(args, "tool_choice", "auto"),
    )
    replies = _Replies(printer) if interactive else None
    try:
        if replies is not None:
            _err(f"specpick chat with {model} (tools: the specpick checks; 'quit' or Ctrl-D to leave).")
            opening = replies.opening(args.message)
            if opening is None:
                return _left(replies)
        else:
            opening = args.question
        result = conv.run(opening, replies)
    except KeyboardInterrupt:
        printer.end_line()
        _err("\ninterrupted: no recommendation.")
        if args.transcript:
            write_transcript(args.transcript, conv, verb)
        return EXIT_INTERRUPTED
    finally:
        printer.end_line()  # the streamed text's last held-back piece; an error then starts on its own line
    if args.transcript:
        write_transcript(args.transcript, conv, verb)
    if result.error is not None:
        raise result.error
    if result.recommendation is None:
        return _left(replies)
    if quiet:
        _out(result.recommendation.model_dump_json(indent=2) + "\n")
        return 0

    _out(("\n\n" if interactive else "") + to_markdown(result.recommendation).rstrip() + "\n")
    if interactive:
        _err(f"(validated against the Recommendation schema; {result.rounds} tool round(s), "
             f"{result.usage['input_tokens'] + result.usage['output_tokens']} tokens)")
    return 0


def _left(replies: _Replies | None) -> int:
    if replies is not None and replies.eof:
        _err("input ended before a recommendation was made.")
        return EXIT_INPUT
    _err("left without a recommendation.")
    return 0

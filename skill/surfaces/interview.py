"""The no-key path of ``specpick chat``: a guided interview answered by the deterministic planner.

Without ``ANTHROPIC_API_KEY`` (or with ``--no-llm``) the same inputs Claude
would ask for are asked here, one line each, with numbered choices and the
default shown; Enter takes the default. Each answer is checked on the spot
(choice, number range, catalog name) and asked again with the reason, up to
``MAX_ATTEMPTS`` times. End of input (Ctrl-D, or a pipe that runs dry) stops
with exit code 2 and says nothing was recommended.

Lines are read with ``input()`` on a terminal and ``readline()`` otherwise,
so piping answers in works. Only the answers actually typed are passed to
the planner; the rest take ``PlannerInputs``' defaults and the planner lists
them under ``defaults_used``.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from specpick.skill.schema import PlannerInputs
from specpick.tools.errors import InputError, NotFoundError, format_validation_error
from specpick.tools.validation import check_text
from specpick.tools.vocab import ENGINES, QUANTIZATIONS, SAMPLINGS, WORKLOADS
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import PickerError
from specpick.tools.hub.gguf_ref import is_gguf_name
from specpick.tools.hub.gguf_ref import resolve_gguf_base
from specpick.skill.planner.plan import plan
from specpick.skill.render import to_markdown

MAX_ATTEMPTS = 3
ReadLine = Callable[[str], "str | None"]


class _Retry(Exception):
    """An answer that does not fit; the message says why."""


@dataclass(frozen=True)
class Question:
    """One interview question.

    Attributes:
        field: PlannerInputs field it fills.
        text: the question.
        kind: choice, int, float, bool or text.
        choices: allowed values for ``choice``.
        required: no default; Enter is not an answer.
        low: smallest allowed number.
        high: largest allowed number.
        check: extra check for text answers; returns the canonical value or raises ``_Retry``.
        ask_if: only ask when this returns True for the answers so far.
    """

    field: str
    text: str
    kind: str = "text"
    choices: tuple[str, ...] = ()
    required: bool = False
    low: float | None = None
    high: float | None = None
    check: Callable[[str], Any] | None = None
    ask_if: Callable[[dict[str, Any]], bool] | None = None

    @property
    def default(self) -> Any:
        return None if self.required else PlannerInputs.model_fields[self.field].default


def _catalog_model(text: str) -> str:

    try:
        if is_gguf_name(text):  # a GGUF build is kept as named: the planner resolves it (base model, file type)
            resolve_gguf_base(text.strip())
            return text.strip()
        return get_catalog().model(text).repo_id
    except PickerError as exc:
        raise _Retry(exc.message) from None


def _catalog_gpu(text: str) -> str:

    try:
        return get_catalog().gpu(text).key
    except NotFoundError as exc:
        raise _Retry(exc.message) from None


# Shown as examples when present in the catalog: one per common family, not the first rows.
_EXAMPLE_MODELS = ("meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen3-32B", "deepseek-ai/DeepSeek-V3",
                   "openai/gpt-oss-120b")


def _examples(kind: str, n: int = 4) -> str:

    cat = get_catalog()
    names = [m.repo_id for m in cat.models] if kind == "models" else [g.key for g in cat.gpus]
    shown = [m for m in _EXAMPLE_MODELS if m in names] if kind == "models" else []
    shown = shown or names[:n]
    return ", ".join(shown) + (f" ... ({len(names)} in all; type ? for the list)" if len(names) > len(shown) else "")


QUESTIONS: tuple[Question, ...] = (
    Question("verifier", "Verifier model (the LLM whose output you serve)", required=True, check=_catalog_model),
    Question("workload", "Workload", "choice", WORKLOADS, required=True),
    Question("sampling", "Sampling", "choice", SAMPLINGS),
    Question("temperature", "Temperature (Enter: not stated)", "float", low=0.0, high=2.0,
             ask_if=lambda a: a.get("sampling") in ("low-temp", "high-temp")),
    Question("gpu", "GPU model", check=_catalog_gpu),
    Question("gpus", "GPUs per replica (tensor parallel size)", "int", low=1, high=64),
    Question("can_finetune", "Can you fine-tune/train speculative heads for this model?", "bool"),
    Question("second_model", "Can you host a second (draft) model beside the verifier?", "bool"),
    Question("latency", "Latency target", "choice", ("interactive", "throughput")),
    Question("concurrency", "Concurrent requests per replica (batch)", "int", low=1, high=4096),
    Question("engine", "Serving engine", "choice", ENGINES),
    Question("draft", "Candidate draft model (Enter: let the planner choose)", check=_catalog_model),
    Question("context_tokens", "Tokens in the KV cache per request while decoding (Enter: typical for the workload)",
             "int", low=128,
             high=2_000_000),
    Question("quantization", "Verifier weight format (Enter: as published)", "choice", QUANTIZATIONS),
)


def _parse(q: Question, text: str) -> Any:
    """Turn one typed answer into a value, or raise ``_Retry`` with the reason."""
    if q.kind == "choice":
        if text.isdigit() and 1 <= int(text) <= len(q.choices):
            return q.choices[int(text) - 1]
        hits = [c for c in q.choices if c.lower() == text.lower()] or \
               [c for c in q.choices if c.lower().startswith(text.lower())]
        if len(hits) == 1:
            return hits[0]
        raise _Retry(f"'{text}' is not one of: {', '.join(q.choices)} (or their numbers 1-{len(q.choices)})")
    if q.kind == "bool":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise _Retry("answer y or n")
    if q.kind in ("int", "float"):
        try:
            value: float = int(text) if q.kind == "int" else float(text)
        except ValueError:
            raise _Retry(f"'{text}' is not {'a whole number' if q.kind == 'int' else 'a number'}") from None
        if (q.low is not None and value < q.low) or (q.high is not None and value > q.high):
            raise _Retry(f"{value} is outside {q.low:g}-{q.high:g}")
        return value
    return q.check(text) if q.check else text


def _prompt(q: Question) -> str:
    lines = [f"\n{q.text}"]
    if q.kind == "choice":
        lines.append("  " + "  ".join(f"{i}) {c}" for i, c in enumerate(q.choices, 1)))
    if q.field == "verifier":
        lines.append(f"  e.g. {_examples('models')}")
    elif q.field == "gpu":
        lines.append(f"  e.g. {_examples('gpus')}")
    default = q.default
    if q.kind == "bool" and default is not None:
        hint = "[Y/n]" if default else "[y/N]"
    elif default is not None:
        hint = f"[{default}]"
    else:
        hint = "(required)" if q.required else "[none]"
    return "\n".join(lines) + f"\n{hint}> "


def _listing(field: str) -> str:

    cat = get_catalog()
    names = [m.repo_id for m in cat.models] if field in ("verifier", "draft") else [g.key for g in cat.gpus]
    return "\n".join(f"  {n}" for n in names)


def run_interview(read_line: ReadLine, write: Callable[[str], None]) -> dict[str, Any]:
    """Ask every question; return only the answers the user typed (field -> value).

    Args:
        read_line: shows a prompt and returns one line without its newline, or None at end of input.
        write: prints text (no newline added).

    Raises:
        InputError: end of input, or ``MAX_ATTEMPTS`` unusable answers to one question (exit code 2).
    """
    answers: dict[str, Any] = {}
    for q in QUESTIONS:
        if q.ask_if is not None and not q.ask_if(answers):
            continue
        for attempt in range(1, MAX_ATTEMPTS + 1):
            line = read_line(_prompt(q))
            if line is None:
                raise InputError(f"input ended before the interview finished (at '{q.field}'); nothing was "
                                 "recommended. Scripts can use `specpick recommend ... --json`.")
            text = line.strip()
            if text == "?" and q.field in ("verifier", "draft", "gpu"):
                write(_listing(q.field) + "\n")
                continue
            if not text:
                if q.required:
                    write(f"  ! {q.field} is required: there is no default for it.\n")
                    continue
                break  # the default stands; not passed, so the planner reports it as a default
            try:
                answers[q.field] = _parse(q, text)
                break
            except _Retry as exc:
                left = MAX_ATTEMPTS - attempt
                write(f"  ! {exc}." + (f" Try again ({left} left).\n" if left else "\n"))
        else:
            raise InputError(f"no usable answer for '{q.field}' after {MAX_ATTEMPTS} attempts; run "
                             "`specpick recommend --help` to see the accepted values.")
    return answers


def equivalent_command(answers: dict[str, Any]) -> str:
    """The ``specpick recommend`` command line that reproduces this answer offline."""
    parts = ["specpick recommend"]
    for name, value in answers.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{name.replace('_', '-')}")
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts + ["--json"])


def make_read_line(stdin: TextIO, stdout: TextIO) -> ReadLine:
    """A line reader that works on a terminal (``input()``, with editing) and on a pipe (``readline()``)."""
    use_input = stdin is sys.stdin and stdin.isatty() and stdout is sys.stdout
    if use_input:
        try:
            # Line editing; and without it CPython's input() writes the prompt to stderr, not stdout.
            import readline  # noqa: F401
        except ImportError:  # pragma: no cover - Windows
            pass

    def read_line(prompt: str) -> str | None:
        if use_input:
            try:
                return input(prompt)
            except EOFError:
                line = ""
        else:
            stdout.write(prompt)
            stdout.flush()
            line = stdin.readline()
        if not line:
            stdout.write("\n")  # so what follows (an error on stderr) starts on its own line
            stdout.flush()
            return None
        # A pipe's bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): refused here, the one reader
        # of both chat paths, before they reach a catalog look-up or the API's JSON encoder.
        try:
            return check_text(line.rstrip("\r\n"), what="that input line")
        except InputError:
            stdout.write("\n")  # the error starts on its own line, not after the prompt
            stdout.flush()
            raise

    return read_line


def interview_main(reason: str, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the interview and print the planner's five sections. Returns the exit code.

    Args:
        reason: why no LLM is used (shown to the user), e.g. "ANTHROPIC_API_KEY is not set".
        stdin: where answers come from (default ``sys.stdin``).
        stdout: where questions and the answer go (default ``sys.stdout``).
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stdout.write(f"specpick chat: guided interview, answered by the deterministic planner (no LLM: {reason}).\n"
                 "Press Enter to take the default shown in brackets; Ctrl-D stops.\n")
    answers = run_interview(make_read_line(stdin, stdout), stdout.write)

    from pydantic import ValidationError

    try:
        inputs = PlannerInputs.model_validate(answers)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, audience="cli", subject="recommend")) from None
    rec = plan(inputs)
    stdout.write("\n" + to_markdown(rec).rstrip() + "\n\n")
    stdout.write(f"(Answered by the deterministic planner, no LLM. The same answer offline: "
                 f"`{equivalent_command(answers)}`)\n")
    stdout.flush()
    return 0

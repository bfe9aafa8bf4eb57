"""Error hierarchy for spec-decode-picker.

Every error a user can cause, or that an outside service can cause, is a
``PickerError`` subclass. Each carries:

* a one-line ``message`` that says what happened *and* what to do next, and
* an ``exit_code`` that the CLI returns (documented in the README and in
  ``EXIT_CODES`` below), so scripts can tell failures apart.

The CLI prints ``error: <message>`` on stderr and exits with the code; the
Anthropic and MCP tool wrappers turn the same error into an ``is_error`` tool
result. Anything that is *not* a PickerError is a bug in this project and is
reported as such (exit code 1).
"""

from __future__ import annotations

import errno
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic is imported by whoever validates; errors.py stays import-free
    from pydantic import ValidationError

# Exit codes are part of the command-line contract: scripts and the Agent-Skill
# harness branch on them. Do not renumber.
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_NOT_FOUND = 3
EXIT_ACCESS = 4
EXIT_UNAVAILABLE = 5
EXIT_BAD_REMOTE_DATA = 6
EXIT_SERVICE = 7
EXIT_THRESHOLD = 8
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_INTERNAL: "internal error (a bug in spec-decode-picker; please report it)",
    EXIT_INPUT: "invalid or contradictory input (usage error)",
    EXIT_NOT_FOUND: "unknown model, GPU, repository, revision or file",
    EXIT_ACCESS: "access denied: gated or private repository, or a bad token",
    EXIT_UNAVAILABLE: "network or service unavailable and nothing cached to fall back on",
    EXIT_BAD_REMOTE_DATA: "downloaded data is malformed, incomplete or too large",
    EXIT_SERVICE: "an outside service (Claude API, serving engine) failed",
    EXIT_THRESHOLD: "a quality threshold was not met (eval pass rate, calibration error)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}


# Secrets and terminal escapes never reach a terminal, a tool result, a transcript or a log: one sanitizer
# (tools/sanitize.py) for everything shown; re-exported here, where callers have always found ``redact``.
from specpick.tools.sanitize import REDACTED, SECRET_ENV_VARS, clean_line, redact  # noqa: E402,F401


# A path or value of 100,000 characters would make a one-line message unreadable: runs past 200 are shortened.
_LONG_WORD = re.compile(r"\S{201,}")


def _abbreviate(match: re.Match[str]) -> str:
    run = match.group(0)
    return f"{run[:60]}...{run[-40:]} ({len(run):,} characters)"


class PickerError(Exception):
    """Base class: a failure with an actionable one-line message."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        # Keep messages to one line: they end up in terminals, JSON tool
        # results and CI logs. Redacted here so no surface can show a key a server echoed into an error.
        self.message = _LONG_WORD.sub(_abbreviate, clean_line(str(message)))
        super().__init__(self.message)


class InputError(PickerError):
    """The user's input is invalid, out of range or contradictory."""

    exit_code = EXIT_INPUT


class NotFoundError(PickerError):
    """A named thing (model, GPU, repo, revision, file) does not exist."""

    exit_code = EXIT_NOT_FOUND


class HubAccessError(PickerError):
    """The Hub refused access: gated repo, private repo, or invalid token."""

    exit_code = EXIT_ACCESS


class UnavailableError(PickerError):
    """Network/offline failure with no cached copy to fall back on."""

    exit_code = EXIT_UNAVAILABLE


class RemoteDataError(PickerError):
    """Data from the Hub or an engine is malformed, incomplete or oversized."""

    exit_code = EXIT_BAD_REMOTE_DATA


class ServiceError(PickerError):
    """An outside service (Anthropic API, serving engine) answered with an error."""

    exit_code = EXIT_SERVICE


class ThresholdError(PickerError):
    """A measured quality figure is below the threshold the user set."""

    exit_code = EXIT_THRESHOLD


def close_matches_hint(matches: list[str]) -> str:
    """Format a 'did you mean' suffix for NotFound messages."""
    if not matches:
        return ""
    return " Did you mean: " + ", ".join(matches) + "?"


# --- One classification and one validation-error wording for every surface (CLI, Claude tools, MCP, evals) ---

class ErrorReport:
    """How a surface reports one exception: its exit code, a one-line message, and whether it is our bug."""

    __slots__ = ("exit_code", "message", "is_bug")

    def __init__(self, exit_code: int, message: str, is_bug: bool) -> None:
        self.exit_code, self.message, self.is_bug = exit_code, message, is_bug


def classify_error(exc: BaseException) -> ErrorReport:
    """User mistake or outside failure (a ``PickerError``), interruption, or a bug in this project.

    The CLI turns the report into ``error: <message>`` and the exit code, the Claude tool loop and the MCP server
    into an ``is_error`` result; a bug is reported as "internal error" everywhere, with the trace logged.
    """
    if isinstance(exc, PickerError):
        return ErrorReport(exc.exit_code, exc.message, False)
    if isinstance(exc, KeyboardInterrupt):
        return ErrorReport(EXIT_INTERRUPTED, "interrupted", False)
    if isinstance(exc, OSError) and (problem := file_problem(exc)) is not None:
        return ErrorReport(problem.exit_code, problem.message, False)
    if isinstance(exc, UnicodeError):  # bytes that are not text, from an argument, a file or a pipe
        return ErrorReport(EXIT_INPUT, clean_line(f"input is not valid UTF-8 text ({exc.reason}): give text, "
                                                  "not raw bytes"), False)
    return ErrorReport(EXIT_INTERNAL, clean_line(f"{type(exc).__name__}: {exc}"), True)


# --- One classification of file-system errors (reads and writes), whoever hit them ------------------------------

# errno -> what the user can do about it. Errors of the file system only: a ConnectionError is an OSError too, but it
# has no file name and belongs to the network errors each client classifies itself.
_FILE_ERRNOS: dict[int, str] = {
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.EEXIST: "it exists and is in the way",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.ELOOP: "too many symbolic links",
    errno.EINVAL: "the path is not valid here",
    errno.EFBIG: "the file is too large",
}


def file_problem(exc: OSError, path: object = None, action: str = "") -> PickerError | None:
    """A file-system error as a one-line ``InputError`` naming the path (shortened) and the reason, else None.

    Every surface reaches this through ``classify_error``; writers that must keep their data (``catalog update``)
    call it directly to word their own message.
    """
    shown = path if path is not None else exc.filename
    if exc.errno not in _FILE_ERRNOS or shown is None:
        return None
    name = str(shown)
    if len(name) > 120:
        name = f"{name[:60]}...{name[-40:]} ({len(name):,} characters)"
    doing = f"cannot {action} " if action else "cannot use "
    return InputError(f"{doing}{name}: {_FILE_ERRNOS[exc.errno]} (errno {errno.errorcode.get(exc.errno, exc.errno)}); "
                      "give a path that exists and that you can read (or write)")


def format_validation_error(exc: ValidationError, *, audience: str = "cli", subject: str = "",
                            limit: int = 8, names: dict[str, str] | None = None) -> str:
    """One line from a pydantic ``ValidationError``, worded for whoever has to fix the input.

    Args:
        exc: the validation error.
        audience: ``cli`` names flags (``--gpu``) and the verb's ``--help``; ``tool`` names the JSON argument a
            model or MCP client sent; ``answer`` lists up to ``limit`` problems of a submitted object (Claude's
            final answer); ``fields`` lists up to ``limit`` problems of a file's fields.
        subject: the CLI verb, the tool's name, or the thing validated (for ``cli`` / ``tool``).
        limit: how many problems ``answer`` and ``fields`` list.
        names: for ``cli``, field -> its spelling on the command line (a positional's metavar, a custom flag);
            fields not in it are shown as ``--field-name``.
    """
    errors = exc.errors(include_url=False)
    if audience in ("answer", "fields"):
        sep = "; "
        parts = []
        for err in errors[:limit]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or ("(root)" if audience == "answer" else "top level")
            parts.append(f"{loc}: {err.get('msg', 'invalid')}")
        if audience == "fields":
            return sep.join(parts)
        more = f"; and {len(errors) - limit} more" if len(errors) > limit else ""
        return f"{len(errors)} problem(s): " + sep.join(parts) + more
    first = errors[0]
    given = _shown(first.get("input"))
    msg = first.get("msg", "invalid value").removeprefix("Value error, ")
    more = f" (+{len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    if audience == "tool":
        loc = ".".join(str(p) for p in first.get("loc", ()))
        shown = "" if isinstance(given, dict) or not loc else f" (got {given!r})"
        where = f"argument '{loc}'" if loc else "arguments"
        return f"{subject}: {where}: {msg}{shown}{more}. Check the tool's input schema and call it again."
    loc = ".".join(str(p) for p in first.get("loc", ()) if p != "__root__")
    flag = (names or {}).get(loc) or (f"--{loc.replace('_', '-')}" if loc else "input")
    shown = "" if isinstance(given, dict) or loc == "" else f" (got {given!r})"
    where = f"specpick {subject} --help" if subject else "--help"
    return f"{flag}: {msg}{shown}{more}. See `{where}`."


class _Shown:
    """A value as an error shows it: its repr cut to 60 characters (a 5 MB argument must not come back whole)."""

    def __init__(self, value: object) -> None:
        text = repr(value)
        self.text = text if len(text) <= 60 else f"{text[:50]}... ({len(text):,} characters)"

    def __repr__(self) -> str:
        return self.text


def _shown(value: object) -> object:
    return value if isinstance(value, dict) or value is None or len(repr(value)) <= 60 else _Shown(value)

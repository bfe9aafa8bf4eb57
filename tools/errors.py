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

import os
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


# --- Secrets never reach a terminal, a tool result, a transcript or a log -------------------------------------

# Environment variables whose values are credentials: their literal values are removed wherever they appear.
SECRET_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
REDACTED = "[redacted]"
_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{6,}"  # Anthropic keys
    r"|\bsk-[A-Za-z0-9_\-]{16,}"  # other sk- style API keys
    r"|\bhf_[A-Za-z0-9]{8,}"  # Hugging Face user access tokens
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}"  # an Authorization header echoed back
    r"|(?i:\b(?:api[_-]?key|x-api-key|password|secret|token)\s*[=:]\s*['\"]?)[^\s'\",;]{8,}"
)
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Messages-API object ids (tool-use, message, request) are random-looking but public: transcripts need them.
_PUBLIC_ID_PREFIXES = ("toolu_", "srvtoolu_", "msg_", "req_")


def _looks_secret(run: str) -> bool:
    """A long run of base64/hex characters: a secret unless it is a git commit id or reads like a name.

    Commit ids (exactly 40 hex digits) are what revision errors must show; names (repo ids, paths) have few
    digits and no mix of cases inside one dash-free stretch of 32+ characters, which random keys almost always have.
    """
    if run.startswith(_PUBLIC_ID_PREFIXES):
        return False
    if _HEX.fullmatch(run):
        return len(run) != 40
    core = max(re.split(r"[/_\-]", run), key=len)
    return len(core) >= 24 and any(c.isdigit() for c in core) and any(c.isupper() for c in core) and any(
        c.islower() for c in core
    )


def redact(text: str) -> str:
    """Remove credentials from text shown to a user or a model, or written to a file.

    Removes the literal values of ``SECRET_ENV_VARS`` from the environment, then anything shaped like a key or
    token (``sk-ant-...``, ``hf_...``, ``Bearer ...``, ``api_key=...``, long base64 or hex runs). A proxy or server
    that reflects the request's headers into its error text therefore cannot make this tool print the key.
    """
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8:  # shorter values would blank out ordinary words
            text = text.replace(value, REDACTED)
    text = _KEY_SHAPES.sub(lambda m: _keep_label(m.group(0)), text)
    return _LONG_RUN.sub(lambda m: REDACTED if _looks_secret(m.group(0)) else m.group(0), text)


def _keep_label(match: str) -> str:
    # "Bearer abc..." -> "Bearer [redacted]", "api_key=abc" -> "api_key=[redacted]": the reader still sees what leaked.
    label = re.match(r"(?i)bearer\s+|(?:api[_-]?key|x-api-key|password|secret|token)\s*[=:]\s*['\"]?",
                     match)
    return (label.group(0) if label else "") + REDACTED


class PickerError(Exception):
    """Base class: a failure with an actionable one-line message."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        # Keep messages to one line: they end up in terminals, JSON tool
        # results and CI logs. Redacted here so no surface can show a key a server echoed into an error.
        self.message = redact(" ".join(str(message).split()))
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
    return ErrorReport(EXIT_INTERNAL, redact(f"{type(exc).__name__}: {exc}"), True)


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
    given = first.get("input")
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

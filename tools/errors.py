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


class PickerError(Exception):
    """Base class: a failure with an actionable one-line message."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        # Keep messages to one line: they end up in terminals, JSON tool
        # results and CI logs.
        self.message = " ".join(str(message).split())
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

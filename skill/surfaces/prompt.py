"""Build Claude's system prompt from SKILL.md.

SKILL.md is the single source of the skill's instructions: an Agent-Skill
harness reads it directly, and ``specpick chat`` / ``ask`` send its body as
the system prompt, after a short session header that says whether a user can
answer questions. The system prompt is built once, before the conversation,
from files we ship; nothing from a tool result or a user message is ever
added to it.

Where SKILL.md is read from:

1. ``<repo root>/SKILL.md`` next to the ``skill/`` folder: a checkout or an
   editable install, where the root file is the one people edit;
2. ``specpick/skill/SKILL.md`` inside the installed package: a wheel, which
   carries a copy as package data (``skill/SKILL.md`` is a symlink to
   ``../SKILL.md`` that setuptools dereferences when it builds).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from specpick.tools.errors import PickerError

# skill/surfaces/prompt.py: the skill package is one level up, the repository root two.
_SKILL_DIR = Path(__file__).resolve().parent.parent


def skill_md_path() -> Path:
    """Locate SKILL.md (repo root first, then the packaged copy).

    Raises:
        PickerError: neither copy exists (a broken install).
    """
    for candidate in (_SKILL_DIR.parent / "SKILL.md", _SKILL_DIR / "SKILL.md"):
        if candidate.is_file():
            return candidate
    raise PickerError("SKILL.md is missing from this installation; reinstall spec-decode-picker.")


@lru_cache(maxsize=4)
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load_skill_md() -> str:
    """The full text of SKILL.md."""
    return _read(skill_md_path())


def split_frontmatter(text: str) -> tuple[str, str]:
    """Split a SKILL.md text into (frontmatter without the ``---`` lines, body)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return "", text
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]).lstrip("\n")
    return "", text


_SESSION_INTERACTIVE = """\
Session: you are running inside `specpick chat`. A person reads your text as it streams and can answer
your questions. Ask for a missing required input in one short message (offer the default), then continue."""

_SESSION_ONE_SHOT = """\
Session: you are running inside `specpick ask` (one shot). Nobody will answer questions. Take the stated
default for anything missing, list those inputs in `defaults_used`, and finish with `submit_recommendation`."""


def build_system_prompt(*, interactive: bool) -> str:
    """The system prompt: a session header, then the body of SKILL.md.

    Args:
        interactive: True when a person can answer questions (``specpick chat``).

    Returns:
        Prompt text, identical for every request of a conversation.
    """
    _, body = split_frontmatter(load_skill_md())
    header = _SESSION_INTERACTIVE if interactive else _SESSION_ONE_SHOT
    return f"{header}\n\n{body.strip()}\n"

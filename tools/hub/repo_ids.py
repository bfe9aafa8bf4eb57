"""Hub repo id and revision rules, checked before an id touches a URL, the filesystem or an engine command.

Kept apart from ``client.py`` (which re-exports both functions) so that code that only checks an id, such as the
engine configuration emitted with every recommendation (``tools/engines/setting.py``), does not import the
client's settings models and error plumbing (2-5 ms of an offline answer).
"""

from __future__ import annotations

import re

from specpick.tools.errors import InputError

# The Hub's own limits (huggingface_hub.utils.validate_repo_id): 96 characters,
# "name" or "namespace/name", ASCII letters, digits, "-", "_", "."; no "--"/"..".
_REPO_ID_MAX = 96
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REPO_ID_RE = re.compile(rf"^(?:{_REPO_PART}/)?{_REPO_PART}$")
# Branch, tag, commit sha or refs/pr/N; git refs cannot contain "..", spaces or "~^:?*[\".
_REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")


def validate_repo_id(repo_id: str) -> str:
    """Check a repo id before it touches a URL or the filesystem.

    Args:
        repo_id: ``"namespace/name"`` or ``"name"``.

    Returns:
        The repo id, unchanged.

    Raises:
        InputError: anything the Hub would not accept (``../etc``, spaces, too long, ``a--b``).
    """
    if not isinstance(repo_id, str) or not repo_id:
        raise InputError("empty repo id: give a Hub id such as meta-llama/Llama-3.1-8B-Instruct")
    shown = repr(repo_id[:80])
    if len(repo_id) > _REPO_ID_MAX:
        raise InputError(f"repo id {shown}... is longer than {_REPO_ID_MAX} characters")
    if not _REPO_ID_RE.fullmatch(repo_id) or ".." in repo_id or "--" in repo_id or repo_id.endswith(".git"):
        raise InputError(
            f"invalid repo id {shown}: use 'namespace/name' with letters, digits, '-', '_' or '.' "
            "(no spaces, no '..' or '--')"
        )
    return repo_id


def validate_revision(revision: str | None) -> str:
    """Check a branch, tag, commit sha or ``refs/pr/N``; ``None`` means ``main``.

    Raises:
        InputError: the revision contains characters git refs cannot hold.
    """
    if revision is None:
        return "main"
    if not isinstance(revision, str) or not _REVISION_RE.fullmatch(revision) or ".." in revision or "//" in revision:
        raise InputError(f"invalid revision {revision!r}: use a branch, tag, commit sha or refs/pr/N")
    return revision

"""The ``specpick`` console script: process settings that must come before the first pydantic model, the CLI, and
one for the exit that follows it.

Kept apart from ``cli.py`` so that importing the CLI (tests, harnesses) changes no environment; only the
installed command does.
"""

from __future__ import annotations

import gc
import os


def main() -> int:
    """Entry point of the installed ``specpick`` command (pyproject ``[project.scripts]``)."""
    # pydantic looks for plugins when it builds its first model: importlib.metadata reads the entry points of every
    # installed distribution (5 ms in a bare venv, more beside vLLM's ~200 packages) out of a 0.3 s offline answer.
    # specpick uses no pydantic plugin. A value the user set, even empty (which re-enables plugins), is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from specpick.skill.surfaces.cli import main as cli_main

    code = cli_main()
    # The process ends next. At exit the interpreter's last garbage collection walks and frees every object the
    # imports built (~40k: pydantic schemas and validators, module dicts), memory the OS takes back anyway: 50 ms
    # of a 0.3 s offline answer. gc.freeze() leaves the objects that exist now out of that pass. The answer is
    # written, stdout and stderr are flushed and atexit handlers run as before; what changes is that objects kept
    # alive only by reference cycles are not finalised at exit (their memory goes back with the process; nothing
    # of ours writes anything from a finaliser). Long-running verbs (chat, mcp) return only when they end.
    gc.freeze()
    return code

"""Checks run before ``specpick measure`` sends its first request or loads a model.

A measurement can take many minutes (a 7-minute endpoint sweep, a local model load); an option that can only fail
at the end (``--plot-dir`` without matplotlib, an unwritable ``--save-samples``) must fail first,
with exit code 2 and nothing sent.
"""

from __future__ import annotations

import os
from pathlib import Path

from specpick.tools.errors import InputError

MATPLOTLIB_HINT = "pip install 'spec-decode-picker[measure]' (or pip install matplotlib)"


def _writable_folder(folder: Path, flag: str, shown: Path) -> None:
    """``folder`` exists and is writable, or can be created under its nearest existing, writable ancestor."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(f"{flag} {shown}: {probe} is a file, not a folder; choose another path")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {shown}: {probe} is not writable; choose another path")


def check_output_dir(path: Path, flag: str) -> None:
    """A folder the run will write into (created if missing)."""
    if path.exists() and not path.is_dir():
        raise InputError(f"{flag} {path} is a file; give a folder")
    _writable_folder(path, flag, path)


def check_output_file(path: Path, flag: str) -> None:
    """A file the run will (over)write; its folder must already exist."""
    if path.is_dir():
        raise InputError(f"{flag} {path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {path}: folder {path.parent} does not exist; create it first")
    if not os.access(path.parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"{flag} {path} is not writable; choose another path")


def check_plotting() -> None:
    """matplotlib imports (the optional ``measure`` extra); imported for real, since a broken install also fails."""
    try:
        import matplotlib  # noqa: F401 - the check is the import
    except ImportError as exc:
        raise InputError(f"--plot-dir needs matplotlib: {MATPLOTLIB_HINT}") from exc


def preflight(*, plot_dir: Path | None, save_samples: Path | None) -> None:
    """Every output and dependency that could fail after the run, checked before it.

    Input files (``--prompts``, ``--samples``, ``--expect``) are read before the first request anyway, each with
    its own message.

    Raises:
        InputError: a missing dependency or an unwritable output (exit 2).
    """
    if save_samples is not None:
        check_output_file(save_samples, "--save-samples")
    if plot_dir is not None:
        check_output_dir(plot_dir, "--plot-dir")
        check_plotting()

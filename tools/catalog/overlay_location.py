"""Where the user-local catalog overlay lives (``tools/catalog/overlay.py`` reads, validates and merges it).

Kept apart from ``overlay.py`` so that ``get_catalog()`` can see that there is no overlay file (most installs) with
``os`` and ``pathlib`` alone, without importing the overlay's pydantic models (about 4 ms of an offline answer).
"""

from __future__ import annotations

import os
from pathlib import Path

OVERLAY_FILENAME = "catalog-overlay.json"
DISABLE_ENV = "SPECPICK_CATALOG_OVERLAY"  # "off": ignore the overlay (reproducible runs, bisecting an answer)


def overlay_dir() -> Path:
    """``$HF_HOME/specpick``; else next to ``$HF_HUB_CACHE``; else ``~/.cache/huggingface/specpick``."""
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "specpick"
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).parent / "specpick"
    return Path.home() / ".cache" / "huggingface" / "specpick"


def overlay_path() -> Path:
    return overlay_dir() / OVERLAY_FILENAME


def overlay_disabled() -> bool:
    return os.environ.get(DISABLE_ENV, "").strip().lower() in ("off", "0", "no", "false")


def overlay_present() -> bool:
    """Whether an overlay file is there; an unusable location (a name too long, no permission) holds none."""
    try:
        return overlay_path().is_file()
    except OSError:  # Path.is_file() lets ENAMETOOLONG and EACCES through
        return False

"""The fixed fit/holdout split of the engine-measured sources (``tools/data/engine_split.csv``).

The split is by source, decided by a rule that reads only the source id, and written to a committed file
before any fit reads it. The rule is stable under additions: a new source gets its half from its own id,
and no existing source ever changes half, so the file is only ever appended to.

    split = "holdout" if sha256(SALT + source_id)[0] is odd else "fit"

``SALT`` was chosen once (2026-11-30) among ``specpick-split-v1`` ... ``v20`` as the one giving every
engine rows in both halves and the most even fit/holdout counts of usable rows per use (cost model, end to
end); no prediction or error was looked at. ``tests/test_engine_rows.py`` checks that every source of
``engine_measurements.csv`` is in the file and that the rule reproduces it.
"""

from __future__ import annotations

import csv
import hashlib
from functools import lru_cache
from importlib import resources
from typing import Literal

from specpick.tools.errors import RemoteDataError

Split = Literal["fit", "holdout"]
SALT = "specpick-split-v17:"
SPLIT_FILE = "engine_split.csv"
SPLIT_RULE = (f"by source: holdout if the first byte of sha256('{SALT}' + source_id) is odd, else fit "
              "(tools/data/engine_split.csv, fixed before fitting)")
HEADER = (
    "# Fit/holdout split of the engine-measured sources (tools/calibration/split.py).\n"
    f"# Rule: holdout if the first byte of sha256('{SALT}' + source_id) is odd, else fit.\n"
    "# Written before any fit reads it; never edited after fitting (new sources are appended by the rule).\n"
)


def rule_split(source_id: str) -> Split:
    """The half the rule gives ``source_id`` (a function of the id alone)."""
    return "holdout" if hashlib.sha256((SALT + source_id).encode("utf-8")).digest()[0] % 2 else "fit"


def render_split_file(source_reasons: dict[str, str]) -> str:
    """The committed file's text for these sources (source id -> reason column), sorted by id."""
    lines = [HEADER + "source_id,split,reason"]
    for sid in sorted(source_reasons):
        reason = source_reasons[sid].replace('"', "'")
        lines.append(f'{sid},{rule_split(sid)},"{reason}"')
    return "\n".join(lines) + "\n"


def parse_split_text(text: str) -> dict[str, tuple[Split, str]]:
    """source_id -> (split, reason) from the file's text (comment lines skipped)."""
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    out: dict[str, tuple[Split, str]] = {}
    for r in csv.DictReader(body):
        if r["split"] not in ("fit", "holdout"):
            raise RemoteDataError(f"{SPLIT_FILE}: source {r['source_id']} has split '{r['split']}'; "
                                  "use fit or holdout")
        out[r["source_id"]] = (r["split"], r["reason"])  # type: ignore[assignment]
    return out


def split_text() -> str:
    return resources.files("specpick.tools").joinpath("data", SPLIT_FILE).read_text("utf-8")


@lru_cache(maxsize=1)
def load_split() -> dict[str, Split]:
    """source_id -> fit/holdout, as committed."""
    return {sid: half for sid, (half, _) in parse_split_text(split_text()).items()}


@lru_cache(maxsize=1)
def holdout_sources() -> frozenset[str]:
    """Every source of the committed holdout half."""
    return frozenset(sid for sid, half in load_split().items() if half == "holdout")


def split_of_source(source_id: str) -> Split:
    """The committed half of ``source_id``; a source missing from the file gets the rule's half (the test
    ``test_every_source_has_a_committed_split`` fails until the file lists it)."""
    return load_split().get(source_id) or rule_split(source_id)


# Reason-column prefix of the sources the engine constants committed before this split were fitted on.
FITTED_BEFORE = "earlier alternating split: fit"
# Which sources the committed global constants were fitted on: "earlier" (the alternating split that predates
# this file: the reason column says which) or "split" (this file's fit half). Set to "split" in the commit that
# refits the constants with tools/calibration/fit.py, which reads only the fit half.
CONSTANTS_FITTED_ON: Literal["earlier", "split"] = "split"


@lru_cache(maxsize=1)
def _fitted_before() -> frozenset[str]:
    return frozenset(sid for sid, (_, reason) in parse_split_text(split_text()).items()
                     if reason.startswith(FITTED_BEFORE))


def constants_saw(source_id: str) -> bool:
    """Whether the committed global constants were fitted on ``source_id`` (the split file's reason column)."""
    if CONSTANTS_FITTED_ON == "split":
        return split_of_source(source_id) == "fit"
    return source_id in _fitted_before()

"""The published figures the training rules rest on (``tools/data/training_evidence.csv``).

Each row: an id the rules cite (``D4``, ``F17``...), the figure in words, its value, the public source and
whether the source was re-read for this table or taken from the shared collection (``read`` column).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Evidence:
    id: str
    figure: str
    value: str
    unit: str
    source: str
    read: str


@lru_cache(maxsize=1)
def evidence_table() -> dict[str, Evidence]:
    """Every evidence row by id."""
    text = resources.files("specpick.tools").joinpath("data/training_evidence.csv").read_text(encoding="utf-8")
    return {r["id"]: Evidence(**r) for r in csv.DictReader(text.splitlines())}


def cite(*ids: str) -> list[str]:
    """The ids, checked to exist (a rule citing a missing row is a bug, not a user error)."""
    table = evidence_table()
    missing = [i for i in ids if i not in table]
    if missing:
        raise KeyError(f"evidence ids not in training_evidence.csv: {missing}")
    return list(ids)

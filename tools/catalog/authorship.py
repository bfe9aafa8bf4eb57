"""Who ran a published measurement: the method's own authors, or a third party.

Third parties mostly measure less acceptance than a method's authors report (RADAR's EAGLE-3 baselines on
Vicuna-13B: tau 5.5-6.4 where the EAGLE-3 paper has 6.2-7.5). A user running a method is a third party, so a prior
is levelled to whoever runs it (``tools/model/runner_levelling.py`` ``runner_ratio``). ``tools/data/method_authors.csv``
says, per source, which methods (``method`` or ``method/variant``) its authors introduced; every other row of that
source is a third party's run, and so is every row of a source not listed.
"""

from __future__ import annotations

import csv
from functools import cache
from importlib import resources


@cache
def authored_methods() -> dict[str, frozenset[str]]:
    """source_id -> the method keys (``method`` or ``method/variant``) its authors introduced."""
    text = resources.files("specpick.tools").joinpath("data", "method_authors.csv").read_text("utf-8")
    return {r["source_id"]: frozenset(r["authored"].split()) for r in csv.DictReader(text.splitlines())}


def method_key(method: str, variant: str = "") -> str:
    """'eagle2' or 'eagle2/hass': how ``method_authors.csv`` names a method and its variant."""
    return f"{method}/{variant}" if variant else method


def by_authors(source_id: str, method: str, variant: str = "") -> bool:
    """True when ``source_id``'s authors introduced ``method`` (and ``variant``): their own run of their method."""
    return method_key(method, variant) in authored_methods().get(source_id, frozenset())


__all__ = ["authored_methods", "by_authors", "method_key"]

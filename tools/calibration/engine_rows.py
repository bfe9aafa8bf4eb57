"""Engine-measured rows: ``tools/data/engine_measurements.csv`` parsed into ``EngineRow`` (a published row plus the
engine and release that measured it), with source-derived ids ``{source_id}/{n}`` (``tools/catalog/row_ids.py``).

Kept apart from the calibration cases (``engine_cases.py``) so a reader of the rows alone (``evidence.py``, shown
beside every estimate) does not import the speedup model.
"""

from __future__ import annotations

import re
from importlib import resources

from specpick.tools.calibration.engine_specs import engine_method
from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.published import PublishedRow, read_cells, row_from_cells
from specpick.tools.catalog.row_ids import source_ordinal_ids


# A row whose acceptance figure was measured on another run than its speedup (another sample, another batch): the
# figure still tells the acceptance priors what the engine accepts, but cannot test the cycle cost of the speedup's
# run. A source that says so gets this tag in the row's notes (a data test requires it wherever speedup > tau, which
# no run can show: each cycle costs at least one plain step).
OTHER_RUN_TAG = "[acceptance from another run]"
# The tag the pending llama.cpp rows carried before llama.cpp had its own fitted cost model
# (tools/model/overhead_llamacpp.py). A llama.cpp row is now chosen by its engine cell, not by this tag: it enters the
# llama.cpp fit and section only, never another engine's figure, fit or band (``EngineRow.llamacpp``). The tag is
# ignored where a row still carries it (rows appended from docs/pending-data keep their notes verbatim otherwise).
HELD_OUT_TAG = "[held out: llama.cpp, no fitted cost model yet]"
LLAMACPP_ENGINE = "llamacpp"
# Any other "[held out: <reason>]" tag keeps a row out of every gate, fit and prior with that reason, the llama.cpp
# section's included: rows a catalog addition would otherwise pull into the
# committed fit (VLLM-BLOG-K3-2026 names Kimi-K3; letting them in is a refit, not a catalog change).
HELD_OUT_PREFIX = "[held out: "
# A row that is not (yet) an acceptance prior (scripts/build_priors.py skips it): rows appended after the priors were
# last built, so adding them moves no committed prior; dropping the tag and rebuilding the priors is a model change.
NOT_A_PRIOR_TAG = "[not an acceptance prior yet]"


class EngineRow(PublishedRow):
    """A published row plus the engine that measured it."""

    engine: str
    engine_version: str
    qps: float | None = None

    @property
    def acceptance_from_speedup_run(self) -> bool:
        """The row's tau/alpha was measured on the same run as its speedup (see ``OTHER_RUN_TAG``)."""
        return OTHER_RUN_TAG not in self.notes

    @property
    def llamacpp(self) -> bool:
        """A llama.cpp row: it tests the llama.cpp cost model only (its own fit, section, band and gate)."""
        return self.engine == LLAMACPP_ENGINE

    @property
    def excluded_reason(self) -> str | None:
        """The reason of a ``[held out: ...]`` tag other than the former llama.cpp tag (``HELD_OUT_TAG``): the row
        enters no gate, fit, prior or section; or None."""
        m = re.search(re.escape(HELD_OUT_PREFIX) + r"([^\]]+)\]", self.notes.replace(HELD_OUT_TAG, ""))
        return m.group(1).strip() if m else None

    @property
    def prior_candidate(self) -> bool:
        """The row may become an acceptance prior (see ``NOT_A_PRIOR_TAG``)."""
        return NOT_A_PRIOR_TAG not in self.notes and self.excluded_reason is None


# The sources' own workload words (the `workload=` hint of each row's notes) -> our workloads. Synthetic
# random-token prompts, "mixed" and "unknown" are no workload: such rows keep the benchmark's mapping. Code
# *editing* (InstructCoder, Blazedit: the answer rewrites the prompt's code) copies far more than code generation
# (n-gram tau 5.9 vs ~2, vllm#24344), so it is not folded into "code".
WORKLOAD_HINTS: dict[str, str] = {
    "chat": "chat", "code": "code", "math": "math", "reasoning": "math",
    "summarization": "summarization", "translation": "translation", "creative-writing": "creative",
    "roleplay": "creative", "rag": "rag", "qa-closed": "qa", "qa-doc": "doc-qa", "agentic": "agentic",
    "code-edit": "code-edit", "doc-edit": "doc-edit", "agent-loop": "agent-loop",
}


def _workload_hint(notes: str) -> str | None:
    m = re.search(r"workload=([a-z-]+)", notes)
    return WORKLOAD_HINTS.get(m.group(1), "") if m else None


def engine_rows_from_text(text: str) -> tuple[EngineRow, ...]:
    """Parse the text of an engine-measurements CSV (a function of the text alone, so tests can feed an edited
    copy and check which ids move)."""
    cells = read_cells(text)
    ids = source_ordinal_ids(r["source_id"] for r in cells)
    return tuple(engine_row(row_id, r) for row_id, r in zip(ids, cells, strict=True))


def engine_row(row_id: str, r: dict[str, str]) -> EngineRow:
    """One CSV row (its cells by column name) as an ``EngineRow`` named ``row_id``."""
    base = row_from_cells(row_id, r)
    if base.method is None and engine_method(r["method"]):
        base = base.model_copy(update={"method": engine_method(r["method"])})
    hint = _workload_hint(r["notes"])  # None: no hint; "": a hint naming no workload of ours
    if hint is not None and base.workload != (hint or None):
        base = base.model_copy(update={"workload": hint or None})
    m = re.match(r"\s*QPS\s+([0-9.]+)", r["batch_size"])
    return EngineRow(**base.model_dump(), engine=r["engine"].strip().lower(), engine_version=r["engine_version"],
                     qps=float(m.group(1)) if m else None)


def engine_measurements_text() -> str:
    """The committed engine-measurements CSV."""
    return resources.files("specpick.tools").joinpath("data", "engine_measurements.csv").read_text("utf-8")


@knowledge_cache("engine_rows.rows")  # read from the catalog's rows: reload() drops it (Knowledge)
def load_engine_rows() -> tuple[EngineRow, ...]:
    """All engine-measured rows, parsed (cached)."""
    return engine_rows_from_text(engine_measurements_text())

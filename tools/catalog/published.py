"""Published speculative-decoding measurements: loading, cell parsing, and the mapping to our vocabulary.

``tools/data/published_measurements.csv`` is a verbatim copy of the project's
reference set (tools/data/published_measurements.csv, 272 rows from the EAGLE family,
HASS, Medusa, Hydra, Clover, Lookahead, REST, prompt lookup, Leviathan and Chen
papers/repos). Every row keeps its ``source`` and provenance tag. Rows are
identified as ``{source_id}/{n}``, the n-th row of that source in file order
(``tools/catalog/row_ids.py``), so inserting a row does not renumber the others.

The mapping rules here (benchmark -> workload, paper method -> our method,
cells like "1 (implied)" -> numbers) are shared by the acceptance priors
(``tools/model/prior_rules.py``) and the calibration (``tools/calibration/report.py``).
"""

from __future__ import annotations

import csv
import re
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel

from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.row_ids import SEPARATOR, source_ordinal_ids

# Paper method name -> (our Method, variant): tools/data/method_aliases.csv, table "published". Variants keep
# different heads/training apart from the canonical method in the priors (HASS is an EAGLE-2-style tree with a
# better-trained head, Hydra/Clover are Medusa-style heads, REST is retrieval-based drafting like suffix decoding).


@lru_cache(maxsize=None)
def method_aliases(table: str) -> dict[str, tuple[str, str]]:
    """Source spelling of a method (lower case) -> (our method, variant), for the rows of ``table``
    ("published": paper and repo rows; "engine": engine rows the published spellings do not cover)."""
    text = resources.files("specpick.tools").joinpath("data", "method_aliases.csv").read_text("utf-8")
    return {r["alias"]: (r["method"], r["variant"]) for r in csv.DictReader(text.splitlines()) if r["table"] == table}


# Methods outside our vocabulary, with the reason they are not modelled.
UNMODELLED: dict[str, str] = {
    "lenient speculative sampling (lossy if l<1)": "lossy variant, speedup computed from a formula",
    "self-speculation + snapkv sparse kv draft": "sparse-KV self-speculation is not one of our methods",
    "dspark": "DSpark drafter is not one of our methods",
}

AGGREGATE = "aggregate"  # "Mean of 5": the mean of rows already in the set
# Provenance tag of a task column of a table whose overall column is its source's graded row for the same setup
# (Spec-Bench leaderboard): the task rows feed same-setup workload ratios (tools/model/same_setup.py) but are not
# graded on their own, so a 6-task table counts once per setup, as it did before its task columns were added.
TASK_COLUMN = "primary-task"
# Rows that republish a measurement already in the set: copy row id -> the original's row id (the row that states
# the most: tau where one does). The EAGLE papers and repos re-report their earlier runs; EAGLE Fig. 1 copies Medusa
# and Lookahead "from their original technical reports" (its footnote); the Medusa README's tech-report chart shows
# the Medusa paper's Table 1 Medusa-2 speedups. Found by matching method, verifier, benchmark, temperature and
# speedup across sources (and tau where both state it). A copy is graded once, under its original, and every row of
# one measurement leaves a leave-one-source-out run when any of their sources does (``measurement_sources``).
SAME_MEASUREMENT: dict[str, str] = {
    "EAGLE1-FIG1/7": "MEDUSA-README/9", "EAGLE1-FIG1/8": "MEDUSA-README/10", "EAGLE1-FIG1/9": "MEDUSA-README/11",
    "EAGLE1-FIG1/10": "LADE-BLOG/1", "EAGLE1-FIG1/11": "LADE-BLOG/2", "EAGLE1-FIG1/12": "LADE-BLOG/3",
    "MEDUSA-README/13": "MEDUSA-PAPER-T1/1", "MEDUSA-README/15": "MEDUSA-PAPER-T1/3",
    # EAGLE-1 on MT-Bench: the EAGLE paper's Fig. 1 and Table 7, the EAGLE-2 repo figure, the EAGLE-3 paper's table
    "EAGLE1-T7/1": "EAGLE1-FIG1/1", "EAGLE2-FIG/2": "EAGLE1-FIG1/1",
    "EAGLE1-FIG1/2": "EAGLE3-T1/31", "EAGLE2-FIG/4": "EAGLE3-T1/31",
    "EAGLE2-FIG/6": "EAGLE1-FIG1/4", "EAGLE2-FIG/8": "EAGLE1-FIG1/5",
    "EAGLE1-T7/6": "EAGLE1-FIG1/6", "EAGLE2-FIG/10": "EAGLE1-FIG1/6",
    # EAGLE-2 on MT-Bench: the EAGLE-2 paper's table, its repo figure, the EAGLE-3 paper's table
    "EAGLE2-FIG/1": "EAGLE2-PAPER/3", "EAGLE2-FIG/3": "EAGLE2-PAPER/1", "EAGLE3-T1/37": "EAGLE2-PAPER/1",
    "EAGLE2-FIG/5": "EAGLE2-PAPER/7", "EAGLE2-FIG/7": "EAGLE2-PAPER/5",
    # the EAGLE-2 repo figure's Medusa and SpS baselines on Vicuna-13B, as the EAGLE-3 paper's table states them
    "EAGLE2-FIG/16": "EAGLE3-T1/13", "EAGLE2-FIG/23": "EAGLE3-T1/1",
}
MIXED5 = "mixed5"  # EAGLE-3 headline figure: mean over MT-bench, HumanEval, GSM8K, Alpaca, CNN/DM
MIXED5_WORKLOADS: tuple[str, ...] = ("chat", "code", "math", "chat", "summarization")
# Spec-Bench's "Overall" column (github:hemingkx/Spec-Bench Leaderboard.md): the mean over its six tasks, MT-bench
# multi-turn conversation, WMT14 DE-EN translation, CNN/DM summarization, Natural Questions (closed-book QA), GSM8K
# and Natural Questions with retrieved passages (RAG) (Spec-Bench paper, arXiv 2401.07851, Table 1).
SPECBENCH6 = "specbench6"
# A row's mixed workload -> (the workloads it averages, what the mean is). A mix is no workload of its own: its rows
# are predicted as the mean over the mix and give no acceptance prior.
WORKLOAD_MIXES: dict[str, tuple[tuple[str, ...], str]] = {
    MIXED5: (MIXED5_WORKLOADS, "headline mean over 5 benchmarks: mean of the model over chat, code, math, chat, "
             "summarization"),
    SPECBENCH6: (("chat", "translation", "summarization", "qa", "math", "rag"),
                 "Spec-Bench overall: mean of the model over its 6 tasks (chat, translation, summarization, "
                 "closed-book qa, math, rag)"),
}


class PublishedRow(BaseModel):
    """One published measurement with its raw cells and parsed values."""

    row_id: str
    source_id: str
    source: str
    provenance: str
    verifier_model: str
    verifier_params_b: str
    method_raw: str
    draft_or_head: str
    hardware: str
    task: str
    temperature_raw: str
    batch_raw: str
    config: str
    tau_raw: str
    alpha_raw: str
    speedup_raw: str
    notes: str
    # parsed
    method: str | None
    variant: str
    workload: str | None
    temperature: float | None
    batch: int | None
    tau: float | None
    alpha: float | None
    speedup: float | None
    speedup_is_range: bool
    acceptance_is_range: bool


_NUM = r"[0-9]*\.?[0-9]+"


def parse_number(cell: str) -> tuple[float | None, bool]:
    """A plain number -> (value, False); a range "a-b" -> (midpoint, True); bounds/text -> (None, True)."""
    text = cell.strip()
    if not text:
        return None, False
    if re.fullmatch(_NUM, text):
        return float(text), False
    m = re.fullmatch(rf"({_NUM})\s*-\s*({_NUM})", text)
    if m:
        return (float(m.group(1)) + float(m.group(2))) / 2, True
    return None, True


def parse_temperature(cell: str) -> float | None:
    value, is_range = parse_number(cell)
    return None if is_range else value


def parse_batch(cell: str) -> int | None:
    """'1', '1 (implied)', 'not stated (1)' -> 1; '42 (max; ...)' -> 42; 'max feasible ...' -> None."""
    text = cell.strip().lower()
    m = re.match(r"^(\d+)\b", text)
    if m:
        return int(m.group(1))
    m = re.match(r"^not stated \((\d+)\)", text)
    return int(m.group(1)) if m else None


def map_workload(task: str) -> str | None:
    """Benchmark -> workload (MT-Bench/Alpaca -> chat, HumanEval -> code, GSM8K -> math, CNN/DM and XSum
    -> summarization, HAGRID context QA and Spec-Bench's retrieval-augmented task -> rag, closed-book Natural
    Questions -> qa, WMT -> translation; MT-Bench coding/math categories go to code/math). None: not a workload we
    model (language-modelling corpora, long-context RULER, ranges)."""
    t = task.lower()
    if "(range)" in t:
        return None
    if t.startswith("mean of"):
        return AGGREGATE
    if "eagle-3 headline" in t:
        return MIXED5
    if "spec-bench overall" in t:
        return SPECBENCH6
    if "mt-bench" in t or "mt-bench" in t.replace(" ", "-"):
        if "coding" in t:
            return "code"
        if "math" in t:
            return "math"
        return "chat"
    rules = (
        ("humaneval", "code"), ("mbpp", "code"), ("gsm8k", "math"), ("cnn", "summarization"), ("xsum", "summarization"),
        ("hagrid", "rag"), ("retrieval-aug", "rag"), ("natural questions", "qa"), ("wmt", "translation"),
        ("ende", "translation"), ("alpaca", "chat"),
        ("dialog", "chat"), ("math (internal)", "math"), ("chat (internal)", "chat"),
        ("wikipedia", "chat"), ("books", "chat"), ("various generation", "chat"), ("coding agents", "agentic"),
    )
    for key, workload in rules:
        if key in t:
            return workload
    if t == "code":
        return "code"
    return None


def map_method(raw: str) -> tuple[str | None, str]:
    return method_aliases("published").get(raw.strip().lower(), (None, ""))


def row_from_cells(row_id: str, r: dict[str, str]) -> PublishedRow:
    """Parse one CSV row (column names of published_measurements.csv) into a ``PublishedRow`` named ``row_id``."""
    notes = r["notes"]
    tag = notes.split("]", 1)[0].lstrip("[") if notes.startswith("[") else ""
    method, variant = map_method(r["method"])
    tau, tau_range = parse_number(r["mean_accepted_tokens_tau"])
    alpha, alpha_range = parse_number(r["acceptance_rate_alpha"])
    speedup, sp_range = parse_number(r["speedup"])
    return PublishedRow(
        row_id=row_id, source_id=r["source_id"], source=r["source"], provenance=tag,
        verifier_model=r["verifier_model"], verifier_params_b=r["verifier_params_b"], method_raw=r["method"],
        draft_or_head=r["draft_or_head"], hardware=r["hardware"], task=r["task_or_benchmark"],
        temperature_raw=r["temperature"], batch_raw=r["batch_size"], config=r["config"],
        tau_raw=r["mean_accepted_tokens_tau"], alpha_raw=r["acceptance_rate_alpha"], speedup_raw=r["speedup"],
        notes=notes, method=method, variant=variant, workload=map_workload(r["task_or_benchmark"]),
        temperature=parse_temperature(r["temperature"]), batch=parse_batch(r["batch_size"]),
        tau=tau, alpha=alpha, speedup=speedup, speedup_is_range=sp_range,
        acceptance_is_range=tau_range or alpha_range,
    )


def read_cells(text: str) -> list[dict[str, str]]:
    """The data rows of a measurements CSV, in file order."""
    return list(csv.DictReader(text.splitlines()))


def rows_from_text(text: str) -> tuple[PublishedRow, ...]:
    """Parse the text of a published-measurements CSV (a function of the text alone, so tests can feed an
    edited copy and check which ids move)."""
    cells = read_cells(text)
    ids = source_ordinal_ids(r["source_id"] for r in cells)
    return tuple(row_from_cells(row_id, r) for row_id, r in zip(ids, cells, strict=True))


def read_2026_cells() -> list[dict[str, str]]:
    """Published rows for the 2026 parallel drafters (DFlash, P-EAGLE, PARD), same columns, kept apart from
    the 272-row reference copy so the calibration's dev set does not change (``scripts/build_priors.py``
    turns them into acceptance priors)."""
    text = resources.files("specpick.tools").joinpath("data", "published_2026.csv").read_text("utf-8")
    return read_cells(text)


@knowledge_cache("published.rows")
def load_published() -> tuple[PublishedRow, ...]:
    """All published rows, parsed (cached)."""
    text = resources.files("specpick.tools").joinpath("data", "published_measurements.csv").read_text("utf-8")
    return rows_from_text(text)


def copied_from(row: PublishedRow) -> str | None:
    """The row id of the measurement ``row`` republishes (``SAME_MEASUREMENT``), or None for an original."""
    return SAME_MEASUREMENT.get(row.row_id)


@lru_cache(maxsize=1)
def _measurement_groups() -> dict[str, frozenset[str]]:
    """row id -> the sources of every row of its measurement (its own, its original's, the other copies'). A row id
    names its source (``row_ids``: ``{source_id}/{n}``), so no rows are loaded: priors filter with this per query."""
    members: dict[str, set[str]] = {}
    for copy, original in SAME_MEASUREMENT.items():
        members.setdefault(original, {original}).add(copy)
    groups = {}
    for ids in members.values():
        sources = frozenset(i.rpartition(SEPARATOR)[0] for i in ids)
        groups.update({i: sources for i in ids})
    return groups


def measurement_sources(row_id: str, source_id: str) -> frozenset[str]:
    """The sources whose exclusion removes the row ``row_id`` of ``source_id``: its own, and for a measurement
    published more than once, every source that published it."""
    return _measurement_groups().get(row_id, frozenset({source_id}))


def config_int(config: str, *keys: str) -> int | None:
    """First integer following one of ``keys`` in a config cell (e.g. 'gamma=7', 'K=4', 'use 2 heads')."""
    for key in keys:
        m = re.search(key + r"\s*[=:]?\s*(\d+)", config, flags=re.IGNORECASE)
        if m:
            return int(m.group(1))
    return None

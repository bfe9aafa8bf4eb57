"""Acceptance prior rows and the rules that move one row to the draft a prior is asked for.

Rows come from ``tools/data/acceptance_priors.csv`` (copies of the published rows that state tau or alpha, with
sources; built by ``tools/model/prior_rules.py``). Each row is moved by stated rules (``row_taus``):

1. shape: chain rows give a per-token alpha, tree rows an effective per-depth acceptance; both become the head's
   top-1 chain alpha and are re-expanded at the requested chain length / tree (``tools/model/acceptance.py``), with
   the position decay the row's harness measured (``decay_for``);
2. draft size (draft models only): alpha moves by S per decade of draft/verifier parameter ratio, S fitted within
   the published size sweeps (Leviathan T2/T3);
3. temperature: tau x rho^(T' - T'_row), T' = min(T, 1), rho = median sampled/greedy ratio of same-setup pairs of
   the method's family;

and by the per-row multipliers the prior passes in (a borrowed workload or variant, who ran the row). Choosing
the rows and combining them into a prior is ``tools/model/priors.py``.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, Field

from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.errors import PickerError
from specpick.tools.methods import methods_where
from specpick.tools.model.acceptance import alpha_from_tau, expected_tokens, tree_tau
from specpick.tools.model.prior_rules import OWN_MODULE_METHODS, engine_decay_figures, resolve_decay
from specpick.tools.model.copy_heavy import burst_from_positions, positions_from_notes
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS, COPY_METHODS, METHOD_FAMILY
from specpick.tools.catalog.tables import get_catalog

ALPHA_BOUNDS = (0.02, 0.98)


class PriorRow(BaseModel):
    prior_id: str
    published_row: str
    source_id: str
    source: str
    provenance: str
    method: str
    variant: str
    workload: str
    temperature: float
    verifier_model: str
    verifier_params_b: float | None
    draft_params_b: float | None
    shape: str
    num_draft_tokens: int | None
    tree_depth: int | None
    tree_top_k: int | None
    tree_tokens: int | None
    tau: float | None
    alpha: float | None
    alpha_chain: float | None
    harness_class: str = "paper"
    engine: str = ""
    # per-position acceptance the row's source printed (engine rows' ``pos_accept=``), P(drafted token i accepted)
    pos_accept: tuple[float, ...] = ()


class Shape(BaseModel):
    """The draft shape a prior is asked for: a chain of N tokens, or a tree."""

    num_draft_tokens: int = Field(description="chain length N, or tree depth")
    tree_top_k: int | None = None
    tree_tokens: int | None = Field(None, description="verify budget incl. root (None: chain)")

    @property
    def is_tree(self) -> bool:
        k, tokens = self.tree_top_k or 1, self.tree_tokens or 0
        return k > 1 and tokens > self.num_draft_tokens + 1


# Rows whose acceptance moves with the draft's size relative to the verifier (prior rule 3, the registry's
# ``draft_size_rule``).
DRAFT_SIZE_METHODS = methods_where(draft_size_rule=True)


@dataclass(frozen=True)
class RowTarget:
    """Where ``row_taus`` moves a prior's rows: the method asked for, at this temperature and draft shape, with a
    draft of ``draft_ratio`` times the verifier's size (draft_model rows only)."""

    method: str
    temperature: float
    shape: Shape
    draft_ratio: float | None = None


def _f(v: str) -> float | None:
    try:
        return float(v) if v.strip() else None
    except ValueError:  # e.g. ">100"
        return None


def _i(v: str) -> int | None:
    return int(float(v)) if v.strip() else None


@knowledge_cache("priors.rows")
def load_prior_rows() -> tuple[PriorRow, ...]:
    text = resources.files("specpick.tools").joinpath("data", "acceptance_priors.csv").read_text("utf-8")
    out = []
    for r in csv.DictReader(text.splitlines()):
        out.append(PriorRow(
            prior_id=r["prior_id"], published_row=r["published_row"], source_id=r["source_id"], source=r["source"],
            provenance=r["provenance"], method=r["method"], variant=r["variant"], workload=r["workload"],
            temperature=float(r["temperature"]), verifier_model=r["verifier_model"],
            verifier_params_b=_f(r["verifier_params_b"]), draft_params_b=_f(r["draft_params_b"]), shape=r["shape"],
            num_draft_tokens=_i(r["num_draft_tokens"]), tree_depth=_i(r["tree_depth"]), tree_top_k=_i(r["tree_top_k"]),
            tree_tokens=_i(r["tree_tokens"]), tau=_f(r["tau"]), alpha=_f(r["alpha"]), alpha_chain=_f(r["alpha_chain"]),
            harness_class=r["harness_class"] or "paper", engine=r.get("engine") or "",
            pos_accept=tuple(positions_from_notes(r.get("notes") or "")),
        ))
    return tuple(out)


@lru_cache(maxsize=1)
def rule_figures() -> dict:
    """``prior_rules.rule_figures()`` as ``scripts/build_priors.py`` wrote it (the test suite checks they agree)."""
    return json.loads(resources.files("specpick.tools").joinpath("data", "prior_rules.json").read_text("utf-8"))


@lru_cache(maxsize=64)
def engine_decay(exclude: frozenset[str]) -> dict[str, dict[str, list[float]]]:
    """The engine sweeps' decay figures without the sweeps of ``exclude`` (leave-one-source-out runs)."""
    return engine_decay_figures(rule_figures()["engine_decay_sweeps"], exclude)


@lru_cache(maxsize=4096)
def decay_for(method: str, harness_class: str = "paper", family: str = "",
              exclude: frozenset[str] = frozenset()) -> float:
    """Per-position acceptance decay along a chain for ``method`` where it runs (1.0: independent tokens): in the
    papers' harnesses the papers' rule; in an engine the engine sweeps' (``prior_rules.resolve_decay``; ``family``:
    the verifier's ``family_key``, used for verifier-owned modules; ``exclude``: sources left out)."""
    return resolve_decay(method, harness_class, family, engine_decay(exclude), rule_figures()["position_decay"])


def family_key(family: str) -> str:
    """The catalog family without its architecture note: 'deepseek-v3 (MoE+MLA+MTP)' -> 'deepseek-v3'."""
    return family.split(" (")[0].strip().lower()


@knowledge_cache("priors.row_family")  # reads the catalog: a reload forgets it
def row_family(verifier_model: str) -> str:
    """The catalog family of a prior row's verifier cell ('' when the catalog does not know the model)."""

    try:
        return family_key(get_catalog().model(verifier_model.split(" (")[0].strip()).family)
    except PickerError:
        return ""


def decay_family(r: PriorRow) -> str:
    """The family whose own sweeps set row ``r``'s decay: its verifier's for a verifier-owned module, else none."""
    return row_family(r.verifier_model) if r.method in OWN_MODULE_METHODS else ""


def row_decay(r: PriorRow, exclude: frozenset[str] = frozenset()) -> float:
    """The decay row ``r`` is re-expanded with (without the sweeps of ``exclude``)."""
    return decay_for(r.method, r.harness_class, decay_family(r), exclude)


@lru_cache(maxsize=8192)
def _chain_alpha_at(tau: float, n: int, decay: float) -> float:
    return alpha_from_tau(tau, n, decay)


def row_alpha(r: PriorRow, exclude: frozenset[str] = frozenset()) -> float:
    """Row ``r``'s chain alpha (only rows that have one: not measured-tau rows) under the decay it is re-expanded
    with: the built one (scripts/build_priors.py, every sweep), or, when leaving sources out changes the decay,
    derived again from the row's own tau and chain."""
    if r.alpha_chain is None:
        raise ValueError(f"prior row {r.prior_id} has no chain alpha (its tau is used as measured)")
    if r.shape != "chain" or r.tau is None or not r.num_draft_tokens or r.alpha is not None:
        return r.alpha_chain
    d = row_decay(r, exclude)
    return r.alpha_chain if d == row_decay(r) else _chain_alpha_at(r.tau, r.num_draft_tokens, d)


def tree_factor() -> float:
    """F of tools/model/acceptance.py, derived from the published EAGLE-1 chain/tree pairs (``prior_rules``)."""
    return rule_figures()["tree_factor"]


@lru_cache(maxsize=1)
def temperature_rho() -> dict[str, tuple[float, int]]:
    """Family -> (median sampled/greedy tau ratio at T=1, number of pairs); pooled for families without pairs."""
    return {fam: (ratio, n) for fam, (ratio, n) in rule_figures()["temperature_rho"].items()}


@knowledge_cache("prior_rows.draft_ratio_slope")  # read from the catalog's rows: reload() drops it (Knowledge)
def draft_ratio_slope() -> tuple[float, int]:
    """S: alpha change per decade of draft/verifier size ratio, pooled within same-setup sweeps."""
    groups: dict[tuple, list[tuple[float, float]]] = {}
    for r in load_prior_rows():
        if r.method in DRAFT_SIZE_METHODS and r.alpha_chain is not None and r.draft_params_b and r.verifier_params_b:
            key = (r.source_id, r.verifier_model, r.workload, r.temperature)
            groups.setdefault(key, []).append((math.log10(r.draft_params_b / r.verifier_params_b), r.alpha_chain))
    sxy = sxx = 0.0
    used = 0
    for pts in groups.values():
        if len({x for x, _ in pts}) < 2:
            continue
        mx, my = statistics.fmean(x for x, _ in pts), statistics.fmean(y for _, y in pts)
        sxy += sum((x - mx) * (y - my) for x, y in pts)
        sxx += sum((x - mx) ** 2 for x, _ in pts)
        used += 1
    return (sxy / sxx if sxx else 0.0), used


def _row_tau(r: PriorRow, shape: Shape, draft_ratio: float | None, exclude: frozenset[str] = frozenset()) -> float:
    """Tau of row ``r`` re-expanded at ``shape`` (and moved to ``draft_ratio`` for draft models); ``exclude``: the
    sources a leave-one-source-out run leaves out (their chain-length sweeps do not set the decay either)."""
    if r.shape == "measured" or r.alpha_chain is None:
        return float(r.tau or 1.0)
    if r.pos_accept and r.workload in COPY_HEAVY_WORKLOADS and r.method in COPY_METHODS and not shape.is_tree:
        # copy-heavy work accepts in bursts (long runs on copied spans, misses at the edits): the two-state burst
        # fitted to the row's own per-position acceptance, not one geometric alpha (tools/model/copy_heavy.py)
        return burst_from_positions(r.pos_accept).tau(shape.num_draft_tokens)
    a = row_alpha(r, exclude)
    if draft_ratio and r.method in DRAFT_SIZE_METHODS and r.draft_params_b and r.verifier_params_b:
        slope, _ = draft_ratio_slope()
        a += slope * math.log10(draft_ratio / (r.draft_params_b / r.verifier_params_b))
        a = min(max(a, ALPHA_BOUNDS[0]), ALPHA_BOUNDS[1])
    if shape.is_tree:
        return tree_tau(a, shape.num_draft_tokens, shape.tree_top_k or 1, shape.tree_tokens or 2, tree_factor())
    return expected_tokens(a, shape.num_draft_tokens, row_decay(r, exclude))


def row_taus(rows: list[PriorRow], target: RowTarget, factor: float, assumptions: list[str],
             exclude: frozenset[str] = frozenset(), row_factors: list[float] | None = None,
             tau_factors: list[float] | None = None) -> list[float]:
    """Each row's tau moved to the ``target`` shape, draft size and temperature and to the workload (rules 1-4),
    by ``tau_factors`` (one multiplier on tau per row: a borrowed workload or variant, ``same_setup``) and by
    ``row_factors`` (one multiplier on tau - 1 per row: who ran it, ``runner_factors``)."""
    family = METHOD_FAMILY[target.method]
    rho, n_pairs = temperature_rho()[family]
    t_q = min(max(target.temperature, 0.0), 1.0)
    taus = []
    for i, r in enumerate(rows):
        tau = _row_tau(r, target.shape, target.draft_ratio, exclude)
        tau *= rho ** (t_q - min(r.temperature, 1.0)) * (tau_factors[i] if tau_factors else 1.0)
        taus.append(max(1.0, 1.0 + (tau - 1.0) * factor * (row_factors[i] if row_factors else 1.0)))
    bursts = [r for r in rows if r.pos_accept and r.workload in COPY_HEAVY_WORKLOADS and r.method in COPY_METHODS]
    if bursts and not target.shape.is_tree:
        fits = ", ".join(f"{r.published_row}: f_copy {b.f_copy:.2f}, run continues {b.c_run:.2f}"
                         for r in bursts for b in [burst_from_positions(r.pos_accept)])
        n = target.shape.num_draft_tokens
        assumptions.append(f"copy-heavy work accepts in bursts: tau at N={n} = 1 + f_copy x "
                           f"E[run | copy], fitted to each row's printed per-position acceptance ({fits}), not one "
                           "geometric alpha")
    if any(r.temperature != t_q for r in rows):
        assumptions.append(f"temperature: tau x {rho:.3f}^(T - T_row) with T capped at 1 "
                           f"(median sampled/greedy ratio of {n_pairs} same-setup {family} pairs)")
    return taus


def row_shape(r: PriorRow) -> Shape:
    """The draft shape row ``r`` was measured at."""
    return Shape(num_draft_tokens=r.num_draft_tokens or r.tree_depth or 1, tree_top_k=r.tree_top_k,
                 tree_tokens=r.tree_tokens)


def source_median(rows: list[PriorRow], taus: list[float]) -> float:
    """The median over sources of each source's median: one paper's many benchmarks count once."""
    by_source: dict[str, list[float]] = {}
    for r, t in zip(rows, taus):
        by_source.setdefault(r.source_id, []).append(t)
    return statistics.median(statistics.median(v) for v in by_source.values())


__all__ = [
    "ALPHA_BOUNDS",
    "PriorRow",
    "Shape",
    "decay_family",
    "decay_for",
    "draft_ratio_slope",
    "engine_decay",
    "family_key",
    "load_prior_rows",
    "row_alpha",
    "row_decay",
    "row_family",
    "row_shape",
    "RowTarget",
    "row_taus",
    "rule_figures",
    "source_median",
    "temperature_rho",
    "tree_factor",
]

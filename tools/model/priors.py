"""Acceptance priors per method x workload x temperature, from published measurements.

A prior answers: for this method, workload, temperature and draft shape, what mean accepted length tau (and alpha)
should we assume, from which rows, with what spread. This module chooses the rows and combines them; each row is
moved to the requested situation by stated rules, then the median over sources is taken:

1-3. shape, draft size and temperature (``tools/model/prior_rows.py``);
4. workload: if no rows for the workload, the nearest workload's rows with a stated adjustment, and a wider range;
   where the adjustment would only be assumed, papers'-harness estimates move by the (tau-1) ratio of same-setup
   runs on both workloads (``tools/model/same_setup.py``);
5. who runs it (papers' harnesses only): third parties measure less than a method's authors, so rows of the other
   kind are moved by ``runner_ratio`` to the requested runner's level; a user is a third party
   (``tools/model/runner_levelling.py``);
6. variant: rows borrowed from another variant of the method (Medusa-2 for Medusa-1, plain Medusa for Hydra) move
   by the variants' tau ratio in same-setup runs of both (``same_setup.variant_gap``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import NamedTuple

from pydantic import BaseModel, Field

from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.published import measurement_sources
from specpick.tools.errors import InputError
from specpick.tools.methods import REGISTRY, is_method, method_record
from specpick.tools.model.acceptance import alpha_from_tau, expected_tokens, tree_alpha
from specpick.tools.model.prior_rows import (
    PriorRow, RowTarget, Shape, decay_family, decay_for, draft_ratio_slope, engine_decay, family_key,
    load_prior_rows, row_alpha, row_decay, row_family, row_taus, rule_figures, source_median, temperature_rho,
    tree_factor,
)
from specpick.tools.model.prior_rules import OWN_MODULE_METHODS, decay_and_source
from specpick.tools.model.runner_levelling import RUNNER_MIN_SOURCES, runner_factors, runner_ratio
from specpick.tools.model.same_setup import variant_gap, workload_gap
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS, METHOD_FAMILY, TRAINED_HEAD_METHODS, Runner

# Nearest workloads to borrow rows from, in order.
FALLBACK: dict[str, tuple[str, ...]] = {
    "chat": ("code",), "code": ("chat",), "math": ("chat",), "summarization": ("rag", "chat"),
    "rag": ("summarization", "chat"), "qa": ("chat",), "doc-qa": ("rag", "summarization", "chat"),
    "translation": ("chat",),
    "structured": ("code", "chat"), "agentic": ("code", "rag", "chat"), "creative": ("chat",),
    # Copy-heavy work borrows only copy-heavy rows first (tools/model/copy_heavy.py), then its nearest generation
    # workload, which understates copy drafters there (vllm#24344: n-gram tau 4.59 on Blazedit, 3.63 InstructCoder).
    "code-edit": ("doc-edit", "agent-loop", "code", "chat"), "doc-edit": ("code-edit", "summarization", "rag", "chat"),
    "agent-loop": ("code-edit", "agentic", "code", "rag", "chat"),
}
class Adjust(NamedTuple):
    """A move on (tau - 1) when a workload borrows another's rows, why, and whether it is only assumed (then a
    measured same-setup ratio replaces it: ``_measured_adjust``)."""

    factor: float
    why: str
    assumed: bool = False


# Multiplier on (tau - 1) when borrowing rows (target workload, borrowed workload, method family), with
# its reason; pairs not listed borrow unchanged (``DEFAULT_ADJUST``, an assumption).
WORKLOAD_ADJUST: dict[tuple[str, str, str], Adjust] = {
    ("creative", "chat", "model_free"): Adjust(0.3, "PLD-RAW writing/roleplay turn-1 speedups 1.10/1.06 vs 1.30 for "
                                               "all MT-Bench turn 1: creative text copies little from its prompt"),
    ("creative", "chat", "head"): Adjust(1.0, "Medusa README: writing 1.95x / roleplay 2.01x vs 1.97x overall"),
    ("translation", "chat", "model_free"): Adjust(0.5, "output language differs from the input, little to copy "
                                                  "(low-overlap n-gram loses, vllm#8439)", assumed=True),
    ("rag", "summarization", "model_free"): Adjust(1.0, "PLD-RAW: HAGRID context QA 2.37x vs CNN/DM 2.38x"),
    ("doc-qa", "rag", "model_free"): Adjust(1.0, "document QA is RAG with the document supplied by the user: the "
                                            "HAGRID rows are questions answered from given passages (PLD-RAW)"),
    ("doc-qa", "rag", "head"): Adjust(1.0, "document QA is RAG with the document supplied by the user"),
    ("qa", "chat", "model_free"): Adjust(1.0, "closed-book answers copy little from the question, as chat does "
                                         "(MT-Bench rows)", assumed=True),
    ("chat", "code", "model_free"): Adjust(0.68, "EAGLE3-T1 prompt lookup: MT-Bench tau 1.63 vs HumanEval 1.93, "
                                           "(tau-1) ratio 0.68"),
}
DEFAULT_ADJUST = Adjust(1.0, "no adjustment", assumed=True)
# Variants without acceptance rows of their own borrow from the closest variant ("" = plain method).
VARIANT_FALLBACK: dict[str, str] = {"hydra++": "hydra"}
# Methods with no published rows of their own borrow another method's rows, with the reason: the registry's
# ``borrows_acceptance_of`` and ``borrow_note`` (tools/methods.py says why suffix decoding borrows n-gram's).
# Families whose workload ratios are measured (tools/model/same_setup.py). A separate draft model is left out: how
# well it drafts a task follows its own training data, not the method's. The only measured pairs (Spec-Bench's SpS)
# use Vicuna-68M, trained on ShareGPT chat, at 0.70x its chat speed on WMT translation, while T5-small, fine-tuned on
# WMT EnDe like its T5-XXL verifier, drafts it at alpha 0.75 against 0.65 on CNN/DM (Leviathan et al. 2023, Table 2).
# A head is trained by its method's recipe (EAGLE and Medusa heads on chat data such as ShareGPT; MTP modules with
# their verifier), so one method's heads share a task profile; model-free drafting has no drafter to train.
MEASURED_WORKLOAD_FAMILIES: frozenset[str] = frozenset({"head", "model_free"})
DERIVED_RANGE_WIDEN = 0.15  # assumption: borrowed rows get +/-15% of (tau - 1) extra range
SINGLE_SOURCE_WIDEN = 0.15  # assumption: rows from a single source get +/-15% of (tau - 1) extra range


class AcceptancePrior(BaseModel):
    """The acceptance assumption for one query, and where it came from."""

    method: str
    workload: str
    temperature: float
    tau: float = Field(description="median mean accepted length at the requested shape, bonus token included")
    tau_low: float
    tau_high: float
    alpha: float | None = Field(None, description="chain: per-token alpha; tree: effective per-depth acceptance")
    alpha_low: float | None = None
    alpha_high: float | None = None
    n_rows: int
    prior_ids: list[str]
    published_rows: list[str]
    source_ids: list[str]
    workload_used: str
    assumptions: list[str]
    summary: str


def _quant(values: list[float]) -> tuple[float, float, float]:
    v = sorted(values)
    return v[0], statistics.median(v), v[-1]


def _matching_rows(method: str, variant: str | None, exclude_sources: frozenset[str]) -> list[PriorRow]:
    """Prior rows of ``method`` (and ``variant``; None: any variant) outside ``exclude_sources``."""
    return [r for r in load_prior_rows() if r.method == method and (variant is None or r.variant == variant)
            and not measurement_sources(r.published_row, r.source_id) & exclude_sources]


def _select_rows(method: str, variant: str, exclude_sources: frozenset[str],
                 assumptions: list[str]) -> list[PriorRow]:
    """The rows a prior rests on, falling back in a stated order when the exact method/variant has none.

    Order: the variant's own rows; the closest variant's (``VARIANT_FALLBACK``); a borrowed method's
    (the registry's ``borrows_acceptance_of``); any variant of the method. Each fallback adds its reason to ``assumptions``.

    Raises:
        InputError: no rows at all for the method.
    """
    rows = _matching_rows(method, variant, exclude_sources)
    if not rows and variant:
        closest = VARIANT_FALLBACK.get(variant, "")
        rows = _matching_rows(method, closest, exclude_sources)
        assumptions.append(f"no acceptance rows for {variant}: using {closest or 'plain ' + method} rows")
    record = method_record(method) if is_method(method) else None
    if not rows and not variant and record is not None and record.borrows_acceptance_of:
        rows = _matching_rows(record.borrows_acceptance_of, "", exclude_sources)
        assumptions.append(record.borrow_note)
    if not rows:
        # a method known only through a variant (e.g. REST for retrieval drafting)
        rows = _matching_rows(method, None, exclude_sources)
        if rows:
            kinds = ", ".join(sorted({r.variant for r in rows}))
            assumptions.append(f"no published acceptance for plain {method}: using its closest published "
                               f"variant ({kinds})")
    if not rows:
        raise InputError(f"no published acceptance figure for method '{method}'; pass --alpha or --tau")
    return rows


# Engine rows that measure an engine's own variant of a method and so speak for that engine only, with the reason:
# the registry's ``engine_own_variants`` (tools/methods.py cites TensorRT-LLM's shared n-gram pool).
ENGINE_OWN_VARIANTS: dict[tuple[str, str], str] = {
    (engine, r.name): why for r in REGISTRY for engine, why in r.engine_own_variants}


def _runtime_rows(rows: list[PriorRow], workload: str, harness_class: str | None, engine: str | None,
                  exclude: frozenset[str], assumptions: list[str]) -> list[PriorRow]:
    """The rows measured where the estimate is for: engines for an engine, the papers' harnesses for those.

    Paper-harness acceptance is not engine acceptance (engines measure less for the same heads: chains instead of
    trees, other sampling, vllm#26191), so an engine estimate takes, in order: rows of the user's engine with the
    requested workload, any engine's with that workload, the user's engine's, any engine's; and only when no
    engine measured the method at all, the papers' rows (said so). The paper harness takes the papers' rows.
    """
    if harness_class != "engine":
        paper = [r for r in rows if r.harness_class == "paper"]
        if paper:
            return paper
        # no paper rows: any engine's, except an engine's own variant of the method (it speaks for that engine only)
        dropped = sorted({(r.engine, r.method) for r in rows} & ENGINE_OWN_VARIANTS.keys())
        assumptions.extend(ENGINE_OWN_VARIANTS[k] for k in dropped)
        kept = [r for r in rows if (r.engine, r.method) not in ENGINE_OWN_VARIANTS]
        if kept:
            assumptions.append(f"no papers'-harness {rows[0].method} acceptance: engine-measured rows used")
        return kept
    own_variant = {(r.engine, r.method) for r in rows
                   if (r.engine, r.method) in ENGINE_OWN_VARIANTS and r.engine != engine}
    if own_variant and any((r.engine, r.method) not in own_variant for r in rows):
        rows = [r for r in rows if (r.engine, r.method) not in own_variant]
        assumptions.extend(ENGINE_OWN_VARIANTS[k] for k in sorted(own_variant))
    measured = [r for r in rows if r.harness_class == "engine"]
    same = [r for r in measured if engine and r.engine == engine]
    paper = [r for r in rows if r.harness_class != "engine"]
    # Engine rows of the workload (or its nearest workloads) first; engine rows of an unrelated workload lose to
    # the papers' rows of the right one (discounted below), since workload moves acceptance more than runtime.
    for w in (workload, *FALLBACK.get(workload, ())):
        paper_has_w = any(r.workload == w for r in paper)
        for pool in (same, measured):
            # One engine source does not outvote the papers' sources for the same workload (a single blog's
            # table has set n-gram tau 4 on translation); with two or more, or no paper rows, engine rows win.
            sources = {r.source_id for r in pool if r.workload == w}
            if sources and (len(sources) >= MIN_ENGINE_SOURCES or not paper_has_w):
                if pool is measured and engine and w == workload:
                    used = ", ".join(sorted({r.engine for r in pool if r.workload == w}))
                    assumptions.append(f"no {engine}-measured {rows[0].method} acceptance for {workload}: rows "
                                       f"measured in {used} used")
                return pool
        if paper_has_w:
            break
    if not paper:
        return same or measured
    method = rows[0].method
    factor, n_engine = engine_discount(method, exclude)
    if n_engine:
        assumptions.append(f"no engine-measured {method} acceptance for this workload: the papers' own-harness "
                           f"figures are used with (tau-1) x {factor:.2f}, {method}'s engine/paper ratio on chat "
                           f"({n_engine} engine rows; engines measure less: chains instead of trees, vllm#26191)")
    else:
        assumptions.append(f"no engine-measured {method} acceptance for this workload: the papers' own-harness "
                           "figures are used as they are (too few engine sources of this method to scale them by)")
    return paper


MIN_ENGINE_SOURCES = 2  # engine sources needed to override the papers' rows of the same workload
REFERENCE_CHAIN = 3  # shape at which engine and paper acceptance are compared (the engines' common default)


@knowledge_cache("priors.engine_discount")  # row decays read the catalog's families
def engine_discount(method: str, exclude: frozenset[str] = frozenset()) -> tuple[float, int]:
    """(engine (tau-1) / paper (tau-1) of ``method``, capped at 1, and the engine rows it rests on), both at a chain
    of 3 on chat, from the rows outside ``exclude`` (a leave-one-source-out run must not learn it from the left-out
    source); (1.0, 0) when the method was not measured both ways, by at least ``MIN_ENGINE_SOURCES`` engine sources.

    Per method, not one figure for all: the ratio runs from 0.66 (EAGLE-3) to above 1 (separate drafts, n-gram)
    across the methods measured both ways, so a median over methods says little about any one of them, and it moved
    from 1.0 to 0.73 when the holdout sources were left out. Alpha is shape-free, so each row's chain alpha is
    re-expanded at ``REFERENCE_CHAIN``.
    """
    rows = [r for r in load_prior_rows() if r.alpha_chain is not None and r.workload == "chat"
            and r.method == method and not measurement_sources(r.published_row, r.source_id) & exclude]

    def excess(kind: str) -> list[float]:
        return [expected_tokens(row_alpha(r, exclude), REFERENCE_CHAIN, row_decay(r, exclude)) - 1.0
                for r in rows if r.harness_class == kind]

    eng, pap = excess("engine"), excess("paper")
    engine_sources = {r.source_id for r in rows if r.harness_class == "engine"}
    if len(engine_sources) < MIN_ENGINE_SOURCES or not pap:
        return 1.0, 0  # one engine source is one setup (an early vLLM EAGLE build measured tau ~2), not a ratio
    return min(1.0, statistics.median(eng) / statistics.median(pap)), len(eng)


def _measured_adjust(workload: str, used_w: str, family: str, harness_class: str | None,
                     exclude: frozenset[str]) -> tuple[Adjust, tuple[str, ...]]:
    """The move for borrowing ``used_w``'s rows for ``workload``: ``WORKLOAD_ADJUST``'s, or, where that is only
    assumed, the measured (tau-1) ratio of same-setup runs on both (``same_setup.workload_gap``, without
    ``exclude``) and its sources. Measured ratios move the papers'-harness estimates only: they come from the
    papers' deep trees and long chains, where acceptance differences compound over more drafted positions than an
    engine's 1-5 token chain verifies; and not separate drafts' (``MEASURED_WORKLOAD_FAMILIES``)."""
    adjust = WORKLOAD_ADJUST.get((workload, used_w, family), DEFAULT_ADJUST)
    if not adjust.assumed or harness_class == "engine" or family not in MEASURED_WORKLOAD_FAMILIES:
        return adjust, ()
    ratio, sources = workload_gap(family, workload, used_w, exclude)
    if not sources:
        return adjust, ()
    return Adjust(ratio, f"the {family} family's (tau-1) ratio {workload}/{used_w} where one source ran both in "
                         f"one table: {', '.join(sources)}"), sources


def _workload_rows(rows: list[PriorRow], method: str, workload: str, harness_class: str | None,
                   exclude: frozenset[str], assumptions: list[str]) -> tuple[list[PriorRow], str, float]:
    """(rows of the workload used, that workload, multiplier on tau - 1) for the workload asked: the workload's own
    rows if any, else the nearest workload's (``FALLBACK``) moved by ``_measured_adjust``."""
    used_w = next((w for w in (workload, *FALLBACK[workload]) if any(r.workload == w for r in rows)), None)
    if used_w is None:
        used_w = "chat" if any(r.workload == "chat" for r in rows) else rows[0].workload
    factor = 1.0
    if used_w != workload:
        adjust, _ = _measured_adjust(workload, used_w, METHOD_FAMILY[method], harness_class, exclude)
        factor = adjust.factor
        why = f"assumption: {adjust.why}" if adjust.assumed else adjust.why
        assumptions.append(f"no published {method} acceptance for {workload}: {used_w} rows used, (tau-1) x "
                           f"{factor:.2f} ({why}); range widened by {DERIVED_RANGE_WIDEN:.0%} of tau-1")
    return [r for r in rows if r.workload == used_w], used_w, factor


def measured_workload_ratios() -> dict[tuple[str, str, str], tuple[float, tuple[str, ...]]]:
    """(family, workload, borrowed workload) -> ((tau-1) ratio, sources) for every fallback whose assumed move a
    measured ratio replaces in the papers' harnesses (``_measured_adjust``), for ``calibrate``."""
    out = {}
    for workload, nearest in FALLBACK.items():
        for used_w in nearest:
            for family in sorted(MEASURED_WORKLOAD_FAMILIES):
                adjust, sources = _measured_adjust(workload, used_w, family, "paper", frozenset())
                if sources:
                    out[(family, workload, used_w)] = (adjust.factor, sources)
    return out


def _variant_factors(rows: list[PriorRow], variant: str, exclude: frozenset[str],
                     assumptions: list[str]) -> list[float] | None:
    """Per row, the multiplier on tau that moves a borrowed variant's row to ``variant`` (None: no row moves).

    ``_select_rows`` borrows another variant's rows when the asked one has none; the variants' gaps over the plain
    method (``same_setup.variant_gap``, measured outside ``exclude``) move them. A variant never compared with the
    plain method stands in with its ``VARIANT_FALLBACK``'s gap, else its rows are used as they are.
    """
    method = rows[0].method

    def gap(kind: str) -> tuple[float, tuple[str, ...]] | None:
        """The kind's gap over plain (1.0 for plain), else its fallback's, else None: never measured."""
        for k in (kind, VARIANT_FALLBACK.get(kind)):
            if k == "":
                return 1.0, ()
            if k is not None and (g := variant_gap(method, k, exclude))[1]:
                return g
        return None

    wanted = gap(variant)
    factors: list[float] = []
    notes: dict[str, str] = {}
    for r in rows:
        have = gap(r.variant)
        if r.variant == variant or wanted is None or have is None or wanted[0] == have[0]:
            factors.append(1.0)
            continue
        factors.append(wanted[0] / have[0])
        sources = ", ".join(sorted(set(wanted[1]) | set(have[1])))
        notes[r.variant] = (f"{method}/{r.variant or 'plain'} rows moved to {variant or 'plain ' + method}: tau x "
                            f"{wanted[0] / have[0]:.2f} (the variants' gaps over plain {method} where one source ran "
                            f"both on one setup: {sources})")
    if not notes:
        return None
    assumptions.extend(notes[k] for k in sorted(notes))
    return factors


def _decay_source(r: PriorRow, exclude: frozenset[str]) -> str:
    """Where row ``r``'s position decay comes from (``row_decay``), for the answer's assumptions."""
    return decay_and_source(r.method, r.harness_class, decay_family(r), engine_decay(exclude),
                            rule_figures()["position_decay"])[1]


def _shape_notes(rows: list[PriorRow], method: str, shape: Shape, draft_ratio: float | None,
                 exclude: frozenset[str] = frozenset()) -> list[str]:
    """The rules that moved the rows to the requested draft (draft size, tree/chain, position decay, measured)."""
    notes = []
    if draft_ratio and method_record(method).draft_size_rule:
        slope, groups = draft_ratio_slope()
        notes.append(f"draft size: alpha {slope:+.3f} per decade of draft/verifier size ratio "
                     f"(fit within {groups} published size sweeps, Leviathan et al. T2/T3)")
    if any(r.shape == "tree" for r in rows) or shape.is_tree:
        notes.append(f"tree/chain conversion: chain misses = tree misses x F^share(k_eff), F={tree_factor():.2f} "
                     "from EAGLE-1 chain alpha vs tree tau (EAGLE1-PAPER rows)")
    if not shape.is_tree:
        seen: set[tuple[str, float]] = set()
        for r in rows:
            d = row_decay(r, exclude)
            if r.shape == "measured" or d >= 1.0 or (r.harness_class, d) in seen:
                continue
            seen.add((r.harness_class, d))
            notes.append(f"{'engine' if r.harness_class == 'engine' else 'paper-harness'} {r.method} chains: "
                         f"acceptance of the i-th drafted token = alpha x {d:.3f}^i ({_decay_source(r, exclude)})")
    if any(r.shape == "measured" for r in rows):
        notes.append(f"{method} tau used as measured at the source's configuration (not rescaled with N)")
    return notes


def _tau_range(rows: list[PriorRow], taus: list[float], borrowed: bool,
               assumptions: list[str]) -> tuple[float, float, float]:
    """(median, low, high) tau: the median over sources of each source's median, the rows' spread widened.

    Each source counts once, so one paper's five benchmarks do not outvote another measurement. Borrowed
    workloads and single-source priors get extra range (``DERIVED_RANGE_WIDEN``, ``SINGLE_SOURCE_WIDEN``).
    """
    low, _, high = _quant(taus)
    med = source_median(rows, taus)
    single = len({r.source_id for r in rows}) == 1
    if single:
        assumptions.append(f"all rows from one source: range widened by {SINGLE_SOURCE_WIDEN:.0%} of tau-1")
    widen = (DERIVED_RANGE_WIDEN if borrowed else 0.0) + (SINGLE_SOURCE_WIDEN if single else 0.0)
    return med, max(1.0, low - widen * (med - 1.0)), high + widen * (med - 1.0)


def query_decay(method: str, harness_class: str | None, verifier_family: str = "",
                exclude: frozenset[str] = frozenset()) -> float:
    """The decay an estimate for ``method`` runs with: the engines' where it runs in one, else the papers'."""
    return decay_for(method, harness_class or "paper", verifier_family if method in OWN_MODULE_METHODS else "",
                     exclude)


def _alphas(rows: list[PriorRow], method: str, shape: Shape, taus: tuple[float, float, float],
            decay: float) -> tuple[float | None, float | None, float | None]:
    """Per-token alpha for each of (median, low, high) tau; None when the rows are measured taus (no alpha)."""
    if rows[0].shape == "measured":
        return None, None, None
    n, d = shape.num_draft_tokens, (1.0 if shape.is_tree else decay)
    med, low, high = (alpha_from_tau(t, n, d) for t in taus)
    return med, low, high


# A method an engine runs as another one draws that one's engine rows: the registry's ``engine_runs_as``
# (vLLM runs EAGLE-2 heads as method "eagle"; tools/methods.py says why).
ENGINE_RUNS_AS: dict[tuple[str, str], str] = {
    (engine, r.name): other for r in REGISTRY for engine, other in r.engine_runs_as}

# In serving engines a trained head (EAGLE-3, DFlash, ...) is one of many published for its verifier, by
# different trainers, and its acceptance follows the (verifier, head) pair: Qwen3-30B-A3B's SGLang heads measure
# tau 1.9-2.6 at N=3-4 (SpecForge#339, AngelSlim#163) where Llama-3.1-8B's measure 2.9-3.5 (SpecForge SpecBundle).
# So an engine prior for such a head rests on the verifier family's own engine rows when there are any. The papers'
# harnesses keep pooling across models: there each paper trained its heads one way on ShareGPT for every model.
ENGINE_FAMILY_METHODS = TRAINED_HEAD_METHODS


def _family_rows(rows: list[PriorRow], method: str, verifier_family: str, assumptions: list[str]) -> list[PriorRow]:
    """The rows of the verifier's own family when any were measured: any harness for a verifier-owned module
    (MTP), engine rows for another trained head (``ENGINE_FAMILY_METHODS``); '' family: all rows."""
    if not verifier_family:
        return rows
    own = [r for r in rows if row_family(r.verifier_model) == verifier_family
           and (method in OWN_MODULE_METHODS or r.harness_class == "engine")]
    if own:
        if method not in OWN_MODULE_METHODS:
            assumptions.append(f"{method} heads differ by verifier and trainer: the {verifier_family} family's own "
                               f"engine rows used")
        return own
    if method in OWN_MODULE_METHODS:
        families = sorted({row_family(r.verifier_model) or r.verifier_model.split(" (")[0] for r in rows})
        assumptions.append(f"no {method} acceptance measured on {verifier_family} models: other models' {method} "
                           f"rows used ({', '.join(families)}); each model's {method} module is its own, so measure "
                           "tau")
    return rows


@knowledge_cache("priors.rows_for")  # row decays read the catalog's families
def _rows_for(method: str, variant: str, exclude_sources: frozenset[str], workload: str, harness_class: str | None,
              engine: str | None, verifier_family: str = ""
              ) -> tuple[list[PriorRow], str, float, tuple[float, ...], tuple[str, ...]]:
    """(rows, workload used, tau - 1 multiplier, per-row tau multipliers, notes): the shape-independent half of a
    prior. The per-row multipliers move a borrowed variant's rows (``_variant_factors``).

    One estimate asks for the prior at every draft length and batch of its sweeps (over a hundred shapes per
    `recommend`); the rows they rest on depend only on these arguments, so they are chosen once.
    """
    assumptions: list[str] = []
    rows = _select_rows(method, variant, exclude_sources, assumptions)
    if workload not in COPY_HEAVY_WORKLOADS:
        # Copy-heavy rows (long accepted runs on copied spans) never stand in for another workload: they would
        # overstate every copy drafter there, and their own group is reported apart (issue 26).
        rows = [r for r in rows if r.workload not in COPY_HEAVY_WORKLOADS]
        if not rows:
            raise InputError(f"no published acceptance figure for method '{method}' outside copy-heavy work; "
                             "pass --alpha or --tau")
    rows = _family_rows(rows, method, verifier_family, assumptions)
    rows = _runtime_rows(rows, workload, harness_class, engine, exclude_sources, assumptions)
    if not rows:
        raise InputError(f"no acceptance figure for method '{method}' that applies outside the engine that measured "
                         f"it ({assumptions[-1]}); pass --alpha or --tau")
    rows, used_w, factor = _workload_rows(rows, method, workload, harness_class, exclude_sources, assumptions)
    moved = _variant_factors(rows, variant, exclude_sources, assumptions)
    return rows, used_w, factor, tuple(moved or (1.0,) * len(rows)), tuple(assumptions)


@dataclass(frozen=True, kw_only=True)
class PriorQuery:
    """The situation an acceptance prior is asked for, beside the method and the draft shape.

    ``variant`` picks a method's variant (REST, Medusa-2, Hydra++...); ``draft_ratio`` is the draft's size over the
    verifier's (draft_model); ``exclude_sources`` are left out (leave-one-source-out runs). ``harness_class``
    ("paper" or "engine") and ``engine`` choose whose measurements the prior rests on; ``verifier_family``
    (``family_key``) keeps a verifier-owned module's prior on its own family; ``runner`` is whose run the
    papers'-harness rows are levelled to (a user is a third party).
    """

    workload: str
    temperature: float = 0.0
    variant: str = ""
    draft_ratio: float | None = None
    exclude_sources: frozenset[str] = frozenset()
    harness_class: str | None = None
    engine: str | None = None
    verifier_family: str = ""
    runner: Runner = "third_party"


def _summary(method: str, q: PriorQuery, used_w: str, rows: list[PriorRow], tau_range: tuple[float, float, float],
             sources: list[str]) -> str:
    """One line: which rows the prior rests on, where they were measured, and the tau they give."""
    med, low, high = tau_range
    where = "engine-measured" if rows[0].harness_class == "engine" else "paper-harness"
    engines = sorted({r.engine for r in rows if r.engine})
    where += f" ({', '.join(engines)})" if engines else ""
    return (f"{method}{'/' + q.variant if q.variant else ''} on {used_w}, {where}: median over {len(sources)} "
            f"source(s) ({', '.join(sources)}; {len(rows)} row(s)) -> tau {med:.2f} (range {low:.2f}-{high:.2f})")


def _chosen_rows(method: str, q: PriorQuery) -> tuple[list[PriorRow], str, float, tuple[float, ...], list[str]]:
    """(rows, workload used, tau - 1 multiplier, per-row tau multipliers, notes) for ``method`` as the query's
    runtime runs it (an engine may run a method's heads as another method)."""
    runs_as = ENGINE_RUNS_AS.get((q.engine or "", method)) if q.harness_class == "engine" else None
    by_family = method in OWN_MODULE_METHODS or (q.harness_class == "engine" and method in ENGINE_FAMILY_METHODS)
    cached, used_w, factor, tau_factors, notes = _rows_for(runs_as or method, q.variant, q.exclude_sources,
                                                           q.workload, q.harness_class, q.engine,
                                                           q.verifier_family if by_family else "")
    rows, assumptions = list(cached), list(notes)  # copies: the cached ones are shared by every later call
    if runs_as:
        assumptions.insert(0, f"{q.engine} runs {method} heads as method {runs_as} (no dynamic tree): {runs_as}'s "
                              f"{q.engine} acceptance used")
    if q.harness_class == "engine" and rows[0].harness_class != "engine":
        factor *= engine_discount(rows[0].method, q.exclude_sources)[0]
    return rows, used_w, factor, tau_factors, assumptions


def acceptance_prior(method: str, shape: Shape, query: PriorQuery) -> AcceptancePrior:
    """The acceptance prior for a method and draft shape in the ``query``'s situation (workload, temperature...).

    Raises:
        InputError: no published acceptance exists for the method (pass --alpha or --tau).

    ``query.harness_class`` ("paper" or "engine") and ``query.engine`` choose whose measurements the prior rests
    on (``_runtime_rows``): an engine estimate prefers the user's engine, then any engine, and says so when it has
    to fall back to the papers' own harnesses (engines have measured less, ENGINES.md issue 18). Each source
    counts once: the prior is the median over sources of each source's median, so one paper's five
    benchmarks on one model do not outvote another measurement. ``query.verifier_family`` (``family_key``) keeps
    a verifier-owned module's prior (MTP) on the verifier's own family when that family was measured.
    ``query.runner``: whose run the papers'-harness rows are levelled to (``runner_factors``); a user is a third
    party.
    """
    # Cached per shape and situation until the catalog reloads: the calibration asks the same prior hundreds of
    # thousands of times while it refits the cycle-cost constants, which a prior never reads (~40% of the engine
    # report's time). The answer is shared: callers only read it.
    return _acceptance_prior(method, shape.num_draft_tokens, shape.tree_top_k, shape.tree_tokens, query)


@knowledge_cache("acceptance_prior")
def _acceptance_prior(method: str, num_draft_tokens: int, tree_top_k: int | None, tree_tokens: int | None,
                      query: PriorQuery) -> AcceptancePrior:
    shape = Shape(num_draft_tokens=num_draft_tokens, tree_top_k=tree_top_k, tree_tokens=tree_tokens)
    q = query
    if q.workload not in FALLBACK:
        raise InputError(f"unknown workload '{q.workload}': choose one of {', '.join(FALLBACK)}")
    rows, used_w, factor, tau_factors, assumptions = _chosen_rows(method, q)
    levels = (runner_factors(rows, q.runner, q.exclude_sources, assumptions)
              if q.harness_class != "engine" and rows[0].harness_class == "paper" else None)
    taus = row_taus(rows, RowTarget(method, q.temperature, shape, q.draft_ratio), factor, assumptions,
                    q.exclude_sources, levels, list(tau_factors))
    assumptions.extend(_shape_notes(rows, method, shape, q.draft_ratio, q.exclude_sources))
    med, low, high = _tau_range(rows, taus, used_w != q.workload, assumptions)
    # alpha is read with the decay the rows were re-expanded with (an engine estimate resting on the papers' rows
    # keeps the papers' decay), so the alpha an answer states gives back its tau at this shape
    alpha, a_lo, a_hi = _alphas(rows, method, shape, (med, low, high),
                                query_decay(rows[0].method, rows[0].harness_class, q.verifier_family,
                                            q.exclude_sources))
    sources = sorted({r.source_id for r in rows})
    return AcceptancePrior(
        method=method, workload=q.workload, temperature=q.temperature, tau=med, tau_low=low, tau_high=high,
        alpha=alpha, alpha_low=a_lo, alpha_high=a_hi, n_rows=len(rows), prior_ids=[r.prior_id for r in rows],
        published_rows=[r.published_row for r in rows], source_ids=sources, workload_used=used_w,
        assumptions=assumptions, summary=_summary(method, q, used_w, rows, (med, low, high), sources),
    )


# Row-level names stay importable from here (``tools/model/prior_rows.py``, ``runner_levelling.py`` hold them).
__all__ = [
    "RUNNER_MIN_SOURCES",
    "AcceptancePrior",
    "PriorQuery",
    "PriorRow",
    "Shape",
    "acceptance_prior",
    "decay_for",
    "draft_ratio_slope",
    "engine_discount",
    "family_key",
    "load_prior_rows",
    "measured_workload_ratios",
    "query_decay",
    "row_alpha",
    "row_decay",
    "row_family",
    "runner_ratio",
    "temperature_rho",
    "tree_alpha",
    "tree_factor",
]

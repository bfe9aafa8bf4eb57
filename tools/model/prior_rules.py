"""The rules that turn published rows into acceptance priors (shapes, position decay, tree factor, temperature pairs).

Each prior row is a published row that states an acceptance figure (tau or
alpha), copied with its source, provenance tag and fields, plus what we derive
from it: the draft shape it was measured at and the top-1 chain alpha it
implies (``alpha_chain``). Shapes not stated in a row come from the source's
published defaults, named in ``shape_note``.

``scripts/build_priors.py`` applies them to write ``tools/data/acceptance_priors.csv``, and writes the figures
every prior applies (position decay, tree factor, temperature ratios: ``rule_figures``) to
``tools/data/prior_rules.json``, so that answering reads three numbers instead of parsing and pairing the
published rows; ``tests/test_priors.py`` fails if either file and the rules drift apart.
"""

from __future__ import annotations

import re
import statistics
from functools import lru_cache

from pydantic import BaseModel, Field

from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.model.acceptance import (
    EAGLE1_TREE_DEPTH, chain_to_tree_factor, expected_tokens,
)
from specpick.tools.catalog.published import PublishedRow, config_int, load_published
from specpick.tools.methods import REGISTRY, methods_where
from specpick.tools.vocab import METHOD_FAMILY

# Tree shapes the sources used when a row does not say (depth, top-k, verify tokens incl. root).
TREE_DEFAULTS: dict[str, tuple[int, int, int, str]] = {r.name: r.paper_tree for r in REGISTRY if r.paper_tree}


def tree_for(method: str, config: str) -> tuple[int, int, int, str]:
    """(depth, top-k, verify tokens incl. root, note) of a tree row: the source's default (``TREE_DEFAULTS``), with
    the depth the row's config states where it states one (Spec-Bench runs EAGLE-2/EAGLE-3 at depth 5)."""
    depth, top_k, tokens, note = TREE_DEFAULTS[method]
    stated = config_int(config, "depth")
    if stated and stated != depth:
        return stated, top_k, tokens, f"depth {stated} (row config); top-{top_k}, {tokens} tokens: {note}"
    return depth, top_k, tokens, note


# Chain lengths the sources used when a row does not say (N, source): the registry's ``paper_chain``.
CHAIN_DEFAULTS: dict[str, tuple[int, str]] = {r.name: r.paper_chain for r in REGISTRY if r.paper_chain}


def eagle1_pairs(rows: tuple[PublishedRow, ...]) -> list[tuple[float, float, int]]:
    """(chain alpha, tree tau, tree depth) pairs from rows that report both for one EAGLE-1 head."""
    return [(r.alpha, r.tau, EAGLE1_TREE_DEPTH) for r in rows
            if r.method == "eagle" and r.alpha is not None and r.tau is not None and "chain" in r.config]


# Draft heads feed on their own predictions, so acceptance falls along a chain; separate draft models
# and model-free drafts are treated as independent per token (Leviathan et al.). In the papers' harnesses EAGLE-3
# is exempt: its training-time test keeps acceptance flat along the chain (EAGLE-3 paper, acceptance-by-position
# figure; no per-position numbers in our rows). Serving engines measured it falling (five sources' chain sweeps,
# ``engine_decay_figures`` below), so engine chains take the engines' figure. Trees use an effective per-depth
# acceptance without decay: re-ranking candidates at every level is what the tree buys. (The registry's
# ``chain_decay``: "always" for the heads that decay in every harness, "engines" for EAGLE-3.)
DECAY_METHODS = methods_where(chain_decay="always")
# The draft heads whose chains engines have measured falling with position get the engines' figure there; separate
# draft models and model-free drafting stay independent per token in engines too (a single-source sweep of n-gram
# or DFlash is no reason to give up that premise).
ENGINE_DECAY_METHODS = DECAY_METHODS | methods_where(chain_decay="engines")
# Methods whose draft module is the verifier's own (an MTP layer trained with that model): their acceptance is a
# property of the model, so another family's MTP rows are a weaker guide than the family's own (Qwen3.5's MTP
# rows measure tau 3.2 at N=3 in vLLM, DeepSeek-R1's 2.8 in TensorRT-LLM: rows ROCM-BLOG-DFLASH-MI355X-2026,
# TRTLLM-BLOG1-DSR1-B200), and its position decay is the family's own too.
OWN_MODULE_METHODS = methods_where(own_module=True)


def position_decay_samples() -> list[tuple[str, float]]:
    """Per-position decay estimates (row ids, delta) from the published rows.

    * EAGLE1-PAPER notes list n-alpha for n = 0..3 (acceptance of the n-th drafted token given the
      previous ones): delta = (alpha_3 / alpha_0)^(1/3).
    * Blockwise MTP rows measured with 2 and 3 heads in the same setup: alpha_0 = tau(N=1) - 1, and
      tau(N=2) = 1 + alpha_0 + alpha_0^2 delta gives delta.
    """
    rows = load_published()
    out: list[tuple[str, float]] = []
    for r in rows:
        m = re.search(r"= (\.\d+)/(\.\d+)/(\.\d+)/(\.\d+)", r.notes)
        if r.method == "eagle" and m:
            a0, a3 = float(m.group(1)), float(m.group(4))
            out.append((r.row_id, (a3 / a0) ** (1 / 3)))
    mtp = [r for r in rows if r.method == "mtp" and r.variant == "blockwise" and r.tau is not None]
    for one in mtp:
        if chain_length(one) != 1:
            continue
        for two in mtp:
            if chain_length(two) == 2 and (two.source_id, two.verifier_model, two.task) == (
                    one.source_id, one.verifier_model, one.task):
                a0 = one.tau - 1.0
                out.append((f"{one.row_id}+{two.row_id}", (two.tau - 1.0 - a0) / a0**2))
    return out


# Both derive only from load_published() (itself cached), and every estimate asks for them: cache once.
@lru_cache(maxsize=1)
def position_decay() -> float:
    """Median per-position decay of draft-head acceptance (see ``position_decay_samples``)."""
    values = sorted(v for _, v in position_decay_samples())
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


@knowledge_cache("prior_rules.tree_factor")  # read from the catalog's rows: reload() drops it (Knowledge)
def tree_factor() -> float:
    """F of tools/model/acceptance.py, derived from the published EAGLE-1 chain/tree pairs."""
    return chain_to_tree_factor(eagle1_pairs(load_published()))


def chain_length(row: PublishedRow, defaults: bool = True) -> int | None:
    """Draft length a row was measured at: its config, else (``defaults``) the source's published default."""
    cfg = row.config
    n = config_int(cfg, "gamma", r"\bK", "num_pred_tokens", r"\bn", "chain length", "num_speculative_tokens")
    if n is None:
        m = re.search(r"use (\d+) heads", cfg)
        if m:
            n = int(m.group(1)) - 1  # blockwise MTP: head 1 is the ordinary next token
    if n is None and "1 draft token" in cfg:
        n = 1
    if n is None and defaults:
        n = CHAIN_DEFAULTS.get(row.method or "", (None, ""))[0]
    return n




# --- position decay measured in serving engines ---------------------------------------------------------------------
# Engines publish acceptance at several chain lengths for one setup (InferenceX's golden acceptance-length curves at
# N = 1..8, SpecForge's SpecBundle at chain 3 and 7, vLLM and SGLang PR sweeps, TensorRT-LLM's MTP at N = 1..5):
# per-position acceptance, which the papers' rows give only for EAGLE-1 and blockwise MTP. Each sweep is fitted with
# tau(N) = expected_tokens(alpha, N, decay) (least squares on the grid below); a method's engine decay is the median
# over its sweeps once two sources have measured it. An MTP module belongs to its model (DeepSeek's one layer is
# reused for every position; Qwen3.5's is trained for several), so MTP takes its own family's decay where that family
# was swept.
DECAY_GRID_ALPHA = tuple(i / 200 for i in range(40, 199))  # 0.200-0.990
DECAY_GRID = tuple(0.70 + i / 200 for i in range(61))  # 0.700-1.000
MIN_DECAY_SOURCES = 2  # sources a method's engine decay needs before it replaces the papers' rule


class ChainSweep(BaseModel):
    """One setup measured at two or more chain lengths: (N, tau) points of one source, model, task and engine."""

    method: str
    family: str = Field(description="catalog family of the verifier ('' when not in the catalog)")
    source_id: str
    setup: str
    points: list[tuple[int, float]]


def fit_chain_decay(points: list[tuple[int, float]]) -> tuple[float, float]:
    """(alpha, decay) whose ``expected_tokens`` curve is closest (squared tau error) to the (N, tau) points."""
    best = (float("inf"), 0.0, 1.0)
    for a in DECAY_GRID_ALPHA:
        for d in DECAY_GRID:
            err = sum((expected_tokens(a, n, d) - t) ** 2 for n, t in points)
            if err < best[0] - 1e-12:
                best = (err, a, d)
    return best[1], best[2]


def fitted_sweeps(sweeps: list[ChainSweep]) -> list[dict[str, object]]:
    """Each sweep's fitted decay with what it belongs to (what prior_rules.json stores: a leave-one-source-out run
    takes the medians again without the left-out sources, ``engine_decay_figures``)."""
    return [{"method": s.method, "family": s.family, "source_id": s.source_id, "setup": s.setup,
             "decay": fit_chain_decay(s.points)[1]} for s in sweeps]


def engine_decay_figures(fitted: list[dict[str, object]], exclude: frozenset[str] = frozenset(),
                         ) -> dict[str, dict[str, list[float]]]:
    """{"method": {method: [median decay, sweeps, sources]}, "family": {"method/family": [...]}} over the fitted
    sweeps outside ``exclude``: methods measured by ``MIN_DECAY_SOURCES`` sources or more; families for
    verifier-owned modules (MTP) with any sweep of their own."""
    used = [f for f in fitted if f["source_id"] not in exclude and f["method"] in ENGINE_DECAY_METHODS]

    def figure(group: list[dict[str, object]]) -> list[float]:
        return [round(statistics.median(float(f["decay"]) for f in group), 4), len(group),
                len({f["source_id"] for f in group})]

    by_method: dict[str, list[float]] = {}
    for method in sorted({str(f["method"]) for f in used}):
        group = [f for f in used if f["method"] == method]
        if len({f["source_id"] for f in group}) >= MIN_DECAY_SOURCES:
            by_method[method] = figure(group)
    by_family: dict[str, list[float]] = {}
    for method, family in sorted({(str(f["method"]), str(f["family"])) for f in used if f["family"]}):
        if method in OWN_MODULE_METHODS:
            group = [f for f in used if (f["method"], f["family"]) == (method, family)]
            by_family[f"{method}/{family}"] = figure(group)
    return {"method": by_method, "family": by_family}


def decay_and_source(method: str, harness_class: str, family: str,
                     engine_figures: dict[str, dict[str, list[float]]], paper_decay: float) -> tuple[float, str]:
    """(decay, where it comes from) for a chain of ``method`` where it runs: in an engine, the verifier family's own
    sweeps (verifier-owned modules), else the method's engine sweeps, else the papers' rule; in the papers'
    harnesses, the papers' rule (``paper_decay`` for ``DECAY_METHODS``, 1.0 otherwise)."""
    if harness_class == "engine":
        key = f"{method}/{family}"
        if method in OWN_MODULE_METHODS and key in engine_figures["family"]:
            value, setups, sources = engine_figures["family"][key]
            return value, (f"median of the {family} family's own sweeps over chain length: {int(setups)} setup(s) "
                           f"from {int(sources)} source(s), tools/data/prior_rules.json")
        if method in engine_figures["method"]:
            value, setups, sources = engine_figures["method"][method]
            return value, (f"median of engine sweeps over chain length: {int(setups)} setup(s) from {int(sources)} "
                           "source(s), tools/data/prior_rules.json")
    if method in DECAY_METHODS:
        return paper_decay, "median of EAGLE1-PAPER per-position alphas and blockwise-MTP 2-vs-3-head rows"
    return 1.0, "independent per token"


def resolve_decay(method: str, harness_class: str, family: str, engine_figures: dict[str, dict[str, list[float]]],
                  paper_decay: float) -> float:
    """The decay of ``decay_and_source``."""
    return decay_and_source(method, harness_class, family, engine_figures, paper_decay)[0]


def temperature_pairs() -> list[dict[str, object]]:
    """Same source/model/method/task measured greedy and sampled: tau_sampled / tau_greedy per pair.

    Acceptance pairs use tau (alpha pairs are compared at the greedy row's chain length); pairs with only
    a speedup use the speedup ratio as a proxy (same method and hardware, so the cycle cost cancels).
    A ratio measured at T < 1 is scaled to T = 1 as ratio^(1/T).
    """
    rows = [r for r in load_published() if r.method and r.temperature is not None and not r.speedup_is_range]
    out = []
    for hot in rows:
        if not hot.temperature:
            continue
        for cold in rows:
            if cold.temperature != 0 or (cold.source_id, cold.verifier_model, cold.method_raw, cold.draft_or_head,
                                         cold.task) != (hot.source_id, hot.verifier_model, hot.method_raw,
                                                        hot.draft_or_head, hot.task):
                continue
            if cold.alpha is not None and hot.alpha is not None:
                n = chain_length(cold) or 5
                ratio, basis = expected_tokens(hot.alpha, n) / expected_tokens(cold.alpha, n), f"alpha at N={n}"
            elif cold.tau is not None and hot.tau is not None:
                ratio, basis = hot.tau / cold.tau, "tau"
            elif cold.speedup and hot.speedup:
                ratio, basis = hot.speedup / cold.speedup, "speedup (proxy)"
            else:
                continue
            t = min(hot.temperature, 1.0)
            out.append({"family": METHOD_FAMILY[hot.method], "greedy_row": cold.row_id, "sampled_row": hot.row_id,
                        "source_id": hot.source_id, "temperature": hot.temperature, "basis": basis,
                        "ratio_at_t1": ratio ** (1.0 / t)})
            break
    return out


def rule_figures() -> dict[str, object]:
    """The figures the priors apply, derived here; ``scripts/build_priors.py`` writes them to prior_rules.json.

    ``temperature_rho``: family -> [median sampled/greedy tau ratio at T=1, number of pairs], the median over all
    pairs for a family without pairs of its own (``tools/model/priors.py`` rule 3).
    """
    pairs = temperature_pairs()
    pooled = statistics.median(p["ratio_at_t1"] for p in pairs)
    rho: dict[str, list[float | int]] = {}
    for fam in sorted(set(METHOD_FAMILY.values())):
        ratios = [p["ratio_at_t1"] for p in pairs if p["family"] == fam]
        rho[fam] = [statistics.median(ratios), len(ratios)] if ratios else [pooled, 0]
    return {"position_decay": position_decay(), "tree_factor": tree_factor(), "temperature_rho": rho}

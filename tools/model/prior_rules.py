"""Build ``tools/data/acceptance_priors.csv`` from the published rows (and check it stays in sync).

Each prior row is a published row that states an acceptance figure (tau or
alpha), copied with its source, provenance tag and fields, plus what we derive
from it: the draft shape it was measured at and the top-1 chain alpha it
implies (``alpha_chain``). Shapes not stated in a row come from the source's
published defaults, named in ``shape_note``.

Run ``python -m specpick.tools.model.prior_rules`` to regenerate the CSV after the
published copy changes; ``tests/test_priors.py`` fails if the two drift apart.
"""

from __future__ import annotations

import csv
import io
import re
from importlib import resources
from pathlib import Path

from specpick.tools.model.acceptance import (
    EAGLE1_TREE_DEPTH, EAGLE1_TREE_TOKENS, alpha_from_tau, chain_alpha, chain_to_tree_factor, effective_branching,
    expected_tokens,
)
from specpick.tools.catalog.published import AGGREGATE, MIXED5, PublishedRow, config_int, load_published, row_from_cells

# Tree shapes the sources used when a row does not say (depth, top-k, verify tokens incl. root).
TREE_DEFAULTS: dict[str, tuple[int, int, int, str]] = {
    "eagle": (EAGLE1_TREE_DEPTH, 4, EAGLE1_TREE_TOKENS,
              "EAGLE-1 static tree mc_sim_7b_63 (github:SafeAILab/EAGLE@08dc06c eagle/model/choices.py)"),
    "eagle2": (6, 10, 60, "EAGLE-2 paper tree: depth 6, top-10, 60 tokens (row config of EAGLE2-FIG/HASS)"),
    "eagle3": (7, 10, 60, "EAGLE-3 repo defaults total_token=60, depth=7, top_k=10 (assumed for the paper)"),
    "medusa": (4, 10, 64, "Medusa tree mc_sim_7b_63: 63 nodes + root, depth 4, top-10 "
               "(github:FasterDecoding/Medusa@5e98053 medusa/model/medusa_choices.py)"),
}
# Chain lengths the sources used when a row does not say.
CHAIN_DEFAULTS: dict[str, tuple[int, str]] = {
    "draft_model": (5, "HF assisted generation num_assistant_tokens=5 at the time (ENGINES.md, transformers); "
                    "assumed for the EAGLE papers' SpS baseline"),
    "ngram": (10, "prompt lookup num_pred_tokens=10 (PLD-RAW config)"),
}
# Draft sizes named in rows (billions).
DRAFT_SIZES_B: dict[str, float] = {
    "vicuna-68m": 0.068, "t5-small": 0.077, "t5-base": 0.25, "t5-large": 0.8,
    "lamda (100m)": 0.1, "lamda (2b)": 2.0, "lamda (8b)": 8.0,
}

COLUMNS = (
    "prior_id", "published_row", "source_id", "source", "provenance", "method", "variant", "workload",
    "temperature", "verifier_model", "verifier_params_b", "draft_or_head", "draft_params_b", "task_or_benchmark",
    "config", "shape", "num_draft_tokens", "tree_depth", "tree_top_k", "tree_tokens", "shape_note", "tau", "alpha",
    "alpha_chain", "derivation", "harness_class", "notes",
)

# Acceptance measured in a serving engine rather than a paper's own harness. Engines have measured less than
# the papers for the same heads (ENGINES.md issue 18), so engine estimates prefer these rows when a method
# has any. Rows from the reference notes (not in the published copy) are listed here with their source.
ENGINE_SOURCES = frozenset({"DSV3-MTP", "VLLM-26191"})
EXTRA_ROWS: tuple[dict[str, str], ...] = (
    {"source_id": "VLLM-26191", "source": "vllm-project/vllm#26191 as summarised in shared/reference/ENGINES.md "
     "issue 18 ('EAGLE3 acceptance length on main fell below the previously measured 3.53 (Llama-3.1-8B, k=7, "
     "MT-Bench)')", "verifier_model": "Llama-3.1-8B-Instruct", "verifier_params_b": "8", "method": "EAGLE-3",
     "draft_or_head": "EAGLE-3 head (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B)", "hardware": "not stated",
     "task_or_benchmark": "MT-Bench", "temperature": "0", "batch_size": "1", "config": "chain length 7 (k=7)",
     "mean_accepted_tokens_tau": "3.53", "acceptance_rate_alpha": "", "speedup": "",
     "notes": "[secondary] vLLM (serving engine) measurement; the issue reports later builds measuring lower"},
)


def _draft_b(row: PublishedRow) -> float | None:
    text = f"{row.draft_or_head} {row.task}".lower()
    for key, size in DRAFT_SIZES_B.items():
        if key in text:
            return size
    return None


def eagle1_pairs(rows: tuple[PublishedRow, ...]) -> list[tuple[float, float, int]]:
    """(chain alpha, tree tau, tree depth) pairs from rows that report both for one EAGLE-1 head."""
    return [(r.alpha, r.tau, EAGLE1_TREE_DEPTH) for r in rows
            if r.method == "eagle" and r.alpha is not None and r.tau is not None and "chain" in r.config]


# Draft heads feed on their own predictions, so acceptance falls along a chain; separate draft models
# and model-free drafts are treated as independent per token (Leviathan et al.). EAGLE-3 is exempt: its
# training-time test keeps acceptance flat along the chain (EAGLE-3 paper, acceptance-by-position
# figure; no per-position numbers in our rows). Trees use an effective per-depth acceptance without decay:
# re-ranking candidates at every level is what the tree buys.
DECAY_METHODS = frozenset({"eagle", "eagle2", "medusa", "mtp"})


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
        if _chain_length(one) != 1:
            continue
        for two in mtp:
            if _chain_length(two) == 2 and (two.source_id, two.verifier_model, two.task) == (
                    one.source_id, one.verifier_model, one.task):
                a0 = one.tau - 1.0
                out.append((f"{one.row_id}+{two.row_id}", (two.tau - 1.0 - a0) / a0**2))
    return out


def position_decay() -> float:
    """Median per-position decay of draft-head acceptance (see ``position_decay_samples``)."""
    values = sorted(v for _, v in position_decay_samples())
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def tree_factor() -> float:
    """F of tools/model/acceptance.py, derived from the published EAGLE-1 chain/tree pairs."""
    return chain_to_tree_factor(eagle1_pairs(load_published()))


def _prior(row: PublishedRow, factor: float, decay: float) -> dict[str, object] | None:
    if row.method is None or row.workload in (None, AGGREGATE, MIXED5):
        return None
    if row.tau is None and row.alpha is None:
        return None
    if "bigram" in row.draft_or_head.lower():
        return None  # a bigram table is not a draft model (and drafts with c ~ 0)
    out: dict[str, object] = {
        "published_row": row.row_id, "source_id": row.source_id, "source": row.source,
        "provenance": row.provenance, "method": row.method, "variant": row.variant, "workload": row.workload,
        "temperature": 0.0 if row.temperature is None else row.temperature,
        "verifier_model": row.verifier_model, "verifier_params_b": row.verifier_params_b,
        "draft_or_head": row.draft_or_head, "draft_params_b": _draft_b(row) or "",
        "task_or_benchmark": row.task, "config": row.config, "tau": row.tau if row.tau is not None else "",
        "alpha": row.alpha if row.alpha is not None else "", "notes": row.notes,
    }
    notes = []
    if row.temperature is None:
        notes.append("temperature not stated: treated as greedy")
    if row.acceptance_is_range:
        notes.append("acceptance cell is a range: midpoint used")
    method = row.method
    if method in ("lookahead", "suffix"):
        out.update(shape="measured", shape_note="tau used as measured at the source's configuration",
                   alpha_chain="", derivation="tau as published")
    elif method in TREE_DEFAULTS and "chain" not in row.config and "no tree" not in row.config:
        depth, top_k, tokens, note = TREE_DEFAULTS[method]
        a_tree = alpha_from_tau(row.tau, depth)
        k_eff = effective_branching(depth, top_k, tokens)
        out.update(shape="tree", tree_depth=depth, tree_top_k=top_k, tree_tokens=tokens, shape_note=note,
                   alpha_chain=round(chain_alpha(a_tree, k_eff, factor), 4),
                   derivation=f"a_tree=alpha_from_tau({row.tau}, depth {depth})={a_tree:.4f}; "
                   f"alpha_chain=1-(1-a_tree)*F^share(k_eff={k_eff:.2f}), F={factor:.3f}")
    else:
        n = _chain_length(row)
        if n is None and row.alpha is None:
            return None
        note = "row config" if _chain_length(row, defaults=False) else CHAIN_DEFAULTS.get(method, ("", ""))[1]
        if n is None:
            note = "chain length not stated; alpha is per token so it does not depend on it"
        d = decay if method in DECAY_METHODS else 1.0
        if row.alpha is not None:
            alpha, how = row.alpha, "alpha as published (first drafted token)"
        else:
            alpha = alpha_from_tau(row.tau, n, d)
            how = f"alpha_from_tau({row.tau}, N={n}" + (f", position decay {d:.3f})" if d < 1 else ")")
        out.update(shape="chain", num_draft_tokens=n if n is not None else "", shape_note=note,
                   alpha_chain=round(alpha, 4), derivation=how)
    out["notes"] = "; ".join([*notes, row.notes]) if notes else row.notes
    return out


def _chain_length(row: PublishedRow, defaults: bool = True) -> int | None:
    cfg = row.config
    n = config_int(cfg, "gamma", r"\bK", "num_pred_tokens", r"\bn", "chain length")
    if n is None:
        m = re.search(r"use (\d+) heads", cfg)
        if m:
            n = int(m.group(1)) - 1  # blockwise MTP: head 1 is the ordinary next token
    if n is None and "1 draft token" in cfg:
        n = 1
    if n is None and defaults:
        n = CHAIN_DEFAULTS.get(row.method or "", (None, ""))[0]
    return n


FAMILY: dict[str, str] = {
    "draft_model": "draft", "eagle": "head", "eagle2": "head", "eagle3": "head", "medusa": "head", "mtp": "head",
    "ngram": "model_free", "suffix": "model_free", "lookahead": "model_free",
}


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
                n = _chain_length(cold) or 5
                ratio, basis = expected_tokens(hot.alpha, n) / expected_tokens(cold.alpha, n), f"alpha at N={n}"
            elif cold.tau is not None and hot.tau is not None:
                ratio, basis = hot.tau / cold.tau, "tau"
            elif cold.speedup and hot.speedup:
                ratio, basis = hot.speedup / cold.speedup, "speedup (proxy)"
            else:
                continue
            t = min(hot.temperature, 1.0)
            out.append({"family": FAMILY[hot.method], "greedy_row": cold.row_id, "sampled_row": hot.row_id,
                        "source_id": hot.source_id, "temperature": hot.temperature, "basis": basis,
                        "ratio_at_t1": ratio ** (1.0 / t)})
            break
    return out


def extra_rows() -> tuple[PublishedRow, ...]:
    return tuple(row_from_cells(i, r, prefix="E") for i, r in enumerate(EXTRA_ROWS, start=1))


def build_rows() -> list[dict[str, object]]:
    factor, decay = tree_factor(), position_decay()
    out = []
    for row in (*load_published(), *extra_rows()):
        prior = _prior(row, factor, decay)
        if prior is not None:
            prior["prior_id"] = f"A{len(out) + 1:03d}"
            prior["harness_class"] = "engine" if row.source_id in ENGINE_SOURCES else "paper"
            out.append(prior)
    return out


def render_csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: r.get(k, "") for k in COLUMNS})
    return buf.getvalue()


def csv_path() -> Path:
    return Path(str(resources.files("specpick.tools").joinpath("data", "acceptance_priors.csv")))


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    csv_path().write_text(render_csv(build_rows()), encoding="utf-8")
    print(f"wrote {csv_path()}")

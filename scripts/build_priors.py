"""Build ``tools/data/acceptance_priors.csv`` from the published rows (``tests/test_priors.py`` checks it is in sync).

Each prior row is a published row that states an acceptance figure (tau or alpha), copied with its source,
provenance tag and fields, plus what the rules of ``specpick.tools.model.prior_rules`` derive from it: the draft
shape it was measured at and the top-1 chain alpha it implies (``alpha_chain``). Shapes not stated in a row come
from the source's published defaults, named in ``shape_note``. A prior's id is its row's id behind ``A:``
(``A:EAGLE3-T1/3``, ``tools/catalog/row_ids.py``), so adding a published row renumbers no prior.

It also writes ``tools/data/prior_rules.json``: the figures every prior applies (position decay, tree factor,
temperature ratios; ``prior_rules.rule_figures``), so that answering reads them instead of deriving them from the
published rows in every process.

Run ``python scripts/build_priors.py`` after changing the published copy or the rules.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from specpick.tools.catalog.published import (
    AGGREGATE, WORKLOAD_MIXES, PublishedRow, copied_from, load_published, read_2026_cells, row_from_cells,
)
from specpick.tools.catalog.row_ids import prior_id, source_ordinal_ids
from specpick.tools.calibration.engine_cases import draft_shape
from specpick.tools.calibration.engine_rows import EngineRow, load_engine_rows
from specpick.tools.model.acceptance import alpha_from_tau, chain_alpha, effective_branching
from specpick.tools.vocab import ENGINES, MEASURED_TAU_METHODS
from specpick.tools.model.prior_rules import (
    CHAIN_DEFAULTS, TREE_DEFAULTS, ChainSweep, chain_length, engine_decay_figures, fitted_sweeps, position_decay,
    resolve_decay, rule_figures, tree_factor, tree_for,
)
from specpick.tools.model.priors import row_family

# Draft sizes named in rows (billions).
DRAFT_SIZES_B: dict[str, float] = {
    "vicuna-68m": 0.068, "t5-small": 0.077, "t5-base": 0.25, "t5-large": 0.8,
    "lamda (100m)": 0.1, "lamda (2b)": 2.0, "lamda (8b)": 8.0,
}

COLUMNS = (
    "prior_id", "published_row", "source_id", "source", "provenance", "method", "variant", "workload",
    "temperature", "verifier_model", "verifier_params_b", "draft_or_head", "draft_params_b", "task_or_benchmark",
    "config", "shape", "num_draft_tokens", "tree_depth", "tree_top_k", "tree_tokens", "shape_note", "tau", "alpha",
    "alpha_chain", "derivation", "harness_class", "engine", "notes",
)

# Acceptance measured in a serving engine rather than a paper's own harness. Engines have measured less than
# the papers for the same heads (ENGINES.md issue 18), so engine estimates prefer these rows when a method
# has any. Rows from the reference notes (not in the published copy) are listed here with their source.
ENGINE_SOURCES = frozenset({"DSV3-MTP", "VLLM-26191",
                            # 2026 parallel drafters measured in vLLM / SGLang (published_2026.csv)
                            "VLLM-PR32206", "VLLM-ASCEND-PR7162", "MODELOPT-DFLASH", "HF-PEAGLE-120B",
                            "VLLM-PR18541"})
EXTRA_ROWS: tuple[dict[str, str], ...] = (
    {"source_id": "VLLM-26191", "source": "vllm-project/vllm#26191 as summarised in docs/references/ENGINES.md "
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


def prior_row(row: PublishedRow, factor: float, decay: float, harness_class: str = "paper",
              engine_decay: dict[str, dict[str, list[float]]] | None = None) -> dict[str, object] | None:
    """A prior from a published row that states tau or alpha; ``harness_class`` "engine" for the rows an engine
    measured (``ENGINE_SOURCES``): their alpha follows the engines' position decay, which they are re-expanded with."""
    if row.method is None or row.workload in (None, AGGREGATE, *WORKLOAD_MIXES):
        return None
    if row.tau is None and row.alpha is None:
        return None
    if "bigram" in row.draft_or_head.lower():
        return None  # a bigram table is not a draft model (and drafts with c ~ 0)
    if copied_from(row):
        return None  # one measurement, one prior row: the original's (catalog.published.SAME_MEASUREMENT)
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
        depth, top_k, tokens, note = tree_for(method, row.config)
        a_tree = alpha_from_tau(row.tau, depth)
        k_eff = effective_branching(depth, top_k, tokens)
        out.update(shape="tree", tree_depth=depth, tree_top_k=top_k, tree_tokens=tokens, shape_note=note,
                   alpha_chain=round(chain_alpha(a_tree, k_eff, factor), 4),
                   derivation=f"a_tree=alpha_from_tau({row.tau}, depth {depth})={a_tree:.4f}; "
                   f"alpha_chain=1-(1-a_tree)*F^share(k_eff={k_eff:.2f}), F={factor:.3f}")
    else:
        n = chain_length(row)
        if n is None and row.alpha is None:
            return None
        note = "row config" if chain_length(row, defaults=False) else CHAIN_DEFAULTS.get(method, ("", ""))[1]
        if n is None:
            note = "chain length not stated; alpha is per token so it does not depend on it"
        d = resolve_decay(method, harness_class, row_family(row.verifier_model),
                          engine_decay or {"method": {}, "family": {}}, decay)
        if row.alpha is not None:
            alpha, how = row.alpha, "alpha as published (first drafted token)"
        else:
            alpha = alpha_from_tau(row.tau, n, d)
            how = f"alpha_from_tau({row.tau}, N={n}" + (f", position decay {d:.3f})" if d < 1 else ")")
        out.update(shape="chain", num_draft_tokens=n if n is not None else "", shape_note=note,
                   alpha_chain=round(alpha, 4), derivation=how)
    out["notes"] = "; ".join([*notes, row.notes]) if notes else row.notes
    return out


def extra_rows() -> tuple[PublishedRow, ...]:
    """The reference-note rows and the 2026 parallel-drafter rows (``tools/data/published_2026.csv``), numbered
    as if appended to the published file: a source present in both continues its ordinals there, so the sets
    cannot produce the same id."""
    cells = [*EXTRA_ROWS, *read_2026_cells()]
    ids = source_ordinal_ids((r["source_id"] for r in cells), after=(r.source_id for r in load_published()))
    return tuple(row_from_cells(row_id, r) for row_id, r in zip(ids, cells, strict=True))


def engine_sweeps() -> list[ChainSweep]:
    """Engine setups measured at two or more stated chain lengths (same source, model, draft head, task, engine,
    hardware, load and temperature), each point a chain length and the tau measured at it."""
    groups: dict[tuple, list[tuple[int, float]]] = {}
    for row in load_engine_rows():
        if not row.prior_candidate or row.engine not in ENGINES or row.method is None or row.tau is None or row.acceptance_is_range:
            continue
        if row.method in MEASURED_TAU_METHODS:
            continue
        n, tree, assumed = draft_shape(row)
        if tree is not None or assumed or not n or row.tau > n + 1:
            continue  # a chain only where the row states it (an assumed shape is no point on a curve)
        # the head, with its numbers masked: a cell may name the chain length ("3 autoregressive MTP layers")
        head = re.sub(r"\d+", "#", " ".join(row.draft_or_head.lower().split()))
        key = (row.method, row.source_id, row.verifier_model, head, row.task, row.engine, row.hardware, row.batch,
               row.temperature)
        groups.setdefault(key, []).append((n, row.tau))
    return [ChainSweep(method=k[0], family=row_family(k[2]), source_id=k[1], setup=" | ".join(map(str, k[2:])),
                       points=sorted(set(pts)))
            for k, pts in groups.items() if len({n for n, _ in pts}) >= 2]


def all_rule_figures() -> dict[str, object]:
    """What prior_rules.json holds: the published rows' rule figures and the engine sweeps' position decay."""
    return {**rule_figures(), "engine_decay_sweeps": fitted_sweeps(engine_sweeps())}


def engine_prior_row(row: EngineRow, factor: float, decay: float,
                     engine_decay: dict[str, dict[str, list[float]]] | None = None) -> dict[str, object] | None:
    """A prior from an engine-measured row that states tau or alpha: the draft shape from its config cell
    (``draft_shape``, the calibration's own reading), alpha derived as for the published rows."""
    if row.engine not in ENGINES or row.method is None or row.workload in (None, AGGREGATE, *WORKLOAD_MIXES):
        return None
    if not row.prior_candidate:  # appended after the priors were built (engine_rows.NOT_A_PRIOR_TAG)
        return None
    if (row.tau is None and row.alpha is None) or row.acceptance_is_range:
        return None
    n, tree, shape_notes = draft_shape(row)
    out: dict[str, object] = {
        "published_row": row.row_id, "source_id": row.source_id, "source": row.source,
        "provenance": row.provenance, "method": row.method, "variant": row.variant, "workload": row.workload,
        "temperature": 0.0 if row.temperature is None else row.temperature,
        "verifier_model": row.verifier_model, "verifier_params_b": row.verifier_params_b,
        "draft_or_head": row.draft_or_head, "draft_params_b": "", "task_or_benchmark": row.task,
        "config": row.config, "tau": row.tau if row.tau is not None else "",
        "alpha": row.alpha if row.alpha is not None else "", "notes": row.notes,
        "harness_class": "engine", "engine": row.engine,
    }
    note = "; ".join(shape_notes) or "engine config cell"
    if row.method in MEASURED_TAU_METHODS:
        out.update(shape="measured", shape_note="tau used as measured at the source's configuration",
                   alpha_chain="", derivation="tau as published")
    elif tree is not None:
        if row.tau is None:
            return None
        a_tree = alpha_from_tau(row.tau, tree.depth)
        k_eff = effective_branching(tree.depth, tree.top_k, tree.num_verify_tokens)
        out.update(shape="tree", tree_depth=tree.depth, tree_top_k=tree.top_k, tree_tokens=tree.num_verify_tokens,
                   shape_note=note, alpha_chain=round(chain_alpha(a_tree, k_eff, factor), 4),
                   derivation=f"a_tree=alpha_from_tau({row.tau}, depth {tree.depth})={a_tree:.4f}; "
                   f"alpha_chain=1-(1-a_tree)*F^share(k_eff={k_eff:.2f}), F={factor:.3f}")
    else:
        d = resolve_decay(row.method, "engine", row_family(row.verifier_model),
                          engine_decay or {"method": {}, "family": {}}, decay)
        if row.alpha is not None:
            alpha, how = row.alpha, "alpha as published"
        else:
            if row.tau > n + 1:
                return None  # impossible for the stated chain: the config cell is not the shape it was measured at
            alpha = alpha_from_tau(row.tau, n, d)
            how = f"alpha_from_tau({row.tau}, N={n}" + (f", position decay {d:.3f})" if d < 1 else ")")
        out.update(shape="chain", num_draft_tokens=n, shape_note=note, alpha_chain=round(alpha, 4), derivation=how)
    return out


def build_rows() -> list[dict[str, object]]:
    """Prior rows: the published and reference-note rows (paper harnesses unless listed in ``ENGINE_SOURCES``),
    then every engine-measured row that states its acceptance (harness class "engine", with its engine)."""
    factor, decay = tree_factor(), position_decay()
    engine_decay = engine_decay_figures(fitted_sweeps(engine_sweeps()))
    out = []
    for row in (*load_published(), *extra_rows()):
        harness_class = "engine" if row.source_id in ENGINE_SOURCES else "paper"
        prior = prior_row(row, factor, decay, harness_class, engine_decay)
        if prior is not None:
            prior["prior_id"] = prior_id(row.row_id)
            prior["harness_class"] = harness_class
            out.append(prior)
    for row in load_engine_rows():
        prior = engine_prior_row(row, factor, decay, engine_decay)
        if prior is not None:
            prior["prior_id"] = prior_id(row.row_id)
            out.append(prior)
    return out


def render_csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: r.get(k, "") for k in COLUMNS})
    return buf.getvalue()


def render_rules(figures: dict[str, object]) -> str:
    # json writes each float's shortest repr, which reads back as the same float: answers do not move by a bit.
    return json.dumps(figures, indent=1, sort_keys=True) + "\n"


def csv_path() -> Path:
    """The CSV in the source tree (never the installed package: a build must not write into site-packages)."""
    return Path(__file__).resolve().parent.parent / "tools" / "data" / "acceptance_priors.csv"


def rules_path() -> Path:
    """The rule figures in the source tree, beside the CSV."""
    return csv_path().with_name("prior_rules.json")


if __name__ == "__main__":  # maintenance entry point: python scripts/build_priors.py
    csv_path().write_text(render_csv(build_rows()), encoding="utf-8")
    rules_path().write_text(render_rules(all_rule_figures()), encoding="utf-8")
    print(f"wrote {csv_path()} and {rules_path()}")

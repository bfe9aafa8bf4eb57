"""Draft length and tree shape: one rule for `speedup` and `recommend`.

    N     = ``choose_draft_length`` over the model's N sweep at the deployment's batch (shortest N within
            ``BEST_N_TOLERANCE`` of the best), unless the user fixed it;
    tree  = the papers' static trees on paper harnesses (and TensorRT-LLM Medusa); on SGLang/TensorRT-LLM
            EAGLE, top-4 only at batch <= 4 and alpha > 0.8 (seed rule: wider trees help only at alpha > 0.8;
            EAGLE-2, a dynamic-tree method, is weighed at any prior alpha: ``tree_is_its_gain``) and only
            while within ``TREE_TOLERANCE`` of the chain; a chain otherwise (vLLM drafts chains).

Both verbs call ``tuned_estimate``; the planner's extra seed rules are separate, named adjustments on top.
"""

from __future__ import annotations

from dataclasses import replace

from specpick.tools.model.constants import get_overhead
from specpick.tools.model.draftlength import BEST_N_TOLERANCE
from specpick.tools.model.estimate import (
    TREE_METHODS_WITH_HEADS, EstimateRequest, SpeedupResult, TreeShape, estimate_for_specs,
)
from specpick.tools.model.prior_rules import TREE_DEFAULTS
from specpick.tools.methods import method_record
from specpick.tools.vocab import EAGLE_METHODS

# Starting length before the sweep picks N (the sweep covers 1..max whatever the start).
START_N = 3
# Assumption: a wide tree within 6% of the best chain is kept (the seed's rule), well inside the model's own error
# (median 15.7% on engine rows with measured acceptance, `specpick calibrate --engines`).
TREE_TOLERANCE = 0.06
# Seed rule: wider trees help only at alpha > 0.8 and low concurrency; 16 verify tokens above alpha 0.9.
WIDE_TREE_ALPHA = 0.8
WIDE_TREE_MAX_BATCH = 4
WIDE_TREE_TOP_K = 4
TREE_ENGINES = ("sglang", "trtllm")
# A method whose published gain is its tree (the registry's ``tree_is_its_gain``: EAGLE-2 is its context-aware
# dynamic tree, arXiv 2406.16858): on an engine that runs trees its tree is weighed against the chain whatever alpha
# the *prior* gives (the seed's alpha gate is for widening chain drafters); a measured alpha still goes through the
# gate (seed: wider trees help only at alpha > 0.8).


def wide_tree_gate(method: str, batch: int, alpha: float, *, from_prior: bool) -> bool:
    """Whether a wider tree is weighed against the chain for an EAGLE head on a tree engine: batch <= 4 and alpha > 0.8
    (seed rule), or a method whose gain is its tree (``tree_is_its_gain``) with an alpha from a prior."""
    return batch <= WIDE_TREE_MAX_BATCH and (alpha > WIDE_TREE_ALPHA
                                             or (method_record(method).tree_is_its_gain and from_prior))


def default_tree(method: str, harness: str) -> tuple[TreeShape | None, str]:
    """The static tree a harness runs by default (papers' trees, TensorRT-LLM Medusa), else a chain."""
    if method not in TREE_METHODS_WITH_HEADS:
        return None, ""
    # TensorRT-LLM runs Medusa's static tree (every cycle verifies one: ``fixed_tree``)
    if harness in ("paper", "transformers") or (harness == "trtllm" and method_record(method).fixed_tree):
        d, k, tokens, note = TREE_DEFAULTS[method]
        return TreeShape(depth=d, top_k=k, num_verify_tokens=tokens), f"tree shape: {note}"
    return None, f"{harness} drafts a chain (top-1 per step) unless the tree rule widens it"


def tuned_estimate(req: EstimateRequest, *, num_draft_tokens: int | None = None,
                   tree: TreeShape | None = None) -> SpeedupResult:
    """The estimate at the rule's N and tree shape (or the user's, where given), with the rule stated.

    Args:
        req: the deployment; its ``num_draft_tokens``/``tree`` are ignored in favour of the arguments.
        num_draft_tokens: a user-fixed N (tree: depth); None lets the sweep choose.
        tree: a user-fixed tree; None applies ``default_tree`` and the wide-tree rule.
    """
    notes: list[str] = []
    shape = tree
    if shape is None:
        shape, note = default_tree(req.method, req.harness)
        if note:
            notes.append(note)
    start = num_draft_tokens or (shape.depth if shape else START_N)
    base = replace(req, num_draft_tokens=start, tree=shape.model_copy(update={"depth": start}) if shape else None)
    result = estimate_for_specs(base)
    n = start
    # A stated tau is a figure at one N: the sweep may move N only when that N is known (tau_at_draft_tokens).
    if num_draft_tokens is None and result.draft_sweep and (req.tau is None or req.tau_at_draft_tokens is not None):
        n = result.best_num_draft_tokens
        notes.append(f"draft length: {result.draft_length_rule}")
        if n != start:
            base = replace(base, num_draft_tokens=n, tree=base.tree.model_copy(update={"depth": n}) if base.tree
                           else None)
            result = estimate_for_specs(base)
    # SGLang's overlap scheduling (spec v2) runs top-k 1 only: a user who runs it has no wider tree to switch to.
    may_widen = tree is None and req.method in EAGLE_METHODS and req.harness in TREE_ENGINES and base.tree is None
    if may_widen and req.spec_overlap and get_overhead(req.harness).overlap_chains_only:
        notes.append(f"chain drafting (top-1): {req.harness}'s overlap scheduling runs chains only")
    elif may_widen:
        alpha = result.alpha or 0.0
        if wide_tree_gate(req.method, req.batch, alpha, from_prior=req.alpha is None and req.tau is None):
            wide = TreeShape(depth=n, top_k=WIDE_TREE_TOP_K, num_verify_tokens=16 if alpha > 0.9 else 8)
            wide_result = estimate_for_specs(replace(base, tree=wide))
            if num_draft_tokens is None and wide_result.draft_sweep and wide_result.best_num_draft_tokens != n:
                # The wider tree accepts more per depth: the same N rule, applied to its own depth sweep.
                n = wide_result.best_num_draft_tokens
                wide = wide.model_copy(update={"depth": n})
                wide_result = estimate_for_specs(replace(base, num_draft_tokens=n, tree=wide))
                notes.append(f"tree depth: {wide_result.draft_length_rule}")
            if wide_result.speedup >= result.speedup * (1 - TREE_TOLERANCE):
                why = (f"alpha {alpha:.3f} > {WIDE_TREE_ALPHA} at batch {req.batch} <= {WIDE_TREE_MAX_BATCH} (seed: "
                       "wider trees help only at alpha > 0.8)" if alpha > WIDE_TREE_ALPHA else
                       f"{req.method} is a dynamic-tree method, so its tree is tried at any prior alpha "
                       f"(here {alpha:.3f})")
                notes.append(f"tree top-{WIDE_TREE_TOP_K} with {wide.num_verify_tokens} verify tokens: {why}, within "
                             f"{TREE_TOLERANCE:.0%} of the chain")
                result = wide_result
            else:
                notes.append("a chain beats a wider tree here (verify cost of the extra tree tokens)")
        else:
            notes.append("chain drafting (top-1): " + (f"batch {req.batch} > {WIDE_TREE_MAX_BATCH} makes extra tree "
                                                       "tokens costly" if req.batch > WIDE_TREE_MAX_BATCH else
                                                       f"alpha {alpha:.3f} <= {WIDE_TREE_ALPHA}"))
    result.assumptions = [*result.assumptions, *notes]
    return result


__all__ = [
    "BEST_N_TOLERANCE", "START_N", "TREE_TOLERANCE", "default_tree", "tuned_estimate",
    "wide_tree_gate",
]

"""Planner step 3: draft length N and tree shape for the chosen strategy.

Seed tuning rules, checked against the speedup model's sweep: start at N=5;
alpha > 0.9 -> 7; alpha < 0.6 -> 3; high temperature -> 2-3; structured output
and code -> 7+; wider trees only at alpha > 0.8. When the model's best N beats
the rule's N by more than 5%, the model's N is used and the rationale says so.
"""

from __future__ import annotations

from specpick.skill.planner.candidates import PARALLEL_START_LENGTH, Candidate, estimate
from specpick.skill.planner.context import MODEL_BASED_MEASURED
from specpick.skill.planner.context import PlanContext
from specpick.skill.schema import TreeParams
from specpick.tools.vocab import COPY_METHODS, EAGLE_METHODS, MODEL_BASED_METHODS, PARALLEL_DRAFT_METHODS

# vLLM docs suggest 16-32 for suffix decoding, where num_speculative_tokens is a cap.
SUFFIX_MAX_TOKENS = 16
SWEEP_MARGIN = 1.05
# From here on draft length and tree width are kept small (skill/planner/flags.py HIGH_CONCURRENCY).
HIGH_LOAD = 16
TREE_TOLERANCE = 0.06
TREE_METHODS_ON_ENGINE = {"sglang": EAGLE_METHODS, "trtllm": EAGLE_METHODS}


def rule_draft_length(ctx: PlanContext, strategy: str, alpha: float | None) -> tuple[int, str]:
    """N from the seed's tuning rules, with the reason."""
    n, why = 5, "start at N=5 (seed tuning rule)"
    if alpha is not None and alpha > 0.9:
        n, why = 7, f"alpha {alpha:.2f} > 0.9: N=7 (seed tuning rule)"
    elif alpha is not None and alpha < 0.6:
        n, why = 3, f"alpha {alpha:.2f} < 0.6: N=3 (seed tuning rule)"
    # The seed's "structured/code: acceptance is high, push N to 7+" holds when acceptance is in fact not low;
    # copy-based drafts (n-gram, suffix) copy matched spans whole, so long drafts pay for them regardless
    # (prompt lookup's own setting is 10 tokens: published-dev.csv PLD-RAW num_pred_tokens=10).
    premise = alpha is None or alpha >= 0.6 or strategy in COPY_METHODS
    if ctx.inp.workload in ("structured", "code") and ctx.temperature <= 0.7 and n < 7 and premise:
        n, why = 7, f"{ctx.inp.workload} output accepts well: N=7 (seed rule: push N to 7+)"
    if ctx.temperature > 0.7 and n > 3:
        n, why = 3, f"T={ctx.temperature:g}: keep N at 3 (seed rule for high temperature)"
    if ctx.inp.concurrency >= HIGH_LOAD and n > 3:
        n, why = 3, (f"concurrency {ctx.inp.concurrency}: N=3, since rejected draft tokens cost real verifier "
                     "compute under load (vllm#6494, #21278; seed: gains diminish as batch grows)")
    if strategy == "mtp" and n > 3:
        # One MTP layer reused k times loses acceptance with depth (vLLM warning for k>1).
        n, why = 3, "MTP: N=3 (one MTP layer is reused for each extra position; vLLM warns acceptance drops)"
    return n, why


def choose_parameters(ctx: PlanContext, c: Candidate) -> Candidate:
    """Set ``num_draft_tokens`` and ``tree`` on the chosen candidate and re-estimate."""
    if c.strategy == "lookahead":
        c.notes.append("lookahead window W=4, n-gram N=3, verification set G=4 (TensorRT-LLM defaults)")
        return c
    if c.strategy == "suffix":
        c.num_draft_tokens = SUFFIX_MAX_TOKENS
        c.estimate = estimate(ctx, c, num_draft_tokens=SUFFIX_MAX_TOKENS)
        c.notes.append(f"num_speculative_tokens={SUFFIX_MAX_TOKENS} is a cap: suffix decoding sizes each draft by "
                       "match confidence (vLLM docs suggest 16-32)")
        return c
    if c.strategy in PARALLEL_DRAFT_METHODS:
        # One draft forward proposes all N tokens, so the seed's N rules (written for one forward per token)
        # do not apply: N is the speedup model's best at this concurrency, within the published length.
        start = PARALLEL_START_LENGTH[c.strategy]
        est = estimate(ctx, c, num_draft_tokens=start)
        n = est.best_num_draft_tokens or start
        if n != start:
            est = estimate(ctx, c, num_draft_tokens=n)
        c.num_draft_tokens, c.estimate = n, est
        c.notes.append(f"N={n}: a parallel drafter drafts all N tokens in one forward, so N is the speedup "
                       f"model's best at concurrency {ctx.inp.concurrency} (published drafters use up to {start}).")
        return c
    # A measured per-token alpha for this method beats the estimate's (tree-effective) alpha.
    measured = ctx.inp.alpha is not None and (ctx.measured_method == c.strategy or (
        ctx.measured_method == MODEL_BASED_MEASURED and c.strategy in MODEL_BASED_METHODS))
    alpha = ctx.inp.alpha if measured else c.estimate.alpha
    n, why = rule_draft_length(ctx, c.strategy, alpha)
    est = estimate(ctx, c, num_draft_tokens=n)
    best_n = getattr(est, "best_num_draft_tokens", None)
    # The sweep may only shorten the draft: for EAGLE-3 and separate drafts the model holds acceptance
    # constant per position (a per-position decay is applied to EAGLE-1/2, Medusa and MTP chains only),
    # while measured per-position rates fall with depth (ENGINES.md), so it overrates long drafts.
    if best_n and best_n < n:
        alt = estimate(ctx, c, num_draft_tokens=best_n)
        if alt.speedup > est.speedup * SWEEP_MARGIN:
            why = (f"N={best_n}: the speedup model's sweep gives {alt.speedup:.2f}x vs {est.speedup:.2f}x at the "
                   f"rule's N={n}")
            n, est = best_n, alt
    c.num_draft_tokens, c.estimate = n, est
    c.notes.append(why + ".")
    if c.strategy in TREE_METHODS_ON_ENGINE.get(c.engine, set()):
        wide = ctx.inp.concurrency <= 4 and alpha is not None and alpha > 0.8
        if ctx.inp.concurrency >= HIGH_LOAD:
            n = min(n, 3)
        tree = (TreeParams(depth=n, top_k=4, num_verify_tokens=16 if alpha and alpha > 0.9 else 8) if wide
                else TreeParams(depth=n, top_k=1, num_verify_tokens=n + 1))
        tree_est = estimate(ctx, c, num_draft_tokens=n, tree=tree)
        # Within the model's own error (about 6%, `specpick calibrate`), keep the seed's wide tree.
        if wide and tree_est.speedup < est.speedup * (1 - TREE_TOLERANCE):
            tree, tree_est = TreeParams(depth=n, top_k=1, num_verify_tokens=n + 1), est
            c.notes.append("a chain beats a wider tree here (verify cost of the extra tree tokens).")
        elif wide:
            c.notes.append(f"tree top-k=4 with {tree.num_verify_tokens} verify tokens: alpha > 0.8 and "
                           f"concurrency {ctx.inp.concurrency} <= 4 (seed: wider trees help only at alpha > 0.8).")
        else:
            c.notes.append("chain drafting (top-k=1): " + ("concurrency above 4 makes extra tree tokens costly"
                                                            if ctx.inp.concurrency > 4 else "alpha <= 0.8") + ".")
        c.tree, c.estimate = tree, tree_est
    return c

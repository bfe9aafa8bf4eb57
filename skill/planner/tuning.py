"""Planner step 3: draft length N and tree shape for the chosen strategy.

One rule first, the same one `specpick speedup` applies (``tools/model/draftshape.tuned_estimate``): N is
the shortest draft within 2% of the best of the model's sweep at this deployment's batch and context, and a
wider tree only at alpha > 0.8 and batch <= 4. Then the seed's tuning rules, each a separate named adjustment
with its source, stated in the rationale when it moves N:

    measured alpha > 0.9 -> N=7; measured alpha < 0.6 -> N=3 (seed: after a measurement, not from a prior)
    structured output / code -> N=7 (seed: push N to 7+), not under load
    high temperature -> N<=3; concurrency >= 16 -> N<=3; MTP -> N<=3

"Under load" is the condition of the large-draft warning (concurrency >= 8 or a throughput target,
vllm#6494, #21278), so an answer never sets an N it would warn about.
"""

from __future__ import annotations

from dataclasses import replace

from specpick.skill.planner.candidates import PARALLEL_START_LENGTH, Candidate, estimate, is_measured
from specpick.skill.planner.context import MODEL_BASED_MEASURED
from specpick.skill.planner.context import PlanContext
from specpick.skill.schema import TreeParams
from specpick.tools.deploy.lengths import FIXED_DRAFT_LENGTH
from specpick.tools.engines.lookup import engine as engine_spec
from specpick.skill.planner.triggers import HIGH_CONCURRENCY, hot
from specpick.tools.model.draftshape import TREE_TOLERANCE
from specpick.tools.vocab import COPY_METHODS, EAGLE_METHODS, MODEL_BASED_METHODS, PARALLEL_DRAFT_METHODS
from specpick.tools.methods import METHOD_NAMES, method_record

# vLLM docs suggest 16-32 for suffix decoding, where num_speculative_tokens is a cap (one value for every verb).
SUFFIX_MAX_TOKENS = FIXED_DRAFT_LENGTH["suffix"]
# From here on draft length and tree width are kept small (the same cut as the load flag, triggers.py).
HIGH_LOAD = HIGH_CONCURRENCY
# Long drafts under load waste verifier compute on rejected tokens (vllm#6494: ngram k=8 485 -> 301 tok/s;
# vllm#21278): no adjustment lengthens N to LONG_DRAFT or more from this concurrency, or for a throughput target.
LOAD_CONCURRENCY = 8
LONG_DRAFT = 7
# A lengthening seed rule yields to the model when the model expects it to lose more than the 6% the wide-tree
# rule allows (tools/model/draftshape.TREE_TOLERANCE), well inside the model's own error.
SEED_LENGTHEN_TOLERANCE = TREE_TOLERANCE


def lengthening_yields(n: int, adjusted: int, speedup_at_n: float, speedup_adjusted: float) -> bool:
    """True when a seed rule that lengthens the draft (n -> adjusted) should yield to the model's sweep: the model
    expects a clear loss from it. Rules that shorten the draft (load, temperature, MTP) guard against risk and
    never yield."""
    return adjusted > n and speedup_adjusted < speedup_at_n * (1 - SEED_LENGTHEN_TOLERANCE)


def under_load(ctx: PlanContext, concurrency: int | None = None) -> bool:
    """Concurrency or latency target at which long drafts cost more than they return (vllm#6494, #21278)."""
    return (concurrency or ctx.concurrency) >= LOAD_CONCURRENCY or ctx.inp.latency == "throughput"


def measured_alpha(ctx: PlanContext, strategy: str) -> float | None:
    """The user's measured per-token alpha, if it belongs to this strategy (else None: a prior is no measurement)."""
    mine = ctx.measured_method == strategy or (ctx.measured_method == MODEL_BASED_MEASURED
                                               and strategy in MODEL_BASED_METHODS
                                               and strategy not in PARALLEL_DRAFT_METHODS)
    ev = ctx.dep.evidence
    return ev.alpha if ev is not None and ev.alpha is not None and mine else None


def _measured_horizon(ctx: PlanContext, c: Candidate) -> int | None:
    """The largest N the user measured this candidate at with per-N figures (None: no such measurement)."""
    ev = ctx.dep.evidence
    if ev is None or not (ev.per_position or ev.tau_at_n) or not is_measured(ctx, c):
        return None
    return ev.num_draft_tokens


def longest_seed_draft(strategy: str) -> int:
    """The longest N the seed rules give ``strategy``: 7 (push N to 7+), or the method's cap where measured speed
    peaks (MTP: 3, its one layer reused per position; the one home is the method registry, tools/methods.py)."""
    rec = method_record(strategy) if strategy in METHOD_NAMES else None
    if rec is not None and rec.sweep_len_is_cap and rec.max_sweep_draft_len is not None:
        return min(rec.max_sweep_draft_len, LONG_DRAFT)
    return LONG_DRAFT


def seed_adjustment(ctx: PlanContext, strategy: str, n: int, measured_alpha: float | None,
                    concurrency: int | None = None) -> tuple[int, str | None]:
    """(N, the named adjustment that set it, with its source) from the seed's tuning rules; None: N unchanged.

    ``concurrency`` defaults to the answer's; the per-batch schedule applies the same rules at each batch.
    """
    why = None
    conc = concurrency or ctx.concurrency
    loaded = under_load(ctx, conc)
    if measured_alpha is not None and measured_alpha > 0.9 and n < LONG_DRAFT and not loaded:
        n, why = LONG_DRAFT, f"adjustment: measured alpha {measured_alpha:.2f} > 0.9 -> N=7 (seed tuning rule)"
    elif measured_alpha is not None and measured_alpha < 0.6 and n > 3:
        n, why = 3, f"adjustment: measured alpha {measured_alpha:.2f} < 0.6 -> N=3 (seed tuning rule)"
    # "Structured/code accepts well, push N to 7+" holds when acceptance is in fact not low; copy-based drafts
    # (n-gram, suffix) copy matched spans whole, so long drafts pay for them regardless (prompt lookup's own
    # setting is 10 tokens: published-dev.csv PLD-RAW num_pred_tokens=10).
    premise = measured_alpha is None or measured_alpha >= 0.6 or strategy in COPY_METHODS
    if ctx.inp.workload in ("structured", "code") and not hot(ctx.temperature) and n < LONG_DRAFT and premise \
            and not loaded:
        n, why = LONG_DRAFT, f"adjustment: {ctx.inp.workload} output accepts well -> N=7 (seed rule: push N to 7+)"
    if hot(ctx.temperature) and n > 3:
        n, why = 3, f"adjustment: T={ctx.temperature:g} -> N=3 (seed rule for high temperature)"
    if conc >= HIGH_LOAD and n > 3:
        n, why = 3, (f"adjustment: concurrency {conc} -> N=3, rejected draft tokens cost real verifier "
                     "compute under load (vllm#6494, #21278; seed: gains diminish as batch grows)")
    longest = longest_seed_draft(strategy)
    if longest < LONG_DRAFT and n > longest:
        # One MTP layer reused k times loses acceptance with depth (vLLM warning for k>1). Say which rule pushed N
        # up first, so the answer does not read as MTP raising N itself.
        cap = (f"N={longest} for MTP (one MTP layer is reused for each extra position and its acceptance "
               "falls with depth; vLLM warns for k>1)")
        n, why = longest, (f"{why}, then capped at {cap}" if why else f"adjustment: MTP -> {cap}")
    return n, why


def choose_parameters(ctx: PlanContext, c: Candidate) -> Candidate:
    """The candidate with ``num_draft_tokens`` and ``tree`` set and re-estimated (a new value; ``c`` is unchanged)."""
    c = replace(c, notes=list(c.notes), flags=list(c.flags), rejected_drafts=list(c.rejected_drafts))
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
        # do not apply: N is the shared draft-length rule over the sweep, within the published length.
        est = estimate(ctx, c, tuned=True)
        c.num_draft_tokens, c.estimate = est.num_draft_tokens, est
        c.notes.append(f"N={est.num_draft_tokens}: a parallel drafter drafts all N tokens in one forward, so N is "
                       f"the draft-length rule's ({est.draft_length_rule}; published drafters use up to "
                       f"{PARALLEL_START_LENGTH[c.strategy]}).")
        return c
    est = estimate(ctx, c, tuned=True)
    n = est.num_draft_tokens
    if est.draft_length_rule:
        limit = next((a for a in est.assumptions if a.startswith("best at the sweep's limit")), None)
        c.notes.append(f"Draft length: {est.draft_length_rule}, the rule `specpick speedup` applies "
                       "(tools/model/estimate.py choose_draft_length)" + (
                           f"; not a proven best: {limit}." if limit else "."))
    adjusted, why = seed_adjustment(ctx, c.strategy, n, measured_alpha(ctx, c.strategy))
    cap = _measured_horizon(ctx, c)
    if why is not None and cap is not None and adjusted > max(n, cap):
        # Past the largest N measured, the measurement says nothing (a draft that accepted all N would have gone on
        # or not): the seed's push to N=7 is not applied, the user is told how to measure it.
        c.notes.append(f"{why} not applied: your measurement stops at N={cap}; measure N={adjusted} with "
                       f"`specpick tune --method {c.strategy} --draft-lengths {cap} {adjusted}` first.")
        why = None
    if why is not None and adjusted != n:
        tree = TreeParams(**est.tree.model_dump()) if est.tree is not None else None
        longer = estimate(ctx, c, num_draft_tokens=adjusted, tuned=True,
                          tree=tree.model_copy(update={"depth": adjusted}) if tree else None)
        if lengthening_yields(n, adjusted, est.speedup, longer.speedup):
            measured = measured_alpha(ctx, c.strategy) is not None
            c.notes.append(f"{why} not applied: the model{' (with your measured alpha)' if measured else ''} expects "
                           f"{longer.speedup:.2f}x at N={adjusted} against {est.speedup:.2f}x at N={n}"
                           + ("." if measured else f"; try N={adjusted} only after measuring tau at N={n}."))
        else:
            est = longer
            c.notes.append(f"{why}: {est.speedup:.2f}x at N={adjusted} by the model (rule's N={n}).")
            n = adjusted
    c.num_draft_tokens, c.estimate = n, est
    if c.strategy in engine_spec(c.engine).tree_methods:
        c.tree = (TreeParams(**est.tree.model_dump()) if est.tree is not None
                  else TreeParams(depth=n, top_k=1, num_verify_tokens=n + 1))
        shape = [a for a in est.assumptions if a.startswith(("tree top-", "a chain beats", "chain drafting"))]
        c.notes += [s[0].upper() + s[1:] + "." for s in shape[-1:]]
    return c

"""Section 4: what to try when the recommendation underperforms, with measurable triggers.

Thresholds come from the seed's tuning rules (alpha > 0.9: N 7; alpha < 0.6:
N 3), from the break-even concurrency the speedup model computes, and from
engine issues (ENGINES.md). Each step has a machine-readable ``Trigger`` so
``specpick measure --expect`` can apply it to real measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.skill.planner.triggers import WORTH_RUNNING_SPEEDUP
from specpick.skill.planner.tuning import LONG_DRAFT, longest_seed_draft
from specpick.skill.schema import Alternative, FallbackStep, Trigger
from specpick.tools.engines.lookup import engine as engine_spec, is_engine
from specpick.tools.vocab import COPY_METHODS


@dataclass(frozen=True)
class FallbackQuery:
    """What the fallback steps are built from: the chosen strategy and the answer's own figures.

    ``switched_off`` = (strategy, speedup, concurrency below which it pays) when speculation was turned off for
    load: the first step says when to turn it back on. ``tau_range`` is the acceptance range the answer states
    (section 2): the tau trigger is its low end, never a different cut. ``under_load``: no step lengthens the draft
    (the same guard as the answer's own tuning). ``train_plan``: the `specpick train-plan` command for a trained
    head, named where low acceptance survives the basics.
    """

    strategy: str
    num_draft_tokens: int | None
    tau_range: tuple[float, float]
    break_even: int | None
    concurrency: int
    engine: str
    alternatives: tuple[Alternative, ...] = ()
    chain: bool = True
    switched_off: tuple[str, float, int] | None = None
    under_load: bool = False
    train_plan: str | None = None


def build_fallback(q: FallbackQuery) -> list[FallbackStep]:
    """Ordered fallback steps for the chosen strategy."""
    steps: list[FallbackStep] = [] if q.switched_off is None else [_resume_step(*q.switched_off)]
    if q.strategy == "none":
        steps.append(FallbackStep(
            trigger=None,
            condition="the blocker above is removed (engine, parallelism, sampling or concurrency changes)",
            action="re-run `specpick recommend` with the new deployment; speculation may pay then",
        ))
        return steps
    steps += _length_steps(q)
    steps.append(_tau_step(q))
    if q.break_even is not None:
        steps.append(FallbackStep(
            trigger=Trigger(metric="concurrency", op=">=", value=float(q.break_even)),
            condition=f"serving at concurrency >= {q.break_even}",
            action=engine_spec(q.engine).under_load if is_engine(q.engine) else engine_spec("sglang").under_load,
            next_strategy="none",
        ))
    steps.append(_not_paying_step(q))
    return steps


def _resume_step(name: str, gain: float, below: int) -> FallbackStep:
    return FallbackStep(
        trigger=Trigger(metric="concurrency", op="<", value=float(below)),
        condition=f"concurrency drops below {below}",
        action=f"enable {name} for that traffic (a separate replica or a per-batch-size schedule): the model "
               f"expects a gain there ({gain:.2f}x at your current load is not enough)",
        next_strategy=name,  # type: ignore[arg-type]
    )


def _length_steps(q: FallbackQuery) -> list[FallbackStep]:
    """Draft-length steps from measured acceptance (chains of fixed length only)."""
    n, strategy = q.num_draft_tokens, q.strategy
    if not (q.chain and n):
        return []
    if strategy in COPY_METHODS:
        # Copy-based acceptance comes in bursts (a copied span accepts whole, free text almost nothing), so a low
        # average alpha is what it looks like when it pays; the seed's alpha rules are for model drafters. The
        # per-position rates say where extra positions stop paying (the measurement plan's definition).
        return [FallbackStep(
            trigger=None,
            condition=f"measured per-position acceptance at positions past ~3 of N={n} below 0.3 "
                      "(vLLM spec_decode_num_accepted_tokens_per_pos / drafts)",
            action=f"cut N to the last position above 0.3, or run `specpick tune --method {strategy} "
                   f"--draft-lengths 2 4 {n}`: it predicts every shorter N from the longest run; "
                   "a low average alpha alone is normal for copying (bursts), not a reason to shorten",
            next_strategy=strategy,
        )]
    out = []
    if n > 3:
        out.append(FallbackStep(
            trigger=Trigger(metric="alpha", op="<", value=0.6),
            condition="measured alpha < 0.6",
            action=f"drop the draft length from N={n} to N=3 (seed tuning rule): late "
                   "positions are mostly rejected and only add draft cost",
            next_strategy=strategy, next_num_draft_tokens=3,
        ))
    # Under load the answer's own tuning never lengthens N (skill/planner/tuning.py under_load): nor does this.
    # The same cap the answer's tuning applies to MTP (tuning.seed_adjustment), so the fallback never asks for
    # an N the tuning itself would refuse.
    longest = longest_seed_draft(strategy)
    if n < longest and not q.under_load:
        out.append(FallbackStep(
            trigger=Trigger(metric="alpha", op=">", value=0.9),
            condition="measured alpha > 0.9",
            action=f"raise the draft length from N={n} to N={longest} (seed tuning rule"
                   + (f", capped at {longest} for {strategy}" if longest < LONG_DRAFT else "") + ")",
            next_strategy=strategy, next_num_draft_tokens=longest,
        ))
    return out


def _tau_step(q: FallbackQuery) -> FallbackStep:
    tau_low, tau_high = q.tau_range
    return FallbackStep(
        trigger=Trigger(metric="tau", op="<", value=round(tau_low, 2)),
        condition=f"measured tau below {tau_low:.2f} (the low end of the stated acceptance range "
                  f"{tau_low:.2f}-{tau_high:.2f})",
        action="check the basics before tuning: identical greedy output with speculation off, draft/verifier "
               "chat template and tokenizer, draft temperature matching the verifier's, head trained for this "
               "exact verifier and dtype" + (f"; if they hold, `{q.train_plan}` says whether to fix the setup, "
                                             "fine-tune the head or train your own, with data and GPU-hours"
                                             if q.train_plan else ""),
    )


def _not_paying_step(q: FallbackQuery) -> FallbackStep:
    """Measured below the bar the answer itself calls worth running: switch to the next option that clears it, else
    off. One bar (triggers.WORTH_RUNNING_SPEEDUP) for the trigger and the alternative, so the step never switches to
    an option the answer would have turned off, nor away from one it would have kept."""
    bar = WORTH_RUNNING_SPEEDUP
    nxt = next((a for a in q.alternatives if a.speedup and a.speedup >= bar and a.strategy != q.strategy), None)
    return FallbackStep(
        trigger=Trigger(metric="speedup", op="<", value=bar),
        condition=f"measured speedup < {bar}x at your concurrency ({q.concurrency})",
        action=(f"switch to {nxt.strategy} (expected {nxt.speedup:.2f}x: {nxt.reason})" if nxt else
                "turn speculation off: it is not paying for its draft cost on this workload"),
        next_strategy=nxt.strategy if nxt else "none",
    )

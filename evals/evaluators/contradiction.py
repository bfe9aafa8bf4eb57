"""The ``contradiction`` grader: an answer that contradicts itself is wrong whatever the case expects.

It needs no expectation, so it judges every recommendation: the chosen method against the answer's own flags,
compatibility verdicts and fallback steps, and the numbers against each other. Each rule is a fact of speculative
decoding, not of this planner:

* a flag that says the chosen method does not work here (n-gram chosen while ``low_overlap_ngram`` is raised, MTP
  chosen while ``mtp_not_available`` is raised, the chosen draft or head itself flagged as another tokenizer or
  another verifier's head; a hard-FAIL deployment flag such as ``lora`` with speculation still on);
* a compatibility verdict "fail" on the chosen setup (runtime support, head match, VRAM fit, KV rollback);
* a fallback that switches to a method the answer's own flags rule out, or that gives up on speculation when
  acceptance or speed is *high* (a trigger on alpha/tau/speedup must fire below a value, Leviathan et al. 2023:
  speculation pays in acceptance);
* numbers that cannot hold together: speculation recommended at an estimate below 1x (slower than none), speedup
  above tau (a cycle emits tau tokens and costs at least one verifier
  step, Leviathan et al. 2023 eq. 3), tau above N + 1 on a chain (N drafted tokens plus the bonus token), a tau
  trigger below 1 or above N + 1, an alpha trigger outside (0, 1).

A user who forces a method (``inputs.method``) gets it with its warnings: flag rules then do not apply.
"""

from __future__ import annotations

from specpick.evals.evaluators.base import CheckResult, GradeContext, check_result
from specpick.skill.schema import Recommendation
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import COPY_METHODS, TREE_METHODS

NAME = "contradiction"
# Flags that rule a method out wherever they are raised at warn or fail (the flag's own definition says so).
METHOD_BLOCKERS: dict[str, frozenset[str]] = {r.name: frozenset(r.blocking_flags) for r in REGISTRY if r.blocking_flags}
# Flags about a specific draft or head repo: a contradiction only when that repo is the one chosen.
REPO_BLOCKERS = frozenset({"tokenizer_mismatch", "head_for_other_verifier", "transformers_padded_vocab"})
# Deployment flags that, at severity fail, say speculation breaks here: speculation must then be off.
HARD_STOPS = frozenset({"lora", "pipeline_parallel", "beam_search", "engine_breaks_with", "batch_saturation",
                        "exotic_kv_quant", "verifier_does_not_fit"})
FATAL_CHECKS = frozenset({"runtime_support", "head_match", "vram_fit", "kv_rollback"})
RISING_METRICS = frozenset({"alpha", "tau", "speedup", "throughput_ratio"})  # higher is better


def _blocked(rec: Recommendation, strategy: str, draft: str | None, forced: bool, *, hard: bool = True) -> list[str]:
    """The answer's own warn/fail flags that rule ``strategy`` (with ``draft``) out (``hard``: with HARD_STOPS)."""
    out = []
    for f in rec.flags:
        if f.severity == "info":
            continue
        if not forced and f.id in METHOD_BLOCKERS.get(strategy, ()) and f.severity in ("warn", "fail"):
            out.append(f"{f.id} ({f.severity})")
        elif f.id in REPO_BLOCKERS and f.severity == "fail" and draft and draft.lower() in f.message.lower():
            out.append(f"{f.id} (fail, about the chosen {draft})")
        elif hard and not forced and f.id in HARD_STOPS and f.severity == "fail" and strategy != "none":
            out.append(f"{f.id} (fail)")
    return out


def _numbers(rec: Recommendation, forced: bool) -> list[str]:
    s, bad = rec.expected_speedup, []
    if rec.strategy == "none":
        return bad
    # An estimate the answer itself marks outside the model's applicability domain is no claim that speculation is
    # slower where its own (widened) range still reaches a gain: the answer measures the publisher's setting first.
    unpriced = bool(s.outside_domain) and s.high >= 1.0
    if s.value < 1.0 and not forced and not unpriced:
        bad.append(f"recommends {rec.strategy} while its own estimate is {s.value:.2f}x, slower than no speculation")
    if s.value > s.tau + 1e-6:
        bad.append(f"speedup {s.value:.2f}x above tau {s.tau:.2f} (a cycle emits tau tokens for >= 1 verifier step)")
    n = rec.tree.depth if rec.tree is not None else rec.num_draft_tokens
    if n is not None and rec.strategy not in TREE_METHODS | {"suffix"} and s.tau > n + 1 + 1e-6:
        bad.append(f"tau {s.tau:.2f} above N + 1 = {n + 1}")
    return bad


def _fallback(rec: Recommendation, forced: bool) -> list[str]:
    bad = []
    n_max = (rec.tree.depth if rec.tree is not None else rec.num_draft_tokens) or 64
    for step in rec.fallback:
        t = step.trigger
        if t is not None:
            if t.metric == "alpha" and not 0.0 < t.value < 1.0:
                bad.append(f"alpha trigger at {t.value} outside (0, 1)")
            if t.metric == "tau" and not 1.0 <= t.value <= n_max + 1 and rec.strategy not in TREE_METHODS | {"suffix"}:
                bad.append(f"tau trigger at {t.value} outside [1, N + 1 = {n_max + 1}]")
            leaving = step.next_strategy is not None and step.next_strategy != rec.strategy
            if leaving and t.metric in RISING_METRICS and t.op in (">", ">="):
                bad.append(f"leaves {rec.strategy} for {step.next_strategy} when {t.metric} {t.op} {t.value} "
                           "(a good result)")
        nxt = step.next_strategy
        if nxt is not None and nxt != rec.strategy and nxt != "none":
            # deployment stops (load, LoRA, ...) are what a fallback's trigger changes; method blockers are not
            why = _blocked(rec, nxt, None, forced=False, hard=False)
            if why:
                bad.append(f"fallback to {nxt} though the answer flags {why}")
    return bad


def grade_contradiction(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The chosen method agrees with the answer's own flags, checks, fallback and numbers."""
    forced = rec.inputs.method is not None and rec.inputs.method == rec.strategy
    bad = [f"chose {rec.strategy} while flagging {b}" for b in _blocked(rec, rec.strategy, rec.draft_model, forced)]
    if rec.strategy != "none":
        bad += [f"chose {rec.strategy} with {c.name} = fail ({c.reason[:80]})" for c in rec.compatibility
                if c.name in FATAL_CHECKS and c.verdict == "fail"]
    bad += _numbers(rec, forced) + _fallback(rec, forced)
    if rec.strategy in COPY_METHODS and rec.draft_model:
        bad.append(f"{rec.strategy} drafts from the context but names a draft repo {rec.draft_model}")
    return check_result(NAME, not bad, "; ".join(bad) or "method, flags, checks, fallback and numbers agree")

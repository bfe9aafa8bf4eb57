"""The deterministic planner behind ``specpick recommend``.

    inputs -> context (resolve, contradictions) -> blockers (beam, PP, LoRA)
           -> candidates (feasible? estimate) -> choice -> N / tree tuning
           -> flags, checks, engine config, fallback, measurement -> Recommendation

Decision rules are the seed's (docs/DECISION-RULES.md), extended where the evidence goes
further: a published head for this exact verifier needs no training; past the
break-even concurrency speculation is turned off or scheduled by batch size;
n-gram/suffix drafting for input-grounded work; beam search, pipeline parallel
and LoRA rule speculation out; a draft that does not fit rules out a draft model.
"""

from __future__ import annotations

import math
from dataclasses import replace

from specpick.skill.planner.candidates import Candidate, estimate, evaluate_candidates
from specpick.tools.calibration.evidence import MeasuredSpeedup, measured_speedups, outside_note
from specpick.skill.planner.compat import breaks_with_flags, build_checks
from specpick.skill.planner.context import PlanContext, build_context
from specpick.skill.planner.domain import measure_first
from specpick.skill.planner.labels import LABEL
from specpick.skill.planner.priced import priced_text
from specpick.skill.planner.ranking import (
    choose_tuned, ranked, ranking_point, why_not_chosen,
)
from specpick.skill.planner.fallback import FallbackQuery, build_fallback
from specpick.skill.planner.flags import (
    blocker_flags, deployment_flags, engine_flags, load_flags, rejected_flags, tokenizer_flags,
)
from specpick.skill.planner.schedule import draft_schedule, schedule_text
from specpick.skill.planner.measurement import build_measurement_plan
from specpick.tools.methods import method_record
from specpick.skill.schema import Alternative, Flag, PlannerInputs, Recommendation, SpeedupEstimate, TreeParams
from specpick.skill.planner.triggers import WORTH_RUNNING_SPEEDUP
from specpick.skill.planner.tuning import choose_parameters, under_load
from specpick.tools.checks.engine_config import EngineConfigInput, build_engine_config
from specpick.tools.errors import InputError
from specpick.tools.vocab import MEASURED_TAU_METHODS
from specpick.tools.checks.method_fit import draft_tensor_parallel
from specpick.tools.engines.lookup import engine as engine_spec
from specpick.tools.engines.setting import DEFAULT_MAX_BATCH_SIZE
from specpick.tools.checks.vram import VramResult
from specpick.tools.deploy.requests import fit_alternatives
from specpick.tools.deploy.requests import memory_fit
from specpick.tools.deploy.launch import launch_fields
from specpick.tools.hub.gguf_ref import is_gguf_name

# Below this expected gain the operational cost (second model, head, tuning) is not worth it (one home, triggers.py).
MIN_WORTHWHILE_SPEEDUP = WORTH_RUNNING_SPEEDUP
# Deployment facts that switch speculation off whatever the method (skill/planner/flags.py blocker_flags).
BLOCKERS = frozenset({"beam_search", "pipeline_parallel", "exotic_kv_quant", "transformers_batch1"})
# TensorRT-LLM's own AUTO speculative mode turns speculation off above this concurrency, and the
# TRT-LLM versions we track have no per-batch switch to fall back on (ENGINES.md, TRT-LLM AUTO row).
TRTLLM_AUTO_OFF_ABOVE = 32


def _none_candidate(ctx: PlanContext) -> Candidate:
    return Candidate("none", ctx.home_engine, True, "speculation off")


def _alternatives(ctx: PlanContext, candidates: list[Candidate], chosen: Candidate) -> list[Alternative]:
    """Every other candidate: a feasible one with its figure at the draft length tuning would give it (what it was
    ranked on) and why it was not chosen; a ruled-out one with the reason."""
    points = {id(c): ranking_point(ctx, c) for c in candidates if c.feasible and c.estimate is not None}
    out = []
    for c in sorted(candidates, key=lambda c: -points.get(id(c), (0.0, None))[0]):
        if c is chosen or (c.strategy == chosen.strategy and c.engine == chosen.engine):
            continue
        if id(c) in points:
            point, n = points[id(c)]
            at = f"; {point:.2f}x at N={n}, the length tuning would give it" if n != c.estimate.num_draft_tokens \
                else ""
            why = (c.reason + ("; needs training" if c.needs_training else "") + f" (on {c.engine})" + at
                   + why_not_chosen(ctx, c, chosen) + priced_text(ctx, c))
            out.append(Alternative(strategy=c.strategy, speedup=round(point, 2), reason=why))
        else:
            out.append(Alternative(strategy=c.strategy, speedup=None, reason="ruled out: " + c.reason))
    return out


def _with_measurements(speed: SpeedupEstimate, ctx: PlanContext, chosen: Candidate, switched_off: Candidate | None,
                       candidates: list[Candidate], rationale: list[str], low_gain: bool) -> SpeedupEstimate:
    """The engine rows measured on this verifier with the chosen method and what they say against the estimate.

    With speculation off for low gain (``low_gain``; not when the engine's own rule turned it off), the rows of the
    option turned off are listed, and the rationale names the best worthwhile gain any feasible option measured on
    its engine near this concurrency: what a reader should measure before taking "off" for an answer.
    """
    basis = chosen if chosen.strategy != "none" else switched_off
    if basis is None or basis.estimate is None:
        return speed
    measured = measured_speedups(ctx.verifier.repo_id, basis.strategy, engine=basis.engine, batch=ctx.concurrency)
    notes = []
    if chosen.strategy != "none":
        note = outside_note(measured, basis.engine, speed.low, speed.high, ctx.concurrency)
        if note:
            notes.append(note + " (section 5)")
    elif low_gain:
        best: tuple[MeasuredSpeedup, Candidate, list[MeasuredSpeedup]] | None = None
        for c in [basis] + [c for c in candidates if c.feasible and c.estimate is not None and c is not basis]:
            rows = measured if c is basis else measured_speedups(ctx.verifier.repo_id, c.strategy, engine=c.engine,
                                                                 batch=ctx.concurrency)
            for m in _paid(rows, c.engine, ctx.concurrency):
                if best is None or m.speedup > best[0].speedup:
                    best = (m, c, rows)
        if best is not None:
            m, basis, measured = best
            rationale.append(f"But {m.row_id} measured {LABEL[basis.strategy]} at {m.speedup:.2f}x for this "
                             f"verifier on {basis.engine} ({m.hardware}, batch {m.batch}, draft {m.draft}): the "
                             "model and that measurement disagree, so measure it before ruling it out (the same "
                             f"request with --method {basis.strategy} prints its configuration and measurement "
                             "commands).")
    return speed.model_copy(update={"measured_method": basis.strategy, "measured": measured,
                                    "assumptions": speed.assumptions + notes})


def _paid(measured: list[MeasuredSpeedup], engine: str, concurrency: int) -> list[MeasuredSpeedup]:
    """The measured rows on ``engine`` at a worthwhile gain, at a concurrency within a factor of 2 of the user's (a
    row that states none counts as 1): a batch-1 gain says little about a deployment at concurrency 64."""
    return [m for m in measured if m.engine == engine and m.speedup >= MIN_WORTHWHILE_SPEEDUP
            and abs(math.log((m.concurrency or 1) / concurrency)) <= math.log(2)]


def _speedup_section(chosen: Candidate, ctx: PlanContext, blockers: list[str]) -> SpeedupEstimate:
    if chosen.strategy == "none" or chosen.estimate is None:
        why = blockers[0] if blockers else "no strategy is expected to beat plain decoding here"
        return SpeedupEstimate(value=1.0, low=1.0, high=1.0, tau=1.0, acceptance_source="speculation off",
                               cost_ratio=0.0, cycle_cost=1.0, batch=ctx.concurrency, engine_overhead=1.0,
                               assumptions=[f"speculation off: {why}"] + ctx.notes)
    e = chosen.estimate
    return SpeedupEstimate(
        value=round(e.speedup, 2), low=round(e.low, 2), high=round(e.high, 2),
        alpha=round(e.alpha, 3) if e.alpha is not None else None, tau=round(e.tau, 2),
        acceptance_source=e.acceptance_source, cost_ratio=round(e.cost_ratio, 4), cycle_cost=round(e.cycle_cost, 3),
        batch=ctx.concurrency, break_even_concurrency=e.break_even_concurrency,
        engine_overhead=round(e.engine_overhead, 3), outside_domain=list(e.outside_domain),
        assumptions=list(e.assumptions) + ctx.notes + [
            f"acceptance range used throughout this answer: tau {e.tau_low:.2f}-{e.tau_high:.2f} (the fallback "
            f"below triggers under {e.tau_low:.2f})"] + ([
            f"concurrency swept up to {e.max_batch}, the sequences that fit in memory at {ctx.context_tokens} "
            "tokens" + _pays_text(e)] if e.max_batch else []),
    )


def _train_plan_command(ctx: PlanContext, chosen: Candidate) -> str | None:
    """The `specpick train-plan` call for a trained head (or drafter) that underperforms; None for other methods."""
    if chosen.strategy == "none" or not method_record(chosen.strategy).verifier_bound:
        return None
    v = ctx.dep.verifier
    head = chosen.draft_repo or (chosen.head.head_repo_id if chosen.head else None)
    return " ".join([f"specpick train-plan --verifier {v.served_repo_id}",
                     *([f"--base-model {v.repo_id} --verifier-change {v.change}"] if v.change != "none" else []),
                     *([f"--head {head}"] if head else []), f"--method {chosen.strategy}",
                     f"--engine {chosen.engine} --workload {ctx.inp.workload}",
                     f"--tau-measured <measured> --tau-measured-n {chosen.num_draft_tokens or 3}"])


def _fit_deployment(ctx: PlanContext) -> tuple[PlanContext, VramResult, list[Flag], list[str]]:
    """The verifier alone on the user's GPUs at the answer's context x concurrency: never a quiet substitution.

    Returns the context the answer is computed for, the fit, its flags and rationale lines. If the requested
    concurrency does not fit but fewer sequences do, the answer is for what fits (stated, with a fail flag and the
    options); if not even one sequence fits, nothing is planned here (a blocker) and the options say what would fit.
    """

    engine = ctx.engine
    fit = memory_fit(ctx.dep, "none", engine=engine)
    if fit.fits and fit.offload is not None:  # llama.cpp runs it with layers in system RAM: the answer says so first
        return ctx, fit, [], [f"Memory: {fit.verdict_line()}."]
    if fit.fits:
        return ctx, fit, [], []
    options = fit_alternatives(ctx.dep, "none", engine=engine)
    also = f"; for {ctx.concurrency} sequences: {'; or '.join(options)}" if options else ""
    if fit.max_concurrency_at_context >= 1:
        ctx = ctx.at_concurrency(fit.max_concurrency_at_context)
        msg = (f"{fit.verdict_line()}. This answer is for the {ctx.concurrency} sequences that fit on your "
               f"{ctx.gpus}x {ctx.gpu.key}{also}")
    else:
        ctx = replace(ctx, nothing_fits=True)
        msg = (f"{fit.verdict_line()}: no speculative plan on this hardware" + (f"; would fit: "
               f"{'; or '.join(options)}" if options else "; no tensor-parallel size up to 64 holds it either"))
    return ctx, fit, [Flag(id="verifier_does_not_fit", severity="fail", message=msg,
                           source="tools/checks/vram.py (weights + KV at the stated context and concurrency)")], \
        [msg + "."]


def _decide(ctx: PlanContext, candidates: list[Candidate], flags: list[Flag],
            rationale: list[str]) -> tuple[Candidate, list[str], Candidate | None]:
    """Pick the strategy: blockers first, then the best candidate, then the worth-it and load checks.

    Returns (chosen, blockers, switched_off) where ``switched_off`` is the option turned off for load or
    low gain (the fallback says when to turn it back on).
    """
    inp = ctx.inp
    blockers = [f.message for f in flags if f.severity == "fail" and (
        f.id in BLOCKERS or (f.id == "verifier_does_not_fit" and ctx.nothing_fits))]
    order = [] if blockers else ranked(ctx, candidates)
    if not order:
        rationale += [f"Speculation off: {b}." for b in blockers[:1]]
        return _none_candidate(ctx), blockers, None
    switch: list[str] = []
    if inp.method:  # the user's method: tuned, never swapped for another
        chosen = choose_parameters(ctx, order[0])
        tuned = [(order[0], chosen)]
    else:
        chosen, tuned = choose_tuned(ctx, order, switch)
    # The tuned values stand in for the candidates they were made from (alternatives and flags read the list).
    for original, value in tuned:
        candidates[next(i for i, c in enumerate(candidates) if c is original)] = value
    rationale.append(f"{LABEL[chosen.strategy]}: {chosen.reason}.")
    rationale += switch
    rationale += chosen.notes
    if inp.method:
        return chosen, blockers, None
    reason = None
    if chosen.engine == "trtllm" and ctx.concurrency > TRTLLM_AUTO_OFF_ABOVE:
        reason = (f"TensorRT-LLM at concurrency {ctx.concurrency}: its own AUTO mode turns speculation off above "
                  f"{TRTLLM_AUTO_OFF_ABOVE}, and the versions we track have no per-batch switch to fall back on")
        flags += load_flags(ctx, chosen, TRTLLM_AUTO_OFF_ABOVE)
    else:
        first = measure_first(ctx, candidates) if chosen.speedup < MIN_WORTHWHILE_SPEEDUP else None
        if first is not None:  # outside the model's domain, and the publisher ships speculation: measure that first
            rationale[:] = [r for r in rationale if r not in chosen.notes]  # the model's tuning does not apply
            rationale += ([f"{LABEL[first.strategy]}: {first.reason}."] if first.strategy != chosen.strategy else [])
            rationale.append(first.notes[-1])
            return first, blockers, None
        if chosen.speedup < MIN_WORTHWHILE_SPEEDUP:
            reason = (f"the best option, {LABEL[chosen.strategy]}, is expected at {chosen.speedup:.2f}x, below "
                      f"{MIN_WORTHWHILE_SPEEDUP}x at concurrency {ctx.concurrency}: not worth running")
            flags += load_flags(ctx, chosen, chosen.estimate.break_even_concurrency) + engine_flags(chosen)
        flags += breaks_with_flags(ctx, chosen)
    if reason is None:
        return chosen, blockers, None
    rationale.append(f"Speculation off: {reason}.")
    return _none_candidate(ctx), [reason], chosen


def plan(inp: PlannerInputs) -> Recommendation:
    """Plan speculative decoding for one deployment.

    Raises:
        InputError: contradictory input, or an explicitly requested method the budget rules out.
        NotFoundError: unknown verifier, draft or GPU (with close matches).
    """
    ctx, base_fit, flags, rationale = _fit_deployment(build_context(inp))
    flags = blocker_flags(ctx) + flags
    if inp.method:  # an explicit request the deployment rules out is an input error, never a quiet "none"
        blocked = next((f for f in flags if f.severity == "fail" and f.id in BLOCKERS), None)
        if blocked is not None:
            raise InputError(f"--method {inp.method} cannot run here: {blocked.message.rstrip('.')}. "
                             "Drop --method to get the plan without speculation, or change that setting.")
    candidates = evaluate_candidates(ctx)
    if inp.method:
        asked = next((c for c in candidates if c.strategy == inp.method), None)
        if asked is not None and not asked.feasible:
            raise InputError(f"--method {inp.method} is ruled out: {asked.reason}. "
                             "Change the budget flags or drop --method to let the planner choose.")
    chosen, blockers, switched_off = _decide(ctx, candidates, flags, rationale)
    if chosen.strategy != "none":
        flags += tokenizer_flags(chosen)
        flags += deployment_flags(ctx, chosen, candidates, chosen.estimate.break_even_concurrency)
        flags += breaks_with_flags(ctx, chosen)
    user_draft = next((c for c in candidates if c.strategy == "draft_model" and ctx.draft is not None), None)
    if user_draft is not None and user_draft is not chosen:
        flags += tokenizer_flags(user_draft)  # the user asked about this draft: say what we found
    flags += rejected_flags(candidates, ctx)
    flags = list({f.id: f for f in flags}.values())
    return _assemble(ctx, chosen, candidates, flags, rationale, blockers, switched_off, base_fit)


def _assemble(ctx: PlanContext, chosen: Candidate, candidates: list[Candidate], flags: list[Flag],
              rationale: list[str], blockers: list[str], switched_off: Candidate | None,
              base_fit: VramResult) -> Recommendation:
    """Engine config, fallback and measurement plan around the decision."""
    inp = ctx.inp
    low_gain = switched_off is not None and not (switched_off.engine == "trtllm"
                                                 and ctx.concurrency > TRTLLM_AUTO_OFF_ABOVE)
    speed = _with_measurements(_speedup_section(chosen, ctx, blockers), ctx, chosen, switched_off, candidates,
                               rationale, low_gain)
    alts = _alternatives(ctx, candidates, chosen)
    # The break-even comes from a batch sweep capped at what fits in memory: None means the deployment never
    # reaches a batch where speculation stops paying, so there is no threshold to set.
    disable_at = speed.break_even_concurrency if (chosen.engine == "vllm" and speed.break_even_concurrency and
                                                  (ctx.concurrency > 1 or inp.latency == "throughput")) else None
    if chosen.measure_first:  # the recipe's setting, measured before any threshold of the model's is set
        disable_at = None
    ranges = draft_schedule(ctx, chosen) if engine_spec(chosen.engine).schedule_form and not chosen.measure_first \
        else []  # a per-batch key
    if ranges:
        rationale.append(f"Per-batch-size draft length (same N rule at each batch the model sweeps, up to the "
                         f"{chosen.estimate.max_batch} sequences that fit in memory): {schedule_text(ranges)}.")
    # vLLM's per-batch key switched N at a threshold set without measuring and throughput collapsed there
    # (vllm#49548): for vLLM the schedule and the switch-off point stay in the rationale and the fallback plan
    # (apply them after measuring); TensorRT-LLM's draft_len_schedule goes into its config.
    if chosen.engine == "vllm" and (ranges or disable_at):
        rationale.append("On vLLM apply that schedule (num_speculative_tokens_per_batch_size) only after measuring "
                         "at your concurrencies: a threshold set without measuring collapsed throughput "
                         "(vllm#49548).")
        ranges, disable_at = [], None
    cfg_in = EngineConfigInput(
        engine=chosen.engine, method=chosen.strategy, **launch_fields(ctx.dep),
        # Built-in MTP layers have no draft_repo; a separate MTP drafter (Gemma 4 assistant) is passed as the model.
        draft_model=chosen.draft_repo,
        num_draft_tokens=chosen.num_draft_tokens or 1,
        tree_top_k=chosen.tree.top_k if chosen.tree else 1,
        num_verify_tokens=chosen.tree.num_verify_tokens if chosen.tree else None,
        tensor_parallel=ctx.gpus, **_schedule_fields(disable_at, ranges),
        engine_version=inp.engine_version if ctx.engine_explicit else None,
        draft_tensor_parallel=draft_tensor_parallel(chosen.draft, ctx.gpus, chosen.engine) if chosen.draft else None,
        heterogeneous_vocab=chosen.tokenizer is not None and chosen.tokenizer.verdict == "identical_except_padding",
        **_ngram_window(ctx, chosen), **_llamacpp_fields(ctx, chosen, base_fit),
    )
    # Every recommendation carries the same setting for the other engines (or why they cannot run it).
    engine_config = build_engine_config(cfg_in.model_copy(update={"all_engines": True}))
    baseline = build_engine_config(cfg_in.model_copy(update={"method": "none", "draft_model": None}))
    # Draft-length rules apply to drafts of fixed length; suffix's N is a cap and lookahead has none.
    chain = chosen.strategy not in MEASURED_TAU_METHODS and (chosen.tree is None or chosen.tree.top_k == 1)
    fallback = build_fallback(FallbackQuery(
        strategy=chosen.strategy, num_draft_tokens=chosen.num_draft_tokens,
        tau_range=(chosen.estimate.tau_low, chosen.estimate.tau_high) if chosen.estimate else (1.0, 1.0),
        break_even=speed.break_even_concurrency, concurrency=ctx.concurrency, engine=chosen.engine,
        alternatives=tuple(alts), chain=chain, under_load=under_load(ctx),
        switched_off=_resume_point(switched_off, ctx.concurrency), train_plan=_train_plan_command(ctx, chosen)))
    measurement = build_measurement_plan(engine=chosen.engine, verifier=cfg_in.verifier,
                                         strategy=chosen.strategy, concurrency=ctx.concurrency,
                                         workload=inp.workload, launch_command=engine_config.launch_command,
                                         baseline_command=baseline.launch_command)
    return Recommendation(
        strategy=chosen.strategy, strategy_label=LABEL[chosen.strategy], num_draft_tokens=chosen.num_draft_tokens,
        tree=chosen.tree, draft_model=chosen.draft_repo, engine=chosen.engine, engine_config=engine_config,
        rationale=rationale, expected_speedup=speed, compatibility=build_checks(ctx, chosen, base_fit, flags),
        flags=flags, fallback=fallback, measurement_plan=measurement,
        inputs=inp.model_copy(update={"gpus": ctx.gpus, "sampling": ctx.sampling, "temperature": ctx.temperature,
                                      "context_tokens": ctx.context_tokens}),
        defaults_used=ctx.defaults_used, alternatives=alts, facts_source=ctx.facts_source,
        sources=sorted({f.source for f in flags}),
    )


def _llamacpp_fields(ctx: PlanContext, chosen: Candidate, fit: VramResult) -> dict[str, object]:
    """How llama-server loads this verifier (the GGUF the user named), its slots and its GPU layers.

    The GGUF source goes to every engine's translation (only llama.cpp's reads it): the llama.cpp line of another
    engine's answer loads the GGUF the user has, not a conversion of the base model.
    """

    out: dict[str, object] = {"gguf_source": ctx.inp.verifier if is_gguf_name(ctx.inp.verifier) else None,
                              "gguf_quant": ctx.dep.verifier.quantization_given}
    if chosen.engine != "llamacpp":
        return out
    out["parallel_slots"] = ctx.concurrency
    # The memory check's layer split (tools/checks/offload.py): the chosen method's own, its draft takes room too.
    fit = chosen.vram if chosen.vram is not None else fit
    if fit.offload is not None and fit.offload.fits:
        out.update({"gpu_layers": fit.offload.gpu_layers, "n_cpu_moe": fit.offload.n_cpu_moe})
    return out


def _pays_text(e) -> str:  # type: ignore[no-untyped-def]
    """Where in the (memory-capped) batch sweep speculation pays, in words."""
    first = next((p.batch for p in e.batch_sweep if p.speedup >= 1.0), None)
    if first is None:
        return "; speculation pays at none of them"
    start = f"; speculation pays from batch {first}" if first > e.batch_sweep[0].batch else ""
    if e.break_even_concurrency:
        return (start + " and" if start else ";") + f" speculation stops paying from {e.break_even_concurrency}"
    return start + (" up to the cap" if start else "; it pays at every one of them")


def _resume_point(switched_off: Candidate | None, concurrency: int) -> tuple[str, float, int] | None:
    """(strategy, its speedup, concurrency below which it pays) for an option switched off under load."""
    if switched_off is None or switched_off.estimate is None:
        return None
    be = switched_off.estimate.break_even_concurrency
    if not be or be > concurrency:
        # Off for too small a gain (below MIN_WORTHWHILE_SPEEDUP) while it still pays (>= 1.0x) here: turn it back
        # on below the first swept batch where it stops being worth running, the same cut the decision used.
        be = next((p.batch for p in switched_off.estimate.batch_sweep
                   if p.speedup < MIN_WORTHWHILE_SPEEDUP and p.batch <= concurrency), be)
    below = min(be, TRTLLM_AUTO_OFF_ABOVE + 1) if switched_off.engine == "trtllm" and be else be
    if switched_off.engine == "trtllm" and not be:
        below = TRTLLM_AUTO_OFF_ABOVE + 1
    if not below or below <= 1 or below > concurrency:
        return None
    return switched_off.strategy, switched_off.speedup, below


def _ngram_window(ctx: PlanContext, chosen: Candidate) -> dict[str, int]:
    if chosen.strategy != "ngram":
        return {}
    if ctx.inp.workload in ("agentic", "structured"):
        # vllm#40875: prompt_lookup_min=2 corrupted tool calls; the reported workaround is min 8.
        return {"prompt_lookup_min": 8, "prompt_lookup_max": 10}
    return {"prompt_lookup_min": 2, "prompt_lookup_max": 5}


__all__ = ["plan", "TreeParams", "estimate"]


def _schedule_fields(disable_at: int | None, ranges: list[tuple[int, int, int]]) -> dict[str, object]:
    """The per-batch schedule as the engine-config input spells it: every range up to the last paying one as
    ``START-END:K`` (a K=0 range before it, e.g. batches where n-gram does not pay yet, stays in the schedule),
    the start of the trailing K=0 range as the switch-off point, and the schedule's end as the largest batch.

    Without a schedule the break-even of the fixed N is the switch-off point. With one, the schedule decides:
    its K already shortens the draft where the fixed N stops paying, so a switch-off inside or right after a
    paying range would contradict it (the engine-config input rejects that).
    """
    last_paying = max((i for i, (_, _, k) in enumerate(ranges) if k > 0), default=None)
    if last_paying is None:
        off = disable_at if disable_at is not None and disable_at >= 2 else None
        return {"disable_by_batch_size": off, **({"max_batch_size": max(off, DEFAULT_MAX_BATCH_SIZE)} if off else {})}
    kept, tail = ranges[:last_paying + 1], ranges[last_paying + 1:]
    off = tail[0][0] if tail else (disable_at if disable_at and disable_at > kept[-1][1] else None)
    return {"disable_by_batch_size": off, "batch_schedule": [f"{start}-{end}:{k}" for start, end, k in kept],
            "max_batch_size": max(max(end for _, end, _ in ranges), off or 0, DEFAULT_MAX_BATCH_SIZE)}

"""Planner step 2: every strategy as a candidate — feasible or not, why, and its expected speedup.

A candidate is ruled out with a reason (no published head and no training
budget, tokenizer mismatch, no room for a draft, engine can't run it, ...);
feasible ones get a speedup estimate from the calibrated model at the user's
concurrency. The planner (``skill/planner/plan.py``) picks among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from specpick.skill.planner.context import MODEL_BASED_MEASURED, PlanContext
from specpick.skill.schema import Flag, TreeParams
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.vocab import INPUT_GROUNDED_WORKLOADS, MODEL_BASED_METHODS

if TYPE_CHECKING:  # imported lazily at run time: offline `recommend` must start fast
    from specpick.tools.checks.tokenizers import TokenizerVerdict
    from specpick.tools.checks.vram import VramResult
    from specpick.tools.model.estimate import SpeedupResult

# Engine tried first per method when the user did not name one (the one that runs it best).
ENGINE_PREFERENCE: dict[str, tuple[str, ...]] = {
    "eagle3": ("vllm", "sglang", "trtllm"),
    "eagle2": ("sglang", "trtllm"),
    "eagle": ("vllm", "sglang", "trtllm"),
    "medusa": ("vllm", "trtllm"),
    "mtp": ("vllm", "sglang", "trtllm"),
    "draft_model": ("vllm", "sglang", "trtllm", "transformers"),
    "ngram": ("vllm", "sglang", "trtllm", "transformers"),
    "suffix": ("vllm",),
    "lookahead": ("trtllm",),
}
# Below this verifier size a separate draft model does not pay (vllm#15025; seed: "1B for 70B typical").
SMALL_VERIFIER_B = 4.0
# The seed's starting draft length; tuning (skill/planner/tuning.py) moves it from there.
DEFAULT_DRAFT_LENGTH = 5
HEAD_METHOD_FOR = {"eagle3": "eagle3", "eagle2": "eagle", "eagle": "eagle", "medusa": "medusa", "mtp": "mtp"}


@dataclass
class Candidate:
    """One strategy evaluated for this deployment."""

    strategy: str
    engine: str
    feasible: bool
    reason: str
    needs_training: bool = False
    draft: ModelSpec | None = None
    draft_repo: str | None = None
    head: HeadSpec | None = None
    estimate: SpeedupResult | None = None
    tokenizer: TokenizerVerdict | None = None
    vram: VramResult | None = None
    num_draft_tokens: int | None = None
    tree: TreeParams | None = None
    flags: list[Flag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # tuning decisions, shown as rationale
    # Why an infeasible candidate was ruled out (machine-readable, for flags):
    # budget | other_verifier | no_mtp | tokenizer | vram | engine | no_draft
    rejected_for: str | None = None
    rejected_drafts: list[str] = field(default_factory=list)  # draft_model: drafts ruled out, with reasons

    @property
    def speedup(self) -> float:
        return self.estimate.speedup if self.estimate is not None else 0.0


def pick_engine(ctx: PlanContext, method: str) -> str | None:
    """The engine to run ``method`` on: the user's if named (None if it can't), else the preferred one."""
    cat = get_catalog()
    if ctx.engine_explicit:
        row = cat.support(ctx.inp.engine, method)
        return ctx.inp.engine if row is not None and row.support != "no" else None
    for engine in ENGINE_PREFERENCE[method]:
        row = cat.support(engine, method)
        if row is not None and row.support != "no":
            return engine
    return None


def estimate(ctx: PlanContext, cand: Candidate, *, batch: int | None = None, num_draft_tokens: int | None = None,
             tree: TreeParams | None = None, sweep: bool = True, tuned: bool = False,
             sweep_draft_length: bool = True) -> SpeedupResult:
    """Speedup estimate for a candidate at ``batch`` (default: the answer's concurrency) and the answer's context.

    ``tuned=True`` lets the shared rule (``tools/model/draftshape.tuned_estimate``, the same one `speedup`
    uses) pick N and the tree shape; ``num_draft_tokens``/``tree`` then fix them where given.
    """
    from specpick.tools.model.draftshape import tuned_estimate
    from specpick.tools.model.estimate import EstimateRequest, TreeShape, estimate_for_specs
    from specpick.tools.vocab import BYTES_PER_PARAM

    quant = ctx.inp.quantization or ctx.verifier.dtype
    if ctx.measured_method is None:
        measured = False
    elif ctx.measured_method == MODEL_BASED_MEASURED:
        measured = cand.strategy in MODEL_BASED_METHODS
    else:
        measured = ctx.measured_method == cand.strategy
    fit = cand.vram
    req = EstimateRequest(
        verifier=ctx.verifier, gpu=ctx.gpu, method=cand.strategy,
        draft=cand.draft, gpus=ctx.gpus, workload=ctx.inp.workload, temperature=ctx.temperature,
        batch=batch or ctx.concurrency, num_draft_tokens=num_draft_tokens or DEFAULT_DRAFT_LENGTH,
        tree=TreeShape(**tree.model_dump()) if tree else None,
        alpha=ctx.inp.alpha if measured else None, tau=ctx.inp.tau if measured else None,
        harness=cand.engine, engine=cand.engine, context_tokens=ctx.context_tokens,
        weight_bytes_per_param=BYTES_PER_PARAM.get(quant, 2.0), sweep=sweep,
        max_batch=fit.max_concurrency_at_context if fit is not None else None,
        sweep_draft_length=sweep_draft_length,
    )
    if tuned:
        return tuned_estimate(req, num_draft_tokens=num_draft_tokens,
                              tree=TreeShape(**tree.model_dump()) if tree else None)
    return estimate_for_specs(req)


def candidate_fit(ctx: PlanContext, cand: Candidate) -> VramResult:
    """The same memory check `vram` and `speedup` run, for this candidate's draft or head."""
    from specpick.tools.checks.method_fit import method_fit

    return method_fit(ctx.verifier, ctx.gpu, method=cand.strategy, gpus=ctx.gpus, context_tokens=ctx.context_tokens,
                      concurrency=ctx.concurrency, draft=cand.draft, head=cand.head,
                      quantization=ctx.inp.quantization, engine=cand.engine, kv_cache_dtype=ctx.inp.kv_cache_dtype)


def _head_candidate(ctx: PlanContext, method: str, engine: str) -> Candidate:
    cat = get_catalog()
    wanted = HEAD_METHOD_FOR[method]
    if method == "mtp":
        if ctx.verifier.mtp_layers <= 0:
            return Candidate(method, engine, False, f"{ctx.verifier.repo_id} has no multi-token-prediction layers",
                             rejected_for="no_mtp")
        return Candidate(method, engine, True, f"built-in MTP layer(s) ({ctx.verifier.mtp_layers}): no extra "
                         "weights to train or download", head=next(iter(cat.heads_for(ctx.verifier.repo_id)), None))
    wrong_head: Flag | None = None
    if ctx.head is not None and ctx.head.method == wanted:
        if ctx.head.verifier_repo_id.lower() == ctx.verifier.repo_id.lower():
            return Candidate(method, engine, True, f"your head {ctx.head.head_repo_id} (trained for this verifier)",
                             head=ctx.head, draft_repo=ctx.head.head_repo_id)
        wrong_head = Flag(id="head_for_other_verifier", severity="fail",
                          message=f"the head {ctx.head.head_repo_id} was trained for {ctx.head.verifier_repo_id}, "
                                  f"not {ctx.verifier.repo_id}: a head only works with the verifier whose hidden "
                                  "states it was trained on", source="heads.csv (verifier column); EAGLE README")
    if ctx.head is None and ctx.head_repo and ctx.head_check is not None and ctx.head_check.method == wanted:
        chk = ctx.head_check
        if chk.belongs == "no":
            wrong_head = Flag(id="head_for_other_verifier", severity="fail", message=chk.summary,
                              source=f"head check ({chk.source}): the head's config.json")
        else:
            note = "" if chk.belongs == "yes" else f" ({chk.summary})"
            return Candidate(method, engine, True, f"your head {ctx.head_repo}, checked against this verifier "
                             f"({chk.source}){note}", draft_repo=ctx.head_repo)
    published = [h for h in cat.heads_for(ctx.verifier.repo_id) if h.method == wanted and h.publisher != "test"
                 and engine in h.runtimes]
    if published:
        rank = {"official": 0, "vendor": 1, "community": 2}
        best = sorted(published, key=lambda h: rank.get(h.publisher, 3))[0]
        cand = Candidate(method, engine, True, f"published {best.publisher} head {best.head_repo_id} for this exact "
                         "verifier: no training needed", head=best, draft_repo=best.head_repo_id)
    elif ctx.inp.can_finetune:
        cand = Candidate(method, engine, True, f"no published {method} head for {ctx.verifier.repo_id}: train one "
                         "(SpecForge / speculators for EAGLE-3, the Medusa recipe for Medusa)", needs_training=True,
                         draft_repo=f"<your {method} head for {ctx.verifier.repo_id}>")
    elif wrong_head is not None:
        cand = Candidate(method, engine, False, wrong_head.message, rejected_for="other_verifier")
    else:
        cand = Candidate(method, engine, False, f"needs a {method} head trained for {ctx.verifier.repo_id}; none is "
                         "published and fine-tuning is ruled out (--no-finetune)", rejected_for="budget")
    if wrong_head is not None:
        cand.flags.append(wrong_head)
    return cand


def _draft_candidate(ctx: PlanContext, engine: str) -> Candidate:
    from specpick.tools.checks.tokenizers import catalog_tokenizer_verdict, compare_tokenizers
    if not ctx.inp.second_model:
        return Candidate("draft_model", engine, False, "hosting a second model is ruled out (--no-second-model)",
                         rejected_for="budget")
    size_b = ctx.verifier.params_total_b or 0.0
    if 0 < size_b < SMALL_VERIFIER_B:
        return Candidate("draft_model", engine, False, f"a {size_b:g}B verifier is too small for a separate draft "
                         "to pay: a useful draft's step is not much cheaper (vllm#15025: 135M drafting 1.7B ran ~30% "
                         "slower)", rejected_for="small_verifier", draft=ctx.draft)
    cat = get_catalog()
    known = [m for m in (cat.find_model(d.draft_repo_id) for d in cat.drafts_for(ctx.verifier)) if m is not None]
    # The user's draft first; the catalog's same-family drafts are evaluated too, and used only if
    # the user's is ruled out (tokenizer, memory).
    options: list[ModelSpec] = ([ctx.draft] if ctx.draft else []) + [m for m in known if m != ctx.draft]
    if not options:
        return Candidate("draft_model", engine, False, f"no known same-family draft for {ctx.verifier.repo_id} "
                         "(give one with --draft)", rejected_for="no_draft")
    best: Candidate | None = None
    rejected: list[str] = []
    for draft in options:
        both_catalog = cat.find_model(draft.repo_id) and cat.find_model(ctx.verifier.repo_id)
        verdict = (catalog_tokenizer_verdict(draft.repo_id, ctx.verifier.repo_id) if both_catalog and not ctx.inp.live
                   else compare_tokenizers(draft.repo_id, ctx.verifier.repo_id, live=True))
        cand = Candidate("draft_model", engine, True, f"same-family draft {draft.repo_id} ({verdict.verdict})",
                         draft=draft, draft_repo=draft.repo_id, tokenizer=verdict)
        cand.vram = fit = candidate_fit(ctx, cand)
        if verdict.verdict == "different":
            cand.feasible, cand.reason = False, f"{draft.repo_id}: {verdict.summary}"
            cand.rejected_for = "tokenizer"
        elif not fit.fits and fit.verifier_alone_fits:
            cand.feasible, cand.rejected_for = False, "vram"
            cand.reason = (f"{draft.repo_id} does not fit beside the verifier ({fit.headroom_gib:+.1f} GiB per GPU "
                           f"at context {ctx.context_tokens} x concurrency {ctx.concurrency})")
        if not cand.feasible:
            rejected.append(cand.reason)
            best = best or cand
            continue
        cand.estimate = estimate(ctx, cand)
        users_draft_ok = best is not None and best.feasible and best.draft == ctx.draft
        if best is None or not best.feasible or (not users_draft_ok and cand.speedup > best.speedup):
            best = cand
    assert best is not None  # options is non-empty
    if not best.feasible and rejected:
        best.reason = "; ".join(rejected)
    elif ctx.draft is not None and best.draft != ctx.draft and rejected:
        best.reason += f" (instead of your draft: {rejected[0]})"
    best.rejected_drafts = rejected
    return best


def _model_free_candidate(ctx: PlanContext, method: str, engine: str) -> Candidate:
    grounded = ctx.inp.workload in INPUT_GROUNDED_WORKLOADS
    reason = {
        "ngram": "copies continuations of n-grams already in the context; no extra weights"
                 + ("" if grounded else " (little to copy on this workload)"),
        "suffix": "suffix-tree speculation over the prompt and earlier outputs (Arctic Inference); pays on "
                  "repetitive and agentic traffic",
        "lookahead": "Jacobi iteration with an n-gram pool; no extra weights (TensorRT-LLM TRT-engine backend)",
    }[method]
    return Candidate(method, engine, True, reason)


def evaluate_candidates(ctx: PlanContext) -> list[Candidate]:
    """All strategies for this deployment, feasible ones with estimates."""
    out: list[Candidate] = []
    methods = [ctx.inp.method] if ctx.inp.method else ["eagle3", "eagle2", "eagle", "medusa", "mtp",
                                                       "draft_model", "ngram", "suffix", "lookahead"]
    for method in methods:
        engine = pick_engine(ctx, method)
        if engine is None:
            named = ctx.inp.engine if ctx.engine_explicit else "any engine we track"
            out.append(Candidate(method, ctx.inp.engine, False, f"{named} does not run {method}",
                                 rejected_for="engine"))
            continue
        if method in HEAD_METHOD_FOR:
            cand = _head_candidate(ctx, method, engine)
        elif method == "draft_model":
            cand = _draft_candidate(ctx, engine)
        else:
            cand = _model_free_candidate(ctx, method, engine)
        if cand.feasible and cand.vram is None:
            cand.vram = candidate_fit(ctx, cand)
            if not cand.vram.fits and cand.vram.verifier_alone_fits:
                cand.feasible, cand.rejected_for = False, "vram"
                cand.reason = (f"its weights do not fit beside the verifier: {cand.vram.verdict_line()}")
        if cand.feasible and cand.estimate is None:
            cand.estimate = estimate(ctx, cand)
        out.append(cand)
    return out

"""Planner step 2: every strategy as a candidate — feasible or not, why, and its expected speedup.

A candidate is ruled out with a reason (no published head and no training
budget, tokenizer mismatch, no room for a draft, engine can't run it, ...);
feasible ones get a speedup estimate from the calibrated model at the user's
concurrency. The planner (``skill/planner/plan.py``) picks among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from specpick.skill.planner.context import MODEL_BASED_MEASURED, PlanContext
from specpick.skill.planner.recipe_path import recipe_default_row, recipe_note, widen_for_recipe
from specpick.skill.schema import Flag, TreeParams
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.deploy.drafts import head_runtime_filter, published_heads
from specpick.tools.deploy.lengths import published_start_length
from specpick.tools.methods import CANDIDATE_ORDER, REGISTRY, method_record
from specpick.tools.vocab import EAGLE_METHODS, INPUT_GROUNDED_WORKLOADS, MODEL_BASED_METHODS, PARALLEL_DRAFT_METHODS
from specpick.tools.deploy.requests import estimate_request
from specpick.tools.model.draftshape import tuned_estimate
from specpick.tools.model.estimate import TreeShape
from specpick.tools.model.estimate import estimate_for_specs
from specpick.tools.deploy.evidence import applies_to
from specpick.tools.deploy.requests import memory_fit
from specpick.tools.catalog.freshness import recipe_rows
from specpick.tools.catalog.parallel_drafts import is_pard_repo
from specpick.tools.catalog.parallel_drafts import pard_base_spec
from specpick.tools.checks.tokenizers import catalog_tokenizer_verdict
from specpick.tools.checks.tokenizers import compare_tokenizers
from specpick.tools.checks.tokenizers import spec_tokenizer_verdict
from specpick.tools.deploy.drafts import known_drafts
from specpick.tools.catalog.parallel_drafts import pard_draft_spec
from specpick.tools.model.priors import load_prior_rows

if TYPE_CHECKING:  # imported lazily at run time: offline `recommend` must start fast
    from specpick.tools.checks.tokenizers import TokenizerVerdict
    from specpick.tools.checks.vram import VramResult
    from specpick.tools.model.estimate import SpeedupResult

# Engine tried first per method when the user did not name one (the one that runs it best): the registry's
# engine_preference.
ENGINE_PREFERENCE: dict[str, tuple[str, ...]] = {r.name: r.engine_preference for r in REGISTRY}
# The planner's candidate list, in the order ties are broken.
ALL_METHODS: tuple[str, ...] = CANDIDATE_ORDER
# Below this verifier size a separate draft model does not pay (vllm#15025; seed: "1B for 70B typical").
SMALL_VERIFIER_B = 4.0
# The catalog head kind each method loads (EAGLE-2 runs EAGLE-1 heads), for the methods that load a head.
HEAD_METHOD_FOR: dict[str, str] = {r.name: r.head_kind for r in REGISTRY if r.head_kind is not None}
# Parallel drafters start at the length they were published with (the tuning sweep moves them); every other
# method at the shared start (tools/deploy/lengths.py, the same as `speedup`).
PARALLEL_START_LENGTH = {m: n for m in PARALLEL_DRAFT_METHODS if (n := published_start_length(m)) is not None}


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
    # budget | other_verifier | no_mtp | tokenizer | vram | engine | no_draft | head_runtime (published head
    # exists but does not load in this engine)
    rejected_for: str | None = None
    rejected_drafts: list[str] = field(default_factory=list)  # draft_model: drafts ruled out, with reasons
    # (speedup, N) at the length tuning will give it, once computed (skill/planner/ranking.py ranking_point)
    ranking_point: tuple[float, int | None] | None = None
    # Set when the candidate is offered unasked on its engine recipe's word despite borrowed acceptance
    # (skill/planner/recipe_path.py): every estimate of it states this and runs down to no gain.
    recipe_assumption: str | None = None
    # Chosen because the model cannot price the verifier and its publisher's recipe ships this setting
    # (skill/planner/domain.py): the answer measures it first, with no per-batch schedule of the model's own.
    measure_first: bool = False

    @property
    def speedup(self) -> float:
        return self.estimate.speedup if self.estimate is not None else 0.0


def pick_engine(ctx: PlanContext, method: str) -> str | None:
    """The engine to run ``method`` on: the user's if named (None if it can't, at the version given), else
    the preferred one."""
    cat = get_catalog()
    if ctx.engine_explicit:
        version = ctx.inp.engine_version
        row = cat.support(ctx.engine, method, version)
        return ctx.engine if row is not None and row.runs_at(version) else None
    for engine in ENGINE_PREFERENCE[method]:
        row = cat.support(engine, method)
        if row is not None and row.support != "no":
            return engine
    return None


def _successor(head: HeadSpec, engine: str) -> HeadSpec | None:
    """The newest head that supersedes ``head`` for the same verifier and method and loads in ``engine``."""
    newest = published_heads(head.verifier_repo_id, head.method, engine)
    line = [h for h in newest if h.head_repo_id != head.head_repo_id and _supersedes(h, head)]
    return line[0] if line else None


def _superseded_source(head: HeadSpec) -> str:
    # A superseded_by added by a correction carries its own citation after this marker (scripts/merge_catalog.py).
    marker = "superseded_by corrected: "
    return head.source.split(marker, 1)[1] if marker in head.source else head.source


def _supersedes(newer: HeadSpec, older: HeadSpec) -> bool:
    cat = get_catalog()
    seen: set[str] = set()
    while older.superseded_by and older.superseded_by not in seen:
        seen.add(older.superseded_by)
        if older.superseded_by.lower() == newer.head_repo_id.lower():
            return True
        nxt = cat.head(older.superseded_by)
        if nxt is None:
            return False
        older = nxt
    return False


def pick_head_engine(ctx: PlanContext, method: str) -> str | None:
    """Like ``pick_engine``, but when the user named no engine prefer one that loads a published head.

    Kimi-K2's only EAGLE-3 head loads in SGLang: picking vLLM first would send the user to train a head
    that already exists.
    """
    engine = pick_engine(ctx, method)
    if ctx.engine_explicit or engine is None or method not in HEAD_METHOD_FOR:
        return engine
    wanted = HEAD_METHOD_FOR[method]
    if method_record(method).in_verifier_checkpoint and ctx.verifier.mtp_layers > 0:
        return engine  # built-in layers: every engine that runs MTP loads them from the verifier's checkpoint
    if published_heads(ctx.verifier.repo_id, wanted, engine):
        return engine
    cat = get_catalog()
    for other in ENGINE_PREFERENCE[method]:
        row = cat.support(other, method)
        if row is not None and row.support != "no" and published_heads(ctx.verifier.repo_id, wanted, other):
            return other
    return engine


def engine_refusal(ctx: PlanContext, method: str) -> str:
    """Why no engine (or the user's engine at the user's version) runs ``method``."""
    if not ctx.engine_explicit:
        return f"no engine we track runs {method}"
    row = get_catalog().support(ctx.inp.engine, method, ctx.inp.engine_version)
    if row is not None and row.support != "no" and ctx.inp.engine_version:
        return (f"{ctx.inp.engine} {ctx.inp.engine_version} does not run {method}: it needs {row.min_version} or "
                "newer (engine_support.csv)")
    return f"{ctx.home_engine} does not run {method}" + (f" ({row.notes})" if row is not None and row.notes else "")


def estimate(ctx: PlanContext, cand: Candidate, *, batch: int | None = None, num_draft_tokens: int | None = None,
             tree: TreeParams | None = None, sweep: bool = True, tuned: bool = False,
             sweep_draft_length: bool = True) -> SpeedupResult:
    """Speedup estimate for a candidate at ``batch`` (default: the answer's concurrency) and the answer's context.

    ``tuned=True`` lets the shared rule (``tools/model/draftshape.tuned_estimate``, the same one `speedup`
    uses) pick N and the tree shape; ``num_draft_tokens``/``tree`` then fix them where given. The acceptance effects
    the head's flags cite are priced in (``tools/deploy/flag_effects.py``).
    """

    measured = is_measured(ctx, cand)
    fit = cand.vram
    notes: tuple[str, ...] = ()
    shape = TreeShape(**tree.model_dump()) if tree else None
    # The user's release and overlap setting describe the engine they named; another engine considered for
    # them runs at its newest release with its defaults (the builder decides which).
    req = estimate_request(ctx.dep, cand.strategy, engine=cand.engine, draft=cand.draft,
                           num_draft_tokens=num_draft_tokens, tree=shape, batch=batch, measured=measured,
                           max_batch=fit.max_concurrency_at_context if fit is not None else None, sweep=sweep,
                           sweep_draft_length=sweep_draft_length, notes=notes, fit=fit,
                           head=None if cand.needs_training else cand.head)
    if measured and ctx.dep.evidence is not None:
        from specpick.tools.deploy.evidence import measured_estimate

        return measured_estimate(req, ctx.dep.evidence, lambda r: tuned_estimate(
            r, num_draft_tokens=num_draft_tokens, tree=shape) if tuned else estimate_for_specs(r))
    result = tuned_estimate(req, num_draft_tokens=num_draft_tokens, tree=shape) if tuned else estimate_for_specs(req)
    return widen_for_recipe(result, cand.recipe_assumption) if cand.recipe_assumption else result


def is_measured(ctx: PlanContext, cand: Candidate) -> bool:
    """Whether the user's measured acceptance is this candidate's: its method and drafter (tools/deploy/evidence)."""

    repo = cand.head.head_repo_id if cand.head is not None else (cand.draft.repo_id if cand.draft is not None
                                                                 else cand.draft_repo)
    return applies_to(ctx.dep.evidence, cand.strategy, repo, parallel=cand.strategy in PARALLEL_DRAFT_METHODS,
                      model_based=cand.strategy in MODEL_BASED_METHODS)


def candidate_fit(ctx: PlanContext, cand: Candidate) -> VramResult:
    """The same memory check `vram` and `speedup` run, for this candidate's draft or head."""

    return memory_fit(ctx.dep, cand.strategy, engine=cand.engine, draft=cand.draft, head=cand.head)


def _fused_recipe(repo_id: str, method: str) -> str:
    """An engine recipe that serves ``method`` with no drafter repo (DeepSeek-V4's DSpark drafter ships inside the
    checkpoint, tools/data/recipes.csv): say so, with its options, since no catalog row models that drafter yet."""

    rows = [r for r in recipe_rows() if r["model_id"].lower() == repo_id.lower() and r["method"] == method
            and not r.get("draft_repo_id") and r["speculative_config"]]
    if not rows:
        return ""
    return (f" (its vLLM recipe, {rows[0]['source']}, serves {method} from the drafter inside the checkpoint: "
            f"--speculative-config '{rows[0]['speculative_config']}'; the catalog has no row for that fused drafter's "
            "size or acceptance yet, so no estimate)")


def _fit_words(ctx: PlanContext, head: HeadSpec | None = None) -> str:
    """How a head published for the catalog row fits the served verifier (never 'no training needed' for a
    derived one: the head was trained for the base model's weights, EAGLE#98)."""
    v = ctx.dep.verifier
    if v.change == "none" and head is not None and head.verifier_repo_id.lower() != v.served_repo_id.lower():
        return (f"{head.verifier_repo_id}, the same weights as {v.served_repo_id} in another precision: no training "
                "needed (see the flags)")
    if v.change == "none":
        return "this exact verifier: no training needed"
    return (f"the base model {v.repo_id}, not your {v.change} {v.served_repo_id}: measure it, "
            "`specpick train-plan` says whether to retrain")


def _head_candidate(ctx: PlanContext, method: str, engine: str) -> Candidate:
    cat = get_catalog()
    wanted = HEAD_METHOD_FOR[method]
    if method_record(method).in_verifier_checkpoint:
        mtp_heads = published_heads(ctx.verifier.repo_id, "mtp", engine)
        if ctx.verifier.mtp_layers <= 0:
            separate = [h for h in mtp_heads if h.head_repo_id.lower() != ctx.verifier.repo_id.lower()]
            if separate:  # a published MTP drafter in its own repo (Gemma 4 "assistant" models)
                return Candidate(method, engine, True, f"published {separate[0].publisher} MTP drafter "
                                 f"{separate[0].head_repo_id} for {_fit_words(ctx)}",
                                 head=separate[0], draft_repo=separate[0].head_repo_id)
            return Candidate(method, engine, False, f"{ctx.verifier.repo_id} has no multi-token-prediction layers",
                             rejected_for="no_mtp")
        return Candidate(method, engine, True, f"built-in MTP layer(s) ({ctx.verifier.mtp_layers}): no extra "
                         "weights to train or download", head=next(iter(mtp_heads), None))
    wrong_head: Flag | None = None
    if ctx.head is not None and ctx.head.method == wanted:
        if ctx.head.verifier_repo_id.lower() == ctx.verifier.repo_id.lower():
            newer = _successor(ctx.head, engine)
            if newer is not None:
                cand = Candidate(method, engine, True, f"published {newer.publisher} head {newer.head_repo_id}, which "
                                 f"supersedes your {ctx.head.head_repo_id} (its publisher recommends it instead)",
                                 head=newer, draft_repo=newer.head_repo_id)
                cand.notes.append(f"{ctx.head.head_repo_id} is superseded by {newer.head_repo_id} "
                                  f"(heads.csv superseded_by; source: {_superseded_source(ctx.head)})")
                return cand
            return Candidate(method, engine, True, f"your head {ctx.head.head_repo_id} (trained for "
                             + ("this verifier)" if ctx.dep.verifier.change == "none" else _fit_words(ctx) + ")"),
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
    # llama.cpp loads EAGLE-3 and DFlash drafters converted to GGUF (tools/deploy/drafts.head_runtime_filter).
    gguf = head_runtime_filter(engine, method) is None
    published = published_heads(ctx.verifier.repo_id, wanted, head_runtime_filter(engine, method))
    elsewhere = [] if gguf else [h for h in published_heads(ctx.verifier.repo_id, wanted) if h not in published]
    if published:
        best = published[0]
        what = "drafter" if method in PARALLEL_START_LENGTH else "head"
        cand = Candidate(method, engine, True, f"published {best.publisher} {what} {best.head_repo_id} for "
                         f"{_fit_words(ctx, best)}" + (" (convert it to GGUF for llama.cpp)" if gguf else ""),
                         head=best, draft_repo=best.head_repo_id)
        old = [h.head_repo_id for h in cat.heads_for(ctx.verifier.repo_id) if h.superseded_by == best.head_repo_id]
        if old:
            cand.notes.append(f"{best.head_repo_id} supersedes {', '.join(old)} (its publisher recommends it instead)")
    elif ctx.inp.can_finetune and method in PARALLEL_START_LENGTH:
        # Parallel drafters are recommended only where a drafter is published for this verifier: their
        # acceptance rows all come from the publishers' own drafters.
        cand = Candidate(method, engine, False, f"no published {method} drafter for {ctx.verifier.repo_id} "
                         "(training recipes exist in speculators / SpecForge / ModelOpt, but we have no acceptance "
                         "figure for a self-trained one)", rejected_for="no_draft")
    elif ctx.inp.can_finetune:
        cand = Candidate(method, engine, True, f"no published {method} head for {ctx.verifier.repo_id}: train one "
                         "(SpecForge / speculators for EAGLE-3, the Medusa recipe for Medusa)", needs_training=True,
                         draft_repo=f"<your {method} head for {ctx.verifier.repo_id}>")
        if method in EAGLE_METHODS:
            from specpick.tools.training.summary import trained_option_line

            cand.notes.append(trained_option_line(ctx.verifier, ctx.gpu, served_id=ctx.dep.verifier.served_repo_id,
                                                  context_tokens=ctx.context_tokens))
    elif wrong_head is not None:
        cand = Candidate(method, engine, False, wrong_head.message, rejected_for="other_verifier")
    elif elsewhere:
        runs_on = sorted({r for h in elsewhere for r in h.runtimes}) or ["no engine we track"]
        cand = Candidate(method, engine, False, f"the published {method} head {elsewhere[0].head_repo_id} loads in "
                         f"{', '.join(runs_on)}, not {engine}", rejected_for="head_runtime")
    elif method in PARALLEL_START_LENGTH:
        runs = sorted({r for h in cat.heads_for(ctx.verifier.repo_id) if h.method == wanted for r in h.runtimes})
        where = f" for {engine} (published ones load in {', '.join(runs)})" if runs else ""
        cand = Candidate(method, engine, False, f"no published {method} drafter for {ctx.verifier.repo_id}{where}"
                         f"{_fused_recipe(ctx.verifier.repo_id, method)}",
                         rejected_for="no_draft")
    else:
        cand = Candidate(method, engine, False, f"needs a {method} head trained for {ctx.verifier.repo_id}; none is "
                         "published and fine-tuning is ruled out (--no-finetune)", rejected_for="budget")
    if wrong_head is not None:
        cand.flags.append(wrong_head)
    return cand


def _best_swept(c: Candidate) -> float:
    """The candidate's speedup at its best swept draft length (what tuning can reach), else its point."""
    e = c.estimate
    if e is None or not e.draft_sweep:
        return c.speedup
    return max(p.speedup for p in e.draft_sweep)


def _draft_candidate(ctx: PlanContext, engine: str) -> Candidate:
    if not ctx.inp.second_model:
        return Candidate("draft_model", engine, False, "hosting a second model is ruled out (--no-second-model)",
                         rejected_for="budget")
    size_b = ctx.verifier.params_total_b or 0.0
    if 0 < size_b < SMALL_VERIFIER_B:
        return Candidate("draft_model", engine, False, f"a {size_b:g}B verifier is too small for a separate draft "
                         "to pay: a useful draft's step is not much cheaper (vllm#15025: 135M drafting 1.7B ran ~30% "
                         "slower)", rejected_for="small_verifier", draft=ctx.draft)

    cat = get_catalog()
    # The same listing `heads`, `model` and `speedup` read (drafts.csv pairings and heads.csv drafts, each sized).
    # Pairings recorded as incompatible (Llama-3.2 drafts for Llama 4) are not offered; they explain a user's draft.
    listed = known_drafts(ctx.verifier)
    known = [d.spec for d in listed if not d.incompatible and not (is_pard_repo(d.repo_id) and
                                                                     cat.find_model(d.repo_id) is None)]
    why_not = {d.repo_id.lower(): d.incompatible_note for d in listed if d.incompatible}
    why_not.update({d.draft_repo_id.lower(): d.note for d in cat.drafts_for(ctx.verifier)
                    if d.tokenizer_relation == "incompatible"})
    # The user's draft first; the catalog's same-family drafts are evaluated too, and used only if
    # the user's is ruled out (tokenizer, memory).
    options: list[ModelSpec] = ([ctx.draft] if ctx.draft else []) + [m for m in known if m != ctx.draft]
    if not options:
        return Candidate("draft_model", engine, False, f"no known same-family draft for {ctx.verifier.repo_id} "
                         "(give one with --draft)", rejected_for="no_draft")
    best: Candidate | None = None
    users: Candidate | None = None  # the user's draft, once estimated
    rejected: list[str] = []
    by_id = {d.repo_id.lower(): d for d in listed}
    for draft in options:
        row = by_id.get(draft.repo_id.lower())
        if row is not None and not row.runs_on(engine):  # e.g. a GGUF-only draft on vLLM
            cand = Candidate("draft_model", engine, False, row.refusal(engine), draft=draft, draft_repo=draft.repo_id,
                             rejected_for="engine")
            rejected.append(cand.reason)
            best = best or cand
            continue
        # A PARD draft keeps its base model's tokenizer (plus mask tokens): compare the base.
        tok_repo = (pard_base_spec(draft.repo_id) or draft).repo_id if is_pard_repo(draft.repo_id) else draft.repo_id
        both_catalog = cat.find_model(tok_repo) and cat.find_model(ctx.verifier.repo_id)
        if draft.fact_source == "user" and not ctx.inp.live:
            # Listed by the catalog with its size only (tools/deploy/drafts.py): its row's tokenizer facts.
            verdict = spec_tokenizer_verdict(draft, ctx.verifier)
        elif both_catalog and not ctx.inp.live:
            verdict = catalog_tokenizer_verdict(tok_repo, ctx.verifier.repo_id)
        else:
            verdict = compare_tokenizers(tok_repo, ctx.verifier.repo_id, live=True)
        cand = Candidate("draft_model", engine, True, f"same-family draft {draft.repo_id} ({verdict.verdict})",
                         draft=draft, draft_repo=draft.repo_id, tokenizer=verdict)
        cand.vram = fit = candidate_fit(ctx, cand)
        if verdict.verdict == "different":
            cand.feasible, cand.reason = False, f"{draft.repo_id}: {verdict.summary}"
            if draft.repo_id.lower() in why_not:
                cand.reason += f" ({why_not[draft.repo_id.lower()]})"
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
        if draft == ctx.draft:
            users = cand
        # The user's draft keeps its place unless it would be slower than no speculation at any swept length (e.g.
        # llama.cpp partial offload: a large draft pushes verifier layers into system RAM) and the user did not
        # force the method too; then a faster catalog draft replaces it, said so.
        users_draft_ok = best is not None and best.feasible and best.draft == ctx.draft and (
            _best_swept(best) >= 1.0 or ctx.inp.method == best.strategy)
        if best is None or not best.feasible or (not users_draft_ok and cand.speedup > best.speedup):
            best = cand
    assert best is not None  # options is non-empty
    if not best.feasible and rejected:
        best.reason = "; ".join(rejected)
    elif ctx.draft is not None and best.draft != ctx.draft and rejected:
        best.reason += f" (instead of your draft: {rejected[0]})"
    elif ctx.draft is not None and best.draft != ctx.draft and users is not None:
        best.reason += (f" (instead of your draft {ctx.draft.repo_id}: at most {_best_swept(users):.2f}x, slower than no "
                        "speculation here)")
    best.rejected_drafts = rejected
    return best


def _pard_candidate(ctx: PlanContext, engine: str) -> Candidate:
    """A PARD draft (one forward drafts N tokens): the user's if it is one, else the catalog's for the family."""

    if not ctx.inp.second_model:
        return Candidate("pard", engine, False, "hosting a second model is ruled out (--no-second-model)",
                         rejected_for="budget")
    names = ([ctx.draft.repo_id] if ctx.draft is not None and is_pard_repo(ctx.draft.repo_id) else []) + [
        d.draft_repo_id for d in get_catalog().drafts_for(ctx.verifier) if is_pard_repo(d.draft_repo_id)]
    specs = [s for s in (pard_draft_spec(n) for n in dict.fromkeys(names)) if s is not None]
    if not specs:
        return Candidate("pard", engine, False, f"no known PARD draft for {ctx.verifier.repo_id}'s family "
                         "(give one with --draft amd/PARD-...)", rejected_for="no_draft")
    draft = specs[0]
    base = pard_base_spec(draft.repo_id) or draft
    # PARD keeps its base's tokenizer (mask tokens added): compare the base with the verifier.
    verdict = catalog_tokenizer_verdict(base.repo_id, ctx.verifier.repo_id)
    cand = Candidate("pard", engine, True, f"PARD draft {draft.repo_id}: drafts all N tokens in one forward; one "
                     f"draft serves the family ({verdict.verdict} tokenizer via its base {base.repo_id})",
                     draft=draft, draft_repo=draft.repo_id, tokenizer=verdict)
    cand.vram = fit = candidate_fit(ctx, cand)  # the same memory check every verb runs
    if verdict.verdict == "different":
        cand.feasible, cand.reason, cand.rejected_for = False, f"{draft.repo_id}: {verdict.summary}", "tokenizer"
    elif not fit.fits and fit.verifier_alone_fits:
        cand.feasible, cand.rejected_for = False, "vram"
        cand.reason = f"{draft.repo_id} does not fit beside the verifier ({fit.headroom_gib:+.1f} GiB per GPU)"
    return cand


def _model_free_candidate(ctx: PlanContext, method: str, engine: str) -> Candidate:
    grounded = ctx.inp.workload in INPUT_GROUNDED_WORKLOADS
    reason = method_record(method).planner_reason
    if method == "ngram" and not grounded:  # prompt lookup copies from the prompt only
        reason += " (little to copy on this workload)"
    return Candidate(method, engine, True, reason)


def evaluate_candidates(ctx: PlanContext) -> list[Candidate]:
    """All strategies for this deployment, feasible ones with estimates."""
    out: list[Candidate] = []
    methods = [ctx.inp.method] if ctx.inp.method else list(ALL_METHODS)
    for method in methods:
        engine = pick_head_engine(ctx, method)
        if engine is None:
            out.append(Candidate(method, ctx.home_engine, False, engine_refusal(ctx, method), rejected_for="engine"))
            continue
        if method in HEAD_METHOD_FOR:
            cand = _head_candidate(ctx, method, engine)
        elif method == "draft_model":
            cand = _draft_candidate(ctx, engine)
        elif method == "pard":
            cand = _pard_candidate(ctx, engine)
        else:
            cand = _model_free_candidate(ctx, method, engine)
        if cand.feasible and cand.vram is None:
            cand.vram = candidate_fit(ctx, cand)
            if not cand.vram.fits and cand.vram.verifier_alone_fits:
                cand.feasible, cand.rejected_for = False, "vram"
                cand.reason = (f"its weights do not fit beside the verifier: {cand.vram.verdict_line()}")
        if cand.feasible and cand.estimate is None:
            cand.estimate = estimate(ctx, cand)
        if cand.feasible and method in PARALLEL_DRAFT_METHODS and not ctx.inp.method:
            cand = _hold_back_thin_evidence(cand, ctx.inp.workload, ctx.verifier)
        out.append(cand)
    return out


# A parallel drafter (2026: DFlash, P-EAGLE, PARD) is chosen on its own only when its acceptance for this
# workload rests on at least this many independent sources; otherwise it is listed with its estimate and taken
# when asked for by name. One publisher's HumanEval row moved to chat, or another model family's DFlash block
# acceptance, overstated them 1.3-1.7x against the same publishers' engine figures (vllm#32887: PARD up to 3.1x).
MIN_SOURCES_FOR_NEW_METHODS = 2


def _hold_back_thin_evidence(cand: Candidate, workload: str, verifier: ModelSpec) -> Candidate:
    """The candidate, held back (infeasible on its own, with the reason) when its acceptance rests on thin evidence."""
    prior = cand.estimate.prior if cand.estimate is not None else None
    if prior is None:  # the user's own measured acceptance: no thin evidence to hold back
        return cand
    borrowed = prior.workload_used != workload
    family = _measured_on_family(prior.prior_ids, verifier)
    if not borrowed and len(prior.source_ids) >= MIN_SOURCES_FOR_NEW_METHODS and family:
        return cand
    why = (f"its {workload} acceptance is borrowed from {prior.workload_used} rows" if borrowed else
           f"its acceptance rests on one source ({', '.join(prior.source_ids)})"
           if len(prior.source_ids) < MIN_SOURCES_FOR_NEW_METHODS else
           f"its acceptance was measured on other models' drafters, not {verifier.family}'s")
    drafter = cand.head.head_repo_id if cand.head is not None else cand.draft_repo
    if (row := recipe_default_row(verifier, cand.strategy, drafter)) is not None:
        note = recipe_note(why, row)  # kept unasked on the recipe's word: stated, and down to no gain
        return replace(cand, estimate=widen_for_recipe(cand.estimate, note), recipe_assumption=note)
    return replace(cand, feasible=False, rejected_for="thin_evidence", reason=(
        f"{cand.reason}; not chosen on its own: {why}, so its {cand.estimate.speedup:.2f}x is not "
        f"comparable with better-measured methods (ask for it with --method {cand.strategy})"))


def _measured_on_family(prior_ids: list[str], verifier: ModelSpec) -> bool:
    """Whether any prior row was measured on this verifier's family (a trained drafter's acceptance is its own)."""

    def squash(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    family = squash(verifier.family.split()[0])
    ids = set(prior_ids)
    return bool(family) and any(family in squash(r.verifier_model) for r in load_prior_rows() if r.prior_id in ids)

"""The speedup model on resolved specs: acceptance x cycle cost, sweeps over N and batch.

``speedup = tau / k``: tau the mean accepted length (bonus token included), k
one draft+verify cycle relative to one plain decode step at the same batch
(``tools/model/cyclecost.py``). For chain drafts with a per-token alpha this is the
closed form ``E(alpha, N) / (N c + r + o)`` (Leviathan et al. 2023) with the
runtime's per-cycle overhead o made explicit.

``estimate_for_specs`` works on an ``EstimateRequest`` of ``ModelSpec``/``GpuSpec``
records, so the planner can call it with Hub-fetched specs; ``tools/commands/speedup.py``
resolves names. Its global constants come in as one ``ModelConstants``
(``tools/model/constants.py``), so a fit can pass a modified copy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from specpick.tools.engines.lookup import engines
from specpick.tools.model.acceptance import alpha_from_tau, chain_alpha, effective_branching, expected_tokens, tree_tau
from specpick.tools.model.acceptance_effects import AcceptanceEffect, priced, spread
from specpick.tools.model.cost_inputs import DraftSetup, Hardware, Precision, Runtime
from specpick.tools.model.cyclecost import CycleCost, cycle_cost
from specpick.tools.model.draftlength import choose_draft_length, draft_length_rule_text
from specpick.tools.errors import InputError
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants, get_overhead
from specpick.tools.model.overhead import RuntimeOverhead
from specpick.tools.model.llamacpp_cycle import llamacpp_cycle
from specpick.tools.model.overhead_llamacpp import path_note as llamacpp_path_note
from specpick.tools.model.intervals import interval_group, out_of_domain_band, speedup_interval
from specpick.tools.model.priors import (
    AcceptancePrior, PriorQuery, Shape, acceptance_prior, family_key, query_decay, tree_factor,
)
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.deployment import HostRead
from specpick.tools.model.steptime import MEDUSA_DEFAULT_HEADS, StepTime
from specpick.tools.methods import method_record, methods_where
from specpick.tools.vocab import EAGLE_METHODS, METHOD_FAMILY, Runner
from specpick.tools.model.workload_context import typical_context_tokens

BATCH_SWEEP: tuple[int, ...] = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
CHAIN_SWEEP_MAX = 12
TREE_DEPTH_SWEEP_MAX = 10
# A method's own sweep bound is its registry record's ``max_sweep_draft_len`` (tools/methods.py says where each
# comes from: draft heads stop near the depths they were published with, MTP at 3, parallel drafters at their
# published lengths), so `speedup` and `recommend` sweep the same range instead of the planner cutting the sweep's
# N afterwards; methods without one sweep to the generic limits above.
# Heads loaded from their own repository draft trees (the methods tree options apply to).
TREE_METHODS_WITH_HEADS: frozenset[str] = methods_where(tree_head=True)
ENGINE_HARNESSES = tuple(e.harness for e in engines() if e.engine_harness)  # fitted on engine rows


class TreeShape(BaseModel):
    """Draft-tree shape (field names match the answer schema's TreeParams)."""

    depth: int
    top_k: int
    num_verify_tokens: int


class SweepPoint(BaseModel):
    num_draft_tokens: int = Field(description="N (chain) or tree depth")
    tau: float
    cycle_cost: float
    speedup: float


class BatchPoint(BaseModel):
    batch: int
    cycle_cost: float
    speedup: float
    bound: str = Field(description="what limits the verify step at this batch: memory, compute or host")


class SpeedupResult(BaseModel):
    """Expected speedup of one method with every assumption stated."""

    verifier: str
    method: str
    draft: str | None = None
    gpu: str
    gpus: int
    workload: str
    temperature: float
    batch: int
    engine: str | None
    harness: str
    context_tokens: int
    weight_bytes_per_param: float
    speedup: float = Field(description="point estimate, x over plain decoding at the same batch")
    low: float = Field(description="80% interval, low end (sized from out-of-sample residuals)")
    high: float = Field(description="80% interval, high end")
    tau: float = Field(description="mean accepted tokens per cycle, bonus token included")
    tau_low: float
    tau_high: float
    alpha: float | None = Field(None, description="chain: per-token acceptance; tree: effective per-depth")
    num_draft_tokens: int = Field(description="N for chains, depth for trees")
    tree: TreeShape | None = None
    cost_ratio: float = Field(description="c: one draft step / one plain decode step")
    verify_cost: float = Field(description="r: one verify pass / one plain decode step")
    engine_overhead: float = Field(description="per-cycle runtime overhead / one plain decode step")
    cycle_cost: float = Field(description="k: one draft+verify cycle / one plain decode step")
    acceptance_source: str
    prior: AcceptancePrior | None = None
    best_num_draft_tokens: int
    draft_sweep: list[SweepPoint]
    break_even_concurrency: int | None = Field(
        None, description="first swept concurrency past the last one where speculation pays (None: pays up to "
        "the highest swept batch, the memory cap when one is given)"
    )
    batch_sweep: list[BatchPoint]
    max_batch: int | None = Field(None, description="sweep cap: the concurrency that fits in memory (None: no cap)")
    draft_length_rule: str = Field("", description="how N was chosen from the sweep, in words")
    base_step: StepTime
    draft_step: StepTime | None = None
    verify_step: StepTime
    assumptions: list[str]
    outside_domain: list[str] = Field(default_factory=list, description="inputs outside the rows behind the model "
                                      "(architecture features not modelled): the range is widened for them")

    def estimate_fields(self) -> dict[str, object]:
        """Keyword arguments for the answer schema's ``SpeedupEstimate``."""
        return {
            "value": round(self.speedup, 3), "low": round(self.low, 3), "high": round(self.high, 3),
            "alpha": None if self.alpha is None else round(self.alpha, 3), "tau": round(self.tau, 3),
            "acceptance_source": self.acceptance_source, "cost_ratio": round(self.cost_ratio, 4),
            "cycle_cost": round(self.cycle_cost, 4), "batch": self.batch,
            "break_even_concurrency": self.break_even_concurrency,
            "engine_overhead": round(self.engine_overhead, 4), "assumptions": list(self.assumptions),
            "outside_domain": list(self.outside_domain),
        }


class _Acceptance:
    """Maps a draft shape to tau: from a prior, or from the user's alpha/tau."""

    def __init__(self, method: str, shape: Shape, *, alpha: float | None, tau: float | None,
                 query: PriorQuery, tau_at: int | None = None, tau_by_n: tuple[tuple[int, float], ...] = (),
                 tau_spread: tuple[float, float] | None = None) -> None:
        self.method, self.query = method, query
        # A measured tau holds at the N it was measured at (``tau_at``), not at the request's N; measured taus at
        # several N (``tau_by_n``: per-position acceptance, a tune run) are used where they exist; ``tau_spread`` is
        # the measurement's spread over prompts as (low / tau, high / tau).
        self.tau_by_n, self.tau_spread = dict(tau_by_n), tau_spread
        self.decay = query_decay(method, query.harness_class, query.verifier_family, query.exclude_sources)
        self.measured = method_record(method).measured_tau and alpha is None
        self.effects: tuple[AcceptanceEffect, ...] = ()
        self.alpha_chain: float | None = None
        self.tau_fixed: float | None = None
        if alpha is not None:
            self.alpha_chain = alpha
        elif tau is not None:
            if self.measured:
                self.tau_fixed = tau
            elif shape.is_tree:
                k_eff = effective_branching(shape.num_draft_tokens, shape.tree_top_k or 1, shape.tree_tokens or 2)
                a_tree = alpha_from_tau(tau, tau_at or shape.num_draft_tokens)
                self.alpha_chain = chain_alpha(a_tree, k_eff, tree_factor())
            else:
                self.alpha_chain = alpha_from_tau(tau, tau_at or shape.num_draft_tokens, self.decay)

    def priced_by(self, effects: tuple[AcceptanceEffect, ...]) -> _Acceptance:
        """Price the flags' cited effects into the prior's tau; a user's measurement already holds them."""
        if self.alpha_chain is None and self.tau_fixed is None and not self.tau_by_n:
            self.effects = effects
        return self

    def _spread(self, t: float) -> tuple[float, float, float]:
        if self.tau_spread is None:
            return t, t, t
        return t, max(1.0, t * self.tau_spread[0]), t * self.tau_spread[1]

    def prior(self, shape: Shape) -> AcceptancePrior:
        return acceptance_prior(self.method, shape, self.query)

    def tau(self, shape: Shape) -> tuple[float, float, float]:
        """(tau, low, high) at ``shape``, never above what the shape can verify (``tau_cap``)."""
        cap = float("inf") if self.measured else tau_cap(shape)
        if self.tau_fixed is not None:
            return self._spread(min(self.tau_fixed, cap))
        n = shape.num_draft_tokens
        if not shape.is_tree and self.tau_by_n and n <= max(self.tau_by_n):
            # Measured at these N: between two of them (tau = 1 at N = 0) the chain's tau moves linearly, which keeps
            # it monotone where an alpha fitted at one N would not match the others.
            pts = sorted({0: 1.0, **self.tau_by_n}.items())
            lo = max(p for p in pts if p[0] <= n)
            hi = min(p for p in pts if p[0] >= n)
            t = lo[1] if hi[0] == lo[0] else lo[1] + (hi[1] - lo[1]) * (n - lo[0]) / (hi[0] - lo[0])
            return self._spread(min(t, cap))
        if self.alpha_chain is not None:
            if shape.is_tree:
                t = tree_tau(self.alpha_chain, shape.num_draft_tokens, shape.tree_top_k or 1,
                             shape.tree_tokens or 2, tree_factor())
            else:
                t = expected_tokens(self.alpha_chain, shape.num_draft_tokens, self.decay)
            return self._spread(min(t, cap))
        p = self.prior(shape)
        t, lo, hi = priced((p.tau, p.tau_low, p.tau_high), shape.num_draft_tokens,
                           1.0 if shape.is_tree else self.decay, self.effects)
        return min(t, cap), min(lo, cap), min(hi, cap)

    def effect_spread(self, shape: Shape) -> tuple[float, float]:
        """(low / point, high / point) of the priced effects' own ranges at ``shape`` (1, 1 without any)."""
        if not self.effects or self.tau_fixed is not None or self.alpha_chain is not None:
            return 1.0, 1.0
        return spread(self.prior(shape).tau, shape.num_draft_tokens, 1.0 if shape.is_tree else self.decay,
                      self.effects)


def tau_cap(shape: Shape) -> float:
    """The most tokens one cycle can yield: every drafted token on the accepted path plus the bonus token.

    A chain of N yields at most N + 1; a tree of depth D at most D + 1, and never more than the tokens it
    verifies (a deep tree with a small verify budget cannot accept a path longer than its budget).
    """
    cap = float(shape.num_draft_tokens + 1)
    if shape.tree_tokens:
        cap = min(cap, float(shape.tree_tokens))
    return cap


def _shape(method: str, n: int, tree: TreeShape | None) -> Shape:
    if tree is not None and method in TREE_METHODS_WITH_HEADS:
        return Shape(num_draft_tokens=n, tree_top_k=tree.top_k, tree_tokens=tree.num_verify_tokens)
    return Shape(num_draft_tokens=n)


@dataclass(frozen=True, kw_only=True)
class EstimateRequest:
    """What to estimate: resolved specs, the method and its draft shape, the workload and the runtime.

    Fields mirror ``SpeedupInput``; ``tree`` gives depth/top-k/verify budget for tree methods
    (``num_draft_tokens`` is then the depth); ``variant``/``exclude_sources`` select priors (calibration
    uses them). ``sweep=False`` skips the N and batch sweeps (faster). ``assumptions`` are notes that
    lead the result's own.
    """

    verifier: ModelSpec
    gpu: GpuSpec
    method: str
    draft: ModelSpec | None = None
    gpus: int = 1
    workload: str = "chat"
    temperature: float = 0.0
    batch: int = 1
    num_draft_tokens: int = 3
    tree: TreeShape | None = None
    alpha: float | None = None
    tau: float | None = None
    # A user-stated tau's own N (None: the request's); measured (N, tau) pairs (per-position acceptance, a tune run);
    # the measurement's spread over prompts as (low / tau, high / tau) (tools/deploy/evidence.py).
    tau_at_draft_tokens: int | None = None
    tau_by_draft_tokens: tuple[tuple[int, float], ...] = ()
    tau_spread: tuple[float, float] | None = None
    # The largest N the user measured this drafter at with per-position figures: the sweep stops there.
    sweep_max_draft_tokens: int | None = None
    # The spread is the measurement's own over prompts (True: it widens the speedup interval too) or a stand-in
    # taken from the prior (False: the tau range only; the interval band for stated acceptance already holds).
    tau_spread_measured: bool = True
    harness: str = "vllm"
    engine: str | None = None
    context_tokens: int | None = None
    weight_bytes_per_param: float = 2.0
    draft_bytes_per_param: float | None = None
    variant: str = ""
    exclude_sources: frozenset[str] = frozenset()
    # Whose run the papers'-harness acceptance is levelled to: a user's is a third party's; calibration grades the
    # papers' own rows as their authors' runs (tools/model/runner_levelling.py runner_ratio).
    runner: Runner = "third_party"
    sweep: bool = True
    # Concurrency that fits in memory at this context (VRAM check): the batch sweep stops there.
    max_batch: int | None = None
    # False: batch sweep only (a per-batch schedule re-estimates each N and needs no N sweep of its own).
    sweep_draft_length: bool = True
    assumptions: tuple[str, ...] = ()
    lookahead: tuple[int, int, int] | None = None
    medusa_heads: int | None = None
    # The engine overlaps the speculative path's host work with the GPU (tools/model/overlap.py spec_overlap).
    spec_overlap: bool = False
    # llama.cpp partial offload: the verifier's share read from system RAM each forward (tools/checks/offload.py).
    host_read: HostRead | None = None
    plain_host_read: HostRead | None = None  # the same without speculation (the plain step's own split)
    draft_p_min: float | None = None  # llama.cpp draft-simple: drafting stops below it (tools/model/llamacpp_pmin.py)
    # Acceptance effects the deployment's flags cite, priced into the prior (tools/model/acceptance_effects.py).
    acceptance_effects: tuple[AcceptanceEffect, ...] = ()

    @property
    def head_tree(self) -> TreeShape | None:
        """The tree, if the method drafts one with heads (other methods ignore ``tree``)."""
        return self.tree if self.tree is not None and self.method in TREE_METHODS_WITH_HEADS else None

    @property
    def user_acceptance(self) -> bool:
        return self.alpha is not None or self.tau is not None

    def shape(self, n: int) -> Shape:
        """The draft shape at chain length / tree depth ``n``."""
        return _shape(self.method, n, self.tree)


CostAt = Callable[[int, int], CycleCost]


def _context_tokens(req: EstimateRequest, notes: list[str]) -> int:
    """Tokens in the KV cache while decoding: the request's, else the workload's typical figure (noted)."""
    if req.context_tokens is not None:
        return req.context_tokens
    ctx = typical_context_tokens(req.workload)
    notes.append(f"context: {ctx} tokens in the KV cache while decoding (assumed typical for {req.workload})")
    return ctx


def _acceptance(req: EstimateRequest) -> _Acceptance:
    """How tau follows from the draft shape: the user's alpha/tau, or the priors for this situation."""
    draft_ratio = None
    if method_record(req.method).draft_size_rule and req.draft is not None:
        vp, dp = req.verifier.params_total_b, req.draft.params_total_b
        if vp and dp:
            draft_ratio = dp / vp
    return _Acceptance(req.method, req.shape(req.num_draft_tokens), alpha=req.alpha, tau=req.tau,
                       tau_at=req.tau_at_draft_tokens, tau_by_n=req.tau_by_draft_tokens, tau_spread=req.tau_spread,
                       query=PriorQuery(
        workload=req.workload, temperature=req.temperature, variant=req.variant, draft_ratio=draft_ratio,
        exclude_sources=req.exclude_sources, harness_class="engine" if req.harness in ENGINE_HARNESSES else "paper",
        engine=req.harness if req.harness in ENGINE_HARNESSES else None,
        verifier_family=family_key(req.verifier.family), runner=req.runner)).priced_by(req.acceptance_effects)


def _draft_setup(req: EstimateRequest) -> DraftSetup:
    """The request's draft at its own N or depth (the cost sweeps move N with ``DraftSetup.at``)."""
    tree = req.head_tree
    return DraftSetup(
        method=req.method, num_draft_tokens=req.num_draft_tokens, tree_top_k=tree.top_k if tree else 1,
        tree_tokens=tree.num_verify_tokens if tree else None, draft=req.draft,
        draft_bytes_per_param=req.draft_bytes_per_param, variant=req.variant, lookahead=req.lookahead,
        medusa_heads=req.medusa_heads,
    )


def _cost_at(req: EstimateRequest, ctx: int, overhead: RuntimeOverhead, constants: ModelConstants) -> CostAt:
    """The cycle cost of the request's method as a function of (N or depth, batch)."""
    draft = _draft_setup(req)
    precision = Precision(req.weight_bytes_per_param)
    hw = Hardware(req.gpu, req.gpus, host_read=req.host_read, plain_host_read=req.plain_host_read)
    runtime = Runtime(overhead, constants, req.spec_overlap)

    def cost(n: int, b: int) -> CycleCost:
        return cycle_cost(draft.at(n), req.verifier, precision, hw, runtime, batch=b, context_tokens=ctx)

    return cost


def _acceptance_source(req: EstimateRequest, acc: _Acceptance, shape: Shape,
                       notes: list[str]) -> tuple[AcceptancePrior | None, str]:
    """(prior used, one-line source of the acceptance figure), with the notes that qualify it."""
    if req.user_acceptance:
        source = (f"user-stated {'alpha' if req.alpha is not None else 'tau'} = "
                  f"{req.alpha if req.alpha is not None else req.tau}")
        if acc.decay < 1.0 and not shape.is_tree and not acc.measured:
            notes.append(f"draft-head chain: acceptance of the i-th drafted token = alpha x {acc.decay:.3f}^i "
                         "(EAGLE1-PAPER per-position alphas, blockwise-MTP rows)")
        return None, source
    prior = acc.prior(shape)
    notes.extend(prior.assumptions)
    if req.harness in ENGINE_HARNESSES and req.method in EAGLE_METHODS:
        notes.append("engine acceptance for EAGLE heads drifts with engine version (vllm#26191: EAGLE-3 on "
                     "Llama-3.1-8B, k=7, MT-Bench fell below the earlier 3.53): measure tau before relying on it")
    return prior, prior.summary


def _draft_sweep(req: EstimateRequest, acc: _Acceptance, cost: CostAt) -> tuple[list[SweepPoint], int]:
    """Speedup at each N (chain) or depth (tree) at the request's batch, and the N ``choose_draft_length`` picks.

    Lookahead (an n-gram pool) has no draft length to sweep.
    """
    rec = method_record(req.method)
    if not req.sweep or not req.sweep_draft_length or rec.shape == "pool":
        return [], req.num_draft_tokens
    is_tree = req.shape(req.num_draft_tokens).is_tree
    top = rec.max_sweep_draft_len or (TREE_DEPTH_SWEEP_MAX if is_tree else CHAIN_SWEEP_MAX)
    if req.sweep_max_draft_tokens is not None:
        top = min(top, req.sweep_max_draft_tokens)  # a measured drafter: past its measured N nothing is known
    if rec.head_per_position:
        top = min(top, req.medusa_heads or MEDUSA_DEFAULT_HEADS)  # one drafted token per head
    points = []
    for n in range(1, top + 1):
        tn = acc.tau(req.shape(n))[0]
        cn = cost(n, req.batch)
        points.append(SweepPoint(num_draft_tokens=n, tau=tn, cycle_cost=cn.cycle_cost, speedup=tn / cn.cycle_cost))
    return points, choose_draft_length(points)


def _batch_sweep(req: EstimateRequest, tau: float, cost: CostAt,
                 notes: list[str]) -> tuple[list[BatchPoint], int | None]:
    """Speedup over ``BATCH_SWEEP`` (plus the request's batch) and the first batch where it drops below 1.

    The sweep stops at ``req.max_batch`` (what fits in memory at this context): a speedup at a batch the
    deployment cannot hold is no answer. HF transformers' assisted generation runs batch 1 only: no sweep.
    """
    if not req.sweep or req.harness == "transformers":
        return [], None
    cap = req.max_batch
    batches = sorted({*BATCH_SWEEP, req.batch} | ({cap} if cap else set()))
    if cap is not None:
        batches = [b for b in batches if b <= max(cap, 1)]
        notes.append(f"concurrency sweep capped at {cap}: the most sequences that fit in memory at "
                     f"{_ctx_of(req)} tokens (VRAM check)")
    points = []
    for b in batches:
        cb = cost(req.num_draft_tokens, b)
        points.append(BatchPoint(batch=b, cycle_cost=cb.cycle_cost, speedup=tau / cb.cycle_cost,
                                 bound=cb.verify.bound))
    # Where speculation stops paying: the first swept batch past the last one that pays. (An MoE verifier can
    # lose at batch 1, where verifying N+1 tokens wakes more experts, and gain at batch 4-64.)
    paying = [i for i, p in enumerate(points) if p.speedup >= 1.0]
    if not paying:
        break_even = points[0].batch if points else None
    else:
        break_even = points[paying[-1] + 1].batch if paying[-1] + 1 < len(points) else None
    notes.append("break-even concurrency: acceptance held at its batch-1 value; real acceptance can fall "
                 "with concurrency (llama.cpp#27117), so treat it as an upper bound")
    return points, break_even


def _ctx_of(req: EstimateRequest) -> int:
    if req.context_tokens is not None:
        return req.context_tokens
    return typical_context_tokens(req.workload)


def _sweep_limit_note(req: EstimateRequest, sweep_pts: list[SweepPoint]) -> list[str]:
    """The best N at the sweep's limit: say longer N is untested, unless the limit is where measured speed peaks
    (MTP, tools/methods.py sweep_len_is_cap; the answer caps N there too, skill/planner/tuning.py)."""
    if not sweep_pts or max(sweep_pts, key=lambda p: p.speedup).num_draft_tokens != sweep_pts[-1].num_draft_tokens:
        return []
    top = sweep_pts[-1].num_draft_tokens
    by_user = req.sweep_max_draft_tokens == top
    if not by_user and method_record(req.method).sweep_len_is_cap:
        return []
    why = "the largest N you measured" if by_user else "the method registry's bound, tools/methods.py"
    return [f"best at the sweep's limit N={top} ({why}): N={top + 1}-{top + 2} untested and may gain "
            f"more; run `specpick tune --method {req.method} --draft-lengths {top} {top + 1} {top + 2}`"]


def estimate_for_specs(req: EstimateRequest, *, constants: ModelConstants = DEFAULT_CONSTANTS) -> SpeedupResult:
    """Speedup of ``req.method`` for resolved specs (see module docstring).

    Args:
        req: what to estimate (specs, method, draft shape, workload, runtime).
        constants: the model's global constants; a modified copy changes the cycle cost only.

    Raises:
        InputError: no acceptance can be found, or the inputs contradict each other.
    """
    notes = list(req.assumptions)
    overhead = get_overhead(req.harness, constants=constants)
    if req.harness == "llamacpp":
        notes.append(llamacpp_path_note())
    ctx = _context_tokens(req, notes)
    acc = _acceptance(req)
    cost = _cost_at(req, ctx, overhead, constants)
    n = req.num_draft_tokens
    shape = req.shape(n)
    t, t_lo, t_hi = acc.tau(shape)
    cc = cost(n, req.batch)
    if req.harness == "llamacpp" and not req.user_acceptance:  # how its drafters really draft (llamacpp_cycle.py)
        (t, t_lo, t_hi), cc = llamacpp_cycle(req.method, n, req.draft_p_min, lambda i: acc.tau(req.shape(i))[0],
                                             lambda k: cost(k, req.batch), (t, t_lo, t_hi), cc, notes)
    notes.extend(a for a in cc.verify.assumptions if a not in notes)  # e.g. the MoE routing note
    if req.spec_overlap and not cc.overlapped:
        notes.append(f"{req.harness} overlaps the speculative path for chain drafts (top-k 1) only: this draft's "
                     "per-cycle host work adds to each cycle")
    prior, source = _acceptance_source(req, acc, shape, notes)
    a_out = None
    if not acc.measured:
        a_out = alpha_from_tau(t, n, 1.0 if shape.is_tree else acc.decay) if t > 1 else 0.0
    sweep_pts, best = _draft_sweep(req, acc, cost)
    batch_pts, break_even = _batch_sweep(req, t, cost, notes)
    notes.extend(_sweep_limit_note(req, sweep_pts))
    group = interval_group(req.harness in ENGINE_HARNESSES, req.user_acceptance, METHOD_FAMILY.get(req.method),
                           llamacpp=req.harness == "llamacpp")
    low, high, interval_note = speedup_interval(t / cc.cycle_cost, group)
    notes.append(interval_note)
    low, high = _priced_range(acc, shape, low, high, notes)
    low, high = _domain_range(req.verifier, t / cc.cycle_cost, (low, high), group, notes)
    if req.tau_spread is not None and req.tau_spread_measured and t > 0:
        # The measurement's spread over prompts widens the cost model's interval (acceptance and cost both vary).
        low, high = low * t_lo / t, high * t_hi / t
        notes.append(f"low/high widened by the measured acceptance range, tau {t_lo:.2f}-{t_hi:.2f}")
    return SpeedupResult(
        verifier=req.verifier.repo_id, method=req.method, draft=req.draft.repo_id if req.draft else None,
        gpu=req.gpu.key, gpus=req.gpus, workload=req.workload, temperature=req.temperature, batch=req.batch,
        engine=req.engine, harness=req.harness, context_tokens=ctx, weight_bytes_per_param=req.weight_bytes_per_param,
        speedup=t / cc.cycle_cost, low=low, high=high,
        tau=t, tau_low=t_lo, tau_high=t_hi, alpha=a_out, num_draft_tokens=n, tree=req.head_tree,
        cost_ratio=cc.cost_ratio, verify_cost=cc.verify_cost, engine_overhead=cc.overhead_cost,
        cycle_cost=cc.cycle_cost, acceptance_source=source, prior=prior, best_num_draft_tokens=best,
        draft_sweep=sweep_pts, break_even_concurrency=break_even, batch_sweep=batch_pts, base_step=cc.base,
        max_batch=req.max_batch, draft_length_rule=draft_length_rule_text(sweep_pts) if sweep_pts else "",
        draft_step=cc.draft_step, verify_step=cc.verify, assumptions=notes,
        outside_domain=outside_domain(req.verifier),
    )


def _priced_range(acc: _Acceptance, shape: Shape, low: float, high: float,
                  notes: list[str]) -> tuple[float, float]:
    """The interval around the priced point, widened by the effects' own ranges; each effect stated."""
    if not acc.effects:
        return low, high
    lo_r, hi_r = acc.effect_spread(shape)
    notes.extend(f"{e.flag} priced into the acceptance prior: {e.stated()} ({e.why}); the draft length, the speedup "
                 "and its range are computed on the priced acceptance" for e in acc.effects)
    if lo_r < 1.0 or hi_r > 1.0:
        notes.append(f"low/high widened by the priced effects' own range (tau x{lo_r:.2f} to x{hi_r:.2f})")
    return low * lo_r, high * hi_r


def outside_domain(verifier: ModelSpec) -> list[str]:
    """The estimate's inputs outside the rows behind the model: the verifier's features the catalog marks not
    modelled (models.csv ``unmodelled_features``)."""
    return [f"architecture feature not modelled: {f} ({verifier.repo_id}, models.csv unmodelled_features)"
            for f in verifier.unmodelled_features]


def _domain_range(verifier: ModelSpec, point: float, band: tuple[float, float], group: str,
                  notes: list[str]) -> tuple[float, float]:
    """A verifier outside the applicability domain: the range at least as wide as ``out_of_domain_band``."""
    if not verifier.unmodelled_features:
        return band
    floor = out_of_domain_band(group)
    low, high = min(band[0], point * math.exp(floor.q_low)), max(band[1], point * math.exp(floor.q_high))
    notes.append(f"outside the model's applicability domain: {', '.join(verifier.unmodelled_features)} "
                 f"({verifier.repo_id}) are not modelled, and no calibration row measures such a verifier, so no "
                 f"error is measured for this class; the 80% range is widened to at least the widest band measured "
                 f"for this runtime ({floor.rows_used}: measured/predicted x{math.exp(floor.q_low):.2f} to "
                 f"x{math.exp(floor.q_high):.2f}, tools/data/interval_residuals.csv), an assumed floor: measure "
                 "before relying on the figure")
    return low, high


def validate_acceptance(alpha: float | None, tau: float | None, num_draft_tokens: int, measured: bool) -> None:
    """Reject alpha outside (0, 1), tau < 1, both given, or a chain tau above N + 1."""
    if alpha is not None and tau is not None:
        raise InputError("give --alpha or --tau, not both (tau follows from alpha and N)")
    if alpha is not None and not 0.0 < alpha < 1.0:
        raise InputError(f"--alpha must be strictly between 0 and 1, got {alpha}")
    if tau is not None and tau < 1.0:
        raise InputError(f"--tau counts the bonus token, so it is at least 1, got {tau}")
    if tau is not None and not measured and tau > num_draft_tokens + 1:
        raise InputError(f"--tau {tau} is impossible with {num_draft_tokens} draft tokens "
                         f"(at most N+1 = {num_draft_tokens + 1} tokens per cycle)")

"""The speedup model on resolved specs: acceptance x cycle cost, sweeps over N and batch.

``speedup = tau / k``: tau the mean accepted length (bonus token included), k
one draft+verify cycle relative to one plain decode step at the same batch
(``tools/model/cyclecost.py``). For chain drafts with a per-token alpha this is the
closed form ``E(alpha, N) / (N c + r + o)`` (Leviathan et al. 2023) with the
runtime's per-cycle overhead o made explicit.

``estimate_for_specs`` works on ``ModelSpec``/``GpuSpec`` records, so the
planner can call it with Hub-fetched specs; ``tools/commands/speedup.py`` resolves names.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from specpick.tools.model.acceptance import alpha_from_tau, chain_alpha, effective_branching, expected_tokens, tree_tau
from specpick.tools.model.cyclecost import CycleCost, cycle_cost
from specpick.tools.errors import InputError
from specpick.tools.model.overhead import get_overhead
from specpick.tools.model.priors import AcceptancePrior, Shape, acceptance_prior, decay_for, tree_factor
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.model.steptime import MEDUSA_DEFAULT_HEADS, StepTime

# Typical tokens already in the KV cache while decoding, per workload (assumption: prompt plus half the
# answer; MT-Bench-style chat is short, summarization/RAG carry long documents, agents long histories).
DEFAULT_CONTEXT_TOKENS: dict[str, int] = {
    "chat": 512, "code": 512, "math": 512, "translation": 256, "summarization": 1536, "rag": 2048, "qa": 1536,
    "structured": 1024, "creative": 768, "agentic": 4096,
}
BATCH_SWEEP: tuple[int, ...] = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
CHAIN_SWEEP_MAX = 12
TREE_DEPTH_SWEEP_MAX = 10
# Draft heads are only measured at the depths they were published with (EAGLE-2/3 trees: depth 6-7; blockwise
# MTP: up to 3 extra heads, MTP-GLOECKLE rows): the sweep does not extrapolate far beyond that.
HEAD_SWEEP_MAX: dict[str, int] = {"eagle": 8, "eagle2": 8, "eagle3": 8, "mtp": 4,
                                  # parallel drafters: up to the lengths they were published with (DFlash -b16
                                  # blocks draft 15; P-EAGLE best K=7 at BS1, PR #32887; PARD doc example 12)
                                  "dflash": 15, "peagle": 8, "pard": 12}
# Relative error of the cost model alone: median absolute % error of `specpick calibrate` mode (a)
# (cost model fed each row's own tau/alpha: 6.0% over 82 rows). Widens the acceptance range into low/high.
COST_MODEL_REL_ERROR = 0.06
BEST_N_TOLERANCE = 0.02  # "best N" = shortest draft within 2% of the sweep's maximum
TREE_METHODS_WITH_HEADS = ("eagle", "eagle2", "eagle3", "medusa")


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
    low: float
    high: float
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
        None, description="first swept concurrency where speedup < 1 (None: pays at every swept batch)"
    )
    batch_sweep: list[BatchPoint]
    base_step: StepTime
    draft_step: StepTime | None = None
    verify_step: StepTime
    assumptions: list[str]

    def estimate_fields(self) -> dict[str, object]:
        """Keyword arguments for the answer schema's ``SpeedupEstimate``."""
        return {
            "value": round(self.speedup, 3), "low": round(self.low, 3), "high": round(self.high, 3),
            "alpha": None if self.alpha is None else round(self.alpha, 3), "tau": round(self.tau, 3),
            "acceptance_source": self.acceptance_source, "cost_ratio": round(self.cost_ratio, 4),
            "cycle_cost": round(self.cycle_cost, 4), "batch": self.batch,
            "break_even_concurrency": self.break_even_concurrency,
            "engine_overhead": round(self.engine_overhead, 4), "assumptions": list(self.assumptions),
        }


class _Acceptance:
    """Maps a draft shape to tau: from a prior, or from the user's alpha/tau."""

    def __init__(self, method: str, shape: Shape, *, alpha: float | None, tau: float | None,
                 prior_args: dict[str, object]) -> None:
        self.method, self.prior_args = method, prior_args
        self.decay = decay_for(method)
        self.measured = method in ("lookahead", "suffix") and alpha is None
        self.alpha_chain: float | None = None
        self.tau_fixed: float | None = None
        if alpha is not None:
            self.alpha_chain = alpha
        elif tau is not None:
            if self.measured:
                self.tau_fixed = tau
            elif shape.is_tree:
                k_eff = effective_branching(shape.num_draft_tokens, shape.tree_top_k or 1, shape.tree_tokens or 2)
                a_tree = alpha_from_tau(tau, shape.num_draft_tokens)
                self.alpha_chain = chain_alpha(a_tree, k_eff, tree_factor())
            else:
                self.alpha_chain = alpha_from_tau(tau, shape.num_draft_tokens, self.decay)

    def prior(self, shape: Shape) -> AcceptancePrior:
        return acceptance_prior(self.method, shape=shape, **self.prior_args)  # type: ignore[arg-type]

    def tau(self, shape: Shape) -> tuple[float, float, float]:
        """(tau, low, high) at ``shape``."""
        cap = float(shape.num_draft_tokens + 1) if not self.measured else float("inf")
        if not self.measured and not shape.is_tree:
            cap = expected_tokens(1.0, shape.num_draft_tokens, self.decay)
        if self.tau_fixed is not None:
            t = min(self.tau_fixed, cap)
            return t, t, t
        if self.alpha_chain is not None:
            if shape.is_tree:
                t = tree_tau(self.alpha_chain, shape.num_draft_tokens, shape.tree_top_k or 1,
                             shape.tree_tokens or 2, tree_factor())
            else:
                t = expected_tokens(self.alpha_chain, shape.num_draft_tokens, self.decay)
            return t, t, t
        p = self.prior(shape)
        return min(p.tau, cap), min(p.tau_low, cap), min(p.tau_high, cap)


def _shape(method: str, n: int, tree: TreeShape | None) -> Shape:
    if tree is not None and method in TREE_METHODS_WITH_HEADS:
        return Shape(num_draft_tokens=n, tree_top_k=tree.top_k, tree_tokens=tree.num_verify_tokens)
    return Shape(num_draft_tokens=n)


def estimate_for_specs(
    verifier: ModelSpec,
    gpu: GpuSpec,
    method: str,
    *,
    draft: ModelSpec | None = None,
    gpus: int = 1,
    workload: str = "chat",
    temperature: float = 0.0,
    batch: int = 1,
    num_draft_tokens: int = 3,
    tree: TreeShape | None = None,
    alpha: float | None = None,
    tau: float | None = None,
    harness: str = "vllm",
    engine: str | None = None,
    context_tokens: int | None = None,
    weight_bytes_per_param: float = 2.0,
    draft_bytes_per_param: float | None = None,
    variant: str = "",
    exclude_sources: frozenset[str] = frozenset(),
    sweep: bool = True,
    assumptions: list[str] | None = None,
    lookahead: tuple[int, int, int] | None = None,
    medusa_heads: int | None = None,
) -> SpeedupResult:
    """Speedup of ``method`` for resolved specs (see module docstring).

    Args mirror ``SpeedupInput``; ``tree`` gives depth/top-k/verify budget for tree methods
    (``num_draft_tokens`` is then the depth); ``variant``/``exclude_sources`` select priors
    (calibration uses them). ``sweep=False`` skips the N and batch sweeps (faster).

    Raises:
        InputError: no acceptance can be found, or the inputs contradict each other.
    """
    notes = list(assumptions or [])
    overhead = get_overhead(harness)
    ctx = context_tokens if context_tokens is not None else DEFAULT_CONTEXT_TOKENS.get(workload, 1024)
    if context_tokens is None:
        notes.append(f"context: {ctx} tokens in the KV cache while decoding (assumed typical for {workload})")
    draft_ratio = None
    if method == "draft_model" and draft is not None:
        vp, dp = verifier.params_total_b, draft.params_total_b
        if vp and dp:
            draft_ratio = dp / vp
    acc = _Acceptance(method, _shape(method, num_draft_tokens, tree), alpha=alpha, tau=tau, prior_args={
        "workload": workload, "temperature": temperature, "variant": variant, "draft_ratio": draft_ratio,
        "exclude_sources": exclude_sources,
        "harness_class": "engine" if harness in ("vllm", "sglang", "trtllm") else "paper"})
    kwargs = dict(gpus=gpus, context_tokens=ctx, weight_bytes_per_param=weight_bytes_per_param,
                  overhead=overhead, draft=draft, draft_bytes_per_param=draft_bytes_per_param, variant=variant,
                  verifier_params_b=verifier.params_total_b, lookahead=lookahead, medusa_heads=medusa_heads)

    def cost(n: int, b: int) -> CycleCost:
        shape = tree if tree is not None and method in TREE_METHODS_WITH_HEADS else None
        return cycle_cost(method, verifier, gpu, batch=b, num_draft_tokens=n,
                          tree_top_k=shape.top_k if shape else 1,
                          tree_tokens=shape.num_verify_tokens if shape else None, **kwargs)  # type: ignore[arg-type]

    shape = _shape(method, num_draft_tokens, tree)
    t, t_lo, t_hi = acc.tau(shape)
    cc = cost(num_draft_tokens, batch)
    notes.extend(a for a in cc.verify.assumptions if a not in notes)  # e.g. the MoE routing note
    speedup = t / cc.cycle_cost
    prior = None if (alpha is not None or tau is not None) else acc.prior(shape)
    if prior is not None:
        source = prior.summary
        notes.extend(prior.assumptions)
        if harness in ("vllm", "sglang", "trtllm") and method in ("eagle", "eagle2", "eagle3"):
            notes.append("engine acceptance for EAGLE heads drifts with engine version (vllm#26191: EAGLE-3 on "
                         "Llama-3.1-8B, k=7, MT-Bench fell below the earlier 3.53): measure tau before relying on it")
    else:
        source = f"user-stated {'alpha' if alpha is not None else 'tau'} = {alpha if alpha is not None else tau}"
        if acc.decay < 1.0 and not shape.is_tree and not acc.measured:
            notes.append(f"draft-head chain: acceptance of the i-th drafted token = alpha x {acc.decay:.3f}^i "
                         "(EAGLE1-PAPER per-position alphas, blockwise-MTP rows)")
    a_out = None
    if not acc.measured:
        a_out = alpha_from_tau(t, num_draft_tokens, 1.0 if shape.is_tree else acc.decay) if t > 1 else 0.0
    sweep_pts: list[SweepPoint] = []
    best = num_draft_tokens
    if sweep and method != "lookahead":
        top = TREE_DEPTH_SWEEP_MAX if shape.is_tree else HEAD_SWEEP_MAX.get(method, CHAIN_SWEEP_MAX)
        if method == "medusa":
            top = min(top, medusa_heads or MEDUSA_DEFAULT_HEADS)  # one drafted token per head
        for n in range(1, top + 1):
            tn = acc.tau(_shape(method, n, tree))[0]
            cn = cost(n, batch)
            sweep_pts.append(SweepPoint(num_draft_tokens=n, tau=tn, cycle_cost=cn.cycle_cost,
                                        speedup=tn / cn.cycle_cost))
        top_speedup = max(p.speedup for p in sweep_pts)
        # the shortest draft within BEST_N_TOLERANCE of the best: longer drafts cost more under load
        best = next(p.num_draft_tokens for p in sweep_pts if p.speedup >= (1 - BEST_N_TOLERANCE) * top_speedup)
    batch_pts: list[BatchPoint] = []
    break_even = None
    if sweep and harness != "transformers":
        for b in sorted({*BATCH_SWEEP, batch}):
            cb = cost(num_draft_tokens, b)
            batch_pts.append(BatchPoint(batch=b, cycle_cost=cb.cycle_cost, speedup=t / cb.cycle_cost,
                                        bound=cb.verify.bound))
        break_even = next((p.batch for p in batch_pts if p.speedup < 1.0), None)
        notes.append("break-even concurrency: acceptance held at its batch-1 value; real acceptance can fall "
                     "with concurrency (llama.cpp#27117), so treat it as an upper bound")
    err = COST_MODEL_REL_ERROR
    notes.append(f"low/high: acceptance range x cost-model error +/-{err:.0%} (median error of `specpick "
                 "calibrate` with published acceptance)")
    return SpeedupResult(
        verifier=verifier.repo_id, method=method, draft=draft.repo_id if draft else None, gpu=gpu.key, gpus=gpus,
        workload=workload, temperature=temperature, batch=batch, engine=engine, harness=harness,
        context_tokens=ctx, weight_bytes_per_param=weight_bytes_per_param, speedup=speedup,
        low=t_lo / cc.cycle_cost * (1 - err), high=t_hi / cc.cycle_cost * (1 + err), tau=t, tau_low=t_lo,
        tau_high=t_hi, alpha=a_out, num_draft_tokens=num_draft_tokens,
        tree=tree if method in TREE_METHODS_WITH_HEADS else None, cost_ratio=cc.cost_ratio,
        verify_cost=cc.verify_cost, engine_overhead=cc.overhead_cost, cycle_cost=cc.cycle_cost,
        acceptance_source=source, prior=prior, best_num_draft_tokens=best, draft_sweep=sweep_pts,
        break_even_concurrency=break_even, batch_sweep=batch_pts, base_step=cc.base, draft_step=cc.draft_step,
        verify_step=cc.verify, assumptions=notes,
    )


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

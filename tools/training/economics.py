"""The economics gate: does speculation pay at the user's concurrency, and does the gain repay training?

Speedups come from the existing cost model (``estimate_for_specs``) with the expected tau fed in as the user's
acceptance, so the same roofline step times, engine overheads and batch sweep that `speedup` and `recommend` use
decide here. Payback needs the user's serving volume (``serving_gpu_hours_month``); without it the gate only says
whether speculation pays at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.model.estimate import EstimateRequest, estimate_for_specs
from specpick.tools.model.overhead import ENGINE_TO_HARNESS
from specpick.tools.model.overlap import spec_overlap
from specpick.tools.methods import method_record

DEFAULT_DRAFT_TOKENS = 3  # chain N the tau is read at when the user gives none (the speedup verb's default)


@dataclass(frozen=True)
class Economics:
    speedup: tuple[float, float] | None  # 80%: low end of the low-tau estimate .. high end of the high-tau estimate
    speedup_now: float | None
    break_even_concurrency: int | None
    pays: bool | None
    payback_months: tuple[float, float] | None
    notes: list[str]


def _speedup(verifier: ModelSpec, gpu: GpuSpec, *, method: str, tau: float, n: int, concurrency: int, gpus: int,
             workload: str, engine: str | None, engine_version: str | None = None
             ) -> tuple[float, float, float, int | None]:
    """(point, 80% low, 80% high, break-even concurrency) of the cost model at this tau."""
    harness = ENGINE_TO_HARNESS.get(engine, "vllm") if engine else "vllm"
    if not method_record(method).measured_tau:  # variable-length drafts have no N+1 cap
        tau = min(tau, n + 1.0)
    # the release's default overlap scheduling, as `speedup` assumes it (tools/model/overlap.py)
    overlap = spec_overlap(harness, engine_version, method).overlap
    req = EstimateRequest(verifier=verifier, gpu=gpu, method=method, gpus=gpus, workload=workload, batch=concurrency,
                          num_draft_tokens=n, tau=tau, harness=harness, engine=engine, sweep_draft_length=False,
                          spec_overlap=overlap)
    r = estimate_for_specs(req)
    return r.speedup, r.low, r.high, r.break_even_concurrency


def economics(verifier: ModelSpec, gpu: GpuSpec, *, method: str, tau: tuple[float, float] | None,
              tau_now: float | None, n: int | None, concurrency: int, gpus: int, workload: str,
              engine: str | None, train_gpu_hours: tuple[float, float] | None,
              serving_gpu_hours_month: float | None, engine_version: str | None = None) -> Economics:
    """Speedup range at ``concurrency`` for the expected tau, and months to repay the training GPU-hours."""
    n = n or DEFAULT_DRAFT_TOKENS
    notes = [f"speedups from the cost model (estimate_for_specs) at concurrency {concurrency}, N={n}, "
             f"{gpus}x {gpu.name}, {engine or 'vLLM'} overheads, tau fed in as the expected value"]
    if tau is None:
        return Economics(None, None, None, None, None, notes)
    lo, lo_low, _, be = _speedup(verifier, gpu, method=method, tau=tau[0], n=n, concurrency=concurrency, gpus=gpus,
                                 workload=workload, engine=engine, engine_version=engine_version)
    hi, _, hi_high, _ = _speedup(verifier, gpu, method=method, tau=tau[1], n=n, concurrency=concurrency, gpus=gpus,
                                 workload=workload, engine=engine, engine_version=engine_version)
    notes.append("expected_speedup: the cost model's own 80% interval (out-of-sample residuals) at the low tau's low "
                 "end and the high tau's high end, so it carries both the tau range and the model's error")
    now = None
    if tau_now is not None:
        now = _speedup(verifier, gpu, method=method, tau=tau_now, n=n, concurrency=concurrency, gpus=gpus,
                       workload=workload, engine=engine, engine_version=engine_version)[0]
    # DESIGN CHOICE: train only if the cost model's central estimate pays at the LOW end of the expected tau
    # (training costs GPU-hours up front; a plan that pays only in the optimistic case is measured first)
    pays = lo > 1.0
    payback = None
    if train_gpu_hours and serving_gpu_hours_month and pays:
        base = max(now or 1.0, 1.0)  # no speculation today = speedup 1
        # serving GPU-hours saved per month: the same tokens on fewer GPU-hours (1 - old/new of the speedups)
        saved = [serving_gpu_hours_month * max(0.0, 1 - base / s) for s in (hi, lo)]
        payback = tuple(round(c / s, 2) if s > 0 else float("inf") for c, s in zip(train_gpu_hours, saved))
        notes.append("payback = training GPU-hours / serving GPU-hours saved per month, saved = volume x "
                     "(1 - speedup now / speedup after); GPU-hours of different GPUs counted alike (assumption)")
    return Economics((round(lo_low, 2), round(hi_high, 2)), None if now is None else round(now, 2), be, pays,
                     payback, notes)  # type: ignore[arg-type]

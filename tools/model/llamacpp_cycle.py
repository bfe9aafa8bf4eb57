"""llama.cpp's cycle as its drafters run it: draft-simple stops below p-min (tools/model/llamacpp_pmin.py), which
turns the fixed chain's (tau, cycle cost) at the row's N into their expected values per cycle; every other method
keeps the fixed chain.

Not modelled (measured, not landed): n-gram drafts only on a match (common/speculative.cpp @6c8a045; a step without
a match is a plain decode step). With vllm#24344's drafting share (36.2% of steps on InstructCoder, 54.7% on
Blazedit) mixing plain steps into the n-gram rows, the llama.cpp model-free rows went from 46.0% to 29.4% median
error, but the llama.cpp 80% coverage rose to 86.0%, above the issue's 75-85% (docs/pending-data/LLAMACPP-DRAFTING.md).
"""

from __future__ import annotations

from collections.abc import Callable

from specpick.tools.model.cyclecost import CycleCost
from specpick.tools.model.llamacpp_pmin import pmin_cycle, stops_below_p_min

Taus = tuple[float, float, float]


def llamacpp_cycle(method: str, n: int, p_min: float | None, tau_at: Callable[[int], float],
                   cost_at: Callable[[int], CycleCost], taus: Taus, cc: CycleCost,
                   notes: list[str]) -> tuple[Taus, CycleCost]:
    """((tau, low, high), cycle cost) of a llama.cpp cycle at N = ``n`` from the fixed chain's ``taus`` and ``cc``
    (``tau_at(i)``: the chain's tau at i, ``cost_at(k)``: its cycle cost at k); notes say what was assumed."""
    t, t_lo, t_hi = taus
    if p_min and stops_below_p_min(method):
        pm = pmin_cycle(lambda i: tau_at(i) if i else 1.0, lambda k: cost_at(k).cycle_cost, n, p_min)
        notes.append(f"llama.cpp stops drafting below p-min {p_min:g}: {pm.mean_drafted:.2f} of {n} tokens drafted "
                     "per cycle on average (calibrated-confidence assumption, tools/model/llamacpp_pmin.py)")
        return (pm.tau, t_lo * pm.tau / t, t_hi * pm.tau / t), cc.model_copy(update={"cycle_cost": pm.cycle_cost})
    return taus, cc

"""llama.cpp draft-simple (a separate draft model): drafting stops early below ``p_min``, so a cycle's drafted length
is a random K <= n-max, not n-max every cycle.

What the source does (ggml-org/llama.cpp common/speculative.cpp @6c8a04576e2cfa04261019fe8cbdc90c5cfc90fb,
``common_speculative_use_draft_model``): for i = 0..n_draft-1 the draft samples greedily, *appends* its top token,
stops when n_draft tokens are drafted, and otherwise stops when that token's probability ``cur_p->data[0].p`` is
below ``params.p_min`` (the low-confidence token is still in the draft); each token kept going is decoded by the
draft. So K = min(n_max, the first position whose confidence falls below p_min), the draft runs K forwards (the
``id_last`` decode plus K - 1), and the target verifies K + 1 tokens.

Defaults by release (``common_params_speculative``): ``p_min = 0.75f``, ``n_max = 16``, ``n_min = 0`` in
common/common.h @6c8a04576e2cfa04261019fe8cbdc90c5cfc90fb (the ``--draft-max``/``--draft-p-min`` builds);
``common_params_speculative_draft`` with ``p_min = 0.0f``, ``n_max = 3``, ``n_min = 0`` in common/common.h
@001d906a6d86e2490e394361e7cc6f478b100088 (the ``--spec-draft-*`` builds after PR #22397, "spec : refactor params",
merged 2026-04-27): with p_min 0 no draft stops early. Which default a row ran is read from its build: a build dated
before the refactor took 0.75, one after it 0.0 (an assumption at the boundary: the two commits are the only
defaults read, and the refactor is the dated change between them); a row that states ``--draft-p-min`` uses it.

The assumption that maps a chain's acceptance to K and tau (no row's residual chose it): the draft's confidence is
**calibrated** (a token drafted with top probability p matches the target's greedy token with probability p), and
within each side of the threshold the confidence is spread evenly, so a confident token (p >= p_min) is accepted
with probability a_hi = (1 + p_min) / 2 and an unconfident one with a_lo = p_min / 2 (each clamped to take in the
prior's own conditional acceptance c_i). The share of confident tokens s_i then follows from the prior's c_i =
s_i a_hi + (1 - s_i) a_lo. Position i is reached only if every earlier token was confident; it is accepted with
c_i once reached through accepted tokens, and an earlier token was accepted given confident with a_hi. Hence
P(K >= i) = prod_{j<i} s_j, P(the first i accepted) = prod_{j<i} s_j a_hi,j x c_i, tau = 1 + the sum over i, and
the expected cycle cost is the sum over k of P(K = k) x cost(chain of k): a ratio of expectations, tokens per
expected cycle time, which is the throughput.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from specpick.tools.methods import method_record

# common/common.h @6c8a04576e2cfa04261019fe8cbdc90c5cfc90fb: `float p_min = 0.75f; // minimum speculative decoding
# probability (greedy)` (common_params_speculative, the --draft-* builds).
P_MIN_LEGACY = 0.75
# common/common.h @001d906a6d86e2490e394361e7cc6f478b100088: `float p_min = 0.0f;` (common_params_speculative_draft,
# the --spec-draft-* builds after PR #22397, merged 2026-04-27).
P_MIN_CURRENT = 0.0
REFACTOR_MONTH = (2026, 4)  # PR #22397 "spec : refactor params", merged 2026-04-27 (tools/engines/llamacpp.py)

_P_MIN_FLAG = re.compile(r"--(?:spec-)?draft-p-min[= ]([0-9.]+)")
_YEAR = re.compile(r"\b(20\d\d)\b")
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                            "nov", "dec"))}
_BUILD = re.compile(r"\bb(\d{4,5})\b")
FIRST_REFACTORED_BUILD = 9000  # an assumption: b4xxx-b8xxx builds (2024-early 2026) predate the April 2026 refactor


def row_p_min(config: str, engine_version: str) -> tuple[float, str]:
    """(p_min, why) for a llama.cpp draft-model row: its stated flag, else the default of its build's date."""
    m = _P_MIN_FLAG.search(config)
    if m:
        return float(m.group(1)), f"--draft-p-min {m.group(1)} as stated"
    if "--spec-draft" in config or "--spec-type" in config:
        return P_MIN_CURRENT, "p-min not stated: the --spec-* builds' default 0.0 (no early stop)"
    version = engine_version.lower()
    b = _BUILD.search(version)
    if b:
        legacy = int(b.group(1)) < FIRST_REFACTORED_BUILD
    else:
        y = _YEAR.search(version)
        month = next((i for name, i in _MONTHS.items() if name in version), 1)
        legacy = bool(y) and (int(y.group(1)), month) < REFACTOR_MONTH
    if legacy:
        return P_MIN_LEGACY, "p-min not stated: the build's default 0.75 (before the April 2026 refactor)"
    return P_MIN_CURRENT, "p-min not stated: the build's default 0.0 (no early stop)"


def stops_below_p_min(method: str) -> bool:
    """The method runs llama.cpp's draft-simple (the registry's llama.cpp spec type), the loop p-min stops."""
    try:
        return "draft-simple" in dict(method_record(method).engine_keys).get("llamacpp", ())
    except KeyError:
        return False


@dataclass(frozen=True)
class PminCycle:
    """The expected cycle under p-min: tau (bonus included), the expected cycle cost, and E[K]."""

    tau: float
    cycle_cost: float
    mean_drafted: float


def pmin_cycle(tau_at: Callable[[int], float], cost_at: Callable[[int], float], n_max: int,
               p_min: float) -> PminCycle:
    """Expected tau and cycle cost for draft-simple at ``n_max`` under ``p_min`` (module docstring).

    ``tau_at(i)``: the prior's tau for a fixed chain of i (tau_at(0) = 1); ``cost_at(k)``: the cycle cost (relative
    to one plain step) of a chain of k.
    """
    if p_min <= 0.0 or n_max <= 1:
        return PminCycle(tau_at(n_max), cost_at(n_max), float(n_max))
    a_hi0, a_lo0 = (1.0 + p_min) / 2.0, p_min / 2.0
    reach, through, tau, prev_acc = 1.0, 1.0, 1.0, 1.0
    p_k: list[float] = []
    prev_tau = 1.0
    for i in range(1, n_max + 1):
        t_i = tau_at(i)
        acc_i = max(0.0, t_i - prev_tau)  # P(first i accepted) in the fixed chain
        prev_tau = t_i
        c = min(1.0, acc_i / prev_acc) if prev_acc > 0 else 0.0
        prev_acc = acc_i
        tau += through * c
        if i == n_max:
            p_k.append(reach)
            break
        a_hi, a_lo = max(a_hi0, c), min(a_lo0, c)
        s = 1.0 if a_hi <= a_lo else min(1.0, max(0.0, (c - a_lo) / (a_hi - a_lo)))
        p_k.append(reach * (1.0 - s))  # stops after drafting position i
        reach *= s
        through *= s * a_hi
    cost = sum(p * cost_at(k) for k, p in enumerate(p_k, start=1) if p > 0)
    mean = sum(p * k for k, p in enumerate(p_k, start=1))
    return PminCycle(tau, cost, mean)

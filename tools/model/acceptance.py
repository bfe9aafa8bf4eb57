"""Acceptance arithmetic: alpha <-> tau for chains, and the rules that move tau between tree shapes.

Conventions (docs/references/DATA.md): tau is the mean number of tokens a
draft+verify cycle emits, *bonus token included* (plain decoding has tau = 1);
alpha is the per-token acceptance probability of a chain draft.

Chain of N drafted tokens, independent acceptance (Leviathan et al. 2023, eq. 1):
``tau = E(alpha, N) = (1 - alpha^(N+1)) / (1 - alpha)``.

Trees are described by an *effective per-depth acceptance* ``a``: the alpha a
chain of the tree's depth would need to reach the tree's tau, ``E(a, depth) =
tau``. Branching raises ``a`` above the head's top-1 chain alpha; the rules
below say by how much, and are stated in every answer that uses them.
"""

from __future__ import annotations

import math
from functools import lru_cache

from specpick.tools.errors import InputError
from specpick.tools.methods import method_record

# A tree's extra top-k candidates turn a share of top-1 misses into hits. We model the rejection rate
# of a tree with effective branching k_eff as (1 - alpha_chain) / F^s with s = ln k_eff / ln
# TREE_BRANCH_REFERENCE: branching helps logarithmically, anchored at the EAGLE-1 static tree whose levels
# carry ~4 candidates (github:SafeAILab/EAGLE@08dc06c eagle/model/choices.py: 25 nodes, depth 5, top-4),
# where F is measured; wider trees (EAGLE-2's top-10) extrapolate on the same log scale. F is derived
# from the only published pair of chain alpha and tree tau for the same head (rows EAGLE1-PAPER:
# Vicuna-7B chain alpha 0.79 with tree tau 3.94; LLaMA2-Chat-70B 0.75 with 3.81; EAGLE-1 tree depth 5):
# F = median((1 - alpha_chain) / (1 - a_tree)).
TREE_BRANCH_REFERENCE = 4.0
# EAGLE-1's static tree mc_sim_7b_63 in SafeAILab/EAGLE: 25 nodes + root, max depth 5, first level top-4 (its
# registry record's ``paper_tree``).
EAGLE1_TREE_DEPTH, _, EAGLE1_TREE_TOKENS, _ = method_record("eagle").paper_tree  # type: ignore[misc]


def expected_tokens(alpha: float, n: int, decay: float = 1.0) -> float:
    """Mean tokens per cycle of a chain of ``n`` drafted tokens at per-token acceptance ``alpha``.

    With ``decay`` < 1 the i-th drafted token (0-based) is accepted with probability
    ``alpha * decay**i`` given the previous ones were (draft heads lose accuracy as they feed on
    their own predictions; see ``position_decay`` in tools/model/prior_rules.py). ``decay = 1`` is the
    independent case of Leviathan et al.

    >>> round(expected_tokens(0.8, 5), 3)
    3.689
    """
    if n < 0:
        raise InputError("the number of draft tokens must be >= 0")
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"alpha must be within [0, 1], got {alpha}")
    if decay >= 1.0:
        if alpha >= 1.0 - 1e-12:
            return float(n + 1)
        return (1.0 - alpha ** (n + 1)) / (1.0 - alpha)
    total, run = 1.0, 1.0
    for i in range(n):
        run *= alpha * decay**i
        total += run
    return total


# A pure function of its numbers, which the priors ask for again and again: every shape of an estimate's draft and
# batch sweeps inverts the same few row taus (408 calls, 144 distinct in the README's first `recommend`).
@lru_cache(maxsize=4096)
def alpha_from_tau(tau: float, n: int, decay: float = 1.0) -> float:
    """Invert ``expected_tokens``: the (first-position) alpha at which ``n`` drafts give mean length ``tau``.

    ``tau`` is clipped into the reachable interval [1, E(1, n, decay)].
    """
    if n < 1:
        raise InputError("alpha from tau needs at least one draft token")
    tau = min(max(tau, 1.0), expected_tokens(1.0, n, decay))
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection: E is increasing in alpha
        mid = (lo + hi) / 2
        if expected_tokens(mid, n, decay) < tau:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def effective_branching(depth: int, top_k: int, num_verify_tokens: int) -> float:
    """Candidates per depth level a verify budget can hold: clamp((budget - 1) / depth, 1, top_k)."""
    if depth < 1 or top_k < 1 or num_verify_tokens < 2:
        raise InputError("a tree needs depth >= 1, top-k >= 1 and a verify budget >= 2 tokens")
    return min(float(top_k), max(1.0, (num_verify_tokens - 1) / depth))


def branch_share(k_eff: float) -> float:
    """Exponent of F at effective branching ``k_eff``: 0 for a chain, 1 at the EAGLE-1 tree's 4."""
    if k_eff <= 1.0:
        return 0.0
    return math.log(k_eff) / math.log(TREE_BRANCH_REFERENCE)


def tree_alpha(alpha_chain: float, k_eff: float, factor: float) -> float:
    """Effective per-depth acceptance of a tree built on a head with top-1 chain alpha ``alpha_chain``."""
    return 1.0 - (1.0 - alpha_chain) / factor ** branch_share(k_eff)


def chain_alpha(a_tree: float, k_eff: float, factor: float) -> float:
    """Inverse of ``tree_alpha``: the top-1 chain alpha behind a tree's effective acceptance."""
    return max(0.0, 1.0 - (1.0 - a_tree) * factor ** branch_share(k_eff))


def tree_tau(alpha_chain: float, depth: int, top_k: int, num_verify_tokens: int, factor: float,
             decay: float = 1.0) -> float:
    """Mean accepted length of a tree (depth, top-k, verify budget), bonus token included.

    The effective per-depth acceptance decays by ``decay`` per level like a chain's.
    """
    a = tree_alpha(alpha_chain, effective_branching(depth, top_k, num_verify_tokens), factor)
    return min(expected_tokens(a, depth, decay), float(min(depth, num_verify_tokens - 1) + 1))


def chain_to_tree_factor(pairs: list[tuple[float, float, int]], decay: float = 1.0) -> float:
    """F from (chain alpha, tree tau, tree depth) pairs measured on the same head: median ratio of misses."""
    ratios = sorted((1.0 - a) / (1.0 - alpha_from_tau(t, d, decay)) for a, t, d in pairs)
    if not ratios:
        raise ValueError("no chain/tree pairs")
    mid = len(ratios) // 2
    return ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2


def chain_speedup(alpha: float, num_draft_tokens: int, cost_ratio: float, verify_cost: float = 1.0) -> float:
    """Closed-form chain speedup E / (N c + r) (Leviathan et al. 2023, Theorem 3.8 with r = 1).

    >>> round(chain_speedup(0.8, 5, 0.05), 2)
    2.95
    """
    if num_draft_tokens < 1:
        raise InputError("num_draft_tokens must be >= 1")
    if cost_ratio < 0 or verify_cost <= 0:
        raise InputError("cost ratio must be >= 0 and verify cost > 0")
    return expected_tokens(alpha, num_draft_tokens) / (num_draft_tokens * cost_ratio + verify_cost)

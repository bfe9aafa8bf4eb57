"""llama.cpp's draft-simple as the source runs it: p-min stops a draft early."""

from __future__ import annotations

import pytest

from specpick.tools.model.llamacpp_pmin import P_MIN_CURRENT, P_MIN_LEGACY, pmin_cycle, row_p_min


def test_p_min_defaults_are_the_sources_by_build():
    # common/common.h @6c8a045: p_min = 0.75f; @001d906: p_min = 0.0f (the --spec-draft-* builds)
    assert P_MIN_LEGACY == 0.75 and P_MIN_CURRENT == 0.0
    # LLAMASWAP-SPECDEC states --draft-p-min 0.4 in its config cell
    assert row_p_min("--draft-max 16 --draft-min 1 --draft-p-min 0.4; weights q4_k_m", "be0e35 (Nov-Dec 2024)")[0] == 0.4
    assert row_p_min("not stated (llama.cpp defaults, build 4260/4265)", "b4260-b4265 (Dec 2024)")[0] == 0.75
    assert row_p_min("--spec-type draft-simple --spec-draft-n-max 8", "master 3737e4137 (Aug 2026)")[0] == 0.0


def _chain(alpha: float):
    return lambda i: sum(alpha ** j for j in range(i + 1))


def test_without_p_min_the_fixed_chain_stands():
    cost = lambda k: 1.0 + 0.1 * k  # noqa: E731
    out = pmin_cycle(_chain(0.7), cost, 5, 0.0)
    assert out.mean_drafted == 5 and out.tau == pytest.approx(_chain(0.7)(5)) and out.cycle_cost == cost(5)


@pytest.mark.parametrize("alpha", [0.5, 0.7, 0.8])
def test_p_min_drafts_fewer_tokens_costs_less_and_accepts_more_per_drafted_token(alpha):
    cost = lambda k: 1.0 + 0.1 * k  # noqa: E731
    fixed, stopped = pmin_cycle(_chain(alpha), cost, 8, 0.0), pmin_cycle(_chain(alpha), cost, 8, 0.75)
    assert 1.0 <= stopped.mean_drafted < fixed.mean_drafted
    assert stopped.cycle_cost < fixed.cycle_cost
    assert stopped.tau <= fixed.tau  # it never accepts more than the chain that drafts every token
    assert (stopped.tau - 1) / stopped.mean_drafted > (fixed.tau - 1) / fixed.mean_drafted

"""A flag that cites an acceptance effect moves the estimate and its range, and the answer says by how much (issue 34).

No figure the code produced is pinned here: the tests assert the direction of each move, that the stated factor is
the cited source's own ratio (read from tools/data/training_evidence.csv), that the range moved too, and that the
ranking uses the priced figure.
"""

from __future__ import annotations

import re

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.deploy.requests import estimate_request
from specpick.tools.deploy.resolve import query_from_input, resolve_deployment
from specpick.tools.model.acceptance_effects import EAGLE3_CONTEXT_CURVE, QUANT4_ALPHA_POINTS, context_ratio
from specpick.tools.model.draftshape import tuned_estimate
from specpick.tools.training.evidence import evidence_table

LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA70 = "meta-llama/Llama-3.3-70B-Instruct"
# The two cases of issue 34: a 20-30k-context RAG answer with a short-trained EAGLE-3 head, an INT4 verifier
# served with its BF16-trained EAGLE-3 head.
RAG_LONG = dict(verifier=LLAMA8, workload="rag", gpu="H100-SXM", gpus=1, context_tokens=24000)
INT4 = dict(verifier=LLAMA70, workload="chat", gpu="H100-SXM", gpus=2, quantization="int4")
BEFORE_AFTER = re.compile(r"(\d+\.\d+)x \((\d+\.\d+)-(\d+\.\d+)x\) at N=\d+ unpriced -> (\d+\.\d+)x "
                          r"\((\d+\.\d+)-(\d+\.\d+)x\)")


def _f17() -> dict[int, float]:
    """F17's acceptance lengths by context in thousands, as its figure states them ('2.295@2k ...')."""
    fig = evidence_table()["F17"].figure
    return {int(k): float(v) for v, k in re.findall(r"(\d\.\d+)@(\d+)k", fig)}


def _flag(rec, flag_id: str) -> str:  # type: ignore[no-untyped-def]
    return next(f.message for f in rec.flags if f.id == flag_id)


def test_the_context_curve_is_the_cited_sources_own():
    cited = _f17()
    assert {round(tokens / 1024): tau for tokens, tau in EAGLE3_CONTEXT_CURVE} == cited
    # A head holds to its trained length (8K when unpublished); past the source's longest context the curve is its
    # 20k figure: the ratio is the source's 20k over its figure at the trained length (2k for a head trained shorter).
    assert context_ratio(24000, 8192) == pytest.approx(cited[20] / cited[8])
    assert context_ratio(24000, 1024) == pytest.approx(cited[20] / cited[2])
    assert context_ratio(6000, 8192) == 1.0


def test_the_quantized_head_effect_is_the_cited_sources_own():
    # F10's value column: first-position acceptance points, "-0.089-+0.063".
    lo, hi = (float(v) for v in re.findall(r"[-+]\d\.\d+", evidence_table()["F10"].value))
    assert QUANT4_ALPHA_POINTS == (lo, hi)


@pytest.mark.parametrize("case,flag_id", [(RAG_LONG, "head_context_exceeded"), (INT4, "quantized_verifier_bf16_head")])
def test_the_flag_moves_the_headline_and_says_by_how_much(case: dict, flag_id: str):
    rec = plan(PlannerInputs(**case, method="eagle3"))
    msg = _flag(rec, flag_id)
    before, b_lo, b_hi, after, a_lo, a_hi = (float(x) for x in BEFORE_AFTER.search(msg).groups())
    est = rec.expected_speedup
    assert after == pytest.approx(est.value, abs=0.006) and (a_lo, a_hi) == pytest.approx((est.low, est.high),
                                                                                         abs=0.006)
    assert after < before  # both cited effects lower acceptance at their point
    assert a_lo < b_lo  # the range moved down with it (the context effect) or widened down (the precision effect)
    assert any(a.startswith(f"{flag_id} priced into the acceptance prior") for a in est.assumptions)


def test_the_stated_context_factor_is_the_sources_ratio():
    msg = _flag(plan(PlannerInputs(**RAG_LONG, method="eagle3")), "head_context_exceeded")
    stated = float(re.search(r"head_context_exceeded \([^)]*\) priced: tau x(\d\.\d+) \(F17", msg).group(1))
    cited = _f17()
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B publishes no trained length: the flag's 8K is assumed and said so.
    assert "8192 assumed" in msg
    assert stated == pytest.approx(cited[20] / cited[8], abs=0.005)


def test_the_stated_precision_effect_is_the_sources_points():
    msg = _flag(plan(PlannerInputs(**INT4, method="eagle3")), "quantized_verifier_bf16_head")
    lo, hi = (float(v) for v in re.findall(r"[-+]\d\.\d+", evidence_table()["F10"].value))
    m = re.search(r"alpha ([-+]\d\.\d+) \(range ([-+]\d\.\d+) to ([-+]\d\.\d+)\) per drafted token \(F10", msg)
    assert m is not None
    assert [float(x) for x in m.groups()] == pytest.approx([(lo + hi) / 2, lo, hi])


@pytest.mark.parametrize("case", [RAG_LONG, INT4])
def test_speedup_prices_the_same_effects_as_recommend(case: dict):
    """The speed model moves point and range in the one request builder every verb uses."""
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    sp = estimate_speedup(SpeedupInput(**case, method="eagle3", engine="vllm"))
    assert any(" priced into the acceptance prior" in a for a in sp.assumptions)


@pytest.mark.parametrize("case", [RAG_LONG, INT4])
def test_the_range_moves_in_the_speed_model_itself(case: dict):
    from specpick.tools.deploy.drafts import best_published_head

    dep = resolve_deployment(query_from_input(PlannerInputs(**case, method="eagle3", engine="vllm")))
    head = best_published_head(dep.verifier.repo_id, "eagle3", "vllm")
    priced = tuned_estimate(estimate_request(dep, "eagle3", engine="vllm", head=head))
    unpriced = tuned_estimate(estimate_request(dep, "eagle3", engine="vllm"))
    assert priced.speedup < unpriced.speedup and priced.tau < unpriced.tau
    assert priced.low < unpriced.low and priced.tau_low < unpriced.tau_low


def test_the_ranking_uses_the_priced_figure():
    rec = plan(PlannerInputs(**RAG_LONG))
    eagle3 = next((a for a in rec.alternatives if a.strategy == "eagle3"), None)
    if rec.strategy == "eagle3":  # still the pick: then its headline is the priced one
        assert "head_context_exceeded (context 24000 tokens" in _flag(rec, "head_context_exceeded")
    else:
        assert eagle3 is not None and "head_context_exceeded (context 24000 tokens" in eagle3.reason
        assert rec.expected_speedup.value >= eagle3.speedup


def test_a_measured_acceptance_is_not_priced_again():
    rec = plan(PlannerInputs(**RAG_LONG, method="eagle3", tau=2.0))
    assert "priced:" not in _flag(rec, "head_context_exceeded")
    assert not any("priced into the acceptance prior" in a for a in rec.expected_speedup.assumptions)


def test_a_flag_whose_source_gives_no_figure_says_it_is_not_priced():
    # FP8: the flag's cited collapse (F8) is a requantized draft layer, not a BF16 head on FP8 weights.
    rec = plan(PlannerInputs(verifier="Qwen/Qwen3-32B", workload="chat", gpu="H100-SXM", quantization="fp8",
                             method="eagle3"))
    assert "Not priced into the estimate" in _flag(rec, "quantized_verifier_bf16_head")
    assert not any("priced into the acceptance prior" in a for a in rec.expected_speedup.assumptions)

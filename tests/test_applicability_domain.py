"""Verifiers with architecture features the catalog marks not modelled get honest ranges and measure first (issue 34).

No figure the code produced is pinned: the tests read the catalog (models.csv ``unmodelled_features``), the recipe
(recipes.csv) and the committed residual bands (interval_residuals.csv) and assert the answer against them.
"""

from __future__ import annotations

import math

import pytest

from specpick.skill.planner.domain import recipe_speculation
from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.model.intervals import out_of_domain_band

ULTRA = "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"
SUPER = "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"
UNMODELLED = sorted(m.repo_id for m in get_catalog().models if m.unmodelled_features)
ROUNDING = 0.006  # the answer prints speedups to two decimals


def _floor_ok(value: float, low: float, high: float, runtime: str = "engine") -> bool:
    band = out_of_domain_band(runtime)
    return (low <= value * math.exp(band.q_low) + ROUNDING and high >= value * math.exp(band.q_high) - ROUNDING)


def test_not_modelled_has_one_typed_home():
    """Every row whose prose says a feature is not modelled lists it in the typed column, and no row lists one
    silently."""
    for m in get_catalog().models:
        prose = " ".join((m.params_note, m.notes, m.hybrid_note))
        assert bool(m.unmodelled_features) == ("not modelled" in prose), m.repo_id


def test_nemotron_3_ultra_measures_the_publishers_setting_first():
    rec = plan(PlannerInputs(verifier=ULTRA, workload="chat", gpu="B200", gpus=8))
    row = recipe_speculation(ULTRA)
    assert row is not None  # its vLLM recipe ships MTP
    assert rec.strategy == row["method"] and rec.num_draft_tokens == int(row["num_speculative_tokens"])
    text = " ".join(rec.rationale)
    assert "Measure first" in text and "specpick tune" in text and row["source"] in text
    est = rec.expected_speedup
    assert set(get_catalog().model(ULTRA).unmodelled_features) <= {f.split(": ")[1].split(" ")[0]
                                                                    for f in est.outside_domain}
    assert _floor_ok(est.value, est.low, est.high)


@pytest.mark.parametrize("verifier", [ULTRA, SUPER])
@pytest.mark.parametrize("workload,concurrency", [("chat", 1), ("code", 8)])
def test_no_not_modelled_answer_is_narrower_than_the_class_floor(verifier: str, workload: str, concurrency: int):
    rec = plan(PlannerInputs(verifier=verifier, workload=workload, gpu="B200", gpus=8, concurrency=concurrency))
    est = rec.expected_speedup
    if rec.strategy != "none":
        assert est.outside_domain and _floor_ok(est.value, est.low, est.high)
        assert any("outside the model's applicability domain" in a for a in est.assumptions)


@pytest.mark.parametrize("verifier", UNMODELLED)
def test_every_not_modelled_catalog_model_gets_the_floor_in_speedup(verifier: str):
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
    from specpick.tools.errors import PickerError

    try:
        sp = estimate_speedup(SpeedupInput(verifier=verifier, gpu="B200", gpus=8, method="ngram", workload="rag"))
    except PickerError:  # Kimi-K3 (2.8T) does not fit on 8x B200: the same question on 16
        sp = estimate_speedup(SpeedupInput(verifier=verifier, gpu="B200", gpus=16, method="ngram", workload="rag"))
    assert sp.outside_domain and _floor_ok(sp.speedup, sp.low, sp.high)


def test_a_modelled_verifier_is_inside_the_domain():
    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", gpu="H100-SXM"))
    assert rec.expected_speedup.outside_domain == []
    assert not any("applicability domain" in r for r in rec.rationale)


def test_the_rendered_answer_says_the_figure_is_outside_the_domain():
    from specpick.skill.render import to_markdown

    md = to_markdown(plan(PlannerInputs(verifier=ULTRA, workload="chat", gpu="B200", gpus=8)))
    assert "Outside the model's applicability domain" in md and "specpick tune" in md

"""recommend with Hub facts: the real huggingface_hub client against the local Hub stand-in."""

from __future__ import annotations

import pytest

from specpick.skill.surfaces.cli import main
from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.errors import EXIT_ACCESS, HubAccessError
from tests.test_hfconfig import LLAMA31_8B


@pytest.fixture
def hub_env(fakehub, hub_settings, monkeypatch, tmp_path):
    """Point the environment (what the planner follows) at the stand-in, with a fresh cache."""
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return fakehub


def test_model_missing_from_the_catalog_is_read_from_the_hub(hub_env):
    hub_env.add_repo("acme/custom-llama-8b", {"config.json": LLAMA31_8B})
    r = plan(PlannerInputs(verifier="acme/custom-llama-8b", workload="summarization", live=True))
    assert r.facts_source == "hub"
    # No published head or known draft for an unknown model: on summarization (copies its input) the planner
    # picks prompt lookup, and every model-based option is ruled out with its reason.
    assert r.strategy == "ngram"
    ruled_out = {a.strategy for a in r.alternatives if a.speedup is None}
    assert {"eagle3", "medusa", "mtp", "draft_model"} <= ruled_out
    assert any("config.json" in a for a in r.expected_speedup.assumptions)
    assert any(req.path.endswith("/config.json") for req in hub_env.log)


def test_live_catalog_model_falls_back_to_the_catalog_when_offline(hub_env, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    r = plan(PlannerInputs(verifier="llama-3.1-8b", workload="chat", live=True))
    assert r.facts_source == "catalog"
    assert any("offline" in a for a in r.expected_speedup.assumptions)
    assert not hub_env.log  # offline: not one request


def test_gated_verifier_is_an_access_error_with_advice(hub_env, capsys):
    hub_env.add_repo("acme/gated-8b", {"config.json": LLAMA31_8B}, gated="manual")
    with pytest.raises(HubAccessError, match="HF_TOKEN"):
        plan(PlannerInputs(verifier="acme/gated-8b", workload="chat", live=True))
    code = main(["recommend", "--verifier", "acme/gated-8b", "--workload", "chat", "--live"])
    err = capsys.readouterr().err
    assert code == EXIT_ACCESS and err.startswith("error: ") and err.count("\n") == 1


def test_a_head_outside_the_catalog_is_checked_on_the_hub(hub_env):
    from tests.test_heads import SPECULATORS_EAGLE3

    hub_env.add_repo("meta-llama/Llama-3.1-8B-Instruct", {"config.json": LLAMA31_8B})
    hub_env.add_repo("acme/llama31-8b-speculator.eagle3", {"config.json": SPECULATORS_EAGLE3})
    # Named method: the check under test is the head's config read from the Hub; without it the merged
    # catalog's PARD/DFlash drafters for Llama-3.1-8B compete for the choice (tests/test_methods2026.py).
    r = plan(PlannerInputs(verifier="llama-3.1-8b", workload="chat", head="acme/llama31-8b-speculator.eagle3",
                           method="eagle3"))
    assert r.strategy == "eagle3" and r.draft_model == "acme/llama31-8b-speculator.eagle3"
    assert "head_for_other_verifier" not in r.flag_ids()


def test_a_head_for_another_verifier_is_rejected_after_reading_its_config(hub_env):
    from tests.test_heads import SPECULATORS_EAGLE3

    hub_env.add_repo("acme/llama31-8b-speculator.eagle3", {"config.json": SPECULATORS_EAGLE3})
    hub_env.add_repo("Qwen/Qwen3-8B", {"config.json": {**LLAMA31_8B, "model_type": "qwen3", "vocab_size": 151936}})
    r = plan(PlannerInputs(verifier="qwen3-8b", workload="chat", head="acme/llama31-8b-speculator.eagle3"))
    assert "head_for_other_verifier" in r.flag_ids()
    assert r.draft_model != "acme/llama31-8b-speculator.eagle3"

"""--live fills a derived verifier from its model card and config, on the local Hub stand-in."""

from __future__ import annotations

import json

import pytest

from specpick.tools.commands.train_plan import TrainPlanInput, train_plan_tool
from specpick.tools.training.card import front_matter

CARD = ("---\nbase_model: meta-llama/Llama-3.1-8B-Instruct\nbase_model_relation: finetune\nlicense: llama3.1\n---\n"
        "# my fine-tune\n")


@pytest.fixture
def hub_env(fakehub, hub_settings, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", hub_settings.cache_dir)
    return fakehub


def test_front_matter_refuses_aliases_and_reads_plain_yaml() -> None:
    assert front_matter(CARD)["base_model_relation"] == "finetune"
    assert front_matter("---\na: &x [1, 2]\nb: *x\n---\n") == {}
    assert front_matter("# no front matter") == {}


def test_live_reads_base_model_and_relation_from_the_card(hub_env) -> None:
    hub_env.add_repo("my-org/llama-ft", {"README.md": CARD, "config.json": json.dumps({"model_type": "llama"})})
    p = train_plan_tool(TrainPlanInput(verifier="my-org/llama-ft", head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                       live=True))
    assert p.verifier == "my-org/llama-ft" and p.facts_from == "meta-llama/Llama-3.1-8B-Instruct"
    assert p.decision == "train"  # a fine-tune per its card (EAGLE#98: retrain)
    assert any("base_model_relation finetune" in a for a in p.assumptions)


def test_live_reads_an_adapter_and_a_quantized_config(hub_env) -> None:
    hub_env.add_repo("my-org/llama-lora", {"adapter_config.json": json.dumps(
        {"base_model_name_or_path": "meta-llama/Llama-3.1-8B-Instruct", "peft_type": "LORA"})})
    p = train_plan_tool(TrainPlanInput(verifier="my-org/llama-lora", head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                       live=True))
    assert p.decision == "measure-first"  # F3: a single adapter is measured first
    hub_env.add_repo("my-org/llama-fp8", {"README.md": CARD.replace("finetune", "quantized"), "config.json": json.dumps(
        {"model_type": "llama", "quantization_config": {"quant_method": "fp8"}})})
    p = train_plan_tool(TrainPlanInput(verifier="my-org/llama-fp8", head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                       live=True))
    assert p.decision == "measure-first" and any(h.check == "precision" for h in p.head_fitness)


def test_the_users_flags_win_over_the_card(hub_env) -> None:
    hub_env.add_repo("my-org/llama-ft2", {"README.md": CARD})
    p = train_plan_tool(TrainPlanInput(verifier="my-org/llama-ft2", head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                       verifier_change="lora", live=True))
    assert p.decision == "measure-first"  # lora from the flag, not the card's finetune


def test_head_check_live_reads_the_card_and_does_not_pass_a_fine_tune(hub_env) -> None:
    from specpick.tools.commands.head_check import HeadCheckInput, head_check_tool

    hub_env.add_repo("my-org/llama-ft3", {"README.md": CARD})
    from tests.test_heads import LLAMA31_8B, YUHUILI_EAGLE3

    hub_env.add_repo("meta-llama/Llama-3.1-8B-Instruct", {"config.json": LLAMA31_8B})
    hub_env.add_repo("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", {"config.json": YUHUILI_EAGLE3})
    r = head_check_tool(HeadCheckInput(head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", verifier="my-org/llama-ft3"))
    assert r.check != "pass" and r.verifier_repo_id == "my-org/llama-ft3"
    assert any(f.check == "verifier modified" for f in r.findings)

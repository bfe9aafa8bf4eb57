"""A model outside the embedded snapshot: looked up on the Hub automatically, or a refresh hint when offline.

The real huggingface_hub client against the local Hub stand-in (tests/support/fakehub.py); no ``--live``.
"""

from __future__ import annotations

import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import EXIT_UNAVAILABLE
from tests.test_hfconfig import LLAMA31_8B

OUTSIDE = "acme/custom-llama-8b"


@pytest.fixture
def hub_env(fakehub, hub_settings, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    fakehub.add_repo(OUTSIDE, {"config.json": LLAMA31_8B})
    return fakehub


def test_recommend_reads_a_model_outside_the_snapshot_from_the_hub_without_live(hub_env, capsys) -> None:
    assert get_catalog().find_model(OUTSIDE) is None
    assert main(["recommend", "--verifier", OUTSIDE, "--workload", "summarization", "--gpu", "H100"]) == 0
    out = capsys.readouterr().out
    assert "Model facts from: hub." in out  # the answer says which source answered
    assert f"{OUTSIDE} is not in the embedded snapshot" in out and "looked up on the Hub automatically" in out
    assert any(req.path.endswith("/config.json") and OUTSIDE in req.path for req in hub_env.log)


def test_offline_the_error_names_the_closest_entries_and_the_refresh(hub_env, capsys) -> None:
    code = main(["--offline", "recommend", "--verifier", "meta-llama/Llama-3.1-8B-Instruc", "--workload", "chat"])
    err = capsys.readouterr().err
    assert code == EXIT_UNAVAILABLE and err.count("\n") == 1
    assert "meta-llama/Llama-3.1-8B-Instruct" in err and "specpick catalog update" in err
    assert not hub_env.log  # --offline: not one request


def test_hf_hub_offline_disables_the_lookup_like_the_flag(hub_env, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["recommend", "--verifier", OUTSIDE, "--workload", "chat"]) == EXIT_UNAVAILABLE
    assert "HF_HUB_OFFLINE=1 or --offline" in capsys.readouterr().err and not hub_env.log


def test_a_catalog_model_is_answered_without_any_request(hub_env, capsys) -> None:
    assert main(["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat"]) == 0
    assert not hub_env.log
    assert "Model facts from: catalog." in capsys.readouterr().out


def test_after_a_lookup_the_hub_cache_answers_offline(hub_env, monkeypatch, capsys) -> None:
    assert main(["recommend", "--verifier", OUTSIDE, "--workload", "chat"]) == 0
    capsys.readouterr()
    seen = len(hub_env.log)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["recommend", "--verifier", OUTSIDE, "--workload", "chat"]) == 0
    assert "Model facts from: hub-cache." in capsys.readouterr().out
    assert len(hub_env.log) == seen


def test_offline_a_recipe_model_outside_the_snapshot_names_what_its_recipe_serves(hub_env, capsys) -> None:
    # vllm-project/recipes@8959cf6 models/thinkingmachines/Inkling.yaml serves thinkingmachines/Inkling-NVFP4 with
    # {"method": "mtp", "num_speculative_tokens": 8}; the snapshot has no config.json facts for it
    # (tests/test_recipes_snapshot.py RECIPE_GAPS).
    repo = "thinkingmachines/Inkling-NVFP4"
    assert get_catalog().find_model(repo) is None
    code = main(["--offline", "recommend", "--verifier", repo, "--workload", "chat"])
    err = capsys.readouterr().err
    assert code == EXIT_UNAVAILABLE and err.count("\n") == 1
    assert "(method mtp)" in err
    assert '"num_speculative_tokens":8' in err and "models/thinkingmachines/Inkling.yaml" in err


def test_the_offline_flag_ends_with_the_call(hub_env, monkeypatch, capsys) -> None:
    # huggingface_hub reads HF_HUB_OFFLINE once, at import: --offline must not leave an in-process caller offline.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert main(["--offline", "recommend", "--verifier", OUTSIDE, "--workload", "chat", "--gpu", "H100"]) \
        == EXIT_UNAVAILABLE
    import huggingface_hub.constants as constants

    assert not constants.HF_HUB_OFFLINE
    capsys.readouterr()
    assert main(["recommend", "--verifier", OUTSIDE, "--workload", "chat", "--gpu", "H100"]) == 0
    assert "looked up on the Hub automatically" in capsys.readouterr().out

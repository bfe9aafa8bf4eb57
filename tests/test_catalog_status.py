"""`specpick catalog status`: the newest model the snapshot covers, and a warning for a newer engine release."""

from __future__ import annotations

from specpick.skill.surfaces.cli import main
from specpick.tools.catalog.freshness import engine_newer_than_snapshot, newest_engine_release

# vllm-project/recipes@8959cf6: models/Qwen/Qwen3.6-27B.yaml date_added 2026-04-22 (a model the catalog holds),
# and the checkout's own commit date, 2026-08-21: the newest covered model lies between the two.
KNOWN_RECIPE_DATE = "2026-04-22"
RECIPES_COMMIT_DATE = "2026-08-21"


def test_status_prints_the_newest_model_the_snapshot_covers(capsys) -> None:
    assert main(["catalog", "status", "--json"]) == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert KNOWN_RECIPE_DATE <= result["newest_model_date"] <= RECIPES_COMMIT_DATE
    assert result["newest_model_source"].startswith("github:vllm-project/recipes@")
    assert main(["catalog", "status"]) == 0
    assert f"recipe added {result['newest_model_date']}" in capsys.readouterr().out


def test_status_warns_when_the_named_engine_release_is_newer_than_the_snapshot(capsys) -> None:
    assert main(["catalog", "status", "--engine", "vllm", "--engine-version", "99.0.0"]) == 0
    out = capsys.readouterr().out
    assert "warning: vllm 99.0.0 is newer than any vllm release this snapshot has read" in out
    assert "specpick catalog update" in out
    # engine_support.csv names TensorRT-LLM 1.3.0rc27 (the DFlash row's first release): not newer, no warning.
    assert engine_newer_than_snapshot("trtllm", "1.3.0rc27") is None
    assert engine_newer_than_snapshot("trtllm", newest_engine_release("trtllm")) is None
    assert main(["catalog", "status", "--engine", "trtllm", "--engine-version", "1.3.0rc27"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_engine_options_are_for_status_only(capsys) -> None:
    assert main(["catalog", "update", "--engine-version", "0.20.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "for `catalog status` only" in err

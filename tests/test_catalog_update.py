"""`specpick catalog update|status`: the real huggingface_hub client against the local Hub stand-in, the overlay it
writes, and the embedded snapshot's reproducible rebuild (scripts/build_catalog.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from pydantic import SecretStr

from specpick.skill.surfaces.cli import main
from specpick.tools.catalog import overlay as ov
from specpick.tools.catalog.knowledge import knowledge
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.commands.catalog import (
    HEAD_PUBLISHER_SEARCHES, HEAD_PUBLISHERS, HEAD_SEARCHES, MODEL_PUBLISHERS, CatalogInput, catalog_status,
    update_overlay,
)
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.errors import EXIT_ACCESS, EXIT_UNAVAILABLE, HubAccessError, UnavailableError
from tests.support.fakehub import FakeHub, safetensors_header_only

ROOT = Path(__file__).resolve().parent.parent
TG = "text-generation"
# A small new verifier with a built-in MTP layer; its size is read from a header-only safetensors file.
NEW_MODEL = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
             "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
             "intermediate_size": 13696, "vocab_size": 151552, "max_position_embeddings": 131072,
             "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"}
NEW_MODEL_WEIGHTS = {"model.embed_tokens.weight": ("BF16", [151552, 4096]),
                     "model.layers.weight": ("BF16", [40, 220_000_000])}  # 0.62B + 8.8B = 9.42B


def speculators(verifier: str, hidden: int, kind: str = "eagle3") -> dict:
    return {"architectures": ["Eagle3Speculator"], "speculators_model_type": kind, "hidden_size": hidden,
            "speculators_config": {"algorithm": kind, "verifier": {"name_or_path": verifier,
                                                                    "architectures": ["LlamaForCausalLM"]}}}


def head_weights(params: int) -> bytes:
    return safetensors_header_only({"fc.weight": ("BF16", [params // 1000, 1000])})


def nested(depth: int) -> dict:
    out: dict = {"x": 1}
    for _ in range(depth):
        out = {"a": out}
    return {"speculators_model_type": "eagle3", **out}


def populate(hub: FakeHub) -> dict[str, str]:
    """The Hub as `catalog update` will find it; returns repo -> main commit sha."""
    sha = {}
    sha["Qwen/Qwen3-8B"] = hub.add_repo("Qwen/Qwen3-8B", {"config.json": NEW_MODEL}, pipeline_tag=TG)
    sha["zai-org/GLM-Mini-9B"] = hub.add_repo(
        "zai-org/GLM-Mini-9B", {"config.json": NEW_MODEL, "model.safetensors": safetensors_header_only(
            NEW_MODEL_WEIGHTS)}, pipeline_tag=TG)
    hub.add_repo("deepseek-ai/Broken-Model", {"config.json": "{not json"}, pipeline_tag=TG)
    sha["RedHatAI/gemma-2-9b-it-speculator.eagle3"] = hub.add_repo(
        "RedHatAI/gemma-2-9b-it-speculator.eagle3",
        {"config.json": speculators("google/gemma-2-9b-it", 3584), "model.safetensors": head_weights(412_000_000)})
    hub.add_repo("nvidia/GLM-Mini-9B-speculator.eagle3", {"config.json": speculators("zai-org/GLM-Mini-9B", 4096)})
    hub.add_repo("FasterDecoding/medusa-vicuna-7b-v2", {"config.json": {
        "medusa_num_heads": 4, "medusa_num_layers": 1, "base_model_name_or_path": "lmsys/vicuna-7b-v1.3"}})
    hub.add_repo("yuhuili/EAGLE3-Unknown-8B", {"config.json": {"architectures": ["LlamaForCausalLMEagle3"],
                                                               "hidden_size": 4096, "draft_vocab_size": 32000}},
                 card_data={"base_model": "someorg/NotInCatalog-8B"})
    hub.add_repo("AngelSlim/No-Verifier-eagle3", {"config.json": {"architectures": ["LlamaForCausalLMEagle3"]}})
    hub.add_repo("z-lab/Bad-JSON-dflash", {"config.json": "{not json"})
    hub.add_repo("amd/Negative-Size-eagle3", {"config.json": speculators("google/gemma-2-9b-it", 3584),
                                              "model.safetensors": safetensors_header_only(
                                                  {"w": ("BF16", [-1000, 1000])})})
    hub.add_repo("Tengyunw/Absurd-Size-eagle3", {"config.json": speculators("google/gemma-2-9b-it", 3584),
                                                 "model.safetensors": head_weights(10**14)})
    hub.add_repo("lmsys/Gated-eagle3", {"config.json": speculators("google/gemma-2-9b-it", 3584)}, gated="manual")
    hub.add_repo("FasterDecoding/medusa-gone", {"config.json": {"medusa_num_heads": 3}})
    hub.add_repo("ibm-fms/deep-config", {"config.json": nested(30)})
    hub.add_repo("nvidia/Mismatch-speculator.eagle3", {"config.json": speculators("google/gemma-2-9b-it", 4096)})
    hub.add_repo("nvidia/Qwen3-8B-eagle-notes", {"config.json": {"model_type": "qwen3", "hidden_size": 4096}})
    # Deleted between the listing and the read: the listing shows it, its files answer 404 RepoNotFound.
    hub.fail_next(404, headers={"X-Error-Code": "RepoNotFound"}, count=10, path_contains="medusa-gone/resolve")
    return sha


@pytest.fixture
def hf_home(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """HF_HOME in a temp folder (the overlay lives there) and a catalog rebuilt before and after the test."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv(ov.DISABLE_ENV, raising=False)
    knowledge().reload()  # start from, and leave, a catalog read under this test's HF_HOME
    yield home
    knowledge().reload()


@pytest.fixture
def updated(fakehub, hub_settings, hf_home):
    sha = populate(fakehub)
    overlay = update_overlay(CatalogInput(action="update"), settings=hub_settings)
    return overlay, sha


def test_update_writes_overlay_rows_with_repo_sha_and_date(updated, hf_home) -> None:
    overlay, sha = updated
    path = hf_home / "specpick" / "catalog-overlay.json"
    assert path.is_file() and not list(path.parent.glob(".catalog-overlay-*")), "atomic write leaves no temp file"
    heads = {h.head_repo_id: h for h in overlay.heads}
    assert set(heads) == {"RedHatAI/gemma-2-9b-it-speculator.eagle3", "nvidia/GLM-Mini-9B-speculator.eagle3",
                          "FasterDecoding/medusa-vicuna-7b-v2", "zai-org/GLM-Mini-9B"}
    red = heads["RedHatAI/gemma-2-9b-it-speculator.eagle3"]
    repo = "RedHatAI/gemma-2-9b-it-speculator.eagle3"
    assert (red.method, red.verifier_repo_id, red.runtimes, red.publisher) == ("eagle3", "google/gemma-2-9b-it",
                                                                             ("vllm",), "vendor")
    assert red.head_params_b == 0.412 and f"hub:{repo}@{sha[repo]}" in red.source
    assert overlay.fetched_at[:10] in red.source
    assert heads["zai-org/GLM-Mini-9B"].method == "mtp"
    assert heads["FasterDecoding/medusa-vicuna-7b-v2"].runtimes == ("vllm", "trtllm")  # engine_support.csv rows
    (model,) = overlay.models
    assert model.repo_id == "zai-org/GLM-Mini-9B" and model.params_total_b == 9.421 and model.mtp_layers == 1
    assert f"@{sha['zai-org/GLM-Mini-9B']}" in model.source


def test_update_skips_and_counts_bad_metadata(updated, fakehub) -> None:
    overlay, _ = updated
    reasons = {s.repo_id: s.reason for s in overlay.skipped}
    assert reasons == {
        "deepseek-ai/Broken-Model": "bad-config", "z-lab/Bad-JSON-dflash": "bad-config",
        "ibm-fms/deep-config": "bad-config", "yuhuili/EAGLE3-Unknown-8B": "verifier-not-in-catalog",
        "AngelSlim/No-Verifier-eagle3": "no-verifier", "amd/Negative-Size-eagle3": "bad-size",
        "Tengyunw/Absurd-Size-eagle3": "bad-size", "lmsys/Gated-eagle3": "gated",
        "FasterDecoding/medusa-gone": "not-found", "nvidia/Mismatch-speculator.eagle3": "verifier-mismatch",
        "nvidia/Qwen3-8B-eagle-notes": "not-a-head",
    }
    # The embedded snapshot's own model is not read again, and nothing downloads weights (header ranges only).
    assert fakehub.requests("GET", "Qwen/Qwen3-8B/resolve") == []
    weights = [r for r in fakehub.requests("GET", ".safetensors")]
    assert weights and all(r.range is not None for r in weights)


def test_overlay_rows_flow_into_the_catalog_labelled(updated) -> None:
    cat = get_catalog()
    (head,) = [h for h in cat.heads_for("google/gemma-2-9b-it") if h.method == "eagle3"]
    assert head.head_repo_id == "RedHatAI/gemma-2-9b-it-speculator.eagle3" and head.fact_source == "overlay"
    model = cat.model("zai-org/GLM-Mini-9B")
    assert model.fact_source == "overlay" and cat.model("GLM-Mini-9B") is model
    assert all(h.fact_source == "catalog" for h in cat.heads_for("meta-llama/Llama-3.1-8B-Instruct"))
    assert resolve_model_spec("GLM-Mini-9B").source == "overlay"
    assert resolve_model_spec("google/gemma-2-9b-it").source == "catalog"


def test_a_long_running_process_answers_from_the_overlay_it_just_wrote(fakehub, hf_home, monkeypatch) -> None:
    """What `specpick mcp` and `chat` do: one process answers, runs `catalog update` through the same tool registry,
    and answers again; nothing but the update itself refreshes the catalog."""
    from specpick.skill.surfaces.registry import BY_NAME

    populate(fakehub)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    model_info, heads = BY_NAME["model_info"], BY_NAME["list_heads"]
    # Before: the model is answered by the automatic Hub look-up, not the catalog; the head list has no new head.
    assert model_info.run({"model": "zai-org/GLM-Mini-9B"}, caller="tool").spec.fact_source != "overlay"
    assert "RedHatAI/gemma-2-9b-it-speculator.eagle3" not in str(heads.run({"filter": "gemma-2-9b"}, caller="tool"))
    status = BY_NAME["catalog"].run({"action": "update"}, caller="tool")
    assert status.new_models == 1
    assert model_info.run({"model": "zai-org/GLM-Mini-9B"}, caller="tool").spec.fact_source == "overlay"
    assert "RedHatAI/gemma-2-9b-it-speculator.eagle3" in str(heads.run({"filter": "gemma-2-9b"}, caller="tool"))


def test_recommend_uses_the_overlay_head(updated, capsys) -> None:
    argv = ["recommend", "--verifier", "google/gemma-2-9b-it", "--workload", "chat", "--gpu", "H100-SXM",
            "--engine", "vllm", "--json"]
    assert main(argv) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["strategy"], answer["draft_model"]) == ("eagle3", "RedHatAI/gemma-2-9b-it-speculator.eagle3")
    # The answer cites where the head's facts came from: the Hub repo at its commit, through the overlay.
    (match,) = [c for c in answer["compatibility"] if c["name"] == "head_match"]
    assert match["verdict"] == "pass" and match["source"].startswith("hub:RedHatAI/gemma-2-9b-it-speculator.eagle3@")
    assert "catalog overlay" in match["source"]


def test_status_reports_snapshot_overlay_and_additions(updated, hf_home, capsys) -> None:
    status = catalog_status()
    assert status.snapshot_date == json.loads((ROOT / "tools/data/snapshot.json").read_text())["snapshot_date"]
    assert (status.new_models, status.new_heads) == (1, 4)
    assert status.overlay_path == str(hf_home / "specpick" / "catalog-overlay.json")
    assert status.skipped_by_reason["bad-config"] == 3 and status.skipped_by_reason["bad-size"] == 2
    assert main(["catalog", "status"]) == 0
    out = capsys.readouterr().out
    assert "adds 1 model(s) and 4 head(s)" in out and "RedHatAI/gemma-2-9b-it-speculator.eagle3 -> google" in out


def test_status_without_overlay_says_the_embedded_snapshot_answers(hf_home, capsys) -> None:
    assert main(["catalog", "status"]) == 0
    out = capsys.readouterr().out
    assert "overlay: none at" in out and "answers come from the embedded snapshot" in out
    assert len(get_catalog().heads) == catalog_status().embedded_heads


def test_offline_update_exits_5_and_keeps_the_overlay(updated, hf_home, monkeypatch, capsys) -> None:
    before = (hf_home / "specpick" / "catalog-overlay.json").read_bytes()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["catalog", "update"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.startswith("error: offline") and "the embedded snapshot" in err and "and the overlay from" in err
    assert (hf_home / "specpick" / "catalog-overlay.json").read_bytes() == before


def test_unreachable_hub_exits_5(hub_settings, hf_home, no_hub_backoff) -> None:
    dead = FakeHub().start()
    url = dead.url
    dead.stop()
    with pytest.raises(UnavailableError) as err:
        update_overlay(CatalogInput(action="update"), settings=hub_settings.model_copy(update={"endpoint": url}))
    assert "cannot reach the Hub" in err.value.message and "embedded snapshot" in err.value.message
    assert not (hf_home / "specpick").exists()


def test_stalled_hub_times_out_instead_of_hanging(fakehub, hub_settings, hf_home) -> None:
    populate(fakehub)
    fakehub.fail_next(stall_s=30, path_contains="/api/models")
    started = time.monotonic()
    with pytest.raises(UnavailableError) as err:
        update_overlay(CatalogInput(action="update"), settings=hub_settings.model_copy(update={"etag_timeout_s": 0.5}))
    assert time.monotonic() - started < 10 and "embedded snapshot" in err.value.message


def test_a_listing_that_stalls_after_the_probe_is_cut_by_the_time_budget(fakehub, hub_settings, hf_home) -> None:
    populate(fakehub)
    # The probe is the first /api/models request; the next one (the first real listing) hangs.
    fakehub.fail_next(stall_s=30, path_contains="/api/models", skip=1)
    started = time.monotonic()
    with pytest.raises(UnavailableError) as err:
        update_overlay(CatalogInput(action="update", time_budget_s=1.0), settings=hub_settings)
    assert time.monotonic() - started < 10 and "did not answer" in err.value.message
    # The abandoned listing thread ends once the Hub is gone (its retries hit a closed port, back-off patched);
    # wait for it so it cannot reach a later test's Hub on a reused port.
    fakehub.stop()
    for thread in threading.enumerate():
        if thread.name == "specpick-hub-listing":
            thread.join(10)
            assert not thread.is_alive()


def test_rejected_token_exits_4(fakehub, hub_settings, hf_home, monkeypatch, capsys) -> None:
    populate(fakehub)
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_valid_token")
    assert main(["catalog", "update"]) == EXIT_ACCESS
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "HF_TOKEN" in err and "hf_not_a_valid_token" not in err
    with pytest.raises(HubAccessError):
        update_overlay(CatalogInput(action="update"), settings=hub_settings.model_copy(
            update={"token": SecretStr("hf_not_a_valid_token")}))


def test_bounds_per_query_and_total(fakehub, hub_settings, hf_home) -> None:
    populate(fakehub)
    overlay = update_overlay(CatalogInput(action="update", limit_per_query=1, max_repos=2), settings=hub_settings)
    assert overlay.repos_seen == 2 and overlay.stopped_early == "stopped at the cap of 2 repos"
    listings = [parse_qs(r.query) for r in fakehub.requests("GET", "/api/models")]
    probe, queries = listings[0], listings[1:]
    # One listing per model publisher, head publisher, (publisher, term) search and bare term; heads ask for cards.
    heads = len(HEAD_PUBLISHERS) + len(HEAD_PUBLISHER_SEARCHES) + len(HEAD_SEARCHES)
    assert probe == {"limit": ["1"]} and len(queries) == len(MODEL_PUBLISHERS) + heads
    assert all(q["limit"] == ["1"] for q in queries)
    assert sum("author" in q for q in queries) == len(MODEL_PUBLISHERS) + heads - len(HEAD_SEARCHES)
    assert sum(q.get("cardData") == ["true"] for q in queries) == heads
    configs = {r.path for r in fakehub.requests("GET", "/config.json")}
    assert len(configs) == 2


def test_rows_the_update_did_not_revisit_are_kept(updated, fakehub, hub_settings) -> None:
    overlay = update_overlay(CatalogInput(action="update", max_repos=1), settings=hub_settings)
    assert {h.head_repo_id for h in overlay.heads} >= {"RedHatAI/gemma-2-9b-it-speculator.eagle3",
                                                       "FasterDecoding/medusa-vicuna-7b-v2"}


def test_a_new_head_can_link_to_a_verifier_an_earlier_update_added(updated, fakehub, hub_settings) -> None:
    fakehub.repos.pop("zai-org/GLM-Mini-9B")  # not listed again this time
    fakehub.add_repo("lmsys/GLM-Mini-9B-eagle3", {"config.json": speculators("zai-org/GLM-Mini-9B", 4096)})
    overlay = update_overlay(CatalogInput(action="update"), settings=hub_settings)
    assert "lmsys/GLM-Mini-9B-eagle3" in {h.head_repo_id for h in overlay.heads}
    assert "zai-org/GLM-Mini-9B" in {m.repo_id for m in overlay.models}


def test_status_says_when_the_overlay_predates_the_snapshot(updated, hf_home, capsys) -> None:
    path = hf_home / "specpick" / "catalog-overlay.json"
    data = json.loads(path.read_text())
    data["snapshot"] = "2020-01-01"
    path.write_text(json.dumps(data))
    assert main(["catalog", "status"]) == 0
    assert "written against an older snapshot (2020-01-01)" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{broken", json.dumps({"format": 1, "models": "nope"}),
                                     json.dumps({"format": 99, "fetched_at": "x", "endpoint": "y", "snapshot": "z"})])
def test_unreadable_overlay_is_ignored_and_reported(hf_home, content, capsys) -> None:
    path = hf_home / "specpick" / "catalog-overlay.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert len(get_catalog().heads) == catalog_status().embedded_heads
    assert main(["catalog", "status"]) == 0
    assert "is ignored:" in capsys.readouterr().out


def test_overlay_can_be_switched_off(updated, monkeypatch, capsys) -> None:
    monkeypatch.setenv(ov.DISABLE_ENV, "off")
    knowledge().reload()  # the switch is read when the catalog is built
    assert get_catalog().find_model("zai-org/GLM-Mini-9B") is None
    assert main(["catalog", "status"]) == 0
    assert "overlay: ignored" in capsys.readouterr().out


# --- scripts/build_catalog.py: the embedded snapshot rebuilds byte for byte --------------------------------------

def _build(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "build_catalog.py"), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=60, check=False)


def test_build_catalog_is_reproducible_and_matches_the_committed_tables(tmp_path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert _build(first).returncode == 0 and _build(second).returncode == 0
    names = sorted(p.name for p in first.iterdir())
    assert "snapshot.json" in names and names == sorted(p.name for p in second.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
        committed = ROOT / "tools" / "data" / name
        assert (first / name).read_bytes() == committed.read_bytes(), (
            f"tools/data/{name} differs from a rebuild: run `python scripts/build_catalog.py` and commit the result")
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_catalog.py"), "--check"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stderr


def test_build_catalog_moves_the_date_only_when_a_table_changes(tmp_path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "tools" / "data", src, ignore=shutil.ignore_patterns("prompts", "*.md"))
    old = json.loads((src / "snapshot.json").read_text())
    assert _build(src, "--src", str(src)).returncode == 0
    assert json.loads((src / "snapshot.json").read_text()) == old
    # A valid new row, written under the table's current header (columns are added as the catalog grows).
    columns = (src / "gpus.csv").read_text(encoding="utf-8").split("\n", 1)[0].strip().split(",")
    row = {"key": "X1", "name": "Test GPU", "memory_gb": "1", "bandwidth_gbps": "1", "bf16_tflops": "1",
           "vendor": "nvidia", "source": "test row"}
    assert set(row) <= set(columns), columns
    with open(src / "gpus.csv", "a", encoding="utf-8", newline="") as handle:
        handle.write(",".join(row.get(c, "") for c in columns) + "\r\n")
    assert _build(src, "--src", str(src), "--date", "2030-01-02").returncode == 0
    new = json.loads((src / "snapshot.json").read_text())
    assert new["snapshot_date"] == "2030-01-02" and new["tables"]["gpus.csv"]["rows"] == old["tables"]["gpus.csv"][
        "rows"] + 1


def test_build_catalog_rejects_a_broken_table_listing_every_problem(tmp_path) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "tools" / "data", src, ignore=shutil.ignore_patterns("prompts", "*.md"))
    # One row with three problems (a head already listed, a negative size, no source), written under the table's
    # current header so it is judged on its values, not rejected for its width.
    columns = (src / "heads.csv").read_text(encoding="utf-8").split("\n", 1)[0].strip().split(",")
    bad = {"head_repo_id": "yuhuili/EAGLE-Vicuna-7B-v1.3", "method": "eagle", "method_detail": "x",
           "verifier_repo_id": "lmsys/vicuna-7b-v1.3", "head_params_b": "-1", "runtimes": "vllm",
           "publisher": "official", "trained_dtype": "bf16", "source": "", "notes": "n"}
    assert set(bad) <= set(columns), columns
    with open(src / "heads.csv", "a", encoding="utf-8", newline="") as handle:
        handle.write(",".join(bad.get(c, "") for c in columns) + "\r\n")
    result = _build(tmp_path / "out", "--src", str(src))
    assert result.returncode == 2
    assert "duplicate key" in result.stderr and "negative" in result.stderr and "no source" in result.stderr
    assert not (tmp_path / "out").exists()


# --- where the overlay lives, and how a head's config is read ------------------------------------------------------

@pytest.mark.parametrize(("env", "expected"), [
    ({"HF_HOME": "/h/home", "HF_HUB_CACHE": "/c/hub"}, "/h/home/specpick/catalog-overlay.json"),
    ({"HF_HUB_CACHE": "/c/hub"}, "/c/specpick/catalog-overlay.json"),
    ({}, str(Path.home() / ".cache/huggingface/specpick/catalog-overlay.json")),
])
def test_overlay_lives_in_the_hugging_face_cache_folder(env, expected, monkeypatch) -> None:
    for name in ("HF_HOME", "HF_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert str(ov.overlay_path()) == expected


@pytest.mark.parametrize(("repo", "config", "base", "expected"), [
    ("a/medusa", {"medusa_num_heads": 5, "base_model_name_or_path": "lmsys/vicuna-7b-v1.3"}, None,
     ("medusa", "lmsys/vicuna-7b-v1.3")),
    ("ibm-fms/llama3-8b-accelerator", {"model_type": "mlp_speculator", "n_predict": 4}, "meta-llama/Meta-Llama-3-8B",
     ("mlp_speculator", "meta-llama/Meta-Llama-3-8B")),
    ("z-lab/Qwen3-8B-DFlash-b16", {"architectures": ["DFlashDraftModel"]}, "Qwen/Qwen3-8B", ("dflash", "Qwen/Qwen3-8B")),
    ("yuhuili/EAGLE-LLaMA3-Instruct-8B", {"architectures": ["LlamaForCausalLM"], "bias": True}, "meta-llama/M-8B",
     ("eagle", "meta-llama/M-8B")),
    ("RedHatAI/x.dflash", speculators("Qwen/Qwen3-8B", 4096, "dflash"), None, ("dflash", "Qwen/Qwen3-8B")),
    # A local path as the verifier is not a Hub id: the card's base_model answers instead.
    ("o/h", {**speculators("/models/llama", 4096)}, "meta-llama/Llama-3.1-8B-Instruct",
     ("eagle3", "meta-llama/Llama-3.1-8B-Instruct")),
    ("o/h", speculators("x", 1, "unknown-kind"), None, "unknown-method"),
    ("o/h", {"medusa_num_heads": "five"}, None, "bad-config"),
    ("o/plain-llama", {"architectures": ["LlamaForCausalLM"], "bias": True}, None, "not-a-head"),
    ("o/h", [1, 2], None, "bad-config"),
])
def test_head_configs_are_classified(repo, config, base, expected) -> None:
    from specpick.tools.hub.discover import Skip, read_head

    facts = read_head(repo, config, base)
    got = facts.reason if isinstance(facts, Skip) else (facts.method, facts.verifier_repo_id)
    assert got == expected


def test_a_head_listed_under_a_model_publisher_is_read_as_a_head(fakehub, hub_settings, hf_home) -> None:
    fakehub.add_repo("Qwen/Qwen3-8B-speculator.eagle3", {"config.json": {
        **speculators("Qwen/Qwen3-8B", 4096), "num_hidden_layers": 1, "num_attention_heads": 32, "vocab_size": 151936,
        "intermediate_size": 12288}}, pipeline_tag=TG)
    overlay = update_overlay(CatalogInput(action="update"), settings=hub_settings)
    assert overlay.models == [] and [(h.head_repo_id, h.method) for h in overlay.heads] == [
        ("Qwen/Qwen3-8B-speculator.eagle3", "eagle3")]


def test_the_catalog_tool_is_on_every_surface(hf_home) -> None:
    from specpick.skill.surfaces.registry import BY_NAME

    tool = BY_NAME["catalog"]
    schema = tool.tool_definition()["input_schema"]
    assert schema["properties"]["action"]["enum"] == ["status", "update"]
    result = tool.run({"action": "status"}, caller="tool")
    assert result.overlay_exists is False and result.snapshot_date == ov.snapshot_date()

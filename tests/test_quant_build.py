"""Safetensors quantized builds (``<base>-FP8``, ``-NVFP4``, ``-quantized.w4a16`` ...) named as the verifier: the name
rule (tools/catalog/quant_names.py), offline resolution to the base model (tools/hub/quant_ref.py), the heads
published for a build applying to its base and back (tables.heads_for), and the real CLI offline."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from importlib import resources

import pytest

from specpick.tools.catalog.quant_names import base_repo_name, split_quant_name
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import EXIT_INPUT, EXIT_NOT_FOUND, NotFoundError
from specpick.tools.hub.resolve import resolve_model_spec
from specpick.tools.vocab import BYTES_PER_PARAM, QUANTIZATIONS


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("specpick.tools").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


# Names as their publishers write them (tools/data/models.csv and heads.csv, the RedHatAI/nvidia/Qwen conventions).
@pytest.mark.parametrize("name,model,fmt", [
    ("zai-org/GLM-5.2-FP8", "GLM-5.2", "fp8"),  # heads.csv verifier of RedHatAI/GLM-5.2-speculator.dspark
    ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "Qwen3-Next-80B-A3B-Instruct", "fp8"),  # models.csv
    ("RedHatAI/Llama-4-Maverick-17B-128E-Instruct-quantized.w4a16", "Llama-4-Maverick-17B-128E-Instruct", "int4"),
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "Llama-3.1-8B-Instruct", "fp8"),
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-Dynamic", "Llama-3.1-8B-Instruct", "fp8"),
    ("RedHatAI/Qwen3-8B-W8A8", "Qwen3-8B", "int8"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B-Instruct", "int4"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen2.5-7B-Instruct", "int8"),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen2.5-7B-Instruct", "int4"),
    ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "Llama-3.3-70B-Instruct", "nvfp4"),
    ("nvidia/DeepSeek-R1-FP4", "DeepSeek-R1", "nvfp4"),  # NVIDIA's -FP4 checkpoints are NVFP4
    ("openai/gpt-oss-20b-MXFP4", "gpt-oss-20b", "mxfp4"),
])
def test_the_name_rule_reads_the_publishers_suffixes(name: str, model: str, fmt: str) -> None:
    q = split_quant_name(name)
    assert q is not None and (q.model, q.quantization) == (model, fmt) and fmt in QUANTIZATIONS


@pytest.mark.parametrize("name", ["zai-org/GLM-5.2", "openai/gpt-oss-20b", "meta-llama/Llama-3.1-8B-Instruct",
                                  "deepseek-ai/DeepSeek-V4-Flash"])
def test_a_plain_name_is_no_build(name: str) -> None:
    assert split_quant_name(name) is None and base_repo_name(name) is None


def test_nvfp4_is_16_values_in_9_bytes() -> None:
    # NVIDIA cuTile tutorial 11: "8 packed FP4 bytes plus one FP8 scale byte, or 9 bytes total" per 16 values.
    assert BYTES_PER_PARAM["nvfp4"] * 16 == pytest.approx(9.0)
    assert BYTES_PER_PARAM["mxfp4"] < BYTES_PER_PARAM["nvfp4"] < BYTES_PER_PARAM["fp8"]


def test_every_fp8_catalog_row_stays_its_own_row() -> None:
    # An exact catalog row wins over the name rule (zai-org/GLM-4.7-FP8 is a models.csv row), in both resolvers.
    fp8_rows = [r["repo_id"] for r in _rows("models.csv") if r["repo_id"].endswith("-FP8")]
    assert "zai-org/GLM-4.7-FP8" in fp8_rows
    for repo in fp8_rows:
        for catalog_only in (False, True):
            got = resolve_model_spec(repo, catalog_only=catalog_only)
            assert got.spec.repo_id == repo and got.quantization is None and got.served_as is None


@pytest.mark.parametrize("catalog_only", [False, True])
def test_a_build_of_a_catalog_model_resolves_offline_to_it(monkeypatch,  # type: ignore[no-untyped-def]
                                                            catalog_only: bool) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    got = resolve_model_spec("RedHatAI/Llama-3.1-8B-Instruct-FP8", catalog_only=catalog_only)
    assert got.spec.repo_id == "meta-llama/Llama-3.1-8B-Instruct" and got.quantization == "fp8"
    assert got.served_as == "RedHatAI/Llama-3.1-8B-Instruct-FP8"
    assert any("base model and format taken from the repo name" in n for n in got.notes)


def test_an_unknown_base_is_a_not_found_with_close_matches() -> None:
    with pytest.raises(NotFoundError, match=r"reads as a fp8 build .*Did you mean: meta-llama/Llama-3\.1-8B-Instruct"):
        resolve_model_spec("acme/Llama-3.1-8B-Instruct-Foo-FP8", catalog_only=True)


def test_heads_for_a_build_apply_to_its_base_and_back() -> None:
    # heads.csv: RedHatAI/GLM-5.2-speculator.dspark lists verifier zai-org/GLM-5.2-FP8.
    listed = {r["head_repo_id"] for r in _rows("heads.csv") if r["verifier_repo_id"] == "zai-org/GLM-5.2-FP8"}
    assert "RedHatAI/GLM-5.2-speculator.dspark" in listed
    cat = get_catalog()
    for verifier in ("zai-org/GLM-5.2", "zai-org/GLM-5.2-FP8"):
        assert listed <= {h.head_repo_id for h in cat.heads_for(verifier)}
    # ... and never to a different model of the family (GLM-4.7's heads are not GLM-5.2's).
    assert not [h for h in cat.heads_for("zai-org/GLM-5.2") if "4.7" in h.verifier_repo_id]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    entry = "import sys; from specpick.skill.surfaces.entry import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", entry, *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_cli_recommends_for_an_fp8_build_offline() -> None:
    out = _cli("recommend", "--verifier", "zai-org/GLM-5.2-FP8", "--workload", "chat", "--gpu", "B200",
               "--gpus", "8")
    assert out.returncode == 0, out.stderr
    assert "vllm serve zai-org/GLM-5.2-FP8 " in out.stdout  # the build is what the engine loads
    assert "a fp8 build (FP8) of zai-org/GLM-5.2; base model and format taken from the repo name" in out.stdout


def test_cli_dspark_on_the_base_takes_the_head_published_for_its_fp8_build() -> None:
    out = _cli("recommend", "--verifier", "zai-org/GLM-5.2", "--method", "dspark", "--workload", "chat", "--gpu",
               "B200", "--gpus", "16", "--json")
    assert out.returncode == 0, out.stderr
    import json

    rec = json.loads(out.stdout)
    assert rec["strategy"] == "dspark" and rec["draft_model"] == "RedHatAI/GLM-5.2-speculator.dspark"
    ids = [f["id"] for f in rec["flags"]]
    assert "bf16_verifier_quantized_head" in ids and "quantized_verifier_bf16_head" not in ids


def test_cli_dspark_on_the_fp8_build_raises_no_bf16_head_warning() -> None:
    out = _cli("recommend", "--verifier", "zai-org/GLM-5.2-FP8", "--method", "dspark", "--workload", "chat",
               "--gpu", "B200", "--gpus", "8", "--json")
    assert out.returncode == 0, out.stderr
    import json

    ids = [f["id"] for f in json.loads(out.stdout)["flags"]]
    assert not {"bf16_verifier_quantized_head", "quantized_verifier_bf16_head"} & set(ids)


def test_cli_dspark_on_deepseek_v4_names_the_recipes_fused_drafter() -> None:
    out = _cli("recommend", "--verifier", "deepseek-ai/DeepSeek-V4-Flash", "--method", "dspark", "--workload", "chat",
               "--gpu", "B200", "--gpus", "8")
    assert out.returncode == EXIT_INPUT
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1
    assert "drafter inside the checkpoint" in out.stderr and '"draft_sample_method":"probabilistic"' in out.stderr


@pytest.mark.parametrize("verb,args", [
    ("speedup", ["--method", "eagle3", "--workload", "chat", "--gpu", "H100"]),
    ("vram", ["--gpu", "H100"]),
    ("engine-config", ["--engine", "vllm", "--method", "ngram"]),
])
def test_cli_an_fp8_name_with_an_unknown_base_is_one_line(verb: str, args: list[str]) -> None:
    out = _cli(verb, "--verifier", "acme/Llama-3.1-8B-Instruct-Foo-FP8", *args)
    assert out.returncode == EXIT_NOT_FOUND, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and "Did you mean" in out.stderr


@pytest.mark.parametrize("name,base_file", [
    ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "Llama-3.3-70B-Instruct-Q4_K_M.gguf"),
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "Llama-3.1-8B-Instruct-Q8_0.gguf"),
])
def test_llama_cpp_converts_a_quantized_build_from_its_base(monkeypatch, name: str,  # type: ignore[no-untyped-def]
                                                           base_file: str) -> None:
    # llama-quantize has no FP8/NVFP4 type (its types are tools/vocab.GGUF_QUANTIZATIONS): the GGUF comes from the
    # base model's BF16 weights at a type it has, and the config says which.
    from specpick.tools.engines.setting import EngineConfigInput
    from specpick.tools.commands.engine_config import engine_config_tool
    from specpick.tools.vocab import GGUF_QUANTIZATIONS

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = engine_config_tool(EngineConfigInput(engine="llamacpp", method="ngram", verifier=name))
    assert cfg.argv[cfg.argv.index("-m") + 1] == base_file
    assert base_file.rsplit("-", 1)[1].removesuffix(".gguf").lower() in GGUF_QUANTIZATIONS
    assert not [line for line in cfg.setup_commands if "FP8" in line or "NVFP4" in line]  # the build is not converted
    assert any("llama.cpp has no" in n for n in cfg.notes)


def test_a_successor_published_for_the_build_replaces_the_preview_on_the_base() -> None:
    # heads.csv: RedHatAI/GLM-5.2-speculator.dspark-preview says superseded_by RedHatAI/GLM-5.2-speculator.dspark, both
    # for zai-org/GLM-5.2-FP8: asked about the base, the successor alone is offered.
    from specpick.tools.deploy.drafts import published_heads

    for verifier in ("zai-org/GLM-5.2", "zai-org/GLM-5.2-FP8"):
        assert [h.head_repo_id for h in published_heads(verifier, "dspark")] == ["RedHatAI/GLM-5.2-speculator.dspark"]


def test_mtp_layers_in_a_builds_checkpoint_stay_that_builds() -> None:
    # heads.csv: zai-org/GLM-4.6-FP8 lists itself as its MTP drafter (the layers are in that checkpoint), not a repo
    # the BF16 zai-org/GLM-4.6 could load beside its own.
    cat = get_catalog()
    assert "zai-org/GLM-4.6-FP8" in {h.head_repo_id for h in cat.heads_for("zai-org/GLM-4.6-FP8")}
    assert "zai-org/GLM-4.6-FP8" not in {h.head_repo_id for h in cat.heads_for("zai-org/GLM-4.6")}


def test_a_catalog_fp8_row_with_its_bases_head_is_flagged() -> None:
    # heads.csv: nvidia/Llama-4-Maverick-17B-128E-Eagle3 was published for the BF16 meta-llama/Llama-4-Maverick-17B-
    # 128E-Instruct; models.csv holds the -FP8 build as its own row (dtype fp8).
    import json

    head = get_catalog().head("nvidia/Llama-4-Maverick-17B-128E-Eagle3")
    assert head is not None and head.verifier_repo_id == "meta-llama/Llama-4-Maverick-17B-128E-Instruct"
    out = _cli("recommend", "--verifier", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "--method", "eagle3",
               "--workload", "chat", "--gpu", "H100", "--gpus", "8", "--json")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    head_row = get_catalog().head(rec["draft_model"])
    assert head_row is not None and head_row.verifier_repo_id == "meta-llama/Llama-4-Maverick-17B-128E-Instruct"
    assert "quantized_verifier_bf16_head" in [f["id"] for f in rec["flags"]]

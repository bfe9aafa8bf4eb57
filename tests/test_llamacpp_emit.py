"""llama-server commands that run as printed (issue 25): GGUF in (-m path, -hf GGUF repo, or conversion first), the
flag names of the build the user gives, one slot for one user, partial offload, layer split."""

from __future__ import annotations

import shlex
import struct
from pathlib import Path

import pytest

from specpick.tools.checks.engine_config import build_engine_config
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.engines.llamacpp import build_number


def _cfg(**kw):
    base = dict(engine="llamacpp", method="draft_model", verifier="meta-llama/Llama-3.1-8B-Instruct",
                draft_model="meta-llama/Llama-3.2-1B-Instruct", num_draft_tokens=5)
    base.update(kw)
    return build_engine_config(EngineConfigInput(**base))


def _argv(cfg) -> list[str]:
    return shlex.split(cfg.launch_command)


def test_a_gguf_repo_loads_with_hf_and_a_gguf_path_with_m() -> None:
    repo = _cfg(gguf_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M",
                draft_model="bartowski/Llama-3.2-1B-Instruct-GGUF")
    argv = _argv(repo)
    assert argv[:3] == ["llama-server", "-hf", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"]
    assert argv[argv.index("--spec-draft-hf") + 1] == "bartowski/Llama-3.2-1B-Instruct-GGUF"
    assert not repo.setup_commands  # nothing to convert
    path = _cfg(gguf_source="/models/my dir/Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    assert _argv(path)[1:3] == ["-m", "/models/my dir/Llama-3.1-8B-Instruct-Q4_K_M.gguf"]


def test_a_safetensors_verifier_is_converted_before_the_launch() -> None:
    # -hf takes GGUF repos only (server README: "-hf <user>/<model>[:quant]"): a safetensors repo is never passed to it.
    cfg = _cfg(gguf_quant="q4_k_m")
    argv = _argv(cfg)
    assert "-hf" not in argv and "meta-llama/Llama-3.1-8B-Instruct" not in argv
    model_file = argv[argv.index("-m") + 1]
    convert = [shlex.split(c) for c in cfg.setup_commands]
    # convert_hf_to_gguf.py writes f32/f16/bf16/q8_0 itself (its --outtype choices); Q4_K_M goes through llama-quantize.
    conv = next(c for c in convert if c[:2] == ["python", "convert_hf_to_gguf.py"] and "Llama-3.1-8B" in c[2])
    assert conv[conv.index("--outtype") + 1] in {"f32", "f16", "bf16", "q8_0", "tq1_0", "tq2_0", "auto"}
    quant = next(c for c in convert if c[0] == "llama-quantize")
    assert quant[1] == conv[conv.index("--outfile") + 1] and quant[2] == model_file and quant[3] == "Q4_K_M"
    # The draft too: a safetensors draft becomes the -md file the command loads.
    draft_file = argv[argv.index("-md") + 1]
    assert any(c[:2] == ["python", "convert_hf_to_gguf.py"] and c[c.index("--outfile") + 1] == draft_file
               for c in convert)


def test_an_eagle3_head_is_converted_against_its_verifier() -> None:
    cfg = _cfg(method="eagle3", draft_model="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
               gguf_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
    convert = [shlex.split(c) for c in cfg.setup_commands]
    conv = next(c for c in convert if "convert_hf_to_gguf.py" in c)
    target = conv[conv.index("--target-model-dir") + 1]
    # the verifier's safetensors directory is downloaded before the head's conversion reads it
    assert convert.index(["hf", "download", "meta-llama/Llama-3.1-8B-Instruct", "--local-dir", target]) < \
        convert.index(conv)
    assert _argv(cfg)[_argv(cfg).index("--spec-type") + 1] == "draft-eagle3"


def test_an_old_build_gets_the_flags_it_had_and_a_new_one_todays() -> None:
    # PR #22397 replaced --draft-max with --spec-draft-n-max; b7815 (2026-01-23) predates it.
    old = _argv(_cfg(engine_version="b7815", gguf_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
                     draft_model="bartowski/Llama-3.2-1B-Instruct-GGUF"))
    assert "--draft-max" in old and "--spec-draft-n-max" not in old and "--spec-type" not in old
    assert old[old.index("-hfd") + 1] == "bartowski/Llama-3.2-1B-Instruct-GGUF"
    new = _argv(_cfg(engine_version="b9626", gguf_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"))
    assert "--spec-draft-n-max" in new and "--draft-max" not in new
    between = _cfg(engine_version="b8500", gguf_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
    assert any("--draft-max" in n for n in between.notes)  # we do not know which side b8500 is on: it says so
    old_ngram = _argv(_cfg(engine_version="b7000", method="ngram", draft_model=None, prompt_lookup_max=4,
                           gguf_source="x/y-GGUF"))
    assert old_ngram[old_ngram.index("--spec-ngram-size-n") + 1] == "4"


@pytest.mark.parametrize("text", ["b6000", "b12345"])
def test_build_tags_are_releases(text: str) -> None:
    assert build_number(text) == int(text[1:])
    EngineConfigInput(engine="llamacpp", method="ngram", verifier="meta-llama/Llama-3.1-8B-Instruct",
                      engine_version=text)


def test_one_user_gets_one_slot_offload_and_a_layer_split() -> None:
    argv = _argv(_cfg(gguf_source="x/y-GGUF", parallel_slots=1, gpu_layers=20, tensor_parallel=2))
    assert argv[argv.index("--parallel") + 1] == "1"
    assert argv[argv.index("-ngl") + 1] == "20"
    assert argv[argv.index("--split-mode") + 1] == "layer"
    moe = _argv(_cfg(gguf_source="x/y-GGUF", n_cpu_moe=12))
    assert moe[moe.index("--n-cpu-moe") + 1] == "12"


def test_a_bad_gguf_source_is_refused() -> None:
    with pytest.raises(ValueError):
        EngineConfigInput(engine="llamacpp", method="ngram", verifier="meta-llama/Llama-3.1-8B-Instruct",
                          gguf_source="x/y-GGUF;rm -rf /")
    with pytest.raises(ValueError):
        EngineConfigInput(engine="llamacpp", method="ngram", verifier="meta-llama/Llama-3.1-8B-Instruct",
                          gguf_source="a\nb.gguf")


def _gguf_file(path: Path) -> Path:
    key = "general.file_type"  # llama.h: LLAMA_FTYPE_MOSTLY_Q4_K_M = 15
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key.encode()
                     + struct.pack("<I", 4) + struct.pack("<I", 15))
    return path


def test_recommend_for_a_gguf_repo_and_a_gguf_path_launches_what_was_named(tmp_path: Path) -> None:
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    path = _gguf_file(tmp_path / "Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    for name, words in [("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
                         ["-hf", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"]), (str(path), ["-m", str(path)])]:
        rec = plan(PlannerInputs(verifier=name, workload="code", gpu="RTX 4090", engine="llamacpp", concurrency=1))
        argv = shlex.split(rec.engine_config.launch_command)
        assert argv[1:3] == words
        assert argv[argv.index("--parallel") + 1] == "1"
        assert "meta-llama/Llama-3.1-8B-Instruct" not in argv  # never -hf a safetensors repo


def test_a_model_larger_than_the_gpu_gets_partial_offload() -> None:
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    # Llama-3.1-70B Q4_K_M weights (> 40 GiB) on one 24 GB RTX 4090 (gpus.csv): some layers must stay in system RAM.
    rec = plan(PlannerInputs(verifier="bartowski/Meta-Llama-3.1-70B-Instruct-GGUF", workload="chat",
                             gpu="RTX 4090", engine="llamacpp", concurrency=1))
    argv = shlex.split(rec.engine_config.launch_command)
    layers = int(argv[argv.index("-ngl") + 1])
    assert 0 < layers < 80  # Llama-3.1-70B has 80 layers (config.json num_hidden_layers)


# --- llama.cpp's own words in a llama.cpp answer ------------------------------------------------------------------

def test_a_llamacpp_answer_measures_with_llama_servers_numbers() -> None:
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    rec = plan(PlannerInputs(verifier="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", workload="code", gpu="RTX 4090",
                             engine="llamacpp", concurrency=1))
    text = rec.model_dump_json()
    # vLLM's words (ENGINES.md: vllm:spec_decode_* counters, port 8000, paged KV) stay out of a llama.cpp answer.
    for vllm_word in ("vllm:spec_decode", "HOST:8000", "paged slots", "production logs", "vllm bench"):
        assert vllm_word not in text, vllm_word
    names = {m.name for m in rec.measurement_plan.metrics}
    assert "timings.draft_n / timings.draft_n_accepted" in names and "GET /slots" in names
    assert any("127.0.0.1:8080/slots" in c for c in rec.measurement_plan.commands)


def test_the_hidden_state_flag_names_llama_cpp_where_it_runs_the_head() -> None:
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    # engine_support.csv: llamacpp eagle3 "yes" (--spec-type draft-eagle3, llama-server --help @00dc805)
    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", gpu="RTX 4090",
                             engine="llamacpp", method="eagle3"))
    flag = next(f for f in rec.flags if f.id == "eagle_needs_internals")
    assert "llama.cpp" in flag.message


def test_skill_md_says_llama_cpp_runs_eagle3_and_mtp() -> None:
    text = (Path(__file__).resolve().parents[1] / "SKILL.md").read_text()
    assert "only vLLM, SGLang and TensorRT-LLM" not in text
    assert "draft-eagle3" in text and "draft-mtp" in text


def test_engine_config_takes_a_gguf_repo_as_the_verifier(capsys) -> None:
    from specpick.skill.surfaces.cli import main

    rc = main(["engine-config", "--engine", "llamacpp", "--method", "mtp", "--verifier",
               "unsloth/Qwen3.8-27B-GGUF:Q4_K_M", "--num-draft-tokens", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    launch = next(line for line in out.splitlines() if line.startswith("launch: "))
    assert shlex.split(launch[len("launch: "):])[:3] == ["llama-server", "-hf", "unsloth/Qwen3.8-27B-GGUF:Q4_K_M"]

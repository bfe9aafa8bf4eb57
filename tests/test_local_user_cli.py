"""The local-user path on the command line and the tool schemas: full option names only, engine-config sized from
the deployment, MLX refused in one line, no empty command in a llama.cpp answer (issue 25)."""

from __future__ import annotations

import pytest

from specpick.skill.surfaces.cli import main
from specpick.skill.surfaces.registry import BY_CLI
from specpick.skill.surfaces.tooluse import execute
from specpick.tools.errors import EXIT_INPUT
from specpick.tools.vocab import ENGINES

QWEN_GGUF = "unsloth/Qwen3.8-27B-GGUF:Q8_0"
LOCAL_VERBS = ("recommend", "speedup", "vram", "engine-config")


def _run(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors leave through _Parser.error
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_engine_config_takes_gpu_and_computes_the_layer_split(capsys) -> None:  # type: ignore[no-untyped-def]
    # `--gpu RTX-3060` was read as an abbreviation of --gpu-layers ("invalid int value").
    code, out, err = _run(capsys, "engine-config", "--verifier", QWEN_GGUF, "--engine", "llamacpp", "--method", "mtp",
                          "--gpu", "RTX-3060", "--gpus", "1", "--json")
    assert code == 0, err
    import json

    cfg = json.loads(out)
    code, out, err = _run(capsys, "vram", "--verifier", QWEN_GGUF, "--engine", "llamacpp", "--gpu", "RTX-3060",
                          "--json")
    assert code == 0, err
    assert cfg["argv"][cfg["argv"].index("-ngl") + 1] == str(json.loads(out)["offload"]["layers_on_gpu"])


@pytest.mark.parametrize("args", [
    ["engine-config", "--verifier", QWEN_GGUF, "--engine", "llamacpp", "--method", "ngram", "--gpu-lay", "3"],
    ["speedup", "--verifier", "llama-3.1-8b", "--workload", "chat", "--method", "ngram", "--gpu", "H100",
     "--num-draft", "3"],
    ["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat", "--conc", "4"],
])
def test_an_abbreviated_option_is_refused_not_guessed(capsys, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    code, _, err = _run(capsys, *args)
    assert code == EXIT_INPUT
    assert err.startswith("error: unrecognized arguments") and err.count("\n") == 1


@pytest.mark.parametrize("verb", [*LOCAL_VERBS, "train-plan"])
@pytest.mark.parametrize("engine", ["mlx", "MLX", "mlx-lm"])
def test_mlx_is_refused_in_one_line_naming_what_is_covered(capsys, verb: str, engine: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = _run(capsys, verb, "--verifier", "llama-3.1-8b", "--engine", engine)
    assert code == EXIT_INPUT and out == ""
    assert err.startswith("error: argument --engine: MLX") and err.count("\n") == 1
    assert "not covered" in err and f"covered engines: {', '.join(ENGINES)}" in err


def test_the_tools_refuse_mlx_with_the_same_words() -> None:
    outcome = execute("recommend", {"verifier": "llama-3.1-8b", "workload": "chat", "engine": "mlx"})
    assert outcome.is_error and "MLX" in outcome.content and "not covered" in outcome.content


@pytest.mark.parametrize("verb", LOCAL_VERBS)
def test_the_tool_schemas_take_the_local_fields(verb: str) -> None:
    schema = BY_CLI[verb].input_schema()
    props = schema["properties"]
    assert {"host_memory_gib", "host_bandwidth_gbps", "quantization" if verb != "engine-config" else "gpu"} <= set(
        props)
    engine = props["engine"]
    choices = engine.get("enum") or next(a.get("enum") for a in engine.get("anyOf", []) if a.get("enum"))
    assert tuple(choices) == ENGINES


def test_a_llama_cpp_answer_prints_no_empty_command(capsys) -> None:  # type: ignore[no-untyped-def]
    # Too little system RAM for the offloaded layers: speculation off, and the plain launch on every engine.
    code, out, err = _run(capsys, "recommend", "--verifier", QWEN_GGUF, "--engine", "llamacpp", "--gpu", "RTX-3060",
                          "--workload", "chat", "--host-memory-gib", "8")
    assert code == 0, err
    assert "**No speculative decoding**" in out
    assert "``" not in out.replace("```", "")
    assert "HF transformers: `model.generate(**inputs)`" in out


@pytest.mark.parametrize("verb", LOCAL_VERBS)
@pytest.mark.parametrize("flag,value", [("--host-memory-gib", "0"), ("--host-memory-gib", "nan"),
                                        ("--host-bandwidth-gbps", "-5"), ("--host-bandwidth-gbps", "inf")])
def test_bad_system_ram_figures_are_one_line_usage_errors(capsys, verb: str, flag: str, value: str) -> None:  # type: ignore[no-untyped-def]
    args = {"recommend": ["--workload", "chat"], "speedup": ["--workload", "chat", "--method", "ngram"],
            "vram": [], "engine-config": ["--method", "ngram"]}[verb]
    code, out, err = _run(capsys, verb, "--verifier", QWEN_GGUF, "--engine", "llamacpp", "--gpu", "RTX-3060",
                          *args, flag, value)
    assert code == EXIT_INPUT and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and flag in err

"""Emitted launch commands are safe to paste: bash runs exactly the engine with exactly our argv.

Every engine x method the support matrix allows is emitted, pasted into a real ``bash`` whose PATH holds
stub engines (``vllm``, ``python3`` for ``python3 -m sglang.launch_server``, ``trtllm-serve``,
``llama-server``) that record the argv they receive. Ids that carry shell or YAML syntax are refused
before anything is emitted; ids that are valid but unusual (the planner's "<your ... head for ...>"
placeholder, with spaces and redirection characters) are quoted.
"""

from __future__ import annotations

import json
import shlex
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.engine_config import EngineConfigInput, build_engine_config
from specpick.tools.errors import InputError
from specpick.tools.vocab import ENGINES, SEPARATE_REPO_METHODS, STRATEGIES

V = "meta-llama/Llama-3.1-8B-Instruct"
# A placeholder the planner emits for a head still to be trained: spaces, '<' and '>' must stay quoted.
PLACEHOLDER = f"<your eagle3 head for {V}>"
STUBS = ("vllm", "python3", "trtllm-serve", "llama-server")
HOSTILE = [
    "x;touch PWNED;#",
    "a/b$(touch PWNED)",
    "a/b`touch PWNED`",
    "a/b' ; touch PWNED ; '",
    "a/b|tee PWNED",
    "a/b && touch PWNED",
    "a/b\nspeculative_model: evil",
    "a/b\n  max_draft_len: 999",
    "../../etc/passwd",
    "a/b c",
    "<your eagle3 head for x;touch PWNED>",
]


@pytest.fixture()
def stub_path(tmp_path: Path) -> Path:
    """A directory of stub engines; each writes its argv, NUL-separated, to $ARGV_OUT."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in STUBS:
        stub = bin_dir / name
        stub.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGV_OUT"\n')
        stub.chmod(0o755)
    return bin_dir


def _paste(command: str, bin_dir: Path, workdir: Path) -> list[str]:
    """Run ``command`` in bash as a user pasting it would; return the argv the stub received."""
    out = workdir / "argv.bin"
    bash = shutil.which("bash")
    assert bash is not None
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "ARGV_OUT": str(out), "HOME": str(workdir)}
    subprocess.run([bash, "-c", command], cwd=workdir, env=env, check=True, timeout=20)
    return out.read_bytes().decode().split("\0")[:-1]


def _settings() -> list[tuple[str, str]]:
    cat = get_catalog()
    out = []
    for engine in ENGINES:
        if engine == "transformers":
            continue  # Python kwargs, not a shell command: checked below
        for method in STRATEGIES:
            row = cat.support(engine, method)
            if method == "none" or (row is not None and row.support != "no"):
                out.append((engine, method))
    return out


def _inputs(engine: str, method: str, draft: str) -> EngineConfigInput:
    return EngineConfigInput(engine=engine, method=method, verifier=V, num_draft_tokens=4, tensor_parallel=2,
                             draft_model=draft if method in SEPARATE_REPO_METHODS else None,
                             batch_schedule=["1-8:4", "9-16:2"], disable_by_batch_size=17,
                             acceptance_threshold=0.3)


@pytest.mark.parametrize(("engine", "method"), _settings())
def test_pasted_command_runs_only_the_engine_with_our_argv(engine, method, stub_path, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    draft = PLACEHOLDER if method in ("eagle3", "eagle", "eagle2", "medusa") else "org/draft-1B"
    cfg = build_engine_config(_inputs(engine, method, draft))
    received = _paste(cfg.launch_command, stub_path, work)
    program = "python3" if engine == "sglang" else cfg.argv[0]
    assert program in STUBS and cfg.argv[0] == program
    assert received == cfg.argv[1:]
    # nothing else ran: no file besides the stub's record (an unquoted '>' would have created one)
    assert sorted(p.name for p in work.iterdir()) == ["argv.bin"]
    if method in SEPARATE_REPO_METHODS and engine == "vllm":
        assert json.loads(received[-1])["model"] == draft  # the JSON survived the shell intact
    elif method in SEPARATE_REPO_METHODS and engine == "sglang":
        assert draft in received
    elif method in SEPARATE_REPO_METHODS and engine == "llamacpp":
        # llama-server loads GGUF only: a safetensors draft is downloaded and converted first, and the launch
        # loads the converted file (-md); a placeholder head goes to -md as written, for the user to replace.
        loaded = received[received.index("-md") + 1]
        if draft == PLACEHOLDER:
            assert loaded == draft
        else:
            setup = [shlex.split(c) for c in cfg.setup_commands]
            assert ["hf", "download", draft, "--local-dir", draft.split("/")[1]] in setup
            assert any("--outfile" in c and c[c.index("--outfile") + 1] == loaded or c[0] == "llama-quantize"
                       and c[2] == loaded for c in setup)
    if cfg.format == "yaml":
        doc = yaml.safe_load(cfg.config)
        assert list(doc) == ["speculative_config"]
        if method in SEPARATE_REPO_METHODS:
            assert doc["speculative_config"]["speculative_model"] == draft


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "transformers"])
def test_translations_are_pasteable_too(engine, stub_path, tmp_path):
    cfg = build_engine_config(_inputs(engine, "draft_model", "org/draft-1B").model_copy(update={"all_engines": True}))
    for t in cfg.translations:
        if t.config is None or not t.config.argv:
            continue
        work = tmp_path / t.engine
        work.mkdir()
        assert _paste(t.config.launch_command, stub_path, work) == t.config.argv[1:]
        assert sorted(p.name for p in work.iterdir()) == ["argv.bin"]


@pytest.mark.parametrize("bad", HOSTILE)
@pytest.mark.parametrize("field", ["verifier", "draft_model"])
def test_ids_with_shell_or_yaml_syntax_are_refused(bad, field):
    from specpick.skill.surfaces.registry import BY_CLI

    args = {"engine": "trtllm", "method": "draft_model", "verifier": V, "draft_model": "org/draft-1B", field: bad}
    with pytest.raises(InputError) as err:
        BY_CLI["engine-config"].run(args)
    assert "\n" not in err.value.message.replace("\\n", "")


def test_transformers_kwargs_hold_a_python_string_literal():
    import ast

    cfg = build_engine_config(EngineConfigInput(engine="transformers", method="draft_model", verifier=V,
                                                draft_model="org/draft-1B"))
    call = ast.parse(cfg.launch_command, mode="eval").body
    assert isinstance(call, ast.Call)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    assert ast.literal_eval(kw["assistant_model"].args[0]) == "org/draft-1B"


def test_cli_refuses_an_injected_verifier_without_running_anything(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "specpick.skill.surfaces.cli", "engine-config", "--engine", "vllm", "--method",
         "ngram", "--verifier", "x;touch PWNED;#"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "invalid repo id" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "PWNED").exists()

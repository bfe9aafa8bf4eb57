"""From a fresh install, a GGUF repo id and a local ``.gguf`` path each get a full answer whose command runs as printed.

The installed ``specpick`` is the wheel's: under scripts/test.sh (``CI_INSTALLED=1``) the one it installed; otherwise
the wheel is built (tests/test_packaging.py's builder, or ``SPECPICK_WHEEL``) and installed with ``pip --target``
into a scratch folder that comes first on the path. Each run starts in an empty directory, offline, with no key.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

GGUF_REPO = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"
SECTIONS = ["## 1. Recommendation", "## 2. Expected speedup", "## 3. Compatibility checks", "## 4. Fallback plan",
            "## 5. Measurement plan"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[list[str], dict[str, str]]:  # type: ignore[no-untyped-def]
    """(the command that runs the installed specpick, the environment to run it in)."""
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(home / "hf"), "NO_COLOR": "1"}
    for secret in ("HF_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        env.pop(secret, None)
    if os.environ.get("CI_INSTALLED") == "1":
        return [str(Path(sysconfig.get_path("scripts")) / "specpick")], env
    from tests.test_packaging import _build_wheel

    given = os.environ.get("SPECPICK_WHEEL")
    wheel = Path(given) if given else _build_wheel(tmp_path_factory.mktemp("wheel"))
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    env["PYTHONPATH"] = str(target)
    where = subprocess.run([sys.executable, "-c", "import specpick.tools; print(specpick.tools.__file__)"],
                           capture_output=True, text=True, env=env, timeout=60, check=True).stdout
    assert where.startswith(str(target)), f"the wheel's copy is not the one imported: {where}"
    return [sys.executable, "-c", "import sys; from specpick.skill.surfaces.entry import main; sys.exit(main())"], env


def _answer(installed, cwd: Path, verifier: str) -> str:  # type: ignore[no-untyped-def]
    cmd, env = installed
    out = subprocess.run([*cmd, "recommend", "--verifier", verifier, "--engine", "llamacpp", "--gpu", "RTX-4090",
                          "--workload", "chat"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _launch(answer: str) -> list[str]:
    """The llama-server command of the Configuration section, split as a shell would."""
    lines = [line for line in answer.splitlines() if line.startswith("llama-server ")]
    assert lines, answer
    return shlex.split(lines[0])


def _runs_as_printed(argv: list[str]) -> None:
    # No placeholder and no safetensors repo given to -hf (it downloads GGUF repos only); every flag has its value.
    assert not any(word.startswith("<") for word in argv), argv
    for flag in ("-hf", "-m", "-ngl", "--parallel", "--spec-type", "--spec-draft-n-max"):
        if flag in argv:
            value = argv[argv.index(flag) + 1]
            assert not value.startswith("-"), (flag, argv)


def test_a_gguf_repo_id_gets_a_full_answer_that_loads_it_with_hf(installed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    answer = _answer(installed, tmp_path, GGUF_REPO)
    assert all(section in answer for section in SECTIONS)
    argv = _launch(answer)
    assert argv[argv.index("-hf") + 1] == GGUF_REPO
    _runs_as_printed(argv)
    assert re.search(r"a GGUF build of meta-llama/Llama-3\.1-8B-Instruct; weights q4_k_m", answer)


@pytest.mark.requires_extra("measure")
def test_a_local_gguf_file_gets_a_full_answer_that_loads_it_with_m(installed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.support.gguf_file import write_tiny_gguf

    path = write_tiny_gguf(tmp_path / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    work = tmp_path / "empty"
    work.mkdir()
    answer = _answer(installed, work, str(path))
    assert all(section in answer for section in SECTIONS)
    argv = _launch(answer)
    assert Path(argv[argv.index("-m") + 1]) == path and path.is_file()
    _runs_as_printed(argv)
    assert "weights q4_k_m (from the file's GGUF header (general.file_type))" in answer

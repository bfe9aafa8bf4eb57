"""scripts/bench.py refuses bad options and a failing command with one line and its documented exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "scripts" / "bench.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("args", "message"), [
    (["--specpick", "/no/such/specpick"], "error: no specpick executable at '/no/such/specpick'"),
    (["--runs", "0"], "error: --runs must be between 1 and 100, got 0"),
    (["--runs", "many"], "invalid int value: 'many'"),
])
def test_bad_options_exit_2_with_one_line(args, message):
    done = _bench(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_failing_command_exits_1_naming_its_error(tmp_path):
    broken = tmp_path / "specpick"
    broken.write_text("#!/bin/sh\necho 'error: catalog missing' >&2\nexit 3\n")
    broken.chmod(0o755)
    done = _bench("--specpick", str(broken), "--runs", "1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: {broken} --help exited 3: error: catalog missing"]

"""Startup benchmark of the installed ``specpick``: prints figures, asserts nothing.

The README promises that ``specpick --help`` and an offline ``recommend`` feel instant (under 0.3 s) and small.
Timed asserts flake on a shared CI machine, so this script only measures and prints: the wall time of each command
as a user runs it (a fresh process, so interpreter start and every import count) and the peak resident memory of
that process, over several runs, with the median as the headline.

    python scripts/bench.py [--specpick PATH] [--runs N]

Runs offline and keyless (``HF_HUB_OFFLINE=1``, no ``HF_TOKEN`` / ``ANTHROPIC_API_KEY`` passed on), from an
empty directory, so nothing but the embedded catalog answers.

Exit codes: 0 figures printed; 2 a bad option (one line on stderr); 1 the timed command itself failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

# The README's first command: the main job, offline.
RECOMMEND_ARGV = ["recommend", "--verifier", "meta-llama/Llama-3.1-70B-Instruct", "--workload", "code",
                  "--gpu", "H100-SXM", "--gpus", "4"]
COMMANDS: dict[str, list[str]] = {
    "specpick --help": ["--help"],
    "specpick recommend (offline, README command 1)": RECOMMEND_ARGV,
    "specpick recommend --json": [*RECOMMEND_ARGV, "--json"],
}
_SECRETS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def _one_run(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one fresh process; a non-zero exit is a broken install, so it raises."""
    # stderr goes to a file, not a pipe: an unread pipe that fills up would block the child.
    with tempfile.TemporaryFile() as stderr:
        start_s = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=cwd)
        # wait4 gives this child's own rusage (RUSAGE_CHILDREN would be the maximum over every child so far).
        _, status, usage = os.wait4(proc.pid, 0)
        wall_s = time.perf_counter() - start_s
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
        if proc.returncode != 0:
            stderr.seek(0)
            lines = stderr.read().decode(errors="replace").strip().splitlines()
            raise SystemExit(f"error: {' '.join(argv)} exited {proc.returncode}: {lines[-1] if lines else ''}")
    # ru_maxrss is in kilobytes on Linux.
    return wall_s, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(sysconfig.get_path("scripts")) / "specpick"
    parser.add_argument("--specpick", default=str(default),
                        help=f"the specpick executable to time (default: {default})")
    parser.add_argument("--runs", type=int, default=9, help="runs per command after one warm-up (default: 9)")
    args = parser.parse_args(argv)
    exe = shutil.which(args.specpick)
    if exe is None:
        print(f"error: no specpick executable at {args.specpick!r}; install the wheel or pass --specpick PATH",
              file=sys.stderr)
        return 2
    if not 1 <= args.runs <= 100:
        print(f"error: --runs must be between 1 and 100, got {args.runs}", file=sys.stderr)
        return 2

    env = {k: v for k, v in os.environ.items() if k not in _SECRETS}
    with tempfile.TemporaryDirectory() as scratch:
        env.update(HF_HUB_OFFLINE="1", HF_HOME=str(Path(scratch) / "hf"))
        print(f"startup benchmark: {exe}, {args.runs} runs each after one warm-up, {os.cpu_count()} CPUs")
        print(f"  {'command':<48} {'median s':>9} {'min s':>7} {'max s':>7} {'peak RSS MB':>12}")
        for label, extra in COMMANDS.items():
            _one_run([exe, *extra], env, scratch)  # warm the OS file cache and .pyc files
            runs = [_one_run([exe, *extra], env, scratch) for _ in range(args.runs)]
            walls_s = [wall for wall, _ in runs]
            peak_mb = max(rss for _, rss in runs)
            print(f"  {label:<48} {statistics.median(walls_s):>9.3f} {min(walls_s):>7.3f} "
                  f"{max(walls_s):>7.3f} {peak_mb:>12.0f}")
    print("  target (README): --help and offline recommend under 0.3 s; figures only, CI does not gate on them")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The resumable results file of ``specpick tune``: one JSON line per finished run, appended under a lock.

A rerun with the same settings (engine, method, model or servers, prompts, load) reads the runs already done and
starts the rest, so an interrupted sweep loses at most the run in progress. Each line is written whole with one
``write`` under an exclusive ``flock`` and flushed to disk before the next run starts: two tune processes sharing a
file cannot interleave half lines.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from specpick.tools.errors import InputError
from specpick.tools.measured_checks import figure_problem
from specpick.tools.measure.prompts import MAX_FILE_BYTES as MAX_PROMPTS_BYTES
from specpick.tools.measure.report import MeasureReport
from specpick.tools.tune.inputs import TuneInput
from specpick.tools.userfiles import check_regular_file, loads_user_json, read_user_bytes, read_user_text

MAX_RESULTS_BYTES = 256 * 2**20
MAX_LINE_BYTES = 64 * 2**20  # one run's line: a report of 10,000 prompts is a few MB


def run_key(inp: TuneInput, prompts_text: bytes) -> str:
    """What makes two runs comparable: the same server setup, prompts and load (not the draft length)."""
    identity = {
        "engine": inp.engine, "method": inp.method, "model": inp.serve_model, "endpoints": inp.endpoint,
        "baseline": inp.baseline_endpoint, "serve_args": inp.serve_args, "draft": inp.draft,
        "prompts_sha256": hashlib.sha256(prompts_text).hexdigest(), "num_prompts": inp.num_prompts,
        "concurrency": sorted(set(inp.concurrency)), "max_tokens": inp.max_tokens, "temperature": inp.temperature,
        "api": inp.api, "lookup": [inp.prompt_lookup_min, inp.prompt_lookup_max],
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def load(path: Path, key: str, concurrency: Sequence[int]) -> dict[int, MeasureReport]:
    """Finished runs for ``key`` by draft length; a missing file is an empty sweep, a broken line an error.

    Every line is checked as the live path checks a run (``tools/measured_checks.py``): its N, and each result's
    concurrency (one the sweep measures) and figures; a line of another sweep (``key``) is skipped, not trusted.
    """
    if not path.exists():
        return {}
    text = read_user_text(path, "--results", MAX_RESULTS_BYTES)
    runs: dict[int, MeasureReport] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        origin = f"{path}:{lineno}"
        obj = loads_user_json(line, origin)
        if not isinstance(obj, dict) or not {"key", "num_draft_tokens", "report"} <= obj.keys():
            raise _not_results(origin)
        if obj["key"] != key:
            continue
        n = obj["num_draft_tokens"]
        report = _report(obj["report"], origin)
        problem = figure_problem(num_draft_tokens=n) if isinstance(n, int) else f"N = {n!r} is not an integer"
        problem = problem or _results_problem(report, n, set(concurrency))
        if problem:
            raise InputError(f"{origin}: {problem}: not a run tune measured; remove the line or use --fresh")
        runs[n] = report
    return runs


def _not_results(origin: str) -> InputError:
    return InputError(f"{origin} is not a tune result line: give another --results file, or --fresh to start over "
                      "in a new file")


def _report(data: object, origin: str) -> MeasureReport:
    try:
        return MeasureReport.model_validate(data)
    except ValidationError:
        raise _not_results(origin) from None


def _results_problem(report: MeasureReport, n: int, concurrency: set[int]) -> str | None:
    if not report.results:
        return "a run with no results"
    for res in report.results:
        if res.concurrency not in concurrency:
            return f"a result at concurrency {res.concurrency}, which this sweep does not measure"
        for acc in (res.acceptance, res.per_request_acceptance):
            if acc is not None and (problem := figure_problem(tau=acc.tau, alpha=acc.alpha, num_draft_tokens=n,
                                                              per_position=acc.per_position)):
                return problem
        if problem := figure_problem(speedup=res.speedup, concurrency=res.concurrency):
            return problem
    return None


def is_results_file(path: Path) -> bool:
    """True when ``path`` is absent, empty, or starts with a tune result line: nothing else is ever appended to."""
    if not path.exists():
        return True
    check_regular_file(path, "--results")
    if path.stat().st_size == 0:
        return True
    with path.open("rb") as fh:
        first = fh.readline(MAX_LINE_BYTES)
    try:
        obj = loads_user_json(first.decode("utf-8"), str(path))
    except (InputError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict) and {"key", "num_draft_tokens", "report"} <= obj.keys()


def check_paths(prompts: Path, results: Path, plot_dir: Path | None) -> bytes:
    """Every path option checked before any server starts or any run is measured (issue 39, causes 3-5): a
    regular prompts file (its bytes returned), a results file tune wrote (or a new one in an existing folder), a
    plot folder that is a folder. With --fresh too: --fresh ignores old runs, it does not make any file a results
    file."""
    data = read_user_bytes(prompts, "--prompts", MAX_PROMPTS_BYTES)
    if not results.parent.is_dir():
        raise InputError(f"--results {results}: the folder {results.parent} does not exist; create it or give "
                         "another path")
    if not is_results_file(results):
        raise InputError(f"--results {results} is not a tune results file (its first line is not a tune result); "
                         "tune appends only to its own files: give a new file name")
    if plot_dir is not None and plot_dir.exists() and not plot_dir.is_dir():
        raise InputError(f"--plot-dir {plot_dir} is a file, not a folder: give a folder (it is created if absent)")
    return data


def append(path: Path, key: str, num_draft_tokens: int, report: MeasureReport) -> None:
    """Append one finished run (whole line, locked, flushed)."""
    line = json.dumps({"key": key, "num_draft_tokens": num_draft_tokens,
                       "report": json.loads(report.model_dump_json())}) + "\n"
    try:
        with path.open("a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError as exc:
        raise InputError(f"cannot write --results {path} ({exc.strerror}): give a writable path") from None

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
from pathlib import Path

from pydantic import ValidationError

from specpick.tools.errors import InputError
from specpick.tools.measure.report import MeasureReport
from specpick.tools.tune.inputs import TuneInput

MAX_RESULTS_BYTES = 256 * 2**20


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


def load(path: Path, key: str) -> dict[int, MeasureReport]:
    """Finished runs for ``key`` by draft length; a missing file is an empty sweep, a broken line an error."""
    if not path.exists():
        return {}
    try:
        if path.stat().st_size > MAX_RESULTS_BYTES:
            raise InputError(f"{path} is over {MAX_RESULTS_BYTES >> 20} MiB: is it a tune results file?")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read --results {path}: {exc}; give another file or --fresh") from None
    runs: dict[int, MeasureReport] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if obj.get("key") != key:
                continue
            runs[int(obj["num_draft_tokens"])] = MeasureReport.model_validate(obj["report"])
        except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
            raise InputError(f"{path}:{lineno} is not a tune result line: give another --results file, or "
                             "--fresh to start over in a new file") from None
    return runs


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

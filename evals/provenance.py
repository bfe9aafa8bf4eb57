"""Where a case's expectation comes from, and the rule that keeps it there.

Every case names its ground truth (``ground_truth``: public URLs or row ids of ``tools/data``) and the engine
release it holds for (``release``). Two checks hold the suite to that:

* ``check_ref``: a row id must name a row that exists (``engine_measurements.csv:VLLM-16937`` is a
  ``source_id`` of that file; ``heads.csv:<head repo>``, ``engine_support.csv:<engine>/<method>``, ...), a URL must
  be ``https://``;
* ``expectation_changes``: between two versions of the case files, a case whose ``expected`` (or
  ``agent.expected``) changed while its ``ground_truth``, ``sources`` and ``release`` all stayed the same moved to
  something other than a source, e.g. to what the planner printed. ``history_violations`` runs it over every
  commit of ``evals/cases`` in the git history (``tests/test_evals_provenance.py``); versions from before the
  ``ground_truth`` field existed are not judged, since they name no ground truth to compare.
"""

from __future__ import annotations

import csv
import re
import subprocess
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

# file -> the column(s) whose value is the row id (engine_support: "engine/method")
ROW_ID_COLUMNS: dict[str, tuple[str, ...]] = {
    "engine_measurements.csv": ("source_id",),
    "published_measurements.csv": ("source_id",),
    "published_2026.csv": ("source_id",),
    "heads.csv": ("head_repo_id",),
    "models.csv": ("repo_id",),
    "drafts.csv": ("draft_repo_id",),
    "gpus.csv": ("key",),
    "engine_support.csv": ("engine", "method"),
    "engine_baselines.csv": ("source_id",),
}
URL = re.compile(r"^https://[A-Za-z0-9.-]+\.[a-z]{2,}/\S*$")
CASES_PATH = "evals/cases"
# what a change of the expectation must come with
SOURCE_FIELDS = ("ground_truth", "sources", "release")
# Reviewed commits that moved an expectation from a source already named, so no source field changed. Each entry
# says which source; history is not rewritten, and a new entry needs the same review.
REVIEWED: dict[tuple[str, str], str] = {
    ("fda00fc1f0", "thinking-kimi-k2-thinking-trtllm-head"):
        "flags_if eagle3: mla_dynamic_tree added from engine_support.csv:trtllm/eagle3 (dynamic tree unsupported "
        "for MLA models), already in ground_truth; Kimi-K2-Thinking is an MLA model (models.csv)",
}


@lru_cache(maxsize=None)
def row_ids(file: str) -> frozenset[str]:
    """The row ids of one ``tools/data`` file (lower case)."""
    cols = ROW_ID_COLUMNS[file]
    text = resources.files("specpick.tools").joinpath("data", file).read_text(encoding="utf-8")
    return frozenset("/".join(r[c] for c in cols).strip().lower() for r in csv.DictReader(text.splitlines()))


def check_ref(ref: str) -> str | None:
    """None when ``ref`` is a public https URL, an existing ``tools/data`` row id, or a file of the package
    (``specpick:skill/SKILL.md``, for the tool's own contract: its scope, its exit codes); else what is wrong."""
    if ref.startswith("http"):
        return None if URL.match(ref) else f"'{ref}' is not an https URL"
    if ref.startswith("specpick:"):
        part, _, path = ref.removeprefix("specpick:").partition("/")
        ok = part in ("skill", "tools", "evals") and ".." not in path and path and \
            resources.files(f"specpick.{part}").joinpath(*path.split("/")).is_file()
        return None if ok else f"'{ref}' names no file of the installed package"
    file, sep, row = ref.partition(":")
    if not sep or file not in ROW_ID_COLUMNS:
        return (f"'{ref}' is neither an https URL nor a row id '<file>:<id>' of "
                f"{', '.join(sorted(ROW_ID_COLUMNS))}")
    if row.strip().lower() not in row_ids(file):
        return f"'{ref}': no row '{row}' in tools/data/{file}"
    return None


def _by_id(doc: Any) -> dict[str, dict[str, Any]]:
    cases = doc.get("cases", []) if isinstance(doc, dict) else []
    return {c["id"]: c for c in cases if isinstance(c, dict) and "id" in c}


def _expectation(case: dict[str, Any]) -> tuple[Any, Any]:
    agent = case.get("agent") or {}
    return case.get("expected"), agent.get("expected") if isinstance(agent, dict) else None


def expectation_changes(old_doc: Any, new_doc: Any) -> list[str]:
    """Case ids (with what changed) whose expectation moved while every source field stayed the same."""
    old, new = _by_id(old_doc), _by_id(new_doc)
    out = []
    for cid, case in new.items():
        before = old.get(cid)
        if before is None or "ground_truth" not in before or "ground_truth" not in case:
            continue  # a new case, or a version from before the rule: nothing to compare
        if _expectation(before) == _expectation(case):
            continue
        if all(before.get(f) == case.get(f) for f in SOURCE_FIELDS):
            changed = sorted(k for k in set(before.get("expected", {})) | set(case.get("expected", {}))
                             if (before.get("expected") or {}).get(k) != (case.get("expected") or {}).get(k))
            out.append(f"{cid} (expected.{', expected.'.join(changed) or 'agent'} changed; ground_truth, "
                       "sources and release did not)")
    return out


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True,
                          timeout=60).stdout


def history_skip_reason(root: Path) -> str | None:
    """Why the history cannot be checked here (not a git checkout, shallow clone, no git), or None."""
    try:
        if _git(root, "rev-parse", "--is-shallow-repository").strip() == "true":
            return ("shallow clone: the case files' history is absent (clone with full history, "
                    "e.g. actions/checkout fetch-depth: 0, to run this check)")
    except FileNotFoundError:
        return "git is not installed"
    except subprocess.CalledProcessError:
        return f"{root} is not a git checkout"
    return None


def _load(root: Path, commit: str, path: str) -> Any:
    try:
        return yaml.safe_load(_git(root, "show", f"{commit}:{path}"))
    except subprocess.CalledProcessError:
        return None  # the file did not exist at that commit


def history_violations(root: Path, max_commits: int = 2000) -> list[str]:
    """Every commit (merges excluded: their parents' commits are checked) that moved an expectation alone."""
    commits = _git(root, "log", "--no-merges", f"--max-count={max_commits}", "--format=%H %P", "--",
                   CASES_PATH).split("\n")
    out = []
    for line in filter(None, commits):
        commit, *parents = line.split()
        if not parents:
            continue
        changed = _git(root, "diff", "--name-only", parents[0], commit, "--", CASES_PATH).split()
        for path in changed:
            if not path.endswith(".yaml"):
                continue
            for bad in expectation_changes(_load(root, parents[0], path), _load(root, commit, path)):
                if (commit[:10], bad.split(" ", 1)[0]) not in REVIEWED:
                    out.append(f"{commit[:10]} {path}: {bad}")
    return out


def worktree_violations(root: Path) -> list[str]:
    """The same rule for edits not committed yet: the working tree's case files against HEAD."""
    out = []
    for path in sorted((root / CASES_PATH).glob("*.yaml")):
        rel = f"{CASES_PATH}/{path.name}"
        for bad in expectation_changes(_load(root, "HEAD", rel), yaml.safe_load(path.read_text(encoding="utf-8"))):
            out.append(f"working tree {rel}: {bad}")
    return out

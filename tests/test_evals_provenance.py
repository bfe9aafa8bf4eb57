"""The provenance rule: a case's expectation never moves in a commit unless its ground truth moves with it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from specpick.evals.dataset import Dataset
from specpick.evals.provenance import (check_ref, expectation_changes, history_skip_reason, history_violations,
                                       worktree_violations)

ROOT = Path(__file__).resolve().parents[1]
HAS_GIT = shutil.which("git") is not None


def _doc(band_high: float, truth: list[str] | None = None, sources: tuple[str, ...] = ("s",)) -> dict:
    case = {"id": "c1", "expected": {"strategies": ["eagle3"], "speedup": {"eagle3": {"low": 1.4, "high": band_high}}},
            "sources": list(sources)}
    if truth is not None:
        case["ground_truth"] = truth
    return {"category": "x", "cases": [case]}


def test_a_moved_band_without_a_moved_source_is_caught():
    truth = ["engine_measurements.csv:VLLM-20780"]
    assert expectation_changes(_doc(2.0, truth), _doc(4.4, truth)) == [
        "c1 (expected.speedup changed; ground_truth, sources and release did not)"]
    # the same move with a new ground truth (or new sources) is a sourced change
    assert expectation_changes(_doc(2.0, truth), _doc(4.4, truth + ["https://github.com/vllm-project/vllm/pull/1"])) == []
    assert expectation_changes(_doc(2.0, truth), _doc(4.4, truth, sources=("s", "new row"))) == []
    # versions from before the ground_truth field are not judged; unchanged expectations pass
    assert expectation_changes(_doc(2.0), _doc(4.4, truth)) == []
    assert expectation_changes(_doc(2.0, truth), _doc(2.0, truth)) == []


def test_refs_must_name_real_rows_or_https_urls():
    assert check_ref("engine_measurements.csv:VLLM-20780") is None
    assert check_ref("heads.csv:yuhuili/EAGLE3-LLaMA3.1-Instruct-8B") is None
    assert check_ref("engine_support.csv:vllm/eagle3") is None
    assert check_ref("https://github.com/vllm-project/vllm/issues/26191") is None
    assert check_ref("specpick:skill/SKILL.md") is None
    assert "no row" in check_ref("engine_measurements.csv:NOT-A-ROW")
    assert "neither" in check_ref("ENGINES.md (c)#18")
    assert check_ref("http://example.com/x") is not None  # not https
    assert check_ref("specpick:../../etc/passwd") is not None


def test_every_case_names_ground_truth_and_a_release():
    for case in Dataset.load().cases:
        assert case.ground_truth and all(check_ref(r) is None for r in case.ground_truth), case.id
        assert case.release.strip(), case.id


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(not HAS_GIT, reason="git is not installed")
def test_the_rule_reads_a_real_history(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "evals" / "cases").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    path = repo / "evals" / "cases" / "x.yaml"
    truth = ["engine_measurements.csv:VLLM-20780"]
    for message, doc in (("add", _doc(2.0, truth)), ("widen to the planner", _doc(4.4, truth)),
                         ("new source", _doc(2.4, truth + ["engine_measurements.csv:VLLM-16937"]))):
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", message)
    found = history_violations(repo)
    assert len(found) == 1 and "c1 (expected.speedup changed" in found[0]
    widened = _git(repo, "rev-list", "--max-count=1", "HEAD~1").strip()
    assert found[0].startswith(widened[:10])
    # uncommitted edits are held to the same rule
    path.write_text(yaml.safe_dump(_doc(9.9, truth + ["engine_measurements.csv:VLLM-16937"])), encoding="utf-8")
    assert len(worktree_violations(repo)) == 1
    # a shallow clone has no history to read: the check says why instead of passing silently
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    assert "shallow clone" in (history_skip_reason(shallow) or "")
    assert history_skip_reason(tmp_path) is not None  # not a checkout at all


def test_no_commit_of_this_repository_moved_an_expectation_alone():
    reason = history_skip_reason(ROOT) if HAS_GIT else "git is not installed"
    if reason:
        pytest.skip(f"provenance history check skipped: {reason}")
    assert history_violations(ROOT) == []
    assert worktree_violations(ROOT) == []

"""Copy-heavy workloads (issue 26): the workloads through recommend, the burst model against the per-position
acceptance a source printed, and the LOSO coverage computation on a small constructed table."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from importlib import resources

import pytest

from specpick.tools.model.copy_heavy import (
    Burst,
    TauRow,
    burst_from_positions,
    geometric_alpha_for_tau,
    geometric_positions,
    loso_coverage,
    positions_from_notes,
)
from specpick.tools.vocab import (COPY_HEAVY_WORKLOADS, COPY_METHODS, INPUT_GROUNDED_WORKLOADS, WORKLOAD_MEANING,
                                  WORKLOADS)


def _engine_row(row_id_source: str, task_word: str) -> dict[str, str]:
    text = resources.files("specpick.tools").joinpath("data", "engine_measurements.csv").read_text("utf-8")
    for r in csv.DictReader(text.splitlines()):
        if r["source_id"] == row_id_source and task_word in r["task_or_benchmark"]:
            return r
    raise AssertionError(f"{row_id_source} {task_word} row missing")


def test_copy_heavy_workloads_are_workloads_with_meanings_and_input_grounded():
    for w in ("code-edit", "doc-edit", "agent-loop"):
        assert w in WORKLOADS and w in COPY_HEAVY_WORKLOADS and w in INPUT_GROUNDED_WORKLOADS
        assert WORKLOAD_MEANING[w]


def test_burst_reproduces_the_blazedit_positions_better_than_one_alpha():
    # vllm#24344 printed the per-position acceptance of n-gram N=5 on Blazedit and its tau (engine row VLLM-24344).
    row = _engine_row("VLLM-24344", "Blazedit")
    positions = positions_from_notes(row["notes"])
    tau = float(row["mean_accepted_tokens_tau"])
    assert len(positions) == 5
    burst = burst_from_positions(positions)
    alpha = geometric_alpha_for_tau(tau, 5)
    burst_err = max(abs(a - b) for a, b in zip(burst.position_acceptance(5), positions))
    geo_err = max(abs(a - b) for a, b in zip(geometric_positions(alpha, 5), positions))
    assert burst_err < geo_err / 2
    # the burst keeps the printed tau (vLLM: 1 + the sum of the positions)
    assert burst.tau(5) == pytest.approx(tau, abs=0.01)


def test_burst_tau_is_one_plus_copy_share_times_run():
    b = Burst(f_copy=0.5, c_run=0.0)
    assert b.tau(8) == pytest.approx(1.5)  # every copy run is one token: tau = 1 + f_copy
    full = Burst(f_copy=1.0, c_run=1.0)
    assert full.tau(6) == pytest.approx(7.0)  # always copying: the whole draft plus the bonus token


@pytest.mark.parametrize("bad", [[], [0.0, 0.5], [1.2]])
def test_burst_rejects_impossible_positions(bad):
    with pytest.raises(ValueError):
        burst_from_positions(bad)


def test_loso_coverage_on_a_constructed_table():
    # Three rows with the taus of the copy-heavy n-gram rows (VLLM-24344: 3.63, 4.59) and one suffix row; the
    # predictor answers from the other sources' rows: their min/max as the range, none when nothing is left.
    rows = [TauRow("A/1", "A", "ngram", 5, 3.63), TauRow("B/1", "B", "ngram", 5, 4.59),
            TauRow("C/1", "C", "suffix", 5, 6.0)]

    def predict(row, exclude):
        others = [r.tau for r in rows if r.source_id not in exclude and r.method == row.method]
        return (min(others), max(others)) if others else None

    cov = loso_coverage(rows, predict)
    # A: range [4.59, 4.59] misses 3.63; B: [3.63, 3.63] misses 4.59; C: no other suffix source
    assert (cov.n_rows, cov.n_predicted, cov.n_inside, cov.not_covered) == (3, 2, 0, ("C/1",))
    assert cov.share == 0.0


def _recommend(*args: str) -> subprocess.CompletedProcess:
    entry = "import sys; from specpick.skill.surfaces.entry import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", entry, "recommend", *args], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_an_editing_deployment_gets_a_copy_drafter_from_the_copy_heavy_rows():
    out = _recommend("--verifier", "llama-3.1-8b", "--gpu", "H100", "--workload", "code-edit", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["strategy"] in COPY_METHODS  # a copy drafter (registry attribute copy_based)
    text = json.dumps(d)
    # the acceptance rests on the copy-heavy engine rows and says so
    assert "VLLM-24344" in text and "code-edit" in text
    # and its tau at the chosen N comes from the burst fitted to that row's printed positions
    assert "accepts in bursts" in text


def test_unknown_workload_is_a_one_line_error():
    out = _recommend("--verifier", "llama-3.1-8b", "--gpu", "H100", "--workload", "code-edits")
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "code-edit" in out.stderr  # the choices name the real workload

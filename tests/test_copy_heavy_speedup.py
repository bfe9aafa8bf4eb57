"""The copy-heavy group's speedup rows and their leave-one-source-out grading in calibrate (issue 26): the rows
carry their source table's numbers, rows the model cannot take are counted by reason, and a prediction never rests
on the row's own source."""

from __future__ import annotations

import pytest

from specpick.tools.calibration.copy_heavy_group import copy_heavy_speedup_rows, coverage_lines, speedup_loso
from specpick.tools.vocab import COPY_METHODS

# sfc-gh-goliaro/suffix-decoding-artifact blog-post2/results_summary.md, table 'Blazedit', mean TPOT (ms) at
# concurrency 1 / 64: vanilla 5.61 / 11.12, ngram [3, 5] 1.86 / 7.99, suffix_new 1.71 / 6.06.
ARTIFACT_TPOT_MS = {("vanilla", 1): 5.61, ("vanilla", 64): 11.12, ("ngram", 1): 1.86, ("ngram", 64): 7.99,
                    ("suffix_new", 1): 1.71, ("suffix_new", 64): 6.06}


def _artifact_rows():
    return [r for r in copy_heavy_speedup_rows(frozenset(COPY_METHODS)) if r.source_id == "SUFFIXDECODING-ARTIFACT"]


def test_the_artifact_rows_are_the_stated_tpot_ratios_on_code_edits():
    rows = _artifact_rows()
    assert len(rows) == 16  # 4 configurations (ngram [3,5], ngram [5,5], suffix old/new) x concurrency 1, 4, 16, 64
    assert all(r.workload == "code-edit" and r.engine == "vllm" for r in rows)
    by_key = {(r.method, r.draft_or_head.split(",")[0], r.batch): r.speedup for r in rows}
    t = ARTIFACT_TPOT_MS
    assert by_key[("ngram", "prompt lookup [3", 1)] == pytest.approx(t[("vanilla", 1)] / t[("ngram", 1)], abs=1e-3)
    assert by_key[("ngram", "prompt lookup [3", 64)] == pytest.approx(t[("vanilla", 64)] / t[("ngram", 64)],
                                                                      abs=1e-3)
    newer = [r for r in rows if "newer" in r.draft_or_head]
    assert {r.batch: r.speedup for r in newer}[64] == pytest.approx(t[("vanilla", 64)] / t[("suffix_new", 64)],
                                                                    abs=1e-3)


def test_speedup_loso_counts_every_row_once_and_never_guesses_a_missing_gpu():
    sp = speedup_loso(frozenset(COPY_METHODS))
    assert sp.stats.n == len(sp.rows) == sum(sp.sources.values())
    assert sp.stats.n + sum(sp.not_graded.values()) == sp.n_rows
    # llama.cpp #22168 states no GPU: counted under its reason, never graded
    assert not any(rid.startswith("LLAMACPP-22168/") for rid, *_ in sp.rows)
    assert any("no GPU count" in why for why in sp.not_graded)
    # the ranges are ranges around their point, and coverage counts the graded rows
    assert all(lo <= pred <= hi for _, _, pred, lo, hi in sp.rows)
    assert sp.coverage.n == sp.stats.n


def test_the_copy_heavy_prediction_leaves_its_own_source_out(monkeypatch):
    import specpick.tools.calibration.cases as cases
    import specpick.tools.calibration.copy_heavy_group as group

    seen: list[frozenset[str]] = []
    real = cases.predict

    def spy(case, *, own, exclude=frozenset(), **kw):
        seen.append(exclude)
        assert not own  # the row's own acceptance is never used: the priors answer
        assert case.workloads == (case.row.workload,)  # the copy-heavy workload, not the benchmark's 'code'
        return real(case, own=own, exclude=exclude, **kw)

    monkeypatch.setattr(group, "predict", spy)  # where the leave-one-source-out loop calls it
    sp = speedup_loso(frozenset(COPY_METHODS))
    assert len(seen) == sp.stats.n and all(len(ex) == 1 for ex in seen)
    assert {next(iter(ex)) for ex in seen} == set(sp.sources)


def test_calibrate_prints_the_speedup_loso_of_the_copy_drafters():
    lines = "\n".join(coverage_lines(frozenset(COPY_METHODS), "n-gram/suffix"))
    sp = speedup_loso(frozenset(COPY_METHODS))
    assert f"speedup LOSO: {sp.stats.n} of {sp.n_rows} rows graded from {len(sp.sources)} source(s)" in lines
    assert "n-gram/suffix LOSO cover." in lines and "median APE" in lines

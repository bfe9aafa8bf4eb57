"""Engine-measured rows: loading, provenance, the fixed fit/holdout split, and `calibrate --engines`."""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from specpick.tools.commands.calibrate import CalibrateInput, calibrate_tool, render_text
from specpick.tools.calibration.engines import SPLIT_RULE, engine_cases, engine_report, split_of
from specpick.tools.calibration.engine_cases import ENGINES, build_case, load_engine_rows, skip_reason
from specpick.tools.catalog.published import load_published


def _csv_columns(name: str) -> list[str]:
    text = resources.files("specpick.tools").joinpath("data", name).read_text("utf-8")
    return next(csv.reader(text.splitlines()))


@pytest.fixture(scope="module")
def report():
    return engine_report()


def test_columns_are_the_published_ones_plus_engine_and_version():
    assert _csv_columns("engine_measurements.csv") == _csv_columns("published_measurements.csv") + [
        "engine", "engine_version"]


def test_every_row_names_its_source_engine_and_provenance():
    rows = load_engine_rows()
    assert len(rows) >= 30
    for r in rows:
        assert r.source and r.source_id
        assert r.engine in ENGINES, r.row_id
        assert r.provenance in ("primary", "primary-figure", "secondary"), r.row_id


def test_rows_cover_engines_and_model_classes():
    cases = engine_cases()
    assert {c.harness for c in cases} == set(ENGINES)
    assert any(c.verifier.is_moe for c in cases) and any(not c.verifier.is_moe for c in cases)
    assert any((c.verifier.params_total_b or 0) >= 60 and not c.verifier.is_moe for c in cases)  # 70B dense with TP
    assert any(c.batch > 1 for c in cases)


def test_engine_rows_are_not_in_the_dev_set():
    dev = {r.source_id for r in load_published()}
    assert not dev & {r.source_id for r in load_engine_rows()}


@pytest.mark.parametrize("source_id, reason", [
    ("VLLM-12755", "request rate"),  # QPS 2..8 rows: concurrency unknown
    ("TRTLLM-LADE-BLOG", "range or bound"),  # "up to 3.6"
])
def test_skip_reasons(source_id, reason):
    reasons = {skip_reason(r) for r in load_engine_rows() if r.source_id == source_id}
    assert any(x and reason in x for x in reasons)


def test_qps_1_is_modelled_at_batch_1_and_says_so():
    row = next(r for r in load_engine_rows() if r.source_id == "VLLM-12755" and r.qps == 1)
    case = build_case(row)
    assert case.batch == 1 and any("QPS" in n for n in case.notes)


@pytest.mark.parametrize("source_id, depth, top_k, tokens", [
    ("SGLANG-4716", 8, 8, 64),  # --speculative-num-steps 8 --speculative-eagle-topk 8 --speculative-num-draft-tokens 64
])
def test_sglang_tree_flags_become_the_tree_shape(source_id, depth, top_k, tokens):
    case = build_case(next(r for r in load_engine_rows() if r.source_id == source_id))
    assert case.tree is not None and (case.tree.depth, case.tree.top_k, case.tree.num_verify_tokens) == (
        depth, top_k, tokens)


def test_topk_1_is_a_chain_and_nvfp4_weights_are_4_5_bits():
    case = build_case(next(r for r in load_engine_rows() if r.source_id == "SGLANG-20809"))
    assert case.tree is None and case.num_draft_tokens == 3
    assert case.bpp == pytest.approx(4.5 / 8)


def test_split_is_fixed_by_source_and_alternates_within_each_engine():
    halves = split_of()
    rows = load_engine_rows()
    for engine in ENGINES:
        sources = sorted({r.source_id for r in rows if r.engine == engine})
        assert [halves[s] for s in sources] == [("fit", "holdout")[i % 2] for i in range(len(sources))]
    assert {halves[c.row.source_id] for c in engine_cases("holdout")} == {"holdout"}
    assert "alternate" in SPLIT_RULE


def test_report_has_every_group_and_both_halves(report):
    assert report.n_used + sum(report.skipped.values()) == report.n_rows
    for mode in (report.cost_model, report.end_to_end):
        assert mode.overall.n == mode.fit_half.n + mode.holdout_half.n
        assert set(mode.per_class) <= {"dense", "moe"} and mode.per_class
        assert set(mode.per_batch) <= {"batch 1", "batch > 1"}
    assert set(report.end_to_end.per_engine) == set(ENGINES)
    assert report.end_to_end.holdout_half.n >= 10 and report.cost_model.holdout_half.n >= 5


def test_calibrate_engines_flag_reports_separately_and_leaves_the_dev_figure_alone():
    plain = calibrate_tool(CalibrateInput(loso=False))
    both = calibrate_tool(CalibrateInput(loso=False, engines=True))
    assert plain.engines is None and both.engines is not None
    assert both.end_to_end.overall == plain.end_to_end.overall  # never mixed into the dev-set figure
    assert both.n_used == plain.n_used
    text = render_text(both)
    assert "held out from the dev set" in text and "holdout half" in text
    assert both.engines["rows"] == []  # rows only with --rows

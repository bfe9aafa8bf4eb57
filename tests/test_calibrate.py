"""Calibration against the published measurements: the quality threshold, honesty checks, and the fit."""

from __future__ import annotations

import pytest

from specpick.tools.calibration.report import TARGET_MEDIAN_APE_PCT, calibrate
from specpick.tools.commands.calibrate import CalibrateInput, calibrate_tool, render_text
from specpick.tools.calibration.cases import build_case, skip_reason
from specpick.tools.calibration.stats import error_stats, interval_coverage
from specpick.tools.errors import ThresholdError
from pydantic import ValidationError
from specpick.tools.catalog.published import load_published

# The first test to ask for the engine report computes it (the llama.cpp strict refit, ~70 s alone on 2 cores);
# on a loaded CI machine that passed the 300 s per-test timeout, which is for hangs, not for this known cost.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def report():
    return calibrate()


def test_median_error_within_target_without_per_row_fitting(report):
    cost, e2e, loso = report.cost_model.overall, report.end_to_end.overall, report.leave_one_source_out.overall
    print(f"\ncost model: {cost}\nend to end: {e2e}\nleave one source out: {loso}")
    assert cost.median_ape_pct <= TARGET_MEDIAN_APE_PCT
    assert e2e.median_ape_pct <= TARGET_MEDIAN_APE_PCT
    assert abs(e2e.bias_pct) < 10  # neither systematically optimistic nor pessimistic
    # honest about priors coming from the same rows: report the out-of-source figure, and keep it sane
    assert loso.median_ape_pct <= 20 and loso.n >= 180


def test_every_published_row_is_used_or_skipped_for_a_counted_reason(report):
    # 272 rows through 2026-11; Spec-Bench's leaderboard (33) and RADAR's EAGLE-2/3 baselines (20) joined then, and
    # SAM-Decoding's README (14: PLD and EAGLE-2 on the six Spec-Bench tasks and their mean) and the leaderboard's
    # task columns (198, ungraded: they feed same-setup workload ratios) in 2026-12
    assert report.n_published == len(load_published()) == 537
    assert report.n_used + sum(report.skipped.values()) == report.n_published
    assert report.n_used >= 280
    assert report.cost_model.overall.n >= 80  # rows that state their own tau/alpha
    assert report.end_to_end.batch_above_1.n >= 40  # the batch-decay rows are in


@pytest.mark.parametrize("row_id, reason", [
    ("LADE-PAPER/1", "range"), ("EAGLE-GPTFAST/1", "baseline differs"), ("EAGLE1-T7/5", "baseline differs"),
    ("EAGLE3-T1/6", "aggregate"), ("EAGLE1-FIG1/7", "duplicate"), ("EAGLE1-PAPER/1", "no speedup"), ("CLOVER/11", "bound"),
])
def test_skip_reasons(row_id, reason):
    row = next(r for r in load_published() if r.row_id == row_id)
    got = skip_reason(row) or build_case(row)
    assert isinstance(got, str) and reason in got


def test_hardware_not_stated_gets_the_stated_default():
    row = next(r for r in load_published() if r.row_id == "EAGLE3-T1/40")  # EAGLE3-T1 Vicuna-13B EAGLE-2, Alpaca
    case = build_case(row)
    assert case.gpu.key == "A100-80GB" and any("not stated" in n for n in case.notes)


def test_per_method_and_harness_figures_are_reported(report):
    methods = set(report.end_to_end.per_method)
    assert {"draft_model", "eagle", "eagle2", "eagle3", "medusa", "mtp", "lookahead", "ngram", "suffix"} <= methods
    assert {"paper", "sglang", "compiled"} <= set(report.end_to_end.per_harness)
    text = render_text(report)
    assert "leave one source out" in text and "global constants" in text


@pytest.mark.parametrize("triples, inside, below, above", [
    ([], 0, 0, 0),
    ([(1.0, 2.0, 1.5)], 1, 0, 0),
    ([(1.0, 2.0, 1.0), (1.0, 2.0, 2.0)], 2, 0, 0),  # the ends count as inside
    ([(1.0, 2.0, 0.9), (1.0, 2.0, 2.1), (1.0, 2.0, 1.2), (1.5, 1.6, 1.55)], 2, 1, 1),
])
def test_interval_coverage_on_synthetic_cases(triples, inside, below, above):
    c = interval_coverage(triples)
    assert (c.n, c.inside, c.below, c.above) == (len(triples), inside, below, above)
    assert c.share == (round(inside / len(triples), 3) if triples else None)


def test_p90_is_never_below_the_median():
    s = error_stats([(1.1, 1.0), (1.5, 1.0)])  # 10% and 50%
    assert s.median_ape_pct == pytest.approx(30.0) and s.p90_ape_pct == pytest.approx(50.0)


def test_loso_comes_with_interval_coverage(report):
    loso = report.leave_one_source_out
    assert loso.coverage.n == loso.overall.n and set(loso.coverage_per_method) == set(loso.per_method)
    row = next(r for r in report.rows if r.loso is not None)
    low, high = row.intervals["loso"]
    assert low <= row.loso <= high
    text = render_text(report)
    assert text.index("dev LOSO end to end") < text.index("IN-SAMPLE")


@pytest.mark.parametrize("option, phrase", [
    ("max_loso_median_ape_pct", "dev leave-one-source-out median error"),
    ("max_engine_loso_median_ape_pct", "engine leave-one-source-out median error"),
    ("max_engine_cost_median_ape_pct", "engine cost-model median error"),
    ("max_llamacpp_loso_median_ape_pct", "llama.cpp leave-one-source-out median error"),
])
def test_out_of_sample_gates_fail_with_exit_8_and_name_the_figure(option, phrase):
    with pytest.raises(ThresholdError) as info:
        calibrate_tool(CalibrateInput(**{option: 0.5}))
    assert info.value.exit_code == 8 and phrase in str(info.value) and "\n" not in str(info.value)
    ok = calibrate_tool(CalibrateInput(**{option: 1000.0}))
    assert ok.leave_one_source_out is not None


def test_interval_coverage_gate():
    with pytest.raises(ThresholdError) as info:
        calibrate_tool(CalibrateInput(engines=True, min_interval_coverage=1.0))
    assert "dev leave-one-source-out interval coverage" in str(info.value)
    assert "engine leave-one-source-out interval coverage" in str(info.value)
    assert calibrate_tool(CalibrateInput(engines=True, min_interval_coverage=0.0)).engines is not None


def test_llamacpp_coverage_gate_fails_both_ways():
    """The llama.cpp ranges claim 80%: a share below the floor is overconfident, one above the ceiling too wide."""
    with pytest.raises(ThresholdError) as low:
        calibrate_tool(CalibrateInput(min_llamacpp_coverage=1.0, loso=False))
    assert low.value.exit_code == 8 and "below --min-llamacpp-coverage" in str(low.value)
    with pytest.raises(ThresholdError) as high:
        calibrate_tool(CalibrateInput(max_llamacpp_coverage=0.0, loso=False))
    assert "above --max-llamacpp-coverage" in str(high.value)
    ok = calibrate_tool(CalibrateInput(min_llamacpp_coverage=0.0, max_llamacpp_coverage=1.0, loso=False))
    assert ok.engines is not None and ok.engines["llamacpp"] is not None


def test_extrapolation_class_gate_fails_with_exit_8_and_names_the_class():
    """--min-class-coverage grades every class with >= 10 rows; --ungated-classes leaves known failures out; the
    figures are in the JSON report either way."""
    with pytest.raises(ThresholdError) as info:
        calibrate_tool(CalibrateInput(min_class_coverage=1.0, loso=False))
    assert info.value.exit_code == 8 and "extrapolation class 'gpu_datacenter' interval coverage" in str(info.value)
    assert "context_16k" not in str(info.value)  # 5 rows: too few to gate
    with pytest.raises(ThresholdError) as unknown:
        calibrate_tool(CalibrateInput(min_class_coverage=0.0, ungated_classes=["no_such_class"], loso=False))
    assert "--ungated-classes names no extrapolation class: no_such_class" in str(unknown.value)
    ok = calibrate_tool(CalibrateInput(min_class_coverage=0.0, loso=False))
    classes = {c["name"]: c for c in ok.engines["extrapolation"]["classes"]}
    assert classes["pcie_multi_gpu"]["stats"]["n"] >= 10 and classes["context_16k"]["gated"] is False
    assert "extrapolation classes" in render_text(ok)
    # the threshold just above a class's own figure fails on it, just at it passes (tests/test_extrapolation.py
    # grades the same report with --ungated-classes)
    share = classes["gpu_datacenter"]["coverage"]["share"]
    assert "'gpu_datacenter'" in str(info.value) and f"{share:.1%}" in str(info.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_gate_options_must_be_finite_and_non_negative(value):
    with pytest.raises(ValidationError):
        CalibrateInput(max_engine_loso_median_ape_pct=value)
    with pytest.raises(ValidationError):
        CalibrateInput(min_interval_coverage=value)
    with pytest.raises(ValidationError):
        CalibrateInput(min_llamacpp_coverage=value)
    with pytest.raises(ValidationError):
        CalibrateInput(min_class_coverage=value)


def test_threshold_exit_code():
    with pytest.raises(ThresholdError) as info:
        calibrate_tool(CalibrateInput(max_median_ape_pct=1.0, loso=False))
    assert info.value.exit_code == 8
    ok = calibrate_tool(CalibrateInput(max_median_ape_pct=TARGET_MEDIAN_APE_PCT, loso=False))
    assert ok.rows == []  # rows only with --rows


def test_committed_constants_are_the_global_fit():
    from specpick.tools.calibration.fit import fit_all

    fits = fit_all()
    for fit in fits:
        print(f"\n{fit.name} ({fit.n_rows} rows, {fit.objective}): committed {fit.committed} -> "
              f"{fit.committed_score_pct}%, grid best {fit.best} -> {fit.best_score_pct}%")
        assert fit.committed_score_pct <= fit.best_score_pct + 0.5
    roofline = next(f for f in fits if f.name == "roofline")
    paths = next(f for f in fits if f.name == "engine execution paths")
    from specpick.tools.calibration.engines import engine_cases

    fit_half, holdout = engine_cases("fit"), engine_cases("holdout")
    dev_batch = sum(1 for r in load_published() if not isinstance(c := build_case(r), str) and c.batch > 1)
    # the roofline sees the dev batch rows and the engine rows' fit half only
    assert roofline.n_rows == dev_batch + len(fit_half)
    # the execution paths see the fit half's own-acceptance rows, the fit half's no-speculation baselines and the dev
    # rows a serving engine ran at batch > 1 (dense concurrency sweeps: published-dev.csv, not engine rows) only;
    # the holdout half (rows and baselines) is scored, never fitted on
    from specpick.tools.calibration.baselines import plain_step_report
    from specpick.tools.calibration.fit import dev_engine_batch_cases

    own = [c for c in fit_half if c.tau is not None or c.alpha is not None]
    own_holdout = [c for c in holdout if c.tau is not None or c.alpha is not None]
    steps = plain_step_report().rows
    fit_steps = [p for p in steps if p.split == "fit"]
    assert {p.split for p in steps} == {"fit", "holdout"} and len(fit_steps) >= 10
    dev_engine = dev_engine_batch_cases()
    assert len(dev_engine) >= 20 and all(c.batch > 1 and c.harness in ("vllm", "sglang", "trtllm") for c in dev_engine)
    engine_sources = {c.row.source_id for c in fit_half + holdout}
    assert not engine_sources & {c.row.source_id for c in dev_engine}
    assert paths.n_rows == len(own) + len(fit_steps) + len(dev_engine)
    assert paths.holdout["n_rows"] == len(own_holdout) >= 10
    assert paths.holdout["n_plain_steps"] == len(steps) - len(fit_steps) >= 5
    # The holdout figure with the committed constants (11.9% mean APE on 2026-11-30: 39 rows and 10 plain steps; 11.7%
    # before the dense concurrency sweeps joined the fit, 12.6% before the 16-bit MoE layer term) with a little slack.
    assert paths.holdout["committed_mean_ape_pct"] < 13.0
    # the overlap share sees the fit half's rows that ran with overlap; refitted with each source left out it must
    # still beat hiding all per-request work (the model before the share existed) on the left-out sources
    from specpick.tools.calibration.fit import fit_overlap_exposure

    overlap = next(f for f in fits if f.name == "overlap: per-request work exposed")
    assert overlap.n_rows == sum(1 for c in fit_half if c.spec_overlap) >= 20
    assert overlap.holdout["n_rows"] == sum(1 for c in holdout if c.spec_overlap)
    all_hidden = fit_overlap_exposure({"engine.overlap_seq_exposed_fraction": (0.0,)})
    assert overlap.loso_mean_ape_pct < all_hidden.best_score_pct


def test_the_execution_path_fit_never_sees_the_holdout_baselines(monkeypatch):
    """Make every holdout source's no-speculation baseline ten times slower: the fit (its best point and score) must
    not move, while the holdout figure it reports must."""
    from specpick.tools.calibration import baselines
    from specpick.tools.calibration.fit import fit_engine_paths
    from specpick.tools.calibration.split import split_of_source

    grid = {"engine.moe_layer_ms": (0.06, 0.1), "engine.moe_layer_16bit_ms": (0.02, 0.1)}
    before = fit_engine_paths(grid, rounds=1)
    real = baselines.load_baselines()
    slowed = tuple(b.model_copy(update={"baseline_ms_per_token": b.baseline_ms_per_token * 10})
                   if split_of_source(b.row_id.rsplit("/", 1)[0]) == "holdout" else b for b in real)
    assert slowed != real
    monkeypatch.setattr(baselines, "load_baselines", lambda: slowed)
    after = fit_engine_paths(grid, rounds=1)
    assert (after.best, after.best_score_pct, after.n_rows) == (before.best, before.best_score_pct, before.n_rows)
    assert after.holdout["committed_plain_step_mean_ape_pct"] != before.holdout["committed_plain_step_mean_ape_pct"]


def test_the_dense_per_request_cost_does_not_hurt_the_holdout_dense_rows():
    """The dense verifiers' per-request cycle cost is fitted apart from the MoE one, on the fit split and the dev rows'
    dense concurrency sweeps (no engine holdout row). Against the former shared value (0.2 ms) the holdout's dense rows
    at concurrency >= 8 (vLLM and SGLang; never fitted on) must not get worse; handing dense verifiers the MoE figure
    must. (The split is neutral out of sample, tools/model/overhead.py says so; this guards that it stays so.)"""
    import statistics

    from specpick.tools.calibration.engines import engine_cases, holdout_sources
    from specpick.tools.calibration.fit import PATH_GRID, ape_out_of_sample, committed_path_values, path_constants

    held = holdout_sources()
    dense = [c for c in engine_cases("holdout") if c.batch >= 8 and not c.verifier.is_moe]
    assert not [c for c in engine_cases("fit") if c.batch >= 8 and not c.verifier.is_moe]  # why the dev sweeps join
    committed = committed_path_values(PATH_GRID)

    def mean_ape(values: dict[str, float]) -> float:
        constants = path_constants(values)
        errs = [e for c in dense if (e := ape_out_of_sample(c, c.own_acceptance, constants,
                                                             held | {c.row.source_id})) is not None]
        assert len(errs) >= 10
        return statistics.fmean(errs)

    former = {**committed, "engine.cycle_per_seq_ms": 0.2, "engine.cycle_per_seq_dense_ms": 0.2}
    moe_figure = {**committed, "engine.cycle_per_seq_dense_ms": committed["engine.cycle_per_seq_ms"]}
    assert mean_ape(committed) <= mean_ape(former) + 0.1
    assert mean_ape(committed) < mean_ape(moe_figure)


def test_rows_measured_in_vllm_use_the_vllm_harness():
    rows = [r for r in load_published() if "(vllm)" in r.source.lower()]
    assert rows and all(build_case(r).harness == "vllm" for r in rows)


@pytest.mark.parametrize("row_id, runner", [
    ("EAGLE3-T1/43", "authors"),  # the EAGLE-3 paper's own EAGLE-3 run
    ("EAGLE3-T1/13", "third_party"),  # the same paper's run of Medusa
    ("RADAR-README/5", "third_party"),  # RADAR's EAGLE-3 baseline
    ("HASS/1", "third_party"),  # HASS's run of plain EAGLE-2
    ("MEDUSA-PAPER-T1/1", "authors"),  # Medusa-2, by the Medusa authors
])
def test_a_case_is_graded_as_the_run_of_whoever_made_it(row_id, runner):
    row = next(r for r in load_published() if r.row_id == row_id)
    assert build_case(row).runner == runner


def test_moe_rows_hold_or_improve_with_routing_locality(report):
    """Consecutive-token expert reuse (ModelConstants.routing_reuse) must not move the MoE rows away from the data."""
    from specpick.tools.calibration.cases import predict_speedup
    from specpick.tools.model.constants import DEFAULT_CONSTANTS

    moe = {"DSV3-MTP", "EAGLE1-MIXTRAL"}
    local = {r.row_id: r for r in report.rows if r.source_id in moe}
    assert len(local) == 2
    no_reuse = DEFAULT_CONSTANTS.model_copy(update={"routing_reuse": 0.0})
    cases = {row.row_id: build_case(row) for row in load_published() if row.row_id in local}
    independent = {row_id: predict_speedup(c, own=True, constants=no_reuse) for row_id, c in cases.items()}
    for row_id, r in local.items():
        before = abs(independent[row_id] - r.measured)
        after = abs(r.cost_model - r.measured)
        print(f"\n{row_id} {r.source_id}: measured {r.measured}, independent routing "
              f"{independent[row_id]:.3f}, with locality {r.cost_model:.3f}")
        assert after <= before + 0.01 * r.measured  # holds (within 1%) or improves


def test_the_stricter_grouped_leave_out_is_reported_beside_the_headline(report):
    """SAM-Decoding and the Spec-Bench leaderboard ran Spec-Bench's own harness and prompts: the grouped figure leaves
    them out together; every other row is predicted exactly as in the headline leave-one-source-out run."""
    assert report.loso_grouped is not None and report.loso_grouped.n == report.leave_one_source_out.overall.n
    grouped = [r for r in report.rows if r.source_id in ("SAMD-README", "SPECBENCH-LB") and r.loso is not None]
    assert any(r.loso_grouped != r.loso for r in grouped)  # the other run's task ratios leave too
    assert all(r.loso_grouped == r.loso for r in report.rows
               if r.source_id not in ("SAMD-README", "SPECBENCH-LB") and r.loso is not None)

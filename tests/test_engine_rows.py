"""Engine-measured rows: loading, provenance, the fixed fit/holdout split, and `calibrate --engines`."""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from specpick.tools.commands.calibrate import CalibrateInput, calibrate_tool, render_text
from specpick.tools.calibration.engines import engine_cases, engine_report
from specpick.tools.calibration.engine_cases import LLAMACPP_REASON, build_case, draft_shape, row_use, skip_reason
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.calibration.engine_specs import resolve_engine_gpu, resolve_engine_verifier, weights_bytes_per_param
from specpick.tools.calibration.split import SALT, parse_split_text, render_split_file, split_of_source, split_text
from specpick.tools.errors import RemoteDataError
from specpick.tools.vocab import ENGINES
from specpick.tools.catalog.published import load_published

# The first test to ask for the engine report computes it (the llama.cpp strict refit, ~70 s alone on 2 cores);
# on a loaded CI machine that passed the 300 s per-test timeout, which is for hangs, not for this known cost.
pytestmark = pytest.mark.timeout(900)


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
    assert len(rows) >= 340
    for r in rows:
        assert r.source and r.source_id
        assert r.engine in ENGINES or skip_reason(r) == f"engine '{r.engine}' is not in tools/vocab.Engine", r.row_id
        assert r.provenance in ("primary", "primary-figure", "secondary"), r.row_id


def test_a_share_of_drafted_tokens_is_never_stored_as_a_per_position_alpha():
    """llama.cpp's 'accept' (n_accept / n_drafted) and vLLM's draft acceptance rate are shares of drafted tokens.
    Read as a per-position alpha over a chain of N > 1 they understate tau badly (llama.cpp#5877: share 0.72 at
    n_draft 5 is tau 4.58 from n_predict / (n_predict - n_accept), where a chain alpha of 0.72 gives 3.07)."""
    for r in load_engine_rows():
        if r.alpha is None:
            continue
        depth, _, _ = draft_shape(r)
        shares = ("n_accept/n_drafted", "accepted/drafted", "share of drafted")
        assert depth == 1 or not any(s in r.notes for s in shares), r.row_id


def test_acceptance_from_another_run_never_tests_the_cycle_cost():
    """Each cycle costs at least one plain step, so no run is faster than its own tau: a row whose speedup exceeds its
    tau must say its acceptance came from another run (TensorRT-LLM tech blog 7: AL over 3000 sampled conversations,
    speedups over 20 x batch requests), and such a row is predicted end to end, with the priors' acceptance."""
    from specpick.tools.calibration.engine_rows import OTHER_RUN_TAG

    rows = load_engine_rows()
    for r in rows:
        if r.speedup is not None and r.tau is not None and r.speedup > r.tau:
            assert OTHER_RUN_TAG in r.notes, r.row_id
    tagged = [r for r in rows if OTHER_RUN_TAG in r.notes and r.speedup is not None]
    assert {r.row_id for r in tagged} >= {"TRTLLM-BLOG7-NGRAM/1", "TRTLLM-BLOG7-NGRAM/2", "TRTLLM-BLOG7-NGRAM/3"}
    for r in tagged:
        use, case = row_use(r)
        assert use == "end_to_end" and case.tau is None and case.alpha is None and r.tau is not None, r.row_id


def test_every_row_is_used_or_skipped_for_a_counted_reason(report):
    uses = [row_use(r)[0] for r in load_engine_rows()]
    assert report.n_rows == len(uses)
    assert report.n_used == sum(u in ("cost_model", "end_to_end") for u in uses)
    assert report.n_used + sum(report.skipped.values()) + uses.count("acceptance_only") == report.n_rows
    totals = {k: sum(v[k] for v in report.usable.values()) for k in ("cost_model", "end_to_end", "acceptance_only")}
    assert totals["end_to_end"] == report.n_used and totals["cost_model"] == report.cost_model.overall.n
    assert totals["acceptance_only"] == uses.count("acceptance_only") >= 5
    assert report.n_used >= 75 and report.cost_model.overall.n >= 40


def test_rows_cover_engines_and_model_classes():
    cases = engine_cases()
    # the serving engines' cases: llama.cpp rows are in the llama.cpp figures only, on their own harness
    assert {c.harness for c in cases} == {"vllm", "sglang", "trtllm"}
    assert {c.row.engine for c in cases} == {"vllm", "sglang", "trtllm"}
    from specpick.tools.calibration.llamacpp_fit import llamacpp_cases

    assert {(c.row.engine, c.harness) for c in llamacpp_cases()} == {("llamacpp", "llamacpp")}
    assert any(c.verifier.is_moe for c in cases) and any(not c.verifier.is_moe for c in cases)
    assert any((c.verifier.params_total_b or 0) >= 60 and not c.verifier.is_moe for c in cases)  # 70B dense with TP
    assert any(c.batch > 1 for c in cases)
    assert any(c.gpu.key == "MI300X" for c in cases)  # AMD rows resolve through the catalog


def test_engine_rows_are_not_in_the_dev_set():
    dev = {r.source_id for r in load_published()}
    assert not dev & {r.source_id for r in load_engine_rows()}


@pytest.mark.parametrize("source_id, reason", [
    ("VLLM-12755", "request rate"),  # QPS 2..8 rows: concurrency unknown
    ("TRTLLM-LADE-BLOG", "range or bound"),  # "up to 3.6"
    ("LMSYS-BLOG-LOOKAHEAD-2023", "range or bound"),  # "~1.5", ">2"
    ("VLLM-BLOG-INKLING-2026", "not in catalog: TML Inkling"),  # a verifier the catalog lacks is not guessed
    ("LLAMACPP-5877", "llama.cpp row"),  # llama.cpp: its own cost model, fit and section (engine_cases.row_use)
    ("ROCM-BLOG-SPECDEC-DEEPDIVE-2025", "concurrency not stated"),  # request-rate sweep without a value
    ("SGL-BLOG-MTP-2025", "disaggregated"),  # PD disaggregation, batch per rank
])
def test_skip_reasons(source_id, reason):
    reasons = [row_use(r)[1] for r in load_engine_rows() if r.source_id == source_id]
    assert any(isinstance(x, str) and reason in x for x in reasons), reasons


def test_acceptance_only_rows_are_counted_not_predicted(report):
    row = next(r for r in load_engine_rows() if r.source_id == "SGLANG-4247")  # AL 5.39 at steps 8, no baseline
    use, case = row_use(row)
    assert use == "acceptance_only" and case.tau == pytest.approx(5.39)
    assert build_case(row) == "no speedup (acceptance only)"
    assert row.row_id not in {r.row_id for r in engine_report().rows}


@pytest.mark.parametrize("cell, bpp", [
    ("Llama-3.3-70B-Instruct (NVFP4)", 4.5 / 8), ("DeepSeek-R1 (FP4 MoE, bf16 attention)", 4.5 / 8),
    ("Qwen2.5-72B-Instruct", 2.0),
])
def test_weight_format_in_the_verifier_cell_sets_bytes_per_weight(cell, bpp):
    spec, _ = resolve_engine_verifier(cell)
    assert spec is not None and weights_bytes_per_param(cell, "chain 3", spec)[0] == pytest.approx(bpp)


@pytest.mark.parametrize("hardware, expected", [
    ("8x MI300X (TP 8)", ("MI300X", 8)), ("4x GB200 (TP 4, non-disagg)", ("GB200", 4)), ("1x H100 (tp 1)", ("H100-SXM", 1)),
    ("1x MI355X (TP 1)", ("MI355X", 1)), ("Apple M4 Pro 64GB", "has no GPU count"),
    ("1x GPU (type not stated; tp=1)", "names no catalog GPU model"),
    ("1x Radeon 8060S (Strix Halo iGPU)", "names no catalog GPU model"),
    # a suffix names another part: a PCIe card is not its SXM sibling, and an unknown suffix is a skip, not a guess
    ("2x H100-PCIe (80 GB; TP 2)", ("H100-PCIE", 2)), ("1x H100-NVL (96 GB)", ("H100-NVL", 1)),
    ("1x H100-SXM5 (94 GB)", "names no catalog GPU model"),
])
def test_hardware_cells_map_to_catalog_gpus_or_say_why_not(hardware, expected):
    got = resolve_engine_gpu(hardware)
    if isinstance(expected, str):
        assert isinstance(got, str) and expected in got
    else:
        assert (got[0].key, got[1]) == expected


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


@pytest.mark.parametrize("config, n", [
    ("block 16 (num_speculative_tokens=15)", 15),  # DFlash: a block of 16 is the bonus position plus 15 drafts
    ("steps 4 topk 1 (4-token MTP window)", 4),  # SGLang flags without --speculative-num-draft-tokens
    ("--draft-max 16 --draft-min 5", 16),  # llama.cpp: the most tokens a cycle may draft
    ("n_draft 8", 8),
    ("--spec-draft-n-max 8 --spec-draft-p-min 0.5", 8),
])
def test_every_spelling_of_the_draft_length_is_read_not_defaulted(config, n):
    row = next(r for r in load_engine_rows() if r.source_id == "VLLM-20780").model_copy(update={"config": config})
    got, tree, notes = draft_shape(row)
    assert (got, tree) == (n, None)
    assert not any("not stated" in note for note in notes)


def test_no_row_states_more_accepted_tokens_than_its_shape_verifies():
    # tau counts the bonus token, so a chain of N (or a tree of depth D) accepts at most N + 1 (D + 1) per cycle;
    # a row above that was read at the wrong draft length.
    for row in load_engine_rows():
        if row.tau is None or row.method in ("lookahead", "suffix"):
            continue
        n, tree, _ = draft_shape(row)
        assert row.tau <= (tree.depth if tree else n) + 1, (row.row_id, row.config, row.tau)


def test_topk_1_is_a_chain_and_nvfp4_weights_are_4_5_bits():
    case = build_case(next(r for r in load_engine_rows() if r.source_id == "SGLANG-20809"))
    assert case.tree is None and case.num_draft_tokens == 3
    assert case.bpp == pytest.approx(4.5 / 8)


def test_every_source_has_a_committed_split_that_the_rule_reproduces():
    committed = parse_split_text(split_text())
    sources = {r.source_id for r in load_engine_rows()}
    assert sources <= set(committed), sorted(sources - set(committed))
    assert render_split_file({sid: reason for sid, (_, reason) in committed.items()}) == split_text()
    assert split_text().startswith("# ") and SALT in split_text().splitlines()[1]
    for half in ("fit", "holdout"):  # every engine with usable rows has some in both halves
        assert {c.harness for c in engine_cases(half)} >= {"vllm", "sglang", "trtllm"}
    assert {split_of_source(c.row.source_id) for c in engine_cases("holdout")} == {"holdout"}


def test_a_bad_split_cell_is_a_data_error():
    with pytest.raises(RemoteDataError) as info:
        parse_split_text("source_id,split,reason\nX-1,train,oops\n")
    assert "X-1" in str(info.value) and info.value.exit_code == 6


def test_report_has_every_group_both_halves_and_coverage(report):
    for mode in (report.loso, report.cost_model, report.end_to_end):
        assert mode.overall.n == mode.fit_half.n + mode.holdout_half.n
        assert set(mode.per_class) <= {"dense", "moe"} and mode.per_class
        assert set(mode.per_batch) <= {"batch 1", "batch > 1"}
        assert mode.coverage.overall.n == mode.overall.n
        assert mode.coverage.holdout_half.n == mode.holdout_half.n
        assert sum(c.n for c in mode.coverage.per_engine.values()) == mode.overall.n
    assert set(report.loso.per_engine) == {"vllm", "sglang", "trtllm"}  # llama.cpp: its own section
    assert report.loso.holdout_half.n >= 20 and report.cost_model.holdout_half.n >= 10
    # the headline rows are scored with their own source removed from the priors
    assert all(r.loso is not None for r in report.rows) or report.loso.not_covered


def test_calibrate_engines_flag_reports_separately_and_leaves_the_dev_figure_alone():
    plain = calibrate_tool(CalibrateInput(loso=False))
    both = calibrate_tool(CalibrateInput(loso=False, engines=True))
    assert plain.engines is None and both.engines is not None
    assert both.end_to_end.overall == plain.end_to_end.overall  # never mixed into the dev-set figure
    assert both.n_used == plain.n_used
    text = render_text(both)
    assert "held out from the dev set" in text and "holdout half" in text and "not in catalog" in text
    # out-of-sample figures first, in-sample last and labelled
    assert text.index("engine LOSO end to end") < text.index("engines, leave one source out") < text.index(
        "IN-SAMPLE") < text.index("engines, end to end IN-SAMPLE")
    assert both.engines["rows"] == []  # rows only with --rows


def test_acceptance_is_scored_on_every_usable_row_that_states_tau(report):
    with_tau = [r for r in load_engine_rows() if r.tau is not None and row_use(r)[0] != "skipped"]
    acc = report.acceptance_loso
    assert acc.overall.n + acc.not_covered == len(with_tau)
    assert any(row_use(r)[0] == "acceptance_only" for r in with_tau)  # rows without a speedup count here
    assert sum(s.n for s in acc.per_engine.values()) == acc.overall.n


@pytest.mark.parametrize("cell, repo_id", [
    ("Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B-Instruct"),  # the DRAFTS spelling table
    ("Qwen3-1.7B (Qwen/Qwen3-1.7B)", "Qwen/Qwen3-1.7B"),  # the catalog's own name lookup, as for verifiers
    ("turboderp/Qwama-0.5B-Instruct", None), ("JackFram/llama-160m", None),  # not in the catalog: a counted skip
])
def test_draft_cells_resolve_to_catalog_models_or_none(cell, repo_id):
    from specpick.tools.calibration.engine_specs import resolve_engine_draft

    got = resolve_engine_draft(cell)
    assert (got.repo_id if got else None) == repo_id


def test_llamacpp_rows_enter_no_other_engine_figure_and_are_reported_apart(report):
    lcpp = [r for r in load_engine_rows() if r.engine == "llamacpp"]
    assert lcpp and all(r.llamacpp for r in lcpp)
    gated_ids = {r.row_id for r in report.rows}
    assert not gated_ids & {r.row_id for r in lcpp}
    assert report.llamacpp is not None
    assert {r.row_id for r in report.llamacpp.rows} <= {r.row_id for r in lcpp}
    assert report.llamacpp.loso.overall.n == len(report.llamacpp.rows)
    assert {r.engine for r in report.llamacpp.rows} == {"llamacpp"}
    # the report lists the llama.cpp rows among the skipped reasons of the other engines' figures
    assert report.skipped[LLAMACPP_REASON] == len(lcpp)

"""Acceptance ratios from same-setup published pairs (tools/model/same_setup.py) and how the priors use them."""

from __future__ import annotations

import statistics

import pytest

from specpick.tools.catalog.knowledge import knowledge

from specpick.tools.catalog.published import copied_from, load_published, map_workload, measurement_sources
from specpick.tools.model import same_setup
from specpick.tools.model.priors import PriorQuery, Shape, acceptance_prior
from specpick.tools.model.same_setup import SAME_SHAPE_VARIANTS, variant_gap, workload_gap


def _prior(method, workload, temperature, shape, **situation):
    """``acceptance_prior`` for a workload and temperature, with the rest of the query by keyword."""
    return acceptance_prior(method, shape, PriorQuery(workload=workload, temperature=temperature, **situation))


CHAIN3 = Shape(num_draft_tokens=3)
EAGLE2_TREE = Shape(num_draft_tokens=6, tree_top_k=10, tree_tokens=60)
MEDUSA_TREE = Shape(num_draft_tokens=4, tree_top_k=10, tree_tokens=64)


def _cell(source: str, method_raw: str, verifier: str, task: str, column: str = "speedup_raw") -> float:
    """A published cell read as written in the CSV, not through the code under test."""
    (row,) = [r for r in load_published() if (r.source_id, r.method_raw, r.verifier_model, r.task)
              == (source, method_raw, verifier, task)]
    return float(getattr(row, column))


def test_medusa_2s_gap_is_the_median_of_the_medusa_readmes_same_setup_speedup_pairs():
    # Medusa-2 keeps Medusa-1's heads and tree, so equal cycle costs make the speedup ratio the tau ratio
    pairs = [_cell("MEDUSA-README", "Medusa-2", v, "MT-Bench") / _cell("MEDUSA-README", "Medusa-1", v, "MT-Bench")
             for v in ("Vicuna-7B", "Vicuna-13B")]
    gap, sources = variant_gap("medusa", "medusa-2")
    assert sources == ("MEDUSA-README",)
    assert gap == pytest.approx(statistics.median(pairs))


def test_a_copy_of_a_measurement_leaves_with_its_original():
    # the README's Medusa-2 bars are the Medusa paper's Table 1 figures: leaving the paper out leaves them out too,
    # so the paper's rows are never predicted from their own numbers
    copies = [r for r in load_published() if (copied_from(r) or "").startswith("MEDUSA-PAPER-T1/")]
    assert copies and all(measurement_sources(r.row_id, r.source_id) == {"MEDUSA-README", "MEDUSA-PAPER-T1"}
                          for r in copies)
    assert variant_gap("medusa", "medusa-2", frozenset({"MEDUSA-PAPER-T1"})) == (1.0, ())


def test_every_declared_copy_states_what_its_original_states():
    by_id = {r.row_id: r for r in load_published()}
    from specpick.tools.catalog.published import SAME_MEASUREMENT
    for copy, original in SAME_MEASUREMENT.items():
        a, b = by_id[copy], by_id[original]
        assert a.source_id != b.source_id, copy
        assert (a.method, a.variant, a.workload, a.speedup_raw) == (b.method, b.variant, b.workload, b.speedup_raw), copy
        assert a.temperature is None or b.temperature is None or a.temperature == b.temperature, copy
        assert not a.tau or a.tau == b.tau, copy
        assert copied_from(b) is None, f"{original} is itself a copy"


def test_hydras_gap_rests_on_stated_tau_from_two_sources():
    gap, sources = variant_gap("medusa", "hydra")
    assert set(sources) == {"EAGLE3-T1", "SPECBENCH-LB"}
    mt_bench = _cell("EAGLE3-T1", "Hydra", "Vicuna-13B-v1.3", "MT-Bench", "tau_raw") \
        / _cell("EAGLE3-T1", "Medusa-1", "Vicuna-13B-v1.3", "MT-Bench", "tau_raw")
    assert gap == pytest.approx(mt_bench, rel=0.05)


def test_a_variant_pair_compares_runs_by_the_same_kind_of_runner():
    # HASS's authors ran HASS and, as a third party, EAGLE-2; the EAGLE authors ran EAGLE-2 and HASS as a third
    # party. Either ratio would also carry who ran the rows, which runner levelling already moves.
    assert variant_gap("eagle2", "hass") == (1.0, ())


def test_speedup_pairs_stand_for_tau_only_where_the_cycles_cost_alike():
    # DistillSpec's draft is not named (EAGLE Fig. 1): its speedups over SpS are not a tau ratio
    assert ("draft_model", "distillspec") not in SAME_SHAPE_VARIANTS
    assert variant_gap("draft_model", "distillspec") == (1.0, ())
    # CNN/DM carries long documents: without the EAGLE-3 paper's stated taus, no head summarization/chat ratio,
    # though the Spec-Bench tables ran EAGLE heads on both (speedups only)
    assert workload_gap("head", "summarization", "chat", frozenset({"EAGLE3-T1"})) == (1.0, ())


def test_a_workload_ratio_reads_tau_off_the_tables_overall_tau():
    # SAM-Decoding's EAGLE-2 table: overall tau 4.36, split over the six tasks in proportion to their speedups
    tasks = {w: _cell("SAMD-README", "EAGLE-2", "Vicuna-7B-v1.3", t) for w, t in (
        ("chat", "Spec-Bench: Multi-turn Conversation (MT-bench)"),
        ("translation", "Spec-Bench: Translation (WMT14 DE-EN)"),
        ("summarization", "Spec-Bench: Summarization (CNN/DM)"),
        ("qa", "Spec-Bench: Question Answering (Natural Questions, closed-book)"),
        ("math", "Spec-Bench: Mathematical Reasoning (GSM8K)"),
        ("rag", "Spec-Bench: Retrieval-aug. Generation (Natural Questions with retrieved passages)"))}
    overall_tau = _cell("SAMD-README", "EAGLE-2", "Vicuna-7B-v1.3", "Mean of 6 (Spec-Bench Overall column)", "tau_raw")
    tau = {w: overall_tau * s / statistics.fmean(tasks.values()) for w, s in tasks.items()}
    ratio, sources = workload_gap("head", "translation", "chat", frozenset({"SPECBENCH-LB"}))
    assert sources == ("SAMD-README",)
    assert ratio == pytest.approx((tau["translation"] - 1) / (tau["chat"] - 1))


@pytest.mark.parametrize("gap", [
    lambda ex: variant_gap("medusa", "medusa-2", ex), lambda ex: variant_gap("medusa", "hydra", ex),
    lambda ex: workload_gap("head", "translation", "chat", ex),
    lambda ex: workload_gap("model_free", "qa", "chat", ex), lambda ex: workload_gap("head", "code", "chat", ex),
])
def test_a_gap_left_without_a_source_is_the_gap_of_data_that_never_had_it(gap, monkeypatch):
    _, sources = gap(frozenset())
    assert sources
    rows = same_setup._paper_rows()
    for source in sources:
        with_exclude = gap(frozenset({source}))
        monkeypatch.setattr(same_setup, "_paper_rows",
                            lambda source=source: tuple(r for r in rows
                                                        if source not in measurement_sources(r.row_id, r.source_id)))
        same_setup.variant_gap.cache_clear()
        same_setup.workload_gap.cache_clear()
        knowledge().reload()  # the pair rows of each view are kept on it
        try:
            assert gap(frozenset()) == with_exclude, source
        finally:
            monkeypatch.undo()
            same_setup.variant_gap.cache_clear()
            same_setup.workload_gap.cache_clear()
            knowledge().reload()


def test_a_borrowed_variant_is_moved_toward_the_variant_asked_for():
    # without the EAGLE-3 paper, plain Medusa has no tau rows and borrows Medusa-2's (the Medusa paper's), lowered
    # by the Medusa-2 gap; Medusa-2 itself uses them as they are
    no_t1 = frozenset({"EAGLE3-T1"})
    m2 = _prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="medusa-2", exclude_sources=no_t1)
    m1 = _prior("medusa", "chat", 0.0, MEDUSA_TREE, exclude_sources=no_t1)
    assert m1.source_ids == m2.source_ids == ["MEDUSA-PAPER-T1"]
    assert not any("rows moved to" in a for a in m2.assumptions)
    assert any("medusa/medusa-2 rows moved to plain medusa: tau x" in a and "MEDUSA-README" in a
               for a in m1.assumptions)
    assert m1.tau / m2.tau == pytest.approx(1 / variant_gap("medusa", "medusa-2", no_t1)[0], rel=0.01)


def test_a_variant_never_compared_stands_in_with_its_fallbacks_gap():
    # Hydra++ was never run beside plain Medusa. Without Hydra's or Hydra++'s own tau rows it borrows Medusa-2's,
    # moved by Hydra's gap over Medusa-2's
    ex = frozenset({"EAGLE3-T1", "HYDRA"})
    hydra_pp = _prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="hydra++", exclude_sources=ex)
    m2 = _prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="medusa-2", exclude_sources=ex)
    assert hydra_pp.source_ids == m2.source_ids == ["MEDUSA-PAPER-T1"]
    expected = variant_gap("medusa", "hydra", ex)[0] / variant_gap("medusa", "medusa-2", ex)[0]
    assert hydra_pp.tau / m2.tau == pytest.approx(expected, rel=0.01)
    # with no gap measured either way, the borrowed rows are used as they are
    blind = ex | {"SPECBENCH-LB", "MEDUSA-README"}
    assert _prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="hydra++", exclude_sources=blind).tau \
        == pytest.approx(_prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="medusa-2",
                                          exclude_sources=blind).tau)


def test_a_measured_workload_ratio_replaces_an_assumed_one_in_the_papers_harness():
    chat = _prior("eagle2", "chat", 0.0, EAGLE2_TREE)
    translation = _prior("eagle2", "translation", 0.0, EAGLE2_TREE)
    assert translation.workload_used == "chat"
    ratio = workload_gap("head", "translation", "chat")[0]
    assert translation.tau - 1 == pytest.approx((chat.tau - 1) * ratio, rel=0.02)
    assert any("ran both in one table: SAMD-README, SPECBENCH-LB" in a for a in translation.assumptions)
    # without the sources that measured it, the borrowed rows are used as they are, and said to be an assumption
    neither = frozenset({"SAMD-README", "SPECBENCH-LB"})
    unmeasured = _prior("eagle2", "translation", 0.0, EAGLE2_TREE, exclude_sources=neither)
    assert unmeasured.tau == pytest.approx(_prior("eagle2", "chat", 0.0, EAGLE2_TREE,
                                                            exclude_sources=neither).tau)
    assert any("(tau-1) x 1.00 (assumption: no adjustment)" in a for a in unmeasured.assumptions)


def test_closed_book_qa_moves_n_gram_by_the_measured_ratio_not_the_assumed_one():
    chat = _prior("ngram", "chat", 0.0, CHAIN3)
    qa = _prior("ngram", "qa", 0.0, CHAIN3)
    assert 1.0 < qa.tau < chat.tau
    assert any("(tau-1) ratio qa/chat" in a for a in qa.assumptions)


@pytest.mark.parametrize("method, shape", [("eagle3", CHAIN3), ("medusa", CHAIN3), ("ngram", CHAIN3)])
def test_an_engine_estimate_is_not_moved_by_ratios_measured_on_the_papers_trees(method, shape):
    # measured over 6-8 drafted positions, they would overstate the gap on an engine's 3-token chain, also when the
    # engine estimate rests on the papers' rows
    p = _prior(method, "translation", 0.0, shape, harness_class="engine", engine="sglang")
    assert not any("ran both in one table" in a for a in p.assumptions)


def test_a_separate_drafts_workload_gap_is_not_borrowed_from_another_draft():
    # Spec-Bench measured Vicuna-68M's translation/chat gap; a draft trained on the task does not share it
    assert workload_gap("draft", "translation", "chat")[1] == ("SPECBENCH-LB",)
    p = _prior("draft_model", "translation", 0.0, Shape(num_draft_tokens=5), draft_ratio=0.1,
                         exclude_sources=frozenset({"LEVIATHAN-T2"}))  # the one source of draft translation rows
    assert p.workload_used == "chat"
    assert not any("ran both in one table" in a for a in p.assumptions)


@pytest.mark.parametrize("task, workload", [
    ("Spec-Bench: Question Answering (Natural Questions, closed-book)", "qa"),
    ("Spec-Bench: Retrieval-aug. Generation (Natural Questions with retrieved passages)", "rag"),
    ("Spec-Bench: Translation (WMT14 DE-EN)", "translation"),
    ("Mean of 6 (Spec-Bench Overall column)", "aggregate"),
])
def test_spec_bench_task_labels_map_to_workloads(task, workload):
    assert map_workload(task) == workload

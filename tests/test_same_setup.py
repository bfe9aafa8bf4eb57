"""Acceptance ratios from same-setup published pairs (tools/model/same_setup.py) and how the priors use them."""

from __future__ import annotations

import statistics

import pytest

from specpick.tools.catalog.published import load_published, map_workload
from specpick.tools.model.priors import Shape, acceptance_prior
from specpick.tools.model.same_setup import SAME_SHAPE_VARIANTS, variant_gap, workload_gap

CHAIN3 = Shape(num_draft_tokens=3)
EAGLE2_TREE = Shape(num_draft_tokens=6, tree_top_k=10, tree_tokens=60)
MEDUSA_TREE = Shape(num_draft_tokens=4, tree_top_k=10, tree_tokens=64)


def _raw(source: str, method_raw: str, verifier: str, task: str) -> float:
    """A published speedup read from the CSV cells, not through the code under test."""
    (row,) = [r for r in load_published() if (r.source_id, r.method_raw, r.verifier_model, r.task)
              == (source, method_raw, verifier, task)]
    return float(row.speedup_raw)


def test_medusa_2s_gap_is_the_median_of_the_medusa_readmes_same_setup_speedup_pairs():
    # Medusa-2 keeps Medusa-1's heads and tree, so equal cycle costs make the speedup ratio the tau ratio
    pairs = [_raw("MEDUSA-README", "Medusa-2", v, "MT-Bench") / _raw("MEDUSA-README", "Medusa-1", v, "MT-Bench")
             for v in ("Vicuna-7B", "Vicuna-13B")]
    gap, sources = variant_gap("medusa", "medusa-2")
    assert sources == ("MEDUSA-README",)
    assert gap == pytest.approx(statistics.median(pairs))
    assert gap > 1.0


def test_hydras_gap_rests_on_stated_tau_from_two_sources():
    gap, sources = variant_gap("medusa", "hydra")
    assert sources == ("EAGLE3-T1", "SPECBENCH-LB")
    assert 1.3 < gap < 1.5  # tau 3.65 vs 2.59 on MT-Bench (EAGLE-3 paper), 3.26 vs 2.32 overall (Spec-Bench)


def test_speedup_pairs_stand_for_tau_only_where_the_cycles_cost_alike():
    # DistillSpec's draft is not named (EAGLE Fig. 1): its speedups over SpS are not a tau ratio
    assert ("draft_model", "distillspec") not in SAME_SHAPE_VARIANTS
    assert variant_gap("draft_model", "distillspec") == (1.0, ())
    # CNN/DM carries long documents: without the EAGLE-3 paper's stated taus, no head summarization/chat ratio,
    # though SAM-Decoding ran EAGLE-2 on both (speedups only)
    assert workload_gap("head", "summarization", "chat", frozenset({"EAGLE3-T1"})) == (1.0, ())
    # translation prompts are as short as chat's: SAM-Decoding's speedups give the ratio (with the Spec-Bench
    # leaderboard's task columns left out, it is SAM-Decoding's one EAGLE-2 pair)
    assert workload_gap("head", "translation", "chat")[1] == ("SAMD-README", "SPECBENCH-LB")
    ratio, sources = workload_gap("head", "translation", "chat", frozenset({"SPECBENCH-LB"}))
    assert sources == ("SAMD-README",)
    translation = _raw("SAMD-README", "EAGLE-2", "Vicuna-7B-v1.3", "Spec-Bench: Translation (WMT14 DE-EN)")
    chat = _raw("SAMD-README", "EAGLE-2", "Vicuna-7B-v1.3", "Spec-Bench: Multi-turn Conversation (MT-bench)")
    assert ratio == pytest.approx(translation / chat)


@pytest.mark.parametrize("gap", [
    lambda ex: variant_gap("medusa", "medusa-2", ex), lambda ex: variant_gap("medusa", "hydra", ex),
    lambda ex: variant_gap("eagle2", "hass", ex), lambda ex: workload_gap("head", "translation", "chat", ex),
    lambda ex: workload_gap("model_free", "rag", "summarization", ex),
    lambda ex: workload_gap("head", "code", "chat", ex),
])
def test_a_gap_learns_nothing_from_a_left_out_source(gap):
    _, sources = gap(frozenset())
    assert sources
    for source in sources:
        assert source not in gap(frozenset({source}))[1]


def test_a_borrowed_variant_is_moved_toward_the_variant_asked_for():
    # Medusa-2 without its own rows borrows Medusa-1's, raised by the gap
    plain = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, exclude_sources=frozenset({"MEDUSA-PAPER-T1"}))
    m2 = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="medusa-2",
                          exclude_sources=frozenset({"MEDUSA-PAPER-T1"}))
    assert m2.source_ids == plain.source_ids
    assert m2.tau > plain.tau
    assert any("medusa/plain rows moved to medusa-2: tau x" in a and "MEDUSA-README" in a for a in m2.assumptions)
    # ...and Medusa-1 without its own rows borrows Medusa-2's, lowered by it
    m1 = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, exclude_sources=frozenset({"EAGLE3-T1"}))
    m2_own = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="medusa-2",
                              exclude_sources=frozenset({"EAGLE3-T1"}))
    assert m1.source_ids == m2_own.source_ids == ["MEDUSA-PAPER-T1"]
    assert m1.tau < m2_own.tau
    assert any("medusa/medusa-2 rows moved to plain medusa" in a for a in m1.assumptions)


def test_a_variant_nobody_compared_borrows_as_it_did():
    # Hydra++ was never run beside plain Medusa or Hydra: it borrows Hydra's gap (its fallback), no guess of its own
    hydra = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="hydra")
    hydra_pp = acceptance_prior("medusa", "chat", 0.0, MEDUSA_TREE, variant="hydra++",
                                exclude_sources=frozenset({"HYDRA"}))
    assert hydra_pp.tau == pytest.approx(hydra.tau)


def test_a_measured_workload_ratio_replaces_an_assumed_one_for_the_papers_rows():
    chat = acceptance_prior("eagle2", "chat", 0.0, EAGLE2_TREE)
    translation = acceptance_prior("eagle2", "translation", 0.0, EAGLE2_TREE)
    assert translation.workload_used == "chat"
    assert translation.tau < chat.tau
    assert any("ran both on one setup: SAMD-README, SPECBENCH-LB" in a for a in translation.assumptions)
    # without the sources that measured it, the borrowed rows are used as they are, and said to be an assumption
    neither = frozenset({"SAMD-README", "SPECBENCH-LB"})
    unmeasured = acceptance_prior("eagle2", "translation", 0.0, EAGLE2_TREE, exclude_sources=neither)
    assert unmeasured.tau == pytest.approx(acceptance_prior("eagle2", "chat", 0.0, EAGLE2_TREE,
                                                            exclude_sources=neither).tau)
    assert any("(tau-1) x 1 (assumption: no adjustment)" in a for a in unmeasured.assumptions)


def test_a_separate_drafts_workload_gap_is_not_borrowed_from_another_draft():
    # Spec-Bench measured Vicuna-68M's translation/chat gap; a draft trained on the task does not share it
    assert workload_gap("draft", "translation", "chat")[1] == ("SPECBENCH-LB",)
    p = acceptance_prior("draft_model", "translation", 0.0, Shape(num_draft_tokens=5), draft_ratio=0.1,
                         exclude_sources=frozenset({"LEVIATHAN-T2"}))  # the one source of draft translation rows
    assert p.workload_used == "chat"
    assert not any("ran both on one setup" in a for a in p.assumptions)


def test_a_workload_ratio_measured_on_papers_trees_does_not_move_engine_rows():
    # measured over 6-8 drafted positions, it would overstate the gap on an engine's 3-token chain
    p = acceptance_prior("eagle3", "translation", 0.0, CHAIN3, harness_class="engine", engine="vllm")
    assert p.workload_used != "translation"
    assert not any("ran both on one setup" in a for a in p.assumptions)


@pytest.mark.parametrize("task, workload", [
    ("Spec-Bench: Question Answering (Natural Questions, closed-book)", "qa"),
    ("Spec-Bench: Retrieval-aug. Generation (Natural Questions with retrieved passages)", "rag"),
    ("Spec-Bench: Translation (WMT14 DE-EN)", "translation"),
    ("Mean of 6 (Spec-Bench Overall column)", "aggregate"),
])
def test_spec_bench_task_labels_map_to_workloads(task, workload):
    assert map_workload(task) == workload

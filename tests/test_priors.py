"""Acceptance priors: provenance, the stated rules (shape, temperature, draft size, workload), alpha <-> tau."""

from __future__ import annotations

import csv

import pytest

from specpick.tools.model.acceptance import alpha_from_tau, expected_tokens, tree_tau
from specpick.tools.errors import InputError
from specpick.tools.model.priors import (
    PriorQuery, Shape, acceptance_prior, decay_for, draft_ratio_slope, load_prior_rows, temperature_rho, tree_factor,
)
from specpick.tools.model import prior_rules
from specpick.tools.model.prior_rules import position_decay_samples, temperature_pairs
from scripts.build_priors import (
    all_rule_figures, build_rows, csv_path, engine_sweeps, extra_rows, render_csv, render_rules, rules_path,
)
from specpick.tools.catalog.published import load_published
from specpick.tools.catalog.row_ids import prior_id


def _prior(method, workload, temperature, shape, **situation):
    """``acceptance_prior`` for a workload and temperature, with the rest of the query by keyword."""
    return acceptance_prior(method, shape, PriorQuery(workload=workload, temperature=temperature, **situation))


CHAIN3 = Shape(num_draft_tokens=3)
EAGLE2_TREE = Shape(num_draft_tokens=6, tree_top_k=10, tree_tokens=60)


def test_priors_csv_is_in_sync_with_the_published_rows():
    assert csv_path().read_text(encoding="utf-8") == render_csv(build_rows()), \
        "run `python scripts/build_priors.py` after changing the published copy or the rules"


def test_prior_rule_figures_are_in_sync_with_the_published_rows():
    assert rules_path().read_text(encoding="utf-8") == render_rules(all_rule_figures()), \
        "run `python scripts/build_priors.py` after changing the published copy or the rules"


def test_priors_apply_the_derived_rule_figures_exactly():
    # The built file is read back bit for bit: the same floats the derivation gives, so no answer moves.
    assert tree_factor() == prior_rules.tree_factor()
    assert decay_for("eagle") == prior_rules.position_decay()
    derived = prior_rules.rule_figures()["temperature_rho"]
    assert temperature_rho() == {fam: (ratio, n) for fam, (ratio, n) in derived.items()}


@pytest.mark.parametrize("alpha, decay", [(0.8, 1.0), (0.9, 0.95), (0.85, 0.75), (0.6, 0.9)])
def test_a_chain_sweep_fit_recovers_the_decay_it_was_drawn_from(alpha, decay):
    points = [(n, expected_tokens(alpha, n, decay)) for n in (1, 2, 3, 5, 8)]
    a, d = prior_rules.fit_chain_decay(points)
    assert a == pytest.approx(alpha, abs=0.006) and d == pytest.approx(decay, abs=0.006)


def test_engine_chains_follow_the_engine_sweeps_and_papers_keep_their_rule():
    """EAGLE-3 runs flat along the chain in the papers' rule (training-time test) but five engine sources measured it
    falling; DeepSeek's MTP layer, reused for every position, falls faster than Qwen3.5's (its own family's sweeps)."""
    sweeps = engine_sweeps()
    assert len({s.source_id for s in sweeps if s.method == "eagle3"}) >= prior_rules.MIN_DECAY_SOURCES
    assert decay_for("eagle3") == 1.0 and decay_for("eagle3", "paper") == 1.0
    assert decay_for("eagle3", "engine") < 1.0
    assert decay_for("mtp", "engine", "deepseek-v3") < decay_for("mtp", "engine", "qwen3.5") <= 1.0
    # a family never swept takes the method's engine figure
    assert decay_for("mtp", "engine", "no-such-family") == decay_for("mtp", "engine")
    # methods no engine swept keep the papers' rule
    assert decay_for("draft_model", "engine") == 1.0


def test_leaving_sources_out_removes_their_sweeps_from_the_decay():
    """A leave-one-source-out run must not learn the decay from the left-out sources' own sweeps: leave out every
    source that swept EAGLE-3 and the engine figure falls back to the papers' rule."""
    from specpick.tools.model.priors import row_alpha

    swept = frozenset(s.source_id for s in engine_sweeps() if s.method == "eagle3")
    assert decay_for("eagle3", "engine", "", swept) == decay_for("eagle3", "paper")
    # and a row of such a source, re-expanded without the sweeps, still reproduces its own tau at its own chain
    row = next(r for r in load_prior_rows() if r.source_id in swept and r.method == "eagle3" and r.shape == "chain"
               and r.tau and r.alpha is None)
    a = row_alpha(row, swept)
    assert a != row.alpha_chain
    assert expected_tokens(a, row.num_draft_tokens, decay_for("eagle3", "engine", "", swept)) == \
        pytest.approx(row.tau, abs=1e-3)


def test_every_chain_row_gives_back_its_own_tau_at_its_own_length():
    """A row's alpha is derived with the decay it is re-expanded with (papers' rule or engine sweeps, by the row's
    harness class), so at its own chain length it reproduces the tau it was built from, with all sources in and with
    its own source left out (a leave-one-source-out run refits the decay without the row's sweeps)."""
    from specpick.tools.model.priors import row_alpha, row_decay

    rows = [r for r in load_prior_rows() if r.shape == "chain" and r.tau and r.alpha is None and r.num_draft_tokens]
    assert len(rows) >= 100
    for r in rows:
        for exclude in (frozenset(), frozenset({r.source_id})):
            d = row_decay(r, exclude)
            got = expected_tokens(row_alpha(r, exclude), r.num_draft_tokens, d)
            # a steeper decay learnt without the row's own sweeps may not reach its tau at all: then its ceiling
            reachable = min(r.tau, expected_tokens(1.0, r.num_draft_tokens, d))
            assert got == pytest.approx(reachable, abs=0.01), (r.prior_id, exclude)
        assert expected_tokens(row_alpha(r), r.num_draft_tokens, row_decay(r)) == pytest.approx(r.tau, abs=0.01)


def test_every_prior_row_names_its_source_and_a_real_published_row():
    from specpick.tools.calibration.engine_rows import load_engine_rows

    ids = {r.row_id: r for r in (*load_published(), *extra_rows(), *load_engine_rows())}
    rows = load_prior_rows()
    assert len(rows) >= 80
    for r in rows:
        assert r.source and r.source_id and r.provenance, r.prior_id
        assert r.published_row in ids, r.prior_id
        assert ids[r.published_row].source_id == r.source_id
        assert r.prior_id == prior_id(r.published_row)
        assert r.tau is not None or r.alpha is not None
    # the CSV copies the row's own fields, so a reader can check them against the paper
    with csv_path().open(encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    for col in ("source_id", "source", "provenance", "task_or_benchmark", "config", "tau", "alpha", "notes"):
        assert col in header


def test_rules_are_derived_from_rows_with_stated_figures():
    # EAGLE1-PAPER chain alpha vs tree tau: a tree of the same depth accepts more per cycle than the chain (the
    # figure itself is what prior_rules derives from those rows; pinning it would test the code against itself)
    assert tree_factor() > 1.0
    samples = position_decay_samples()
    assert len(samples) == 5 and all(0.85 < v < 1.0 for _, v in samples)
    assert decay_for("eagle") < 1.0 and decay_for("draft_model") == 1.0 and decay_for("eagle3") == 1.0
    rho = temperature_rho()
    assert rho["draft"][1] == 7 and rho["head"][1] == 6 and rho["model_free"][1] == 4
    assert rho["draft"][0] < rho["head"][0] < 1.0  # separate drafts lose more acceptance when sampling
    slope, groups = draft_ratio_slope()
    assert groups == 5 and 0.05 < slope < 0.1
    assert all(p["ratio_at_t1"] < 1.0 for p in temperature_pairs())


def test_prior_reports_where_it_came_from_and_a_range():
    p = _prior("eagle2", "chat", 0.0, EAGLE2_TREE)
    assert p.n_rows >= 10 and {"EAGLE3-T1", "EAGLE2-PAPER", "HASS", "RADAR-README"} <= set(p.source_ids)
    assert p.tau_low <= p.tau <= p.tau_high
    assert p.published_rows and all(r.split("/")[0] in p.source_ids for r in p.published_rows)
    assert p.prior_ids == [prior_id(r) for r in p.published_rows]
    assert "median over 4 source(s)" in p.summary and all(sid in p.summary for sid in p.source_ids)


@pytest.mark.parametrize("method, shape", [("eagle2", EAGLE2_TREE), ("draft_model", Shape(num_draft_tokens=5)),
                                           ("ngram", CHAIN3), ("eagle3", CHAIN3)])
def test_sampling_lowers_acceptance(method, shape):
    greedy = _prior(method, "chat", 0.0, shape, draft_ratio=0.05)
    hot = _prior(method, "chat", 1.0, shape, draft_ratio=0.05)
    assert hot.tau < greedy.tau


def test_rows_at_the_requested_temperature_need_no_adjustment():
    p = _prior("draft_model", "translation", 1.0, Shape(num_draft_tokens=5), draft_ratio=0.007)
    assert "LEVIATHAN-T2/4" in p.published_rows  # Leviathan T=1 rows are used directly
    assert p.tau < _prior("draft_model", "translation", 0.0, Shape(num_draft_tokens=5),
                                    draft_ratio=0.007).tau


def test_bigger_drafts_accept_more():
    small = _prior("draft_model", "chat", 0.0, Shape(num_draft_tokens=5), draft_ratio=0.002)
    big = _prior("draft_model", "chat", 0.0, Shape(num_draft_tokens=5), draft_ratio=0.1)
    assert big.alpha > small.alpha


def test_workloads_without_rows_borrow_with_a_stated_adjustment():
    structured = _prior("eagle", "structured", 0.0, CHAIN3)
    assert structured.workload_used == "code"
    assert any("no published eagle acceptance for structured" in a for a in structured.assumptions)
    chat = _prior("ngram", "chat", 0.0, CHAIN3)
    creative = _prior("ngram", "creative", 0.0, CHAIN3)
    assert creative.tau < chat.tau  # creative text copies little from its prompt
    assert creative.tau_high - creative.tau_low > 0


def test_chains_and_trees_convert_consistently():
    chain = _prior("eagle2", "chat", 0.0, CHAIN3)
    tree = _prior("eagle2", "chat", 0.0, Shape(num_draft_tokens=3, tree_top_k=10, tree_tokens=31))
    assert tree.tau > chain.tau  # branching turns misses into hits
    assert tree_tau(0.8, 5, 1, 6, tree_factor()) == pytest.approx(expected_tokens(0.8, 5))


@pytest.mark.parametrize("alpha, n, decay", [(0.3, 1, 1.0), (0.8, 5, 1.0), (0.95, 10, 1.0), (0.8, 5, 0.95)])
def test_alpha_tau_round_trip(alpha, n, decay):
    assert alpha_from_tau(expected_tokens(alpha, n, decay), n, decay) == pytest.approx(alpha, abs=1e-6)


def test_suffix_borrows_prompt_lookup_rows_and_says_so():
    # REST drafts from an external corpus; suffix decoding, like prompt lookup, from text already seen.
    p = _prior("suffix", "code", 0.0, CHAIN3)
    ngram = _prior("ngram", "code", 0.0, CHAIN3)
    assert "REST-README" not in p.source_ids
    assert p.tau == pytest.approx(ngram.tau)
    assert any("prompt-lookup (n-gram) rows used" in a for a in p.assumptions)


def test_rest_rows_still_serve_the_rest_variant():
    p = _prior("suffix", "code", 0.0, CHAIN3, variant="rest")
    assert p.source_ids == ["REST-README"]


def test_leave_one_source_out_and_bad_workload():
    with pytest.raises(InputError, match="no published acceptance"):
        _prior("lookahead", "chat", 0.0, CHAIN3, exclude_sources=frozenset({"EAGLE3-T1"}))
    with pytest.raises(InputError, match="unknown workload"):
        _prior("eagle", "poetry", 0.0, CHAIN3)


def test_mtp_acceptance_rests_on_the_verifiers_own_family_when_it_was_measured():
    """Each model's MTP module is its own: DeepSeek's prior uses DeepSeek rows; an unmeasured family says so."""
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.model.priors import row_family, family_key

    cat = get_catalog()
    ds = _prior("mtp", "chat", 0.0, Shape(num_draft_tokens=3), harness_class="engine", engine="vllm",
                          verifier_family=family_key(cat.model("deepseek-v3").family))
    rows = {r.prior_id: r for r in load_prior_rows()}
    assert ds.prior_ids and all(row_family(rows[p].verifier_model) == "deepseek-v3" for p in ds.prior_ids)
    mimo = _prior("mtp", "chat", 0.0, Shape(num_draft_tokens=3), harness_class="engine", engine="vllm",
                            verifier_family=family_key(cat.model("XiaomiMiMo/MiMo-7B-RL").family))
    assert any("no mtp acceptance measured on mimo models" in a for a in mimo.assumptions)
    glm = _prior("mtp", "chat", 0.0, Shape(num_draft_tokens=3), harness_class="engine", engine="vllm",
                           verifier_family=family_key(cat.model("glm-4.6").family))
    assert glm.prior_ids and all(row_family(rows[p].verifier_model) == "glm-4.5" for p in glm.prior_ids)
    # other methods pool across models as before: the family does not enter their prior
    e3 = _prior("eagle3", "chat", 0.0, Shape(num_draft_tokens=3), harness_class="engine", engine="vllm",
                          verifier_family="deepseek-v3")
    assert e3 == _prior("eagle3", "chat", 0.0, Shape(num_draft_tokens=3), harness_class="engine",
                                  engine="vllm")


def test_an_engine_prior_for_a_trained_head_rests_on_the_verifier_familys_own_engine_rows():
    """Heads differ by verifier and trainer: Qwen3-30B-A3B's SGLang EAGLE-3 heads measure far less than Llama's."""
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.model.priors import row_family, family_key

    rows = {r.prior_id: r for r in load_prior_rows()}
    fam = family_key(get_catalog().model("Qwen/Qwen3-30B-A3B").family)
    own = _prior("eagle3", "chat", 0.0, CHAIN3, harness_class="engine", engine="sglang", verifier_family=fam)
    assert own.prior_ids and all(row_family(rows[p].verifier_model) == fam and rows[p].harness_class == "engine"
                                 for p in own.prior_ids)
    assert any("heads differ by verifier and trainer" in a for a in own.assumptions)
    pooled = _prior("eagle3", "chat", 0.0, CHAIN3, harness_class="engine", engine="sglang")
    assert own.tau < pooled.tau  # its weak heads (SpecForge#339, AngelSlim#163) pull it below the pool
    # the papers' harnesses keep pooling across models
    assert _prior("eagle3", "chat", 0.0, CHAIN3, harness_class="paper", verifier_family=fam) == \
        _prior("eagle3", "chat", 0.0, CHAIN3, harness_class="paper")


def test_tensorrt_llm_shared_pool_ngram_rows_speak_for_tensorrt_llm_only():
    rows = {r.prior_id: r for r in load_prior_rows()}
    vllm = _prior("ngram", "translation", 0.0, Shape(num_draft_tokens=5), harness_class="engine",
                            engine="vllm")
    assert not any(rows[p].engine == "trtllm" for p in vllm.prior_ids)
    assert any("is_public_pool" in a for a in vllm.assumptions)
    trt = _prior("ngram", "translation", 0.0, Shape(num_draft_tokens=5), harness_class="engine",
                           engine="trtllm")
    assert any(rows[p].engine == "trtllm" for p in trt.prior_ids) and trt.tau > vllm.tau


def test_the_engine_discount_is_per_method_and_learns_nothing_from_left_out_sources():
    """The papers' figures are scaled by the method's own engine/paper ratio (engines measure EAGLE-3 well below the
    EAGLE-3 paper), never above 1, and only where two engine sources measured the method; leave its engine sources
    out and there is no ratio left to learn."""
    from specpick.tools.model.priors import engine_discount

    rows = load_prior_rows()
    eagle3_engine = frozenset(r.source_id for r in rows if r.method == "eagle3" and r.harness_class == "engine")
    ratio, n = engine_discount("eagle3")
    assert len(eagle3_engine) >= 2 and n > 0 and ratio < 1.0
    assert engine_discount("eagle3", eagle3_engine) == (1.0, 0)
    one_left = frozenset(sorted(eagle3_engine)[1:])  # a single engine source is one setup, not a ratio
    assert engine_discount("eagle3", one_left) == (1.0, 0)
    for method in ("medusa", "lookahead"):  # never measured in an engine here: the papers' figures as they are
        assert engine_discount(method) == (1.0, 0)


def test_the_authors_table_names_real_sources_and_methods():
    """Every source in method_authors.csv has published rows, and every method it claims is a method we model with
    a variant the data knows: a typo would silently make an author's row a third party's."""
    from typing import get_args

    from specpick.tools.catalog.authorship import authored_methods
    from specpick.tools.vocab import Method

    published = load_published()
    sources = {r.source_id for r in published}
    variants = {(r.method, r.variant) for r in published if r.method}
    for source_id, keys in authored_methods().items():
        assert source_id in sources, f"{source_id}: no published rows"
        for key in keys:
            method, _, variant = key.partition("/")
            assert method in get_args(Method), f"{source_id}: unknown method {method}"
            assert not variant or (method, variant) in variants, f"{source_id}: no published {key} rows"


def test_third_parties_measure_less_than_the_authors_and_the_ratio_learns_nothing_from_a_left_out_source(
        monkeypatch):
    """runner_ratio: a third party's tau-1 over the method's authors' for the same setup, below 1 on the published
    rows. Leaving a source out gives exactly the figure the data would give had that source never been collected."""
    from specpick.tools.catalog.authorship import by_authors
    from specpick.tools.catalog.published import measurement_sources
    from specpick.tools.model import runner_levelling as levelling

    ratio, n_sources = levelling.runner_ratio()
    assert ratio < 1.0 and n_sources >= levelling.RUNNER_MIN_SOURCES
    third = sorted({r.source_id for r in load_prior_rows() if r.harness_class == "paper" and r.tau
                    and not by_authors(r.source_id, r.method, r.variant)})
    assert levelling.runner_ratio(frozenset(third)) == (1.0, 0)
    rows = load_prior_rows()
    # every source on either side of a comparison: third parties, and the authors they are set against
    compared = sorted(set(levelling._runner_comparisons(frozenset())[0])
                      | {"EAGLE3-T1", "EAGLE2-PAPER", "LEVIATHAN-T3"})
    for left_out in compared:
        with_exclude = levelling.runner_ratio(frozenset({left_out}))
        # "never collected": every row of a measurement that source published leaves with it (SAME_MEASUREMENT)
        monkeypatch.setattr(levelling, "load_prior_rows", lambda left_out=left_out: tuple(
            r for r in rows if left_out not in measurement_sources(r.published_row, r.source_id)))
        levelling._runner_comparisons.cache_clear()
        try:
            assert levelling.runner_ratio() == with_exclude, left_out
        finally:
            monkeypatch.undo()
            levelling._runner_comparisons.cache_clear()


def test_a_papers_harness_prior_is_levelled_to_who_runs_it_and_an_engine_prior_is_not():
    """A user is a third party: the paper-harness prior takes the authors' rows down by runner_ratio and says so; a
    calibration case the authors ran takes the third parties' rows up. Engine priors rest on engine rows and do not
    move."""
    from specpick.tools.model.priors import runner_ratio

    ratio, _ = runner_ratio()
    user = _prior("eagle3", "chat", 0.0, EAGLE2_TREE, harness_class="paper")
    authors = _prior("eagle3", "chat", 0.0, EAGLE2_TREE, harness_class="paper", runner="authors")
    assert set(user.source_ids) == set(authors.source_ids) and len(user.source_ids) >= 2
    assert user.tau < authors.tau
    assert any("levelled to a run by a third party" in a and f"x {ratio:.2f}" in a for a in user.assumptions)
    assert any("levelled to a run by the method's own authors" in a for a in authors.assumptions)
    engine = [_prior("eagle3", "chat", 0.0, CHAIN3, harness_class="engine", engine="vllm", runner=who)
              for who in ("third_party", "authors")]
    assert engine[0].tau == engine[1].tau
    assert not any("levelled" in a for a in engine[0].assumptions)


def test_only_method_groups_compared_with_their_authors_are_levelled():
    """The ratio rests on EAGLE heads and separate drafts; Medusa's and n-gram's rows were never compared across
    runners, so their priors are not moved by it (no extrapolation to methods without a comparison)."""
    for method in ("medusa", "ngram"):
        p = _prior(method, "chat", 0.0, CHAIN3, harness_class="paper")
        a = _prior(method, "chat", 0.0, CHAIN3, harness_class="paper", runner="authors")
        assert p.tau == a.tau and not any("levelled" in x for x in p.assumptions)
    for method in ("eagle", "draft_model"):
        p = _prior(method, "chat", 0.0, CHAIN3, harness_class="paper")
        assert any("levelled to a run by a third party" in x for x in p.assumptions)


def test_a_papers_harness_prior_never_rests_on_an_engines_own_variant():
    """TensorRT-LLM's n-gram drafter shares one pool across requests; with the only paper n-gram rows left out, a
    papers'-harness prior has nothing that applies and says so, instead of borrowing TensorRT-LLM's rows."""
    with pytest.raises(InputError, match="outside the engine that measured it .TensorRT-LLM's n-gram rows left out"):
        _prior("ngram", "chat", 0.0, CHAIN3, harness_class="paper", exclude_sources=frozenset({"EAGLE3-T1"}))
    trt = _prior("ngram", "chat", 0.0, CHAIN3, harness_class="engine", engine="trtllm",
                           exclude_sources=frozenset({"EAGLE3-T1"}))
    assert trt.source_ids == ["TRTLLM-BLOG7-NGRAM"]

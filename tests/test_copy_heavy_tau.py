"""The copy-heavy acceptance (tau) leave-one-source-out in calibrate (issue 26): the rows carry their source's
numbers, every row is counted once (graded or by reason), a prediction and its range never see the row's own
source, and rows whose tau counts something else than the prior's are not graded."""

from __future__ import annotations

import specpick.tools.calibration.copy_heavy_tau as ct
from specpick.tools.calibration.copy_heavy_tau import CountedTauRow, acceptance_rows, tau_loso
from specpick.tools.model.copy_heavy import TauRow
from specpick.tools.vocab import COPY_METHODS

# sfc-gh-goliaro/suffix-decoding-artifact poster_and_slides/neurips_presentation/reproduce_plot.py @cfd7e71,
# dict 'tokens' (mean accepted tokens per step): PLD, Suffix (linear), Suffix (tree) on AgenticSQL / SWE-Bench.
FIGURE_TOKENS = {"AgenticSQL": [2.4, 6.3, 6.2], "SWE-Bench": [3.2, 7.8, 7.6]}


def test_the_figure_rows_are_the_files_tokens_per_step_on_agent_loops():
    rows = [c for c in acceptance_rows(frozenset(COPY_METHODS)) if c.row.source_id == "SUFFIXDECODING-ARTIFACT"]
    assert sorted(c.row.tau for c in rows) == sorted(v for vs in FIGURE_TOKENS.values() for v in vs)
    assert all(c.row.workload == "agent-loop" and not c.num_draft_tokens_stated for c in rows)
    assert {c.row.method for c in rows} == {"ngram", "suffix"}


def test_vllm_rows_count_drafting_steps_and_every_row_is_counted_once():
    rows = acceptance_rows(frozenset(COPY_METHODS))
    vllm = [c for c in rows if c.row.source_id == "VLLM-24344"]
    # vllm#24344 spec_decode.py output: 'mean acceptance length' 3.63 (InstructCoder) and 4.59 (Blazedit), N = 5
    assert sorted(c.row.tau for c in vllm) == [3.63, 4.59]
    assert all(c.counts == ct.PRIOR_COUNTS and c.row.num_draft_tokens == 5 for c in vllm)
    tl = tau_loso(frozenset(COPY_METHODS))
    assert tl.stats.n + sum(tl.not_graded.values()) == tl.n_rows == len(rows)
    assert sum(tl.sources.values()) == tl.n_rows


def _table() -> list[CountedTauRow]:
    """Six sources, two gradable rows each, plus one row per accounting the grader must refuse."""
    out = [CountedTauRow(row=TauRow(f"S{s}/{i}", f"S{s}", "ngram", 5, 2.0 + s / 10 + i / 100, "code-edit"),
                         counts=ct.PRIOR_COUNTS, num_draft_tokens_stated=True) for s in range(6) for i in range(2)]
    out.append(CountedTauRow(row=TauRow("X/1", "X", "ngram", 0, 3.0, "agent-loop"), counts=ct.PRIOR_COUNTS,
                             num_draft_tokens_stated=False))
    out.append(CountedTauRow(row=TauRow("Y/1", "Y", "ngram", 5, 3.0, "agent-loop"),
                             counts="per step over all steps", num_draft_tokens_stated=True))
    return out


def test_no_prediction_or_range_sees_the_held_out_source(monkeypatch):
    calls: list[tuple[str, frozenset[str]]] = []

    def point(row, exclude, engine):
        calls.append((row.source_id, exclude))
        assert row.source_id in exclude  # a row is never predicted from its own source
        return 2.5

    monkeypatch.setattr(ct, "acceptance_rows", lambda methods: _table())
    monkeypatch.setattr(ct, "_point", point)
    tl = tau_loso(frozenset({"ngram"}))
    assert tl.stats.n == 12 and tl.not_graded == {ct.NO_N: 1, ct.OTHER_COUNT: 1}
    # each graded row: one prediction without its source, then every other source's row predicted without both
    # (the range's misses): 12 points, and 12 x 10 nested predictions, each leaving out two different sources
    singles = [ex for _, ex in calls if len(ex) == 1]
    nested = [(src, ex) for src, ex in calls if len(ex) == 2]
    assert len(singles) == 12 and len(nested) == 12 * 10
    assert all(src in ex and len(ex - {src}) == 1 for src, ex in nested)


def test_the_range_is_the_10th_and_90th_miss_of_the_other_sources(monkeypatch):
    # point 2.0 everywhere: the misses are measured / 2.0 of the other sources' rows, so a row's range is
    # 2.0 x those ratios' 10th and 90th percentiles (tools/bootstrap.py QUANTILES, index convention)
    monkeypatch.setattr(ct, "acceptance_rows", lambda methods: _table()[:12])
    monkeypatch.setattr(ct, "_point", lambda row, exclude, engine: 2.0)
    tl = tau_loso(frozenset({"ngram"}))
    by_id = {rid: (meas, lo, hi) for rid, meas, _, lo, hi in tl.rows}
    others = sorted(c.row.tau for c in _table()[:12] if c.row.source_id != "S0")
    _, lo, hi = by_id["S0/0"]
    assert abs(lo - others[int(0.1 * (len(others) - 1))]) < 1e-9 and abs(hi - others[int(0.9 * (len(others) - 1))]) < 1e-9
    assert tl.coverage.n == tl.stats.n == 12


def test_too_few_other_sources_gives_no_range_not_a_guess(monkeypatch):
    monkeypatch.setattr(ct, "acceptance_rows", lambda methods: _table()[:4])  # two sources, two rows each
    monkeypatch.setattr(ct, "_point", lambda row, exclude, engine: 2.0)
    tl = tau_loso(frozenset({"ngram"}))
    assert tl.stats.n == 0 and tl.not_graded == {ct.NO_RANGE: 4}


def test_a_per_step_row_with_its_drafting_share_matches_vllms_own_seq_normalized_figure():
    # vllm#24344 spec_decode.py output, n-gram N=5: steps = total_num_output_tokens - num_accepted_tokens (each step
    # emits its accepted drafts plus one token). Blazedit: 5376 output, 3562 accepted, 993 drafts -> 'mean acceptance
    # length 4.59' per drafting step, 'seq normalized acceptance length 2.96' over all steps. InstructCoder: 163128,
    # 79552, 30249 -> 3.63 and 1.95.
    for output, accepted, drafts, per_step in ((5376, 3562, 993, 2.96), (163128, 79552, 30249, 1.95)):
        steps = output - accepted
        c = CountedTauRow(row=TauRow("V/1", "V", "ngram", 5, per_step, "code-edit"),
                          counts="per step over all steps", num_draft_tokens_stated=True,
                          drafting_share=drafts / steps)
        assert abs(c.as_counted(1 + accepted / drafts) - per_step) < 0.005
    refused = CountedTauRow(row=TauRow("W/1", "W", "ngram", 5, 2.0, "code-edit"), counts="per step over all steps",
                            num_draft_tokens_stated=True)
    assert refused.as_counted(3.0) is None


def test_a_per_step_row_with_a_stated_share_is_graded_in_its_own_count(monkeypatch):
    table = _table()[:12]
    shared = CountedTauRow(row=TauRow("Z/1", "Z", "ngram", 5, 1.5, "agent-loop"), counts="per step over all steps",
                           num_draft_tokens_stated=True, drafting_share=0.5)
    monkeypatch.setattr(ct, "acceptance_rows", lambda methods: table + [shared])
    monkeypatch.setattr(ct, "_point", lambda row, exclude, engine: 2.0)
    tl = tau_loso(frozenset({"ngram"}))
    graded = {rid: pred for rid, _, pred, _, _ in tl.rows}
    # the per-step row is graded, and in its own count: steps without a draft pull it toward 1 token per step
    assert graded["S0/0"] == 2.0 and 1.0 < graded["Z/1"] < 2.0

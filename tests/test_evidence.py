"""Engine rows measured on the verifier with the method, shown beside the estimate (tools/calibration/evidence.py)."""

from __future__ import annotations

from specpick.skill.planner.plan import plan
from specpick.skill.render import to_markdown
from specpick.skill.schema import PlannerInputs
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.calibration.engine_specs import resolve_engine_verifier
from specpick.tools.calibration.evidence import MAX_SHOWN, measured_line, measured_speedups, outside_interval


def test_rows_are_the_verifiers_and_the_methods_with_the_users_engine_first():
    rows = {r.row_id: r for r in load_engine_rows()}
    got = measured_speedups("Qwen/Qwen3-8B", "eagle3", engine="sglang")
    assert got and len(got) <= MAX_SHOWN
    assert got[0].row_id == "EAGLE-211/1" and got[0].engine == "sglang"
    assert got[0].speedup == rows["EAGLE-211/1"].speedup
    for m in got:
        row = rows[m.row_id]
        assert row.method == "eagle3" and resolve_engine_verifier(row.verifier_model)[0].repo_id == "Qwen/Qwen3-8B"
    engines = [m.engine for m in got]
    assert engines == sorted(engines, key=lambda e: e != "sglang")


def test_no_rows_for_a_verifier_or_method_nobody_measured():
    assert measured_speedups("HuggingFaceTB/SmolLM2-135M-Instruct", "eagle3") == []
    assert measured_speedups("Qwen/Qwen3-8B", "medusa") == []


def test_outside_interval_keeps_the_engines_rows_beyond_the_ends():
    got = measured_speedups("meta-llama/Llama-3.1-8B-Instruct", "eagle3", engine="vllm")
    assert [m.row_id for m in outside_interval(got, "vllm", 0.0, 100.0)] == []
    assert {m.row_id for m in outside_interval(got, "vllm", 2.0, 3.0)} == {
        m.row_id for m in got if m.engine == "vllm" and (m.concurrency or 1) == 1}


def test_a_row_at_another_concurrency_is_no_test_of_the_answers_range():
    """The batch-1 range of Llama-3.3-70B with a 1B draft on vLLM must not be called contradicted by the 1.49x measured
    at concurrency 64 (TOMASRUIZT-VLLM-SPEC-2026/21); at concurrency 64 that row is the one to compare."""
    got = measured_speedups("meta-llama/Llama-3.3-70B-Instruct", "draft_model", engine="vllm")
    at_64 = [m for m in got if m.concurrency == 64]
    assert at_64 and all(m.speedup < 1.9 for m in at_64)
    assert not [m for m in outside_interval(got, "vllm", 1.9, 3.7, batch=1) if m.concurrency == 64]
    assert {m.row_id for m in outside_interval(got, "vllm", 1.9, 3.7, batch=64)} == {m.row_id for m in at_64}


def test_speculation_off_against_a_measured_gain_says_so_and_how_to_measure():
    # The model's SGLang cost (no spec v2) for gpt-oss-120b at concurrency 8 rules EAGLE-3 out; SpecDrift's card
    # measured 1.31x for this pair at batch 8. (Qwen3-8B on SGLang was this case until SGLang's one-model per-forward
    # cost was refitted with the 16-bit MoE layer term: it now chooses EAGLE-3, as EAGLE-211/1's 1.96x says.)
    rec = plan(PlannerInputs(verifier="openai/gpt-oss-120b", workload="chat", gpu="H100-SXM", engine="sglang",
                             concurrency=8))
    assert rec.strategy == "none"
    assert rec.expected_speedup.measured_method == "eagle3" and rec.expected_speedup.measured
    assert any(r.startswith("But SPECDRIFT-GPTOSS120B-CARD/3 measured") and "--method eagle3" in r
               for r in rec.rationale)
    assert "Measured elsewhere (eagle3 on this verifier" in to_markdown(rec)
    qwen3_8b = plan(PlannerInputs(verifier="Qwen/Qwen3-8B", workload="chat", gpu="H200", engine="sglang"))
    assert qwen3_8b.strategy == "eagle3"


def test_measurements_outside_the_range_are_named_and_the_release_matters():
    new = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", gpu="H100-SXM",
                             engine="vllm", method="eagle3"))
    old = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", gpu="H100-SXM",
                             engine="vllm", engine_version="0.10.0", method="eagle3"))
    # vllm#20780 ran before async scheduling (0.14): outside the newest release's range, inside 0.10.0's
    assert any("outside this answer's range" in a and "VLLM-20780" in a for a in new.expected_speedup.assumptions)
    assert not any("outside this answer's range" in a for a in old.expected_speedup.assumptions)
    assert {m.row_id for m in new.expected_speedup.measured} == {m.row_id for m in old.expected_speedup.measured}


def test_rows_nearest_the_users_concurrency_come_first():
    import math

    rows = {r.row_id: r for r in load_engine_rows()}
    got = measured_speedups("moonshotai/Kimi-K2.5", "eagle3", engine="vllm", batch=64)
    batches = [rows[m.row_id].batch or 1 for m in got]
    assert batches[0] == 64
    assert batches == sorted(batches, key=lambda b: abs(math.log(b / 64)))


def test_speedup_shows_the_same_measured_rows_and_range_warning_as_recommend():
    """The same inputs give the same evidence from every verb: `speedup` at recommend's N lists recommend's rows and,
    where one falls outside the range, the same warning."""
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup, render_text

    rec = plan(PlannerInputs(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="chat", gpu="H100-SXM",
                             engine="vllm", method="eagle3"))
    res = estimate_speedup(SpeedupInput(verifier="meta-llama/Llama-3.1-8B-Instruct", method="eagle3", workload="chat",
                                        gpu="H100-SXM", engine="vllm", num_draft_tokens=rec.num_draft_tokens))
    assert (round(res.low, 2), round(res.high, 2)) == (rec.expected_speedup.low, rec.expected_speedup.high)
    assert [m.row_id for m in res.measured] == [m.row_id for m in rec.expected_speedup.measured]
    warning = [a for a in res.assumptions if "outside this answer's range" in a]
    assert len(warning) == 1 and "VLLM-20780" in warning[0]
    assert any(a.startswith(warning[0]) for a in rec.expected_speedup.assumptions)
    text, markdown = render_text(res), to_markdown(rec)
    assert "measured elsewhere" in text and "Measured elsewhere" in markdown
    for m in res.measured:  # word for word the same line in both verbs, the engine by its display name
        line = measured_line(m)
        assert line in text and line in markdown and " on vLLM " in line


def test_speedup_without_an_engine_lists_rows_but_judges_none():
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    res = estimate_speedup(SpeedupInput(verifier="Qwen/Qwen3-8B", method="eagle3", workload="chat", gpu="H200"))
    assert res.measured and not any("outside this answer's range" in a for a in res.assumptions)


def test_a_gain_measured_at_another_load_does_not_argue_against_speculation_off():
    """EAGLE-211/1 measured Qwen3-8B EAGLE-3 on SGLang at batch 1 (1.96x). At concurrency 2 the answer runs EAGLE-3
    and shows that row; at concurrency 64 the model turns speculation off and a batch-1 gain is not held against it."""
    near = plan(PlannerInputs(verifier="Qwen/Qwen3-8B", workload="chat", gpu="H200", engine="sglang", concurrency=2))
    far = plan(PlannerInputs(verifier="Qwen/Qwen3-8B", workload="chat", gpu="H200", engine="sglang", concurrency=64))
    assert near.strategy == "eagle3" and far.strategy == "none"
    assert "EAGLE-211/1" in {m.row_id for m in near.expected_speedup.measured}
    assert not any(r.startswith("But ") for r in far.rationale)

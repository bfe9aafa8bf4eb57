"""`specpick tune` for real: it starts vLLM CPU servers itself (n-gram at N = 2, 4, 6, plus the baseline), measures
concurrency 1 and 4 on a prompts file with a copy class and a free class, predicts N = 2 and 4 from the N = 6 run,
and emits the per-batch-size schedule.

What is asserted is what the engine and the method guarantee: acceptance is a function of the text (greedy, the same
prompts), so the prediction of the smaller N from the largest N's per-request acceptance must land inside the
measured spread over prompts; copying prompts accept far more, so they run faster than free-form ones whatever the
machine's load. Absolute speedups on a shared 2-core host are reported, not asserted.
"""

from __future__ import annotations

import json

import pytest

from specpick.tools.tune.inputs import TuneInput, tune_input
from specpick.tools.tune.run import TuneReport, run_tune
from tests.support.vllm_server import _setup_or_skip

# Four vLLM servers start and eight prompts run twice per draft length: minutes on a 2-core host.
pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]

COPY = [
    "Repeat the following text exactly, word for word:\nThe quick brown fox jumps over the lazy dog. The committee "
    "reviewed the budget for the new library and approved the plan to extend opening hours on weekends, hire two "
    "more librarians, and renovate the children's reading room before the summer.",
    "Copy this Python function exactly, changing nothing:\ndef total(values):\n    result = 0\n    for value in "
    "values:\n        if value > 0:\n            result += value\n    return result\n\ndef mean(values):\n    "
    "return total(values) / len(values)",
    "Rewrite this list exactly as it is:\n1. Preheat the oven to 200 degrees.\n2. Mix the flour, sugar and butter "
    "in a bowl.\n3. Add two eggs and stir until smooth.\n4. Pour the batter into a tin and bake for 25 minutes.",
    "Echo back this paragraph verbatim: Speculative decoding drafts several tokens with a cheap model and verifies "
    "them in one pass of the large model, so that when the drafts are right the large model emits several tokens "
    "per step.",
]
FREE = [
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Explain why the sky is blue to a ten-year-old.",
    "Give three ideas for a birthday party theme.",
    "What are the pros and cons of working from home?",
]
CPU_ENV = {"VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "2", "HF_HUB_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[TuneReport, TuneInput]:
    python, model = _setup_or_skip()
    work = tmp_path_factory.mktemp("tune")
    prompts = work / "prompts.jsonl"
    # Copy and free prompts alternate, so at concurrency 4 both classes share every batch (and its step time): the
    # classes then differ by tokens per step alone, not by what else the machine was doing while each one ran.
    prompts.write_text("".join(json.dumps({"class": c, "prompt": p}) + "\n"
                               for pair in zip(COPY, FREE) for c, p in zip(("copy", "free"), pair)))
    inp = tune_input(
        serve_model=str(model), serve_executable=str(python), draft_lengths=[2, 4, 6], concurrency=[1, 4],
        prompts=prompts, strategy="measure-all", max_tokens=128, results=work / "tune.jsonl", max_batch_size=64,
        serve_args="--dtype bfloat16 --max-model-len 2048 --max-num-seqs 8 --enforce-eager",
    )
    with pytest.MonkeyPatch.context() as mp:
        for name, value in CPU_ENV.items():
            mp.setenv(name, value)
        report = run_tune(inp)
    print(json.dumps({f"N={p.num_draft_tokens} c={p.concurrency}": {
        "tau": p.tau_measured, "tau_predicted": p.tau_predicted, "speedup": p.speedup_measured,
        "classes": {c.name: c.speedup for c in p.per_class}} for p in report.points}, indent=1))
    return report, inp


def test_smaller_draft_lengths_are_predicted_within_the_measured_spread(tuned) -> None:
    report, _ = tuned
    for p in report.points:
        if p.num_draft_tokens == 6:
            continue
        assert p.measured and p.tau_measured_low is not None and p.tau_measured_high is not None
        assert p.tau_predicted is not None and p.tau_predicted_low < p.tau_predicted_high
        assert p.tau_measured_low <= p.tau_predicted <= p.tau_measured_high, (
            f"N={p.num_draft_tokens} c={p.concurrency}: predicted {p.tau_predicted:.2f}, measured "
            f"{p.tau_measured:.2f} [{p.tau_measured_low:.2f}, {p.tau_measured_high:.2f}]")


def test_the_copy_class_runs_faster_than_the_free_class(tuned) -> None:
    report, _ = tuned
    for p in report.points:
        by_name = {c.name: c for c in p.per_class}
        assert set(by_name) == {"copy", "free"} and all(c.classified_by == "prompts file" for c in by_name.values())
        assert by_name["copy"].acceptance.tau > by_name["free"].acceptance.tau
        assert by_name["copy"].speedup > by_name["free"].speedup, p


def test_the_schedule_is_emitted_in_each_engines_form(tuned) -> None:
    report, _ = tuned
    covered = [b for a, e, _ in report.schedule for b in range(a, e + 1)]
    assert covered == list(range(1, 65))
    assert report.best_n[1] in (0, 2, 4, 6) and report.best_n[4] in (0, 2, 4, 6)
    on = [(a, e, k) for a, e, k in report.schedule if k > 0]
    if not on:
        assert report.configs == []  # speculation pays nowhere: nothing to deploy
        return
    vllm = next(c for c in report.configs if c.engine == "vllm")
    emitted = json.loads(vllm.config)["num_speculative_tokens_per_batch_size"]

    def k_at(ranges, batch: int) -> int:
        return next(k for a, e, k in ranges if a <= batch <= e)

    # vLLM gets every batch size's K, the off tail (K=0 above the threshold) included (full_schedule)
    assert [k_at(emitted, b) for b in range(1, 65)] == [k_at(report.schedule, b) for b in range(1, 65)]
    trt = next(c for c in report.configs if c.engine == "trtllm")
    assert f"draft_len_schedule:\n    {on[0][1]}: {on[0][2]}" in trt.config


def test_a_rerun_resumes_from_the_results_file(tuned) -> None:
    """The same settings again start no server (the executable given cannot run) and give the same figures."""
    report, inp = tuned
    again = run_tune(inp.model_copy(update={"serve_executable": "/nonexistent/python"}))
    assert [p.tau_measured for p in again.points] == [p.tau_measured for p in report.points]
    lines = inp.results.read_text().splitlines()
    assert sorted(json.loads(line)["num_draft_tokens"] for line in lines) == [2, 4, 6]
    assert report.runs_measured == 3


def test_recommend_from_the_tune_json_applies_the_measurement_to_ngram_only(tuned, tmp_path) -> None:
    """The tune report, fed back: n-gram's acceptance is the measured one at the measured N, another method's is its
    prior, the range is not zero-wide and the answer states how far the prior was off (issue 26)."""
    from specpick.skill.planner.candidates import Candidate, estimate
    from specpick.skill.planner.context import build_context
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    report, _ = tuned
    path = tmp_path / "tune.json"
    path.write_text(report.model_dump_json())
    base = dict(verifier="HuggingFaceTB/SmolLM2-135M-Instruct", workload="summarization", engine="vllm")
    top = max((p for p in report.points if p.concurrency == 1 and p.tau_measured is not None),
              key=lambda p: p.num_draft_tokens)
    ctx = build_context(PlannerInputs(**base, from_measurement=str(path)))
    ngram = estimate(ctx, Candidate(strategy="ngram", engine="vllm", feasible=True, reason=""),
                     num_draft_tokens=top.num_draft_tokens, sweep=False)
    assert ngram.tau == pytest.approx(top.tau_measured) and ngram.tau_low < ngram.tau < ngram.tau_high
    rec = plan(PlannerInputs(**base, method="ngram", from_measurement=str(path)))
    assert any("prior vs measured for N-gram (prompt lookup) at N=6" in a for a in rec.expected_speedup.assumptions)
    suffix = plan(PlannerInputs(**base, method="suffix", from_measurement=str(path))).expected_speedup
    assert suffix.tau == plan(PlannerInputs(**base, method="suffix")).expected_speedup.tau

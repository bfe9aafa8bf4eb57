"""`specpick tune` inputs, results file and per-class split: bad input gets a one-line error, the file resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.tools.errors import InputError
from specpick.tools.measure.classes import COPY_OVERLAP_MIN, RequestFigures, class_of, copy_overlap, split_by_class
from specpick.tools.measure.metrics import Acceptance
from specpick.tools.measure.report import ConcurrencyResult, MeasureReport, Percentiles, RunFigures
from specpick.tools.tune import results
from specpick.tools.tune.inputs import tune_input


@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "p.jsonl"
    path.write_text('{"class": "copy", "prompt": "repeat this"}\n{"prompt": "write a poem"}\n')
    return path


BAD = [
    ({"draft_lengths": [0]}, "--draft-lengths must be between 1"),
    ({"concurrency": []}, "--concurrency values"),
    ({"draft_lengths": list(range(1, 12)), "concurrency": [1, 2, 4, 8]}, "timed runs"),
    ({"endpoint": None, "serve_model": None}, "give --endpoint N=URL"),
    ({"endpoint": ["4=http://127.0.0.1:1"], "serve_model": "m"}, "not both or neither"),
    ({"endpoint": ["4=http://127.0.0.1:1"], "serve_model": None, "draft_lengths": [4]}, "needs --baseline-endpoint"),
    ({"endpoint": ["2=http://127.0.0.1:1", "4=http://127.0.0.1:1"], "serve_model": None, "draft_lengths": [2, 4],
      "baseline_endpoint": "http://127.0.0.1:2"}, "a server runs one draft length"),
    ({"endpoint": ["4=http://127.0.0.1:1"], "serve_model": None, "baseline_endpoint": "http://127.0.0.1:2",
      "draft_lengths": [2, 4]}, "no server for N=2"),
    ({"endpoint": ["four=http://x"], "serve_model": None, "baseline_endpoint": "http://127.0.0.1:2",
      "draft_lengths": [4]}, "write it as N=URL"),
    ({"method": "eagle3"}, "give it with --draft"),
    ({"draft": "org/d"}, "--draft is for methods"),
    ({"prompt_lookup_min": 5, "prompt_lookup_max": 2}, "must not exceed"),
    ({"baseline_endpoint": "http://127.0.0.1:2"}, "--baseline-endpoint is for --endpoint"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_options_are_one_line_errors(prompts: Path, change: dict, message: str) -> None:
    options = {"prompts": prompts, "serve_model": "./m", **change}
    with pytest.raises(InputError) as err:
        tune_input(**options)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_results_file_resumes_only_the_same_settings(tmp_path: Path, prompts: Path) -> None:
    inp = tune_input(prompts=prompts, serve_model="./m")
    key = results.run_key(inp, prompts.read_bytes())
    other = results.run_key(tune_input(prompts=prompts, serve_model="./m", max_tokens=64), prompts.read_bytes())
    assert key != other
    path = tmp_path / "r.jsonl"
    results.append(path, key, 4, _run())
    results.append(path, other, 2, _run(tau=2.0))
    assert set(results.load(path, key, [1, 4])) == {4}
    assert set(results.load(path, other, [1, 4])) == {2}


def _run(concurrency: int = 1, speedup: float | None = 1.5, tau: float | None = 2.5, alpha: float | None = 0.4,
         per_position: list[float] | None = None) -> MeasureReport:
    """One finished run as tune writes it (figures a real server can produce unless a test says otherwise)."""
    def figures(label: str) -> RunFigures:
        return RunFigures(label=label, concurrency=concurrency, num_requests=4, completion_tokens=512, wall_s=2.0,
                          output_tokens_per_s=256.0, ttft_ms=Percentiles(p50=30.0), tpot_ms=Percentiles(p50=8.0))

    acc = Acceptance(source="vllm-counters", tau=tau, alpha=alpha, per_position=per_position or [])
    return MeasureReport(mode="endpoint", max_tokens=128, temperature=0.0, results=[ConcurrencyResult(
        concurrency=concurrency, speculative=figures("speculative"), baseline=figures("baseline"), acceptance=acc,
        speedup=speedup)])


def test_a_broken_results_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "k", "num_draft_tokens": 4, "report": {"mode": 3}}\n')
    with pytest.raises(InputError, match=r"r.jsonl:1 is not a tune result line"):
        results.load(path, "k", [1])


# Issue 39, cause 2: lines a rerun resumed from without checking them.
IMPOSSIBLE_RUNS = [
    ({"n": 4, "report": {"speedup": -3.0}}, "speedup -3x is outside"),
    ({"n": 4, "report": {"speedup": 1e308}}, "speedup 1e+308x is outside"),
    ({"n": 4, "report": {"tau": 51.0}}, "tau 51.00 is outside [1, N + 1 = 5]"),
    ({"n": 4, "report": {"tau": 0.5}}, "tau 0.50 is outside"),
    ({"n": 4, "report": {"alpha": 1.7}}, "alpha 1.7 is outside [0, 1]"),
    ({"n": 4, "report": {"per_position": [0.5, 0.9]}}, "rises along the draft"),
    ({"n": 4, "report": {"per_position": [0.9, 0.8, 0.7, 0.6, 0.5]}}, "5 per-position figures for N = 4"),
    ({"n": 4, "report": {"concurrency": 64}}, "concurrency 64, which this sweep does not measure"),
    ({"n": 999}, "N = 999 is not between 1 and 64"),
    ({"n": 0}, "N = 0 is not between 1 and 64"),
    ({"n": -4}, "N = -4 is not between 1 and 64"),
    ({"n": True}, "N = True is not between"),
    ({"n": "4"}, "N = '4' is not an integer"),
    ({"n": 4, "empty": True}, "a run with no results"),
]


@pytest.mark.parametrize(("case", "message"), IMPOSSIBLE_RUNS)
def test_a_results_line_with_an_impossible_figure_is_refused(tmp_path: Path, case: dict, message: str) -> None:
    report = MeasureReport(mode="endpoint") if case.get("empty") else _run(**case.get("report", {}))
    line = {"key": "k", "num_draft_tokens": case["n"], "report": json.loads(report.model_dump_json())}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError) as err:
        results.load(path, "k", [1, 4])
    assert message in str(err.value) and "r.jsonl:1" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text", ['{"key": "k", "num_draft_tokens": 4, "report": {"speedup": NaN}}',
                                  '{"key": "k", "num_draft_tokens": 4, "report": {"speedup": Infinity}}',
                                  '{"key": "k", "num_draft_tokens": 4, "report": {"speedup": 1e400}}',
                                  "[" * 100_000 + "]" * 100_000])
def test_a_results_line_that_is_not_json_numbers_or_nests_deep_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(InputError) as err:
        results.load(path, "k", [1])
    assert "r.jsonl:1" in str(err.value) and "\n" not in str(err.value)


def test_copy_overlap_tells_copying_from_writing() -> None:
    source = "The committee reviewed the budget for the new library and approved the plan."
    assert copy_overlap(source, source) == 1.0
    assert copy_overlap(source, "A poem about the sea, the wind and a small boat at dawn.") < COPY_OVERLAP_MIN
    assert class_of("edit", 0.0) == ("edit", "prompts file")
    assert class_of(None, 0.9) == ("copy", "output overlap")


def _fig(cls: str, spec_ms: float, base_ms: float) -> RequestFigures:
    return RequestFigures(origin="p:1", prompt_class=cls, classified_by="prompts file", copy_overlap=0.0,
                          spec_decode_ms=spec_ms, spec_tokens=101, base_decode_ms=base_ms, base_tokens=101)


def test_classes_get_opposite_decisions_when_their_intervals_say_so() -> None:
    rows = [_fig("copy", 50.0 + i, 100.0) for i in range(6)] + [_fig("free", 120.0 + i, 100.0) for i in range(6)]
    by_name = {c.name: c for c in split_by_class(rows)}
    assert by_name["copy"].decision == "on" and by_name["copy"].speedup > 1.5
    assert by_name["free"].decision == "off" and by_name["free"].speedup < 1.0
    assert by_name["copy"].speedup_low < by_name["copy"].speedup_high


def _k_at(ranges: list[list[int]] | list[tuple[int, int, int]], batch: int) -> int:
    return next(k for a, e, k in ranges if a <= batch <= e)


@pytest.mark.parametrize("schedule", [
    [(1, 1, 2), (2, 64, 0)],              # on at one user, off above: the off tail is vLLM's K=0 range
    [(1, 4, 4), (5, 16, 2), (17, 64, 0)],
    [(1, 1, 2), (2, 3, 0), (4, 64, 4)],   # noisy measurements: off between two ranges that draft
    [(1, 64, 3)],
])
def test_tune_spells_every_batch_sizes_k_for_vllm(prompts: Path, schedule: list[tuple[int, int, int]]) -> None:
    """The vLLM config tune prints gives each batch size the K tune chose, whatever shape the schedule has."""
    from specpick.tools.tune.run import schedule_configs
    inp = tune_input(prompts=prompts, max_batch_size=64, serve_model="HuggingFaceTB/SmolLM2-135M-Instruct")
    configs = schedule_configs(inp, schedule)
    vllm = next(c for c in configs if c.engine == "vllm")
    emitted = json.loads(vllm.config)["num_speculative_tokens_per_batch_size"]
    assert [_k_at(emitted, b) for b in range(1, 65)] == [_k_at(schedule, b) for b in range(1, 65)]


def test_a_schedule_the_tuned_engine_cannot_spell_is_said_not_dropped(prompts: Path) -> None:
    """Issue 39, cause 8: the tuned engine's configuration used to vanish without a word."""
    from specpick.tools.tune.run import schedule_configs
    inp = tune_input(prompts=prompts, serve_model="HuggingFaceTB/SmolLM2-135M-Instruct", method="lookahead")
    warnings: list[str] = []
    configs = schedule_configs(inp, [(1, 4, 3), (5, 256, 0)], warnings)
    assert all(c.engine != "vllm" for c in configs)
    assert len(warnings) == 1 and warnings[0].startswith("no vllm configuration emitted") and "lookahead" in warnings[0]


def test_a_release_of_thousands_of_digits_is_one_line(prompts: Path) -> None:
    with pytest.raises(InputError) as err:
        tune_input(prompts=prompts, serve_model="HuggingFaceTB/SmolLM2-135M-Instruct", engine_version="9" * 5000)
    assert "is not a release number" in str(err.value) and "\n" not in str(err.value)


def test_per_request_figures_no_server_at_that_n_produces_are_refused() -> None:
    """Issue 39, cause 7: 'tau measured 51.00' at N=4 was tuned on; the server is not running N=4."""
    from specpick.tools.errors import ServiceError
    from specpick.tools.tune.analysis import points
    req = RequestFigures(origin="p:1", prompt_class="free", classified_by="prompts file", copy_overlap=0.0,
                         spec_decode_ms=50.0, spec_tokens=101, drafts=2, draft_tokens=8, accepted=100)
    run = _run()
    run.results[0].requests = [req]
    with pytest.raises(ServiceError) as err:
        points({4: run}, [4], predict=False)
    assert "tau 51.00 is outside [1, N + 1 = 5]" in str(err.value) and "N=4" in str(err.value)
    assert "\n" not in str(err.value)

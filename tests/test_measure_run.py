"""`specpick measure` without an engine: option checks, bad endpoints, the n-gram drafters, --expect, the CLI.

Servers here are real sockets on 127.0.0.1 that are *not* inference engines
(nothing listening, a plain HTTP server, a server that never answers): the
inputs a user can get wrong. The real engine is in test_measure_endpoint.py.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.errors import (
    EXIT_INPUT,
    EXIT_UNAVAILABLE,
    InputError,
    NotFoundError,
    ServiceError,
    UnavailableError,
)
from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.answer import TRIGGER_METRICS
from specpick.tools.measure.compare import MEASURED_METRICS, Expectation, compare, load_expectation
from specpick.tools.measure.ngram_sim import NgramParams, simulate
from specpick.tools.measure.run import MeasureInput, measure_input, run_measure


@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "p.txt"
    path.write_text("Say hello.\n")
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(pages: dict[str, bytes]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering GET with ``pages`` and 404 elsewhere."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if self.path not in pages:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(pages[self.path])

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture()
def plain_http() -> Iterator[str]:
    """No inference engine at all: every path is 404."""
    yield from serve({})


@pytest.fixture()
def models_only() -> Iterator[str]:
    """OpenAI-compatible model list but no Prometheus page (what llama.cpp or Ollama servers look like)."""
    yield from serve({"/v1/models": json.dumps({"object": "list", "data": [{"id": "m"}]}).encode()})


@pytest.fixture()
def silent_port() -> Iterator[int]:
    """A socket that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield int(s.getsockname()[1])


# --- options -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "exactly one of --endpoint"),
        ({"endpoint": "http://127.0.0.1:1", "local": "m"}, "exactly one of --endpoint"),
        ({"endpoint": "http://127.0.0.1:1", "concurrency": [1, 0]}, "between 1 and 1024"),
        ({"endpoint": "http://127.0.0.1:1", "concurrency": []}, "between 1 and 1024"),
        ({"local": "m", "baseline_endpoint": "http://127.0.0.1:1"}, "--baseline-endpoint needs --endpoint"),
        ({"estimate_ngram": True}, "needs --samples"),
        ({"endpoint": "http://127.0.0.1:1", "samples": Path("s.jsonl")}, "--samples is for --estimate-ngram"),
        ({"endpoint": "http://127.0.0.1:1", "draft_model": "d"}, "--draft-model is for --local"),
        ({"local": "m", "prompt_lookup_min": 4, "prompt_lookup_max": 2}, "must not exceed"),
        ({"endpoint": "http://127.0.0.1:1"}, "pass --prompts FILE"),
    ],
)
def test_contradictory_options(kwargs: dict, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        run_measure(MeasureInput(**kwargs))


def test_out_of_range_option_is_one_line_input_error() -> None:
    with pytest.raises(InputError, match=r"^--max-tokens: Input should be greater than or equal to 1 \(got 0\)\. See `specpick measure --help`\.$"):
        measure_input(endpoint="http://x", max_tokens=0)


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1:8000", "127.0.0.1:8000", "http://", "http://127.0.0.1:99999", "http://h:1/?q=1"]
)
def test_bad_url(url: str, prompts: Path) -> None:
    with pytest.raises(InputError, match="--endpoint"):
        run_measure(MeasureInput(endpoint=url, prompts=prompts))


def test_bad_baseline_url(prompts: Path) -> None:
    with pytest.raises(InputError, match="--baseline-endpoint"):
        run_measure(MeasureInput(endpoint="http://127.0.0.1:1", baseline_endpoint="nope", prompts=prompts))


def test_unreachable_endpoint(prompts: Path) -> None:
    with pytest.raises(UnavailableError, match="cannot reach http://127.0.0.1:.*is the server running"):
        run_measure(MeasureInput(endpoint=f"http://127.0.0.1:{closed_port()}/v1", prompts=prompts))


def test_server_that_is_not_an_engine(plain_http: str, prompts: Path) -> None:
    with pytest.raises(ServiceError, match="is this an OpenAI-compatible server"):
        run_measure(MeasureInput(endpoint=plain_http, prompts=prompts))


def test_openai_server_without_metrics(models_only: str, prompts: Path) -> None:
    # No Prometheus page and no completions carrying llama-server's draft counts either: nothing to measure.
    with pytest.raises(ServiceError, match="exposes no speculative-decoding metrics"):
        run_measure(MeasureInput(endpoint=models_only, prompts=prompts))


def test_model_choice_is_checked_before_load(models_only: str, prompts: Path) -> None:
    with pytest.raises(NotFoundError, match="does not serve model 'x'; it serves: m"):
        run_measure(MeasureInput(endpoint=models_only, model="x", prompts=prompts))


def test_server_that_never_answers(silent_port: int, prompts: Path) -> None:
    with pytest.raises(UnavailableError, match="did not answer in time"):
        run_measure(MeasureInput(endpoint=f"http://127.0.0.1:{silent_port}", prompts=prompts, timeout_s=0.5))


def test_missing_prompts_file(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        run_measure(MeasureInput(endpoint=f"http://127.0.0.1:{closed_port()}", prompts=tmp_path / "none.jsonl"))


# --- the n-gram drafters, by hand ------------------------------------------------------------------------


def test_transformers_drafter_first_match_and_accept_prefix() -> None:
    # Context [1,2,3,4,1,2]: the 2-gram [1,2] first occurs at 0, so the draft is [3,4,1,2];
    # the output [3,4,5] accepts 3 and 4, then the verifier's own 5 ends the step.
    counts = simulate([1, 2, 3, 4, 1, 2], [3, 4, 5], NgramParams(num_draft_tokens=4, prompt_lookup_max=3))
    assert (counts.num_drafts, counts.num_draft_tokens, counts.num_accepted_tokens) == (1, 4, 2)
    assert counts.accepted_per_pos == [1, 1, 0, 0]
    assert counts.acceptance().tau == 3.0


def test_vllm_drafter_respects_prompt_lookup_min() -> None:
    # Context [7,8,9,7]: only the 1-gram [7] repeats. transformers drafts [8,9] at once and both are accepted;
    # vLLM with prompt_lookup_min=2 drafts nothing until the verifier's 8 makes the 2-gram [7,8] repeat.
    prompt, output = [7, 8, 9, 7], [8, 9, 4]
    hf = simulate(
        prompt, output, NgramParams(engine="transformers", num_draft_tokens=2, prompt_lookup_max=2), record_steps=True
    )
    vl = simulate(
        prompt,
        output,
        NgramParams(engine="vllm", num_draft_tokens=2, prompt_lookup_max=2, prompt_lookup_min=2),
        record_steps=True,
    )
    assert (hf.steps, hf.num_steps) == ([(2, 2)], 1)
    assert (vl.steps, vl.num_steps) == ([(2, 1)], 2)


def test_vllm_drafter_prefers_the_longest_match() -> None:
    # Suffix [1,2,3]: the 3-gram occurs at 4 (followed by 9), a bare [2,3] earlier at 0 (followed by 5).
    prompt = [2, 3, 5, 0, 1, 2, 3, 9, 0, 1, 2, 3]
    counts = simulate(
        prompt,
        [9],
        NgramParams(engine="vllm", num_draft_tokens=1, prompt_lookup_max=3, prompt_lookup_min=1),
        record_steps=True,
    )
    assert counts.steps == [(1, 0)]  # the single output token is the verifier's own: drafted 9, step ends
    longer = simulate(
        prompt, [9, 0], NgramParams(engine="vllm", num_draft_tokens=1, prompt_lookup_max=3), record_steps=True
    )
    assert longer.steps[0] == (1, 1)


def test_transformers_drafter_cuts_at_eos() -> None:
    counts = simulate([5, 6, 2, 7, 5, 6], [2, 7], NgramParams(num_draft_tokens=3, prompt_lookup_max=2), eos_ids=[2])
    assert counts.num_drafts == 0  # the only continuation starts with EOS: transformers drafts nothing


# --- --expect ------------------------------------------------------------------------------------------------

def saved_answer(concurrency: int = 2, **figures: float) -> dict:
    """A real `specpick recommend --json` answer (n-gram on a summarization deployment), with the predicted figures
    and fallback plan these tests measure against."""
    rec = plan(PlannerInputs(verifier="llama-3.1-8b", workload="summarization", concurrency=concurrency, method="ngram",
                             engine="vllm")).model_dump(mode="json")
    rec["num_draft_tokens"] = 4
    rec["expected_speedup"].update({"value": 2.0, "low": 1.5, "high": 2.6, "alpha": 0.7, "tau": 3.2, **figures})
    rec["fallback"] = [
        {"trigger": {"metric": "alpha", "op": "<", "value": 0.6}, "condition": "alpha < 0.6",
         "action": "drop N to 3", "next_num_draft_tokens": 3},
        {"trigger": {"metric": "speedup", "op": "<", "value": 1.0}, "condition": "speedup < 1",
         "action": "turn speculation off", "next_strategy": "none"},
        {"trigger": None, "condition": "", "action": "pin the engine version"},
    ]
    return rec


RECOMMENDATION = saved_answer()


def test_compare_fires_the_matching_fallback() -> None:
    exp = Expectation.model_validate(RECOMMENDATION)
    cmp = compare(exp, {"alpha": 0.5, "tau": 3.3, "speedup": 1.8})
    assert [c.verdict for c in cmp.checks] == ["below", "as_predicted", "as_predicted"]
    assert [s.fired for s in cmp.fallback] == [True, False, False]
    assert cmp.fallback[0].next_num_draft_tokens == 3
    assert cmp.verdict == "below_prediction"
    assert cmp.summary == "below prediction; fallback: alpha < 0.6 -> drop N to 3"


def test_every_trigger_metric_of_the_contract_is_measured() -> None:
    # A fallback step on a metric the tool cannot measure would never fire: the contract and the tool must agree.
    assert set(TRIGGER_METRICS) <= set(MEASURED_METRICS)


def test_a_saved_answer_from_the_contract_loads_and_extra_fields_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({**RECOMMENDATION, "a_field_a_later_release_adds": 1}))
    exp = load_expectation(path)
    assert (exp.strategy, exp.num_draft_tokens, exp.inputs.workload, exp.inputs.concurrency) == (
        "ngram", 4, "summarization", 2)


def test_compare_without_speedup_is_not_a_failure() -> None:
    cmp = compare(Expectation.model_validate(RECOMMENDATION), {"alpha": 0.72, "tau": 3.1})
    assert cmp.checks[2].verdict == "not_measured"
    assert cmp.verdict == "as_predicted"
    assert not any(s.fired for s in cmp.fallback)


@pytest.mark.parametrize(
    ("content", "error", "fragment"),
    [
        (None, NotFoundError, "does not exist"),
        ("not json", InputError, "is not JSON"),
        ('{"strategy": "ngram"}', InputError, "strategy_label: Field required"),
        (json.dumps({**RECOMMENDATION, "fallback": [{"trigger": {"metric": "alpha", "op": "=<", "value": 1},
                                                     "condition": "", "action": "x"}]}),
         InputError, "fallback.0.trigger.op"),
    ],
)
def test_bad_expect_file(tmp_path: Path, content: str | None, error: type, fragment: str) -> None:
    path = tmp_path / "rec.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(error, match=fragment.replace(".", r"\.")):
        load_expectation(path)


def test_expect_is_read_before_anything_is_sent(tmp_path: Path) -> None:
    """A bad --expect fails fast, before load is generated (the endpoint here does not even exist)."""
    (tmp_path / "rec.json").write_text("[]")
    with pytest.raises(InputError, match="not a recommend --json output"):
        run_measure(
            MeasureInput(endpoint=f"http://127.0.0.1:{closed_port()}", workload="chat", expect=tmp_path / "rec.json")
        )


# --- CLI ---------------------------------------------------------------------------------------------------


def test_cli_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["measure", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--endpoint URL",
        "--baseline-endpoint",
        "--local MODEL",
        "--estimate-ngram",
        "--expect FILE",
        "--concurrency C [C ...]",
        "--plot-dir DIR",
        "--json",
    ):
        assert flag in out


@pytest.mark.parametrize(
    ("argv", "code", "fragment"),
    [
        (
            ["measure", "--endpoint", "http://127.0.0.1:1", "--workload", "chat", "--concurrency", "0"],
            EXIT_INPUT,
            "between 1 and 1024",
        ),
        (["measure", "--local", "m", "--max-tokens", "0"], EXIT_INPUT, "--max-tokens"),
        (
            ["measure", "--endpoint", f"http://127.0.0.1:{closed_port()}", "--workload", "chat"],
            EXIT_UNAVAILABLE,
            "cannot reach",
        ),
    ],
)
def test_cli_errors_are_one_line_with_exit_codes(
    argv: list[str], code: int, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err and err.count("\n") == 1


def test_cli_estimate_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"prompt": "a b c d a b c d", "output": "a b c d a b"}) + "\n")
    # A whitespace-split tokenizer.json built with the tokenizers library keeps this test offline and exact.
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "c": 2, "d": 3, "[UNK]": 4}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(tmp_path / "tokenizer.json"))
    assert (
        main(
            [
                "measure",
                "--estimate-ngram",
                "--samples",
                str(samples),
                "--tokenizer",
                str(tmp_path),
                "--num-draft-tokens",
                "4",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    acc = report["ngram"]["acceptance"]
    # Prompt a b c d a b c d, output a b c d a b: the 3-gram "b c d" first occurs at 1, so the draft is
    # "a b c d", all accepted, plus the verifier's own "a"; then one token is left, and transformers does not
    # draft when only the verifier's token fits in max_length.
    assert (acc["num_drafts"], acc["num_draft_tokens"], acc["num_accepted_tokens"]) == (1, 4, 4)
    assert report["ngram"]["tokenizer"].startswith("tokenizers:")


def test_several_served_models_need_a_choice(prompts: Path) -> None:
    models = {"/v1/models": json.dumps({"data": [{"id": "a"}, {"id": "b"}]}).encode()}
    for url in serve(models):
        with pytest.raises(InputError, match="serves 2 models \\(a, b\\): pass --model NAME"):
            run_measure(MeasureInput(endpoint=url, prompts=prompts))

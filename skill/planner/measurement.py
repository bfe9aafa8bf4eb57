"""Section 5: how to measure alpha, tau and speedup, with each engine's metric names and commands.

Definitions follow vLLM's metrics code (``vllm/v1/spec_decode/metrics.py``),
because users mix up "acceptance rate" and "system efficiency" (vllm#9565):
alpha = accepted / drafted tokens, tau = 1 + accepted / drafts (the bonus
token included), per-position rate = accepted at position i / drafts.
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.skill.schema import MeasurementPlan, MetricRef
from specpick.tools.vocab import COPY_METHODS, INPUT_GROUNDED_WORKLOADS

DEFINITIONS = [
    "alpha (draft acceptance rate) = accepted draft tokens / proposed draft tokens",
    "tau (mean acceptance length) = 1 + accepted draft tokens / drafts (verify steps); plain decoding has tau = 1",
    "per-position acceptance i = drafts whose token i was accepted / drafts; it falls with i, and where it drops "
    "below ~0.3 the extra draft positions cost more than they return",
    "speedup = TPOT (time per output token) without speculation / TPOT with it, same prompts, same concurrency",
]

_VLLM = [
    MetricRef(engine="vllm", name="vllm:spec_decode_num_drafts_total", meaning="verify steps (drafts) so far"),
    MetricRef(engine="vllm", name="vllm:spec_decode_num_draft_tokens_total", meaning="draft tokens proposed"),
    MetricRef(engine="vllm", name="vllm:spec_decode_num_accepted_tokens_total", meaning="draft tokens accepted"),
    MetricRef(engine="vllm", name='vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}',
              meaning="accepted tokens at draft position i"),
]
_SGLANG = [
    MetricRef(engine="sglang", name="sglang:spec_accept_length", meaning="accepted drafts + bonus per forward (tau)"),
    MetricRef(engine="sglang", name="sglang:spec_accept_rate", meaning="draft acceptance rate (alpha)"),
]
_TRTLLM = [
    MetricRef(engine="trtllm", name="acceptance length in trtllm-bench / iteration stats",
              meaning="tokens accepted per step; metric names like trtllm_spec_decode_acceptance_length appear "
                      "only in third-party docs: verify against your version before alerting on them"),
]
# llama-server's own numbers (tools/server/README.md @00dc805): each response's `timings` ("such as the number of
# tokens predicted_per_second"; draft_n / draft_n_accepted are the speculative counts it adds), GET /slots (on by
# default) and, with --metrics only, Prometheus counters named llamacpp:spec_decode_*.
_LLAMACPP = [
    MetricRef(engine="llamacpp", name="timings.draft_n / timings.draft_n_accepted",
              meaning="draft tokens proposed / accepted in one response (/completion, /v1/chat/completions); "
                      "alpha = sum accepted / sum proposed over your requests"),
    MetricRef(engine="llamacpp", name="timings.predicted_per_second",
              meaning="decode tokens per second of the request (speedup = with / without speculation)"),
    MetricRef(engine="llamacpp", name="GET /slots",
              meaning="per slot: n_ctx, speculative (on/off) and params speculative.n_max / n_min / p_min: check "
                      "the server runs the draft settings you passed"),
    MetricRef(engine="llamacpp", name="llamacpp:spec_decode_num_drafts_total (with --metrics)",
              meaning="verify steps; tau = 1 + llamacpp:spec_decode_num_accepted_tokens_total / this (deltas)"),
]
_TRANSFORMERS = [
    MetricRef(engine="transformers", name="len(generated) / forward passes of the target",
              meaning="tau, counted by wrapping the target model's forward; no built-in metric"),
]


@dataclass(frozen=True)
class EngineMeasure:
    """One engine's words for measuring: where it listens, what it counts, how a sample is drawn."""

    port: int  # the port the launch command listens on (the engine's default, or the one we pass)
    metrics: list[MetricRef]
    read_step: str  # how to turn the engine's numbers into alpha / tau
    single_user: bool = False  # the engine is run for one user: the sample is the user's own sessions


_SERVER_READ = "Read the counters before and after each run and use the deltas (counters are cumulative)."
MEASURE = {
    "vllm": EngineMeasure(8000, _VLLM, _SERVER_READ),
    "sglang": EngineMeasure(30000, _SGLANG, "Read the gauges during each run (they average recent forwards)."),
    "trtllm": EngineMeasure(8000, _TRTLLM, _SERVER_READ),
    # llama-server @00dc805 listens on 9931 by default (README "--port PORT ... default: 9931"; older builds 8080):
    # the plan starts it with --port 8080 so one address holds across builds.
    "llamacpp": EngineMeasure(
        8080, _LLAMACPP,
        "Sum timings.draft_n and timings.draft_n_accepted over the responses: alpha = accepted / drafted. Each "
        "response carries its own counts (nothing is cumulative); tau needs the number of drafts, which the "
        "timings do not give: read it from /metrics (llamacpp:spec_decode_num_drafts_total, with --metrics) or "
        "take tau from alpha at the N you ran.", single_user=True),
    "transformers": EngineMeasure(0, _TRANSFORMERS, "Count target forwards per generated token in your own loop.",
                                  single_user=True),
}


def _sample_text(workload: str, single_user: bool) -> str:
    grounded = workload in INPUT_GROUNDED_WORKLOADS
    source = (f"50-100 of your own recent {workload} prompts (your sessions, not a public benchmark)" if single_user
              else f"200-500 real {workload} requests from production logs (not a public benchmark)")
    return (
        f"{source}: acceptance depends on the prompt distribution"
        + (" and on how much of the output copies the input (measure with your real documents/contexts)"
           if grounded else "")
        + "; keep the chat template, system prompt and sampling settings exactly as served"
    )


def _vllm_commands(verifier: str, strategy: str, concurrency: int) -> list[str]:
    out = [
        "vllm bench serve --model {v} --dataset-name custom --dataset-path prompts.jsonl "
        "--max-concurrency {c} --num-prompts 200 --save-result  "
        "# JSON: spec_decode_acceptance_rate, spec_decode_acceptance_length, "
        "spec_decode_per_position_acceptance_rates".format(v=verifier, c=concurrency),
        "curl -s http://HOST:8000/metrics | grep spec_decode   # before and after; use the deltas",
        "# PromQL: alpha = rate(vllm:spec_decode_num_accepted_tokens_total[5m]) / "
        "rate(vllm:spec_decode_num_draft_tokens_total[5m]);  tau = 1 + "
        "rate(vllm:spec_decode_num_accepted_tokens_total[5m]) / rate(vllm:spec_decode_num_drafts_total[5m])",
        "# per request: --per-request-spec-decode-metrics summary adds metrics.speculative_decoding."
        "mean_acceptance_length to each response (n == 1 only)",
    ]
    if strategy != "none" and strategy not in COPY_METHODS:
        out.append("vllm bench sweep tune_speculative_k <results_dir> --max-batch-size "
                   f"{max(concurrency, 8)}   # writes a per-batch-size k schedule from measured runs")
    return out


def _sglang_commands(levels: list[int]) -> list[str]:
    return [
        "curl -s http://HOST:30000/metrics | grep -E 'sglang:spec_accept_(length|rate)'",
        "python scripts/playground/bench_speculative.py --batch-size "
        f"{' '.join(str(c) for c in levels)} --steps 3 5 7 --topk 1 4 --num_draft_tokens 4 8 16  "
        "# relaunches per config; writes acc_length, step_time and speed to JSONL "
        "(SGLANG_RECORD_STEP_TIME=1)",
    ]


def _llamacpp_commands(verifier: str, launch: str, baseline: str, conc: str) -> list[str]:
    # One local GPU holds one server: the speculative and the plain server run one after the other on one port.
    return [
        f"# 1. speculative:  {launch} --port 8080",
        "specpick measure --endpoint http://127.0.0.1:8080 --prompts prompts.jsonl "
        f"--concurrency {conc} --expect recommendation.json   # reads each response's timings.draft_n / "
        "draft_n_accepted",
        "curl -s http://127.0.0.1:8080/slots | python3 -m json.tool   # per slot: n_ctx, speculative, "
        "params speculative.n_max / n_min / p_min (README @00dc805, GET /slots)",
        "curl -s http://127.0.0.1:8080/completion -d '{\"prompt\": \"...\", \"n_predict\": 256}' | "
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"timings\"])'   # draft_n, draft_n_accepted, "
        "predicted_per_second of one request",
        f"# 2. stop it, then plain:  {baseline} --port 8080   and rerun the same specpick measure line",
    ]


def build_measurement_plan(*, engine: str, verifier: str, strategy: str, concurrency: int, workload: str,
                           launch_command: str, baseline_command: str) -> MeasurementPlan:
    """Engine-specific measurement plan for the recommended configuration."""
    table = MEASURE[engine]
    levels = sorted({1, concurrency, max(1, concurrency * 2), 4, 16} if concurrency > 1 else {1, 4, 16})
    if table.single_user and concurrency == 1:
        levels = [1]  # one user: the server never sees more than one sequence
    conc = " ".join(str(c) for c in levels)
    if engine == "llamacpp":
        commands = _llamacpp_commands(verifier, launch_command, baseline_command, conc)
    else:
        commands = [
            f"# speculative server:  {launch_command}",
            f"# baseline server:     {baseline_command}",
        ]
        if engine != "transformers":
            commands.append(f"specpick measure --endpoint http://HOST:{table.port} --baseline-endpoint "
                            f"http://HOST:{table.port + 1} --model {verifier} --prompts prompts.jsonl "
                            f"--concurrency {conc} --expect recommendation.json")
        commands += {
            "vllm": lambda: _vllm_commands(verifier, strategy, concurrency),
            "sglang": lambda: _sglang_commands(levels),
            "trtllm": lambda: ["trtllm-bench --model {v} throughput --config config.yaml --dataset prompts.jsonl "
                               "--concurrency {c}".format(v=verifier, c=concurrency)],
            "transformers": lambda: ["specpick measure --local {v} --prompts prompts.jsonl   # in-process, "
                                     "batch 1".format(v=verifier)],
        }[engine]()
    steps = [
        "Record the engine version and pin it: acceptance changes between releases (vllm#26191: EAGLE-3 "
        "acceptance length on main fell below the published 3.53).",
        "Run the same prompts through a baseline server without speculation, same engine version and flags.",
        (f"Measure at concurrency {conc}: acceptance measured at batch 1 does not carry to high concurrency "
         "(llama.cpp#27117), and speedup shrinks as the batch grows.") if levels != [1] else
        "Measure at concurrency 1, as you use it; if you later raise --parallel, measure again (acceptance "
        "falls as drafting slots grow: llama.cpp#27117).",
        table.read_step,
        "Compare alpha/tau with the assumption in section 2 and apply the fallback thresholds in section 4.",
        "Check greedy outputs are identical with and without speculation (a difference means a bug: e.g. "
        "mismatched tokenizers, or exotic KV quantization, vllm#40831).",
    ]
    if strategy == "ngram":
        steps.insert(0, "Estimate n-gram acceptance offline first from your own prompt+output pairs: "
                        "`specpick measure --estimate-ngram --samples pairs.jsonl`.")
    return MeasurementPlan(sample=_sample_text(workload, table.single_user), definitions=DEFINITIONS,
                           metrics=table.metrics, commands=commands, steps=steps)

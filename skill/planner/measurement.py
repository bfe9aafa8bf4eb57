"""Section 5: how to measure alpha, tau and speedup, with each engine's metric names and commands.

Definitions follow vLLM's metrics code (``vllm/v1/spec_decode/metrics.py``),
because users mix up "acceptance rate" and "system efficiency" (vllm#9565):
alpha = accepted / drafted tokens, tau = 1 + accepted / drafts (the bonus
token included), per-position rate = accepted at position i / drafts.
"""

from __future__ import annotations

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
_LLAMACPP = [
    MetricRef(engine="llamacpp", name="timings.draft_n / timings.draft_n_accepted",
              meaning="draft tokens proposed / accepted per /completion response (alpha = accepted / proposed); "
                      "field names vary between builds: check one response of yours before relying on them"),
    MetricRef(engine="llamacpp", name="timings.predicted_per_second",
              meaning="decode tokens per second of the request (speedup = with / without speculation)"),
]
_TRANSFORMERS = [
    MetricRef(engine="transformers", name="len(generated) / forward passes of the target",
              meaning="tau, counted by wrapping the target model's forward; no built-in metric"),
]


def _sample_text(workload: str) -> str:
    grounded = workload in INPUT_GROUNDED_WORKLOADS
    return (
        f"200-500 real {workload} requests from production logs (not a public benchmark): acceptance depends on "
        "the prompt distribution"
        + (" and on how much of the output copies the input (measure with your real documents/contexts)"
           if grounded else "")
        + "; keep the chat template, system prompt and sampling settings exactly as served"
    )


def build_measurement_plan(*, engine: str, verifier: str, strategy: str, concurrency: int, workload: str,
                           launch_command: str, baseline_command: str) -> MeasurementPlan:
    """Engine-specific measurement plan for the recommended configuration."""
    metrics = {"vllm": _VLLM, "sglang": _SGLANG, "trtllm": _TRTLLM, "llamacpp": _LLAMACPP,
               "transformers": _TRANSFORMERS}[engine]
    levels = sorted({1, concurrency, max(1, concurrency * 2), 4, 16} if concurrency > 1 else {1, 4, 16})
    conc = " ".join(str(c) for c in levels)
    commands = [
        f"# speculative server:  {launch_command}",
        f"# baseline server:     {baseline_command}",
        f"specpick measure --endpoint http://HOST:8000 --baseline-endpoint http://HOST:8001 --model {verifier} "
        f"--prompts prompts.jsonl --concurrency {conc} --expect recommendation.json",
    ]
    if engine == "vllm":
        commands += [
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
            commands.append("vllm bench sweep tune_speculative_k <results_dir> --max-batch-size "
                            f"{max(concurrency, 8)}   # writes a per-batch-size k schedule from measured runs")
    elif engine == "sglang":
        commands += [
            "curl -s http://HOST:30000/metrics | grep -E 'sglang:spec_accept_(length|rate)'",
            "python scripts/playground/bench_speculative.py --batch-size "
            f"{' '.join(str(c) for c in levels)} --steps 3 5 7 --topk 1 4 --num_draft_tokens 4 8 16  "
            "# relaunches per config; writes acc_length, step_time and speed to JSONL "
            "(SGLANG_RECORD_STEP_TIME=1)",
        ]
    elif engine == "trtllm":
        commands.append("trtllm-bench --model {v} throughput --config config.yaml --dataset prompts.jsonl "
                        "--concurrency {c}".format(v=verifier, c=concurrency))
    elif engine == "llamacpp":
        commands.append("curl -s http://HOST:8080/completion -d '{\"prompt\": \"...\", \"n_predict\": 256}' | "
                        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"timings\"])'   # draft counts "
                        "and tokens/s of one request; repeat with -np as served (parallel slots, llama.cpp#27117)")
    else:
        commands.append("specpick measure --local {v} --prompts prompts.jsonl   # in-process, batch 1".format(
            v=verifier))
    steps = [
        "Record the engine version and pin it: acceptance changes between releases (vllm#26191: EAGLE-3 "
        "acceptance length on main fell below the published 3.53).",
        "Run the same prompts through a baseline server without speculation, same engine version and flags.",
        f"Measure at concurrency {conc}: acceptance measured at batch 1 does not carry to high concurrency "
        "(llama.cpp#27117), and speedup shrinks as the batch grows.",
        "Read the counters before and after each run and use the deltas (counters are cumulative).",
        "Compare alpha/tau with the assumption in section 2 and apply the fallback thresholds in section 4.",
        "Check greedy outputs are identical with and without speculation (a difference means a bug: e.g. "
        "mismatched tokenizers, or exotic KV quantization, vllm#40831).",
    ]
    if strategy == "ngram":
        steps.insert(0, "Estimate n-gram acceptance offline first from your own prompt+output pairs: "
                        "`specpick measure --estimate-ngram --samples pairs.jsonl`.")
    return MeasurementPlan(sample=_sample_text(workload), definitions=DEFINITIONS, metrics=metrics,
                           commands=commands, steps=steps)

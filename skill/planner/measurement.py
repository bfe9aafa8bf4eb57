"""Section 5: how to measure alpha, tau and speedup, with each engine's metric names and commands.

The engine's words (its metrics, port, how to read them, its launch and benchmark lines) are its own
(``tools/engines/<engine>.py``); this module puts them in the plan.

Definitions follow vLLM's metrics code (``vllm/v1/spec_decode/metrics.py``),
because users mix up "acceptance rate" and "system efficiency" (vllm#9565):
alpha = accepted / drafted tokens, tau = 1 + accepted / drafts (the bonus
token included), per-position rate = accepted at position i / drafts.
"""

from __future__ import annotations

from specpick.skill.schema import MeasurementPlan
from specpick.tools.engines.lookup import engine as engine_spec
from specpick.tools.vocab import INPUT_GROUNDED_WORKLOADS

DEFINITIONS = [
    "alpha (draft acceptance rate) = accepted draft tokens / proposed draft tokens",
    "tau (mean acceptance length) = 1 + accepted draft tokens / drafts (verify steps); plain decoding has tau = 1",
    "per-position acceptance i = drafts whose token i was accepted / drafts; it falls with i, and where it drops "
    "below ~0.3 the extra draft positions cost more than they return",
    "speedup = TPOT (time per output token) without speculation / TPOT with it, same prompts, same concurrency",
]


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


def build_measurement_plan(*, engine: str, verifier: str, strategy: str, concurrency: int, workload: str,
                           launch_command: str, baseline_command: str) -> MeasurementPlan:
    """Engine-specific measurement plan for the recommended configuration."""
    table = engine_spec(engine)
    levels = sorted({1, concurrency, max(1, concurrency * 2), 4, 16} if concurrency > 1 else {1, 4, 16})
    if table.single_user and concurrency == 1:
        levels = [1]  # one user: the server never sees more than one sequence
    conc = " ".join(str(c) for c in levels)
    commands = table.plan_commands(verifier, strategy, concurrency, levels, launch_command, baseline_command)
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
                           metrics=list(table.metrics), commands=commands, steps=steps)

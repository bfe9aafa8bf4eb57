"""SGLang: its ``--speculative-*`` flags, launch line, metric names, memory reservation, spec v2 overlap.

Option names: SGLang docs/advanced_features/speculative_decoding.md @067ad4d and adaptive_speculative_decoding.md
@369fa46 (ENGINES.md (b), docs/references/).
"""

from __future__ import annotations

import shlex
from typing import Any

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.engines.base import EngineSpec, Overlap, Reservation, ServeSpec, shell_join
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.errors import InputError
from specpick.tools.methods import method_record
from specpick.tools.vocab import EAGLE_METHODS

# SGLang spec v2 (overlap scheduling): the EAGLE/EAGLE3/NEXTN workers (autoregressive heads) and STANDALONE (a
# draft model), by SGLang algorithm name; off by default, turned on by an environment variable.
SGLANG_SPEC_V2_STANDALONE = "STANDALONE"
SGLANG_SPEC_V2_ENV = "SGLANG_ENABLE_SPEC_V2=1"
# SGLang's default mem_fraction_static by tensor-parallel size (sgl-project/sglang python/sglang/srt/
# server_args.py __post_init__: tp >= 16: 0.79, >= 8: 0.81, >= 4: 0.85, >= 2: 0.87, else 0.88).
SGLANG_MEM_FRACTION_STATIC: tuple[tuple[int, float], ...] = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))

METRICS = (
    MetricRef(engine="sglang", name="sglang:spec_accept_length", meaning="accepted drafts + bonus per forward (tau)"),
    MetricRef(engine="sglang", name="sglang:spec_accept_rate", meaning="draft acceptance rate (alpha)"),
)
# The gauges ``measure`` reads (tools/measure/metrics.py).
GAUGE_ACCEPT_LENGTH = "sglang:spec_accept_length"
GAUGE_ACCEPT_RATE = "sglang:spec_accept_rate"


def sglang_tree(method: str, depth: int, top_k: int, verify: int | None) -> tuple[int, int, int]:
    """SGLang's (num_steps, eagle_topk, num_draft_tokens) for a draft of ``depth`` steps.

    Chain drafting (top-k 1) verifies depth+1 tokens: SGLang itself adjusts
    num_draft_tokens to num_steps+1 when topk=1 (ENGINES.md: vLLM k maps to
    ``--speculative-num-steps k --speculative-eagle-topk 1 --speculative-num-draft-tokens k+1``).
    For trees the verify budget must satisfy steps*topk+1 >= num_draft_tokens
    (``bench_speculative.py`` skips other configs).
    """
    if top_k == 1:
        return depth, 1, depth + 1
    budget = verify if verify is not None else min(depth * top_k + 1, 64)
    if budget > depth * top_k + 1:
        raise InputError(
            f"SGLang needs num_draft_tokens <= steps*topk+1 = {depth * top_k + 1}; got {budget}. "
            "Lower --num-verify-tokens or raise the tree depth/top-k."
        )
    return depth, top_k, budget


def _algorithm_flags(inp: EngineConfigInput, algo: str, flags: list[str], notes: list[str]) -> None:
    rec = method_record(inp.method)
    if algo == "NGRAM":
        flags += ["--speculative-num-draft-tokens", str(inp.num_draft_tokens + 1),
                  "--speculative-ngram-min-match-window-size", str(inp.prompt_lookup_min),
                  "--speculative-ngram-max-match-window-size", str(max(inp.prompt_lookup_max, 12))]
        notes.append("SGLang NGRAM is CUDA-only and disables the overlap scheduler and mixed chunked prefill")
    elif algo == "DFLASH":
        # One block of N drafted tokens plus the anchor token (z-lab: -b16 drafts use 16).
        flags += ["--speculative-num-draft-tokens", str(inp.num_draft_tokens + 1)]
        notes.append("hybrid Qwen3.5 targets also need --mamba-scheduler-strategy extra_buffer")
    elif algo == "DSPARK":
        # DSpark takes its block size, not steps/top-k/draft tokens (SGLang PR #29538; LMSYS Ling-3.0-flash blog
        # review: "DSpark doesn't need speculative steps and draft-tokens").
        flags += ["--speculative-dspark-block-size", str(inp.num_draft_tokens)]
    else:
        steps, topk, draft_tokens = sglang_tree(inp.method, inp.num_draft_tokens, inp.tree_top_k,
                                                inp.num_verify_tokens)
        flags += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
                  "--speculative-num-draft-tokens", str(draft_tokens)]
        notes.append("set steps, topk and num-draft-tokens together (SGLang auto-picks all three only when "
                     "all are omitted)")
        if topk == 1:
            notes.append("topk=1 allows SGLANG_ENABLE_SPEC_V2=True (overlap scheduler)")
        if inp.adaptive and rec.autoregressive_head and topk == 1:
            flags.append("--speculative-adaptive")
            notes.append("--speculative-adaptive switches num_steps among tiers (default [1,3,7]) by an EMA of "
                         "acceptance (PR #21599)")


def parse_flags(config: str) -> dict[str, Any] | None:
    """SGLang flags as ``{"speculative-algorithm": "EAGLE3", ...}`` (flags without a value map to True)."""
    try:
        words = shlex.split(config)
    except ValueError:
        return None
    out: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--"):
            i += 1
            continue
        key, eq, val = word[2:].partition("=")
        if eq:
            out[key] = val
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[key] = words[i + 1]
            i += 1
        else:
            out[key] = True
        i += 1
    return out


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


class SglangEngine(EngineSpec):
    def emit(self, inp: EngineConfigInput, version: str) -> EngineConfig:
        rec = method_record(inp.method)
        algo = rec.engine_names("sglang")[0]
        flags = ["--speculative-algorithm", algo]
        # MTP layers ship inside the verifier; so does a drafter named as the verifier itself
        if inp.draft_model and rec.loads != "verifier_layers" and inp.draft_model != inp.verifier:
            flags += ["--speculative-draft-model-path", inp.draft_model]
        notes: list[str] = self.checkpoint(inp)[2]
        _algorithm_flags(inp, algo, flags, notes)
        if inp.adaptive and "--speculative-adaptive" not in flags:
            notes.append("SGLang adapts the draft length only for EAGLE-family methods with topk 1 (PR #21599)")
        if inp.full_schedule():
            notes.append("SGLang has no per-batch-size draft length and cannot switch speculation off by batch "
                         "size: cap --max-running-requests or serve high-concurrency traffic from a non-speculative "
                         "pool")
        text = shell_join(flags)
        argv = [*self.plain_argv(inp)[0], *flags]
        return EngineConfig(engine=self.name, engine_version=version, format=self.format, config=text,
                            launch_command=shell_join(argv), argv=argv, notes=notes)

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        flags = parse_flags(config.config)
        if flags is None:
            return None
        out: dict[str, Any] = dict(flags)
        out.update(key=flags.get("speculative-algorithm"), draft_model=flags.get("speculative-draft-model-path"))
        ndt = _int(flags.get("speculative-num-draft-tokens", ""))
        if "speculative-dspark-block-size" in flags:
            out["num_draft_tokens"] = _int(flags["speculative-dspark-block-size"])
        elif "speculative-num-steps" in flags:
            out.update(num_draft_tokens=_int(flags["speculative-num-steps"]),
                       tree_top_k=_int(flags.get("speculative-eagle-topk", "")), num_verify_tokens=ndt)
        elif ndt is not None:  # NGRAM and DFLASH verify N drafted tokens plus one
            out["num_draft_tokens"] = ndt - 1
        if "speculative-ngram-min-match-window-size" in flags:
            out["prompt_lookup_min"] = _int(flags["speculative-ngram-min-match-window-size"])
        return out

    def plain_argv(self, inp: EngineConfigInput) -> tuple[list[str], list[str]]:
        model, quant, _ = self.checkpoint(inp)
        return ["python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", str(inp.tensor_parallel),
                *quant, *self.context_args(inp)], []

    def serve_command(self, serve: ServeSpec, spec_args: list[str]) -> list[str]:
        return [serve.executable, "-m", "sglang.launch_server", "--model-path", serve.model, "--served-model-name",
                serve.served_name, "--host", "127.0.0.1", "--port", str(serve.port), *serve.extra_args, *spec_args]

    def overlap(self, version: str | None, method: str, method_rec: Any) -> Overlap:
        can = method_rec is not None and (method_rec.autoregressive_head
                                          or method_rec.engine_key("sglang") == SGLANG_SPEC_V2_STANDALONE)
        return Overlap(can, False, f"SGLang spec v2 overlap scheduling ({SGLANG_SPEC_V2_ENV}; chains of "
                                   "EAGLE/MTP/standalone only)",
                       hint=f"; set {SGLANG_SPEC_V2_ENV} and --spec-overlap on")

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        frac = next(f for tp, f in SGLANG_MEM_FRACTION_STATIC if gpus >= tp)
        return memory_gib * frac, (f"SGLang mem_fraction_static {frac:g} (its default at TP={gpus}, "
                                   "sglang server_args.py)")

    def measure_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int]) -> list[str]:
        return [
            "curl -s http://HOST:30000/metrics | grep -E 'sglang:spec_accept_(length|rate)'",
            "python scripts/playground/bench_speculative.py --batch-size "
            f"{' '.join(str(c) for c in levels)} --steps 3 5 7 --topk 1 4 --num_draft_tokens 4 8 16  "
            "# relaunches per config; writes acc_length, step_time and speed to JSONL "
            "(SGLANG_RECORD_STEP_TIME=1)",
        ]


ENGINE = SglangEngine(
    name="sglang", label="SGLang", format="cli-flags", harness="sglang", engine_harness=True, metrics=METRICS,
    metrics_port=30000, read_step="Read the gauges during each run (they average recent forwards).",
    reservation=Reservation("mem_fraction_static"),
    under_load="run a second replica without speculation for high-load traffic, or lower the draft length (SGLang "
               "has no per-batch switch in the versions we track)",
    tree_methods=EAGLE_METHODS, launches=True, read_metrics=(GAUGE_ACCEPT_LENGTH,), overlap_mode=True,
    # --context-length and --quantization fp8 (online FP8 of a BF16 checkpoint): SGLang server_args.py and
    # docs/advanced_features/quantization.md ("online quantization").
    context_flag="--context-length", online_quantization=(("fp8", ("--quantization", "fp8")),),
)

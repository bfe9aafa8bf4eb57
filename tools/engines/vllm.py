"""vLLM: its ``--speculative-config`` JSON, launch line, metric names, memory reservation, async scheduling.

Option names: vLLM docs features/speculative_decoding/{dflash,parallel_draft_model,dynamic_speculative_decoding}.md,
PR #32887, ``SpeculativeConfig`` (ENGINES.md (b), docs/references/). Data first (a dict), serialised once with
``json.dumps``; every shell word through ``shlex.quote``.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.engines.base import (
    EngineSpec, Overlap, Reservation, ServeSpec, at_least, shell_join, version_key,
)
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.methods import method_record
from specpick.tools.vocab import COPY_METHODS, EAGLE_METHODS

# vLLM's per-batch-size schedule key arrived with PR #32374 (present by 0.24.0; UNVERIFIED for 0.23).
VLLM_SCHEDULE_MIN_VERSION = "0.24.0"
# vLLM's EAGLE head methods (how vLLM spells the EAGLE heads; P-EAGLE runs as one of them).
VLLM_EAGLE_KEYS: frozenset[str] = frozenset(k for m in EAGLE_METHODS if (k := method_record(m).engine_key("vllm")))
# vLLM refuses a draft_model whose vocab_size differs from the target's (verify_equal_vocab_size_if_draft_model)
# unless use_heterogeneous_vocab is set (token-level intersection, PR #38174 merged 2026-07-02; draft_model only,
# greedy draft sampling only: vllm/config/speculative.py @002e77c and docs/features/speculative_decoding). Seen in
# 0.25.1; UNVERIFIED for the releases between the merge and 0.25.1.
VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION = "0.25.1"
# vLLM's async scheduling overlaps autoregressive heads' (EAGLE/MTP) speculative path by default from 0.14.0;
# "non-EAGLE/MTP types" stay off (vllm#31998).
VLLM_ASYNC_SPEC_SINCE = "0.14.0"
# vLLM's default --gpu-memory-utilization: the share of each GPU for weights, activations and KV
# (vllm/config/cache.py, gpu_memory_utilization = 0.9). Also the default when no engine is named.
DEFAULT_RESERVE_FRACTION = 0.9

METRICS = (
    MetricRef(engine="vllm", name="vllm:spec_decode_num_drafts_total", meaning="verify steps (drafts) so far"),
    MetricRef(engine="vllm", name="vllm:spec_decode_num_draft_tokens_total", meaning="draft tokens proposed"),
    MetricRef(engine="vllm", name="vllm:spec_decode_num_accepted_tokens_total", meaning="draft tokens accepted"),
    MetricRef(engine="vllm", name='vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}',
              meaning="accepted tokens at draft position i"),
)
# The Prometheus counters ``measure`` reads (tools/measure/metrics.py), by what they count.
COUNTER_DRAFTS = "vllm:spec_decode_num_drafts_total"
COUNTER_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
COUNTER_ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
COUNTER_ACCEPTED_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
SERVER_READ = "Read the counters before and after each run and use the deltas (counters are cumulative)."


def _heterogeneous_vocab(inp: EngineConfigInput, cfg: dict[str, object]) -> str:
    """Set use_heterogeneous_vocab in ``cfg`` where the release has it; the note that says what to do."""
    if at_least(inp.engine_version, VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION):
        cfg["use_heterogeneous_vocab"] = True
        return ("use_heterogeneous_vocab: the draft's vocab_size differs from the verifier's, which vLLM refuses at "
                "launch without it (PR #38174); it supports greedy draft sampling only")
    return (f"vLLM {inp.engine_version} predates use_heterogeneous_vocab (PR #38174, seen in "
            f"{VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION}) and refuses a draft whose vocab_size differs: pad the draft's "
            "embedding and LM head to the verifier's vocab_size first (vllm#5203)")


def _method_options(inp: EngineConfigInput, key: str, cfg: dict[str, object], notes: list[str]) -> None:
    """The options one vLLM method key takes of its own (each cited where it is set)."""
    rec = method_record(inp.method)
    if key == "dspark":
        # DSpark's drafter samples its block (vLLM SpeculativeConfig.draft_sample_method, default "greedy"); the
        # DeepSeek-V4 and Kimi-K3 recipes (vllm-project/recipes@8959cf6) set "probabilistic".
        notes.append('DSpark options: draft_sample_method "greedy" (default) or "probabilistic" (the DeepSeek-V4 '
                     'and Kimi-K3 recipes), rejection_sample_method "standard" (default) or "block", '
                     'enable_adaptive_verification (dspark only); no "model" when the drafter ships in the '
                     'verifier checkpoint (DeepSeek-V4)')
    if rec.parallel_draft and key != inp.method:  # run as another vLLM method, drafting in parallel
        cfg["parallel_drafting"] = True  # vLLM >= 0.16.0, PR #32887
    if key == "draft_model":
        cfg["draft_tensor_parallel_size"] = inp.draft_tensor_parallel or inp.tensor_parallel
        if inp.heterogeneous_vocab:
            notes.append(_heterogeneous_vocab(inp, cfg))
    elif key in VLLM_EAGLE_KEYS and inp.tensor_parallel > 1:
        # A head runs in the target's own parallel config (V1's proposer builds its model from the target's
        # vllm_config; draft_tensor_parallel_size is only checked to be 1 or the target TP, vllm#31345): it is
        # sharded over the TP group, as the memory check counts it, so the config says the target TP.
        cfg["draft_tensor_parallel_size"] = inp.tensor_parallel
    if inp.tree_top_k > 1:
        # vLLM's only tree is a static speculative_token_tree (TREE_ATTN backend, experimental; PR #20401):
        # no top-k key, so the depth runs as a chain here.
        notes.append(f"vLLM has no top-k tree: the depth ({inp.num_draft_tokens}) runs as a chain; a static "
                     "speculative_token_tree needs --attention-backend TREE_ATTN (experimental)")
    if key == "ngram":
        cfg["prompt_lookup_min"] = inp.prompt_lookup_min
        cfg["prompt_lookup_max"] = inp.prompt_lookup_max
    if key == "suffix":
        cfg.update(suffix_decoding_max_tree_depth=24, suffix_decoding_max_spec_factor=1.0,
                   suffix_decoding_min_token_prob=0.1)
        notes.append("suffix decoding needs `pip install arctic-inference`; num_speculative_tokens is a maximum")


def _schedule(inp: EngineConfigInput, cfg: dict[str, object], notes: list[str]) -> None:
    ranges = inp.full_schedule()
    if ranges and at_least(inp.engine_version, VLLM_SCHEDULE_MIN_VERSION):
        cfg["num_speculative_tokens_per_batch_size"] = [list(r) for r in ranges]
        notes.append("num_speculative_tokens_per_batch_size (PR #32374) is keyed on all scheduled requests, "
                     "prefills included (issue #49548), and is turned off when data parallel > 1")
    elif ranges:
        if inp.disable_by_batch_size:
            cfg["disable_by_batch_size"] = inp.disable_by_batch_size
        notes.append(f"vLLM {inp.engine_version} predates the per-batch schedule "
                     f"(num_speculative_tokens_per_batch_size, >= {VLLM_SCHEDULE_MIN_VERSION}): "
                     + ("only disable_by_batch_size is emitted" if inp.disable_by_batch_size else "N is fixed"))
    if inp.adaptive:
        notes.append("vLLM has no online adaptive draft length (enable_adaptive_k is unmerged PR #47111); the "
                     "per-batch schedule is its adaptive mode")


def _commands(verifier: str, strategy: str, concurrency: int) -> list[str]:
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


def _speculative_json(words: list[str]) -> dict[str, Any] | None:
    for i, word in enumerate(words):
        text = None
        if word.startswith("--speculative-config="):
            text = word.split("=", 1)[1]
        elif word in ("--speculative-config", "--speculative_config") and i + 1 < len(words):
            text = words[i + 1]
        if text is not None:
            try:
                value = json.loads(text)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


class VllmEngine(EngineSpec):
    def emit(self, inp: EngineConfigInput, version: str) -> EngineConfig:
        cfg: dict[str, object] = {}
        notes: list[str] = []
        rec = method_record(inp.method)
        key = rec.engine_key("vllm") or inp.method  # vLLM's own method key (its "method" field)
        if rec.tree_is_its_gain:
            notes.append("vLLM has no EAGLE-2 dynamic tree: the EAGLE-1 head runs as method 'eagle' (chain); "
                         "use SGLang for the dynamic tree")
        notes += self.checkpoint(inp)[2]
        cfg["method"] = key
        if inp.draft_model and inp.draft_model != inp.verifier:  # a drafter inside the checkpoint is not named
            cfg["model"] = inp.draft_model
        cfg["num_speculative_tokens"] = inp.num_draft_tokens
        _method_options(inp, key, cfg, notes)
        _schedule(inp, cfg, notes)
        text = json.dumps(cfg, separators=(",", ":"))
        argv = [*self.plain_argv(inp)[0], "--speculative-config", text]
        return EngineConfig(engine=self.name, engine_version=version, format=self.format, config=text,
                            launch_command=shell_join(argv), argv=argv, notes=notes)

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        try:
            value = json.loads(config.config.strip())
        except ValueError:
            value = None
        if not isinstance(value, dict):
            try:
                value = _speculative_json(shlex.split(config.config)) or _speculative_json(
                    shlex.split(config.launch_command))
            except ValueError:
                return None
        if value is None:
            return None
        out = dict(value)
        out.update(key=value.get("method"), num_draft_tokens=value.get("num_speculative_tokens"),
                   draft_model=value.get("model"))
        if "num_speculative_tokens_per_batch_size" in value:
            out["schedule"] = [tuple(r) for r in value["num_speculative_tokens_per_batch_size"]]
        return out

    def plain_argv(self, inp: EngineConfigInput) -> tuple[list[str], list[str]]:
        model, quant, _ = self.checkpoint(inp)
        return ["vllm", "serve", model, "--tensor-parallel-size", str(inp.tensor_parallel), *quant,
                *self.context_args(inp)], []

    def serve_command(self, serve: ServeSpec, spec_args: list[str]) -> list[str]:
        return [serve.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", serve.model,
                "--served-model-name", serve.served_name, "--host", "127.0.0.1", "--port", str(serve.port),
                *serve.extra_args, *spec_args]

    def serve_spec_args(self, config: EngineConfig) -> list[str]:
        # Per-request figures ("detailed": accepted drafts per step) are what tune's per-position prediction reads.
        return ["--speculative-config", config.config, "--per-request-spec-decode-metrics", "detailed"]

    def overlap(self, version: str | None, method: str, method_rec: Any) -> Overlap:
        can = method_rec is not None and method_rec.autoregressive_head
        default = can and (version is None or version_key(version) >= version_key(VLLM_ASYNC_SPEC_SINCE))
        return Overlap(can, default, f"vLLM async scheduling with {method} speculation (default from "
                                     f"{VLLM_ASYNC_SPEC_SINCE}, vllm#31998)")

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        return memory_gib * DEFAULT_RESERVE_FRACTION, (f"vLLM gpu_memory_utilization {DEFAULT_RESERVE_FRACTION:g} "
                                                       "(vllm/config/cache.py default)")

    def measure_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int]) -> list[str]:
        return _commands(verifier, strategy, concurrency)


ENGINE = VllmEngine(
    name="vllm", label="vLLM", format="cli-json", harness="vllm", engine_harness=True, metrics=METRICS,
    metrics_port=8000, read_step=SERVER_READ, reservation=Reservation("gpu_memory_utilization"),
    under_load="turn speculation off above that batch size: vLLM `disable_by_batch_size` (early-2026) or a measured "
               "`num_speculative_tokens_per_batch_size` schedule (newer; vllm#49548 shows a badly set threshold "
               "collapses throughput, so derive it with `vllm bench sweep tune_speculative_k`)",
    schedule_form="num_speculative_tokens_per_batch_size", launches=True,
    release_years=((VLLM_ASYNC_SPEC_SINCE, 2026),),  # 0.14.0 (January 2026) turned async scheduling on
    # --max-model-len: without it vLLM sizes the KV for the model's max_position_embeddings and refuses to start
    # when that does not fit (vllm/config/model.py max_model_len). --quantization fp8 quantizes a BF16 checkpoint
    # at load time (vLLM docs features/quantization/fp8.md, "Online Dynamic Quantization").
    # V1's DraftModelProposer refuses a draft TP other than the target's (vllm/v1/spec_decode/draft_model.py
    # _raise_if_draft_tp_mismatch, 0.32.0; the key itself takes 1 or the target TP, vllm#31345).
    draft_tp_is_target=True, context_flag="--max-model-len", online_quantization=(("fp8", ("--quantization", "fp8")),),
    read_metrics=(COUNTER_ACCEPTED, COUNTER_DRAFT_TOKENS, COUNTER_DRAFTS), overlap_mode=True,
)

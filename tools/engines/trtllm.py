"""TensorRT-LLM: its ``speculative_config`` YAML, launch line, metric names, KV-pool reservation.

Option names: TensorRT-LLM docs/source/features/speculative-decoding.md @04c8822 and the LLM API reference
(ENGINES.md (b), docs/references/). Data first (a dict), serialised once with ``yaml.safe_dump``.
"""

from __future__ import annotations

from typing import Any

import yaml

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.engines.base import EngineSpec, Reservation, at_least, shell_join
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.methods import method_record
from specpick.tools.vocab import EAGLE_METHODS

# TensorRT-LLM draft_len_schedule / max_concurrency: earliest API reference seen is 1.3.0rc29 (PR #10860).
TRTLLM_SCHEDULE_MIN_VERSION = "1.3.0rc29"
# TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction: the KV cache takes 0.9 of the memory left free
# after weights and activations (tensorrt_llm/llmapi/llm_args.py, KvCacheConfig default 0.9).
TRTLLM_FREE_GPU_MEMORY_FRACTION = 0.9

METRICS = (
    MetricRef(engine="trtllm", name="acceptance length in trtllm-bench / iteration stats",
              meaning="tokens accepted per step; metric names like trtllm_spec_decode_acceptance_length appear "
                      "only in third-party docs: verify against your version before alerting on them"),
)


def _decoding_options(inp: EngineConfigInput, decoding: str, spec: dict[str, object], notes: list[str]) -> None:
    """The options one ``decoding_type`` takes of its own."""
    if decoding in ("Eagle", "Medusa"):
        notes.append("this method needs TensorRT-LLM's legacy TRT-engine backend (trtllm-build); the PyTorch "
                     "backend takes EAGLE-3, MTP, NGram, DraftTarget, PARD and DFlash")
    if decoding == "NGram":
        spec["max_matching_ngram_size"] = inp.prompt_lookup_max
    if decoding == "MTP":
        spec["num_nextn_predict_layers"] = 1
    if decoding == "DSpark":
        notes.append("DSparkDecodingConfig also takes block_size, markov_rank, markov_head_type, mask_token_id and "
                     "target_layer_ids (read from the drafter's config when omitted; API reference 1.3.0rc27)")
    if decoding in ("DFlash", "PARD"):
        notes.append("set mask_token_id" + (" and target_layer_ids" if decoding == "DFlash" else "")
                     + " from the drafter's config.json")
    if decoding == "Eagle3" and inp.tree_top_k > 1:
        total = inp.num_verify_tokens or min(inp.num_draft_tokens * inp.tree_top_k, 64)
        spec.update(use_dynamic_tree=True, dynamic_tree_max_topK=inp.tree_top_k, max_total_draft_tokens=total)
        notes.append("dynamic tree is not supported for sliding-window or MLA models (DeepSeek, gpt-oss)")


def _schedule(inp: EngineConfigInput, spec: dict[str, object], notes: list[str]) -> None:
    ranges = inp.full_schedule()
    if ranges and at_least(inp.engine_version, TRTLLM_SCHEDULE_MIN_VERSION):
        # Keys are upper bounds of batch-size ranges; above the largest key speculation is off.
        spec["draft_len_schedule"] = {end: k for _, end, k in ranges if k > 0}
        if inp.disable_by_batch_size:
            spec["max_concurrency"] = inp.disable_by_batch_size - 1
    elif ranges:
        notes.append(f"TensorRT-LLM {inp.engine_version} predates draft_len_schedule/max_concurrency "
                     f"(>= {TRTLLM_SCHEDULE_MIN_VERSION})")
    if inp.acceptance_threshold is not None:
        spec["acceptance_rate_threshold"] = inp.acceptance_threshold
        notes.append("acceptance_rate_threshold turns speculation off permanently once the rolling acceptance "
                     "drops below it (set acceptance_rate_window_size for the window)")


def write_config_yaml(text: str) -> str:
    """The shell lines that write ``text`` to config.yaml (a quoted here-document: nothing in it is expanded)."""
    return "cat > config.yaml <<'EOF'\n" + text.rstrip("\n") + "\nEOF"


class TrtllmEngine(EngineSpec):
    def emit(self, inp: EngineConfigInput, version: str) -> EngineConfig:
        notes: list[str] = self.checkpoint(inp)[2]
        decoding = method_record(inp.method).engine_names("trtllm")[0]
        spec: dict[str, object] = {"decoding_type": decoding, "max_draft_len": inp.num_draft_tokens}
        if inp.draft_model and inp.draft_model != inp.verifier:
            spec["speculative_model"] = inp.draft_model
        _decoding_options(inp, decoding, spec, notes)
        if decoding == "Lookahead":
            spec = {"decoding_type": "Lookahead", "max_window_size": 4, "max_ngram_size": 3,
                    "max_verification_set_size": 4}
        _schedule(inp, spec, notes)
        text = yaml.safe_dump({"speculative_config": spec}, sort_keys=False)
        argv = [*self.plain_argv(inp)[0], "--config", "config.yaml"]
        # The launch reads config.yaml: the line before it writes that file, so the command runs as printed.
        return EngineConfig(engine=self.name, engine_version=version, format=self.format, config=text,
                            launch_command=shell_join(argv), argv=argv, notes=notes,
                            setup_commands=[write_config_yaml(text)])

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        try:
            doc = yaml.safe_load(config.config)
        except yaml.YAMLError:
            return None
        if not isinstance(doc, dict):
            return None
        spec = doc.get("speculative_config", doc)
        if not isinstance(spec, dict):
            return None
        out = dict(spec)
        out.update(key=spec.get("decoding_type"), num_draft_tokens=spec.get("max_draft_len"),
                   draft_model=spec.get("speculative_model"), tree_top_k=spec.get("dynamic_tree_max_topK", 1))
        if isinstance(spec.get("draft_len_schedule"), dict):
            out["schedule_ends"] = dict(spec["draft_len_schedule"])
        return out

    def plain_argv(self, inp: EngineConfigInput) -> tuple[list[str], list[str]]:
        model, quant, _ = self.checkpoint(inp)
        return ["trtllm-serve", model, "--tp_size", str(inp.tensor_parallel), *quant, *self.context_args(inp)], []

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        f = TRTLLM_FREE_GPU_MEMORY_FRACTION
        return fixed_gib + f * max(memory_gib - fixed_gib, 0.0), (
            f"TensorRT-LLM free_gpu_memory_fraction {f:g} of the memory left after weights (KvCacheConfig default)")

    def measure_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int]) -> list[str]:
        return ["trtllm-bench --model {v} throughput --config config.yaml --dataset prompts.jsonl "
                "--concurrency {c}".format(v=verifier, c=concurrency)]


ENGINE = TrtllmEngine(
    name="trtllm", label="TensorRT-LLM", format="yaml", harness="trtllm", engine_harness=True, metrics=METRICS,
    metrics_port=8000, read_step="Read the counters before and after each run and use the deltas (counters are "
                                 "cumulative).",
    reservation=Reservation("free_gpu_memory_fraction", of_free=True),
    under_load="TensorRT-LLM: set `max_concurrency` (and a `draft_len_schedule`) in speculative_config (1.3.0rc29+, "
               "PR #10860)",
    schedule_form="draft_len_schedule", tree_methods=EAGLE_METHODS,
    # trtllm-serve --max_seq_len (its CLI, docs/source/commands/trtllm-serve); no load-time quantization in
    # trtllm-serve: a quantized checkpoint (ModelOpt) is loaded as it is.
    context_flag="--max_seq_len",
)

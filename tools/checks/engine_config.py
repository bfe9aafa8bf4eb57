"""Exact runtime configuration per engine: vLLM JSON, SGLang flags, TensorRT-LLM YAML, transformers kwargs.

Option names and their constraints come from the engines' own files as read
in late 2026 (``shared/reference/ENGINES.md``; versions recorded in
``tools/data/engine_support.csv`` and repeated in every emitted config, because
field names drift between releases).
"""

from __future__ import annotations

import json
import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.vocab import Engine, SEPARATE_REPO_METHODS, Strategy

ENGINE_LABEL = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "transformers": "HF transformers"}


class EngineConfig(BaseModel):
    """Exact runtime configuration for the chosen engine."""

    engine: Engine
    engine_version: str = Field(description="engine version the option names were read from")
    format: Literal["cli-json", "cli-flags", "yaml", "python-kwargs", "none"]
    config: str = Field(description="the option text itself: JSON, flags, YAML or kwargs")
    launch_command: str
    notes: list[str] = Field(default_factory=list)


class EngineConfigInput(BaseModel):
    """What to configure."""

    model_config = ConfigDict(extra="forbid")

    engine: Engine = Field(description="serving engine")
    method: Strategy = Field(description="speculative method ('none' for a plain launch)")
    verifier: str = Field(description="verifier repo id")
    draft_model: str | None = Field(None, description="draft model or head repo id (draft_model/eagle*/medusa)")
    num_draft_tokens: int = Field(3, description="draft length N (chain) or draft steps (tree depth)")
    tree_top_k: int = Field(1, description="tree branching per step (1 = chain)")
    num_verify_tokens: int | None = Field(None, description="tokens verified per cycle (SGLang draft-token budget)")
    tensor_parallel: int = Field(1, description="target tensor parallel size")
    draft_tensor_parallel: int | None = Field(None, description="draft TP: 1 or the target TP (vLLM)")
    prompt_lookup_min: int = Field(2, description="n-gram: shortest match to look up")
    prompt_lookup_max: int = Field(5, description="n-gram: longest match to look up")
    disable_by_batch_size: int | None = Field(None, description="vLLM: turn speculation off at this batch size")
    draft_len_schedule: list[tuple[int, int, int]] | None = Field(
        None, description="per-batch-size draft length: [start_batch, end_batch, K] ranges (K=0: off); TensorRT-LLM "
        "draft_len_schedule, vLLM num_speculative_tokens_per_batch_size (v0.23+)")

    @field_validator("num_draft_tokens", "tree_top_k", "tensor_parallel", "prompt_lookup_min", "prompt_lookup_max")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be at least 1")
        if v > 64:
            raise ValueError("is implausibly large (engines accept at most a few dozen); use 1-64")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "EngineConfigInput":
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ValueError("prompt_lookup_min must not exceed prompt_lookup_max (vLLM requires min <= max)")
        needs_model = self.method in SEPARATE_REPO_METHODS
        if needs_model and not self.draft_model:
            raise ValueError(f"method {self.method} needs --draft-model (the draft or head repo id)")
        if self.draft_tensor_parallel not in (None, 1, self.tensor_parallel):
            raise ValueError(
                f"draft tensor parallel must be 1 or the target TP ({self.tensor_parallel}) (vllm#31345)"
            )
        return self


def _version(engine: str) -> str:
    rows = [s for s in get_catalog().engine_support if s.engine == engine]
    return rows[0].engine_version if rows else "unknown"


def _require_support(engine: str, method: str) -> list[str]:
    if method == "none":
        return []
    row = get_catalog().support(engine, method)
    if row is None or row.support == "no":
        runs = sorted({s.engine for s in get_catalog().engine_support if s.method == method and s.support != "no"})
        alt = ", ".join(ENGINE_LABEL[e] for e in runs) or "no engine we track"
        reason = f" ({row.notes})" if row and row.notes else ""
        raise InputError(f"{ENGINE_LABEL[engine]} does not run {method}{reason}; engines that do: {alt}.")
    notes = [f"{ENGINE_LABEL[engine]} support for {method}: {row.support}; {row.notes}".rstrip("; ")]
    return notes if row.support == "partial" or row.notes else []


def _vllm(inp: EngineConfigInput) -> EngineConfig:
    cfg: dict[str, object] = {}
    notes: list[str] = []
    method = inp.method
    if method == "eagle2":
        # vLLM has no context-aware dynamic tree; EAGLE-1 weights run as method "eagle".
        method = "eagle"
        notes.append("vLLM has no EAGLE-2 dynamic tree: the EAGLE-1 head runs as method 'eagle' (chain); "
                     "use SGLang for the dynamic tree")
    cfg["method"] = method
    if inp.draft_model:
        cfg["model"] = inp.draft_model
    cfg["num_speculative_tokens"] = inp.num_draft_tokens
    if method == "draft_model":
        cfg["draft_tensor_parallel_size"] = inp.draft_tensor_parallel or inp.tensor_parallel
    elif method in ("eagle", "eagle3") and inp.tensor_parallel > 1:
        cfg["draft_tensor_parallel_size"] = inp.draft_tensor_parallel or 1
    if method == "ngram":
        cfg["prompt_lookup_min"] = inp.prompt_lookup_min
        cfg["prompt_lookup_max"] = inp.prompt_lookup_max
    if method == "suffix":
        cfg.update(suffix_decoding_max_tree_depth=24, suffix_decoding_max_spec_factor=1.0,
                   suffix_decoding_min_token_prob=0.1)
        notes.append("suffix decoding needs `pip install arctic-inference`; num_speculative_tokens is a maximum")
    if inp.disable_by_batch_size:
        cfg["disable_by_batch_size"] = max(2, inp.disable_by_batch_size)
        notes.append("disable_by_batch_size exists in early-2026 vLLM (f19b16d); newer versions use "
                     "num_speculative_tokens_per_batch_size [[start,end,k],...] instead")
    if inp.draft_len_schedule:
        # The tracked vLLM predates the key (added around v0.23-0.24, PR #32374): give it for newer builds.
        sched = json.dumps([list(r) for r in inp.draft_len_schedule], separators=(",", ":"))
        notes.append(f"on vLLM v0.23+ (PR #32374) add \"num_speculative_tokens_per_batch_size\":{sched} to the "
                     "speculative config (per-batch-size N from the model's batch sweep; K=0: off)")
    text = json.dumps(cfg, separators=(",", ":"))
    launch = f"vllm serve {inp.verifier} --tensor-parallel-size {inp.tensor_parallel} --speculative-config {shlex.quote(text)}"
    return EngineConfig(engine="vllm", engine_version=_version("vllm"), format="cli-json", config=text,
                        launch_command=launch, notes=notes)


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


def _sglang(inp: EngineConfigInput) -> EngineConfig:
    algo = {"draft_model": "STANDALONE", "eagle": "EAGLE", "eagle2": "EAGLE", "eagle3": "EAGLE3",
            "mtp": "NEXTN", "ngram": "NGRAM"}[inp.method]
    flags = ["--speculative-algorithm", algo]
    if inp.draft_model and inp.method != "mtp":
        flags += ["--speculative-draft-model-path", inp.draft_model]
    notes: list[str] = []
    if inp.method == "ngram":
        flags += ["--speculative-num-draft-tokens", str(inp.num_draft_tokens + 1),
                  "--speculative-ngram-min-match-window-size", str(inp.prompt_lookup_min),
                  "--speculative-ngram-max-match-window-size", str(max(inp.prompt_lookup_max, 12))]
        notes.append("SGLang NGRAM is CUDA-only and disables the overlap scheduler and mixed chunked prefill")
    else:
        steps, topk, draft_tokens = sglang_tree(inp.method, inp.num_draft_tokens, inp.tree_top_k,
                                                inp.num_verify_tokens)
        flags += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
                  "--speculative-num-draft-tokens", str(draft_tokens)]
        notes.append("set steps, topk and num-draft-tokens together (SGLang auto-picks all three only when "
                     "all are omitted)")
        if topk == 1:
            notes.append("topk=1 allows SGLANG_ENABLE_SPEC_V2=True (overlap scheduler)")
    text = " ".join(shlex.quote(f) for f in flags)
    launch = f"python -m sglang.launch_server --model-path {inp.verifier} --tp {inp.tensor_parallel} {text}"
    return EngineConfig(engine="sglang", engine_version=_version("sglang"), format="cli-flags", config=text,
                        launch_command=launch, notes=notes)


def _trtllm(inp: EngineConfigInput) -> EngineConfig:
    notes: list[str] = []
    if inp.method in ("eagle", "eagle2", "medusa"):
        notes.append("this method needs TensorRT-LLM's legacy TRT-engine backend (trtllm-build); the PyTorch "
                     "backend takes EAGLE-3, MTP, NGram and DraftTarget")
    decoding = {"draft_model": "DraftTarget", "eagle3": "Eagle3", "mtp": "MTP", "ngram": "NGram",
                "eagle": "Eagle", "eagle2": "Eagle", "medusa": "Medusa", "lookahead": "Lookahead"}[inp.method]
    lines = ["speculative_config:", f"  decoding_type: {decoding}", f"  max_draft_len: {inp.num_draft_tokens}"]
    if inp.draft_model:
        lines.append(f"  speculative_model: {inp.draft_model}")
    if inp.method == "ngram":
        lines.append(f"  max_matching_ngram_size: {inp.prompt_lookup_max}")
    if inp.method == "mtp":
        lines.append("  num_nextn_predict_layers: 1")
    if inp.method == "eagle3" and inp.tree_top_k > 1:
        total = inp.num_verify_tokens or min(inp.num_draft_tokens * inp.tree_top_k, 64)
        lines += ["  use_dynamic_tree: true", f"  dynamic_tree_max_topK: {inp.tree_top_k}",
                  f"  max_total_draft_tokens: {total}"]
        notes.append("dynamic tree is not supported for sliding-window or MLA models (DeepSeek, gpt-oss)")
    if inp.draft_len_schedule and inp.method in ("draft_model", "eagle3", "mtp", "ngram"):
        # Keys are batch-size upper bounds; above the largest key speculation is off (PR #10860), so a
        # trailing K=0 range is left implicit and an earlier one is written as K 0.
        ranges = list(inp.draft_len_schedule)
        while ranges and ranges[-1][2] == 0:
            ranges.pop()
        pairs = ", ".join(f"{end}: {k}" for _, end, k in ranges)
        lines.append(f"  draft_len_schedule: {{{pairs}}}")
    if inp.method == "lookahead":
        lines = ["speculative_config:", "  decoding_type: Lookahead", "  max_window_size: 4", "  max_ngram_size: 3",
                 "  max_verification_set_size: 4"]
    text = "\n".join(lines) + "\n"
    launch = f"trtllm-serve {inp.verifier} --tp_size {inp.tensor_parallel} --config config.yaml"
    return EngineConfig(engine="trtllm", engine_version=_version("trtllm"), format="yaml", config=text,
                        launch_command=launch, notes=notes)


def _transformers(inp: EngineConfigInput) -> EngineConfig:
    notes = ["assisted generation runs batch size 1 only ('assisted generate is only supported for batch_size = 1')"]
    if inp.method == "draft_model":
        text = (f"assistant_model=AutoModelForCausalLM.from_pretrained({inp.draft_model!r}), "
                f"num_assistant_tokens={inp.num_draft_tokens}, num_assistant_tokens_schedule='constant'")
    else:  # ngram
        text = f"prompt_lookup_num_tokens={inp.num_draft_tokens}, max_matching_ngram_size={min(inp.prompt_lookup_max, 3)}"
    launch = f"model.generate(**inputs, {text})"
    return EngineConfig(engine="transformers", engine_version=_version("transformers"), format="python-kwargs",
                        config=text, launch_command=launch, notes=notes)


def build_engine_config(inp: EngineConfigInput) -> EngineConfig:
    """Emit the configuration for ``inp.method`` on ``inp.engine``.

    Raises:
        InputError: the engine does not run the method, or the parameters break one of its constraints.
    """
    if inp.method == "none":
        launch = {
            "vllm": f"vllm serve {inp.verifier} --tensor-parallel-size {inp.tensor_parallel}",
            "sglang": f"python -m sglang.launch_server --model-path {inp.verifier} --tp {inp.tensor_parallel}",
            "trtllm": f"trtllm-serve {inp.verifier} --tp_size {inp.tensor_parallel}",
            "transformers": "model.generate(**inputs)",
        }[inp.engine]
        return EngineConfig(engine=inp.engine, engine_version=_version(inp.engine), format="none", config="",
                            launch_command=launch, notes=["speculative decoding off"])
    support_notes = _require_support(inp.engine, inp.method)
    emit = {"vllm": _vllm, "sglang": _sglang, "trtllm": _trtllm, "transformers": _transformers}[inp.engine]
    out = emit(inp)
    return out.model_copy(update={"notes": support_notes + out.notes})

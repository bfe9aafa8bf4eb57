"""One speculative setting, engine-agnostic, and the configuration an engine needs for it.

``EngineConfigInput`` is what the user (or the planner) asks for: a method, N, a tree, a per-batch
schedule, a disable threshold. ``EngineConfig`` is one engine's spelling of it. Ids are checked here,
before any emitter sees them: every id that reaches a launch command or a YAML file is a catalog alias
resolved to its repo id, or a string that passes the Hub's own repo-id rules
(``tools/hub/repo_ids.validate_repo_id``), so no shell metacharacter, newline or YAML syntax can get in.
The emitters quote and serialise anyway (``shlex.quote``, ``yaml.safe_dump``, ``json.dumps``).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specpick.tools.answer import EngineConfig, EngineTranslation  # noqa: F401  (re-export: declared in the contract)
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.hub.repo_ids import validate_repo_id
from specpick.tools.methods import method_record
from specpick.tools.validation import (
    HOST_BANDWIDTH_HELP, HOST_MEMORY_HELP, MAX_CONCURRENCY, ContextTokens, EngineVersion, HostBandwidthGbps,
    HostMemoryGib, OneLineText, Probability,
)
from specpick.tools.vocab import Engine, Quantization, SEPARATE_REPO_METHODS, Strategy
from specpick.tools.hub.gguf_ref import is_gguf_name

# The planner names a head that does not exist yet as "<your eagle3 head for org/model>"; the emitted
# command then carries that placeholder (quoted) for the user to replace.
_PLACEHOLDER_RE = re.compile(r"^<your [a-z0-9_]+ (?:head|draft) for ([A-Za-z0-9._/-]{1,96})>$")
_RANGE_RE = re.compile(r"^(\d+)-(\d+):(\d+)$")
# The last range of a per-batch schedule ends at the largest batch the server forms; the vLLM dynamic-SD
# doc example ends its schedule at 512 (docs/features/speculative_decoding/dynamic_speculative_decoding.md).
DEFAULT_MAX_BATCH_SIZE = 512


def resolve_repo_id(name: str, what: str) -> str:
    """A catalog alias -> its repo id; otherwise the name itself if it is a valid Hub repo id.

    Raises:
        InputError: the name is neither (shell metacharacters, spaces, newlines, '..').
    """
    cat = get_catalog()
    model = cat.find_model(name) if "\n" not in name else None
    if model is not None:
        return model.repo_id
    head = cat.head(name)
    if head is not None:
        return head.head_repo_id
    m = _PLACEHOLDER_RE.fullmatch(name)
    if m is not None:
        validate_repo_id(m.group(1))
        return name
    try:
        return validate_repo_id(name)
    except InputError as exc:  # pydantic reports a ValueError against the option's name
        raise ValueError(f"{exc} ({what} takes a Hub repo id or a catalog alias)") from None


class EngineConfigInput(BaseModel):
    """What to configure: one speculative setting, and the engine to spell it for."""

    model_config = ConfigDict(extra="forbid")

    engine: Engine = Field(description="serving engine")
    method: Strategy = Field(description="speculative method ('none' for a plain launch)")
    verifier: str = Field(description="verifier repo id or catalog alias, a GGUF build (owner/name-GGUF[:Q4_K_M] or a local .gguf path)")
    draft_model: str | None = Field(None, description="draft model or head repo id (draft_model/pard/eagle*/medusa/"
                                                      "dflash/peagle)")
    num_draft_tokens: int = Field(3, description="draft length N (chain) or draft steps (tree depth)")
    tree_top_k: int = Field(1, description="tree branching per step (1 = chain)")
    num_verify_tokens: Annotated[int, Field(ge=2, le=1024)] | None = Field(
        None, description="tokens verified per cycle (SGLang draft-token budget)")
    tensor_parallel: int = Field(1, description="GPUs serving the verifier (tensor parallel size; llama.cpp splits "
                                 "layers over them)", json_schema_extra={"cli": {"flags": ["--tensor-parallel",
                                                                                           "--gpus"]}})
    draft_tensor_parallel: int | None = Field(None, description="draft TP: 1 or the target TP (vLLM)")
    heterogeneous_vocab: bool = Field(False, description="draft_model: the draft's vocab_size differs from the "
                                      "verifier's (padded Qwen2.5 pairs: 151936 vs 152064 rows)")
    prompt_lookup_min: int = Field(2, description="n-gram: shortest match to look up")
    prompt_lookup_max: int = Field(5, description="n-gram: longest match to look up")
    disable_by_batch_size: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)] | None = Field(
        None, description="turn speculation off from this batch size on")
    batch_schedule: list[str] | None = Field(
        None, description="per-batch-size draft length as START-END:K ranges, e.g. 1-8:4 9-32:2 (K <= N)")
    acceptance_threshold: Probability | None = Field(
        None, description="TensorRT-LLM: turn speculation off for good once rolling acceptance falls below this")
    adaptive: bool = Field(False, description="let the engine adapt the draft length at run time where it can "
                                              "(SGLang --speculative-adaptive, transformers heuristic schedule)")
    max_batch_size: int = Field(DEFAULT_MAX_BATCH_SIZE, description="largest batch the server forms (end of the "
                                                                    "per-batch schedule)")
    engine_version: EngineVersion | None = Field(None, description="engine release to emit for, e.g. 0.16.0 "
                                                 "(default: the newest build we track)")
    all_engines: bool = Field(False, description="also print the same setting for every other engine")
    # llama.cpp only (tools/checks/llamacpp_emit.py): how llama-server loads the verifier and where its layers go.
    gguf_source: str | None = Field(None, description="the .gguf path or GGUF repo[:QUANT] the user named")
    # a closed set: an unknown type was written into the llama-quantize command as given (issue 39, cause 12)
    gguf_quant: Quantization | None = Field(None, description="GGUF file type to convert a safetensors verifier to")
    gpu: OneLineText | None = Field(None, description="GPU model, e.g. RTX-3060: llama.cpp's -ngl / --n-cpu-moe "
                                    "are then computed from the memory check (partial offload)")
    context_tokens: ContextTokens | None = Field(None, description="tokens per sequence the memory check sizes "
                                                 "the KV for (with --gpu); default 4096",
                                                 json_schema_extra={"cli": {"flags": ["--context",
                                                                                      "--context-tokens"]}})
    weight_format: Quantization | None = Field(None, description="the verifier's weight format the memory check weighed, "
                                      "when the named checkpoint is not in it (None: served as published)")
    host_memory_gib: HostMemoryGib | None = Field(None, description=HOST_MEMORY_HELP)
    host_bandwidth_gbps: HostBandwidthGbps | None = Field(None, description=HOST_BANDWIDTH_HELP)
    gpu_layers: Annotated[int, Field(ge=0, le=1024)] | None = Field(
        None, description="layers on the GPU when the weights do not fit (-ngl); None: all, or computed from --gpu")
    n_cpu_moe: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        None, description="MoE layers whose experts stay in system RAM (--n-cpu-moe)")
    parallel_slots: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)] | None = Field(
        None, description="llama-server --parallel (one slot per concurrent user)")

    @field_validator("num_draft_tokens", "tree_top_k", "tensor_parallel", "prompt_lookup_min", "prompt_lookup_max")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be at least 1")
        if v > 64:
            raise ValueError("is implausibly large (engines accept at most a few dozen); use 1-64")
        return v

    @field_validator("verifier")
    @classmethod
    def _verifier_id(cls, v: str) -> str:

        if is_gguf_name(v) and "\n" not in v:  # the resolver maps a GGUF build to its base model
            return cls._gguf_source(v) or v
        return resolve_repo_id(v, "--verifier")

    @field_validator("draft_model")
    @classmethod
    def _draft_id(cls, v: str | None) -> str | None:

        if v is not None and is_gguf_name(v) and "\n" not in v:  # a GGUF draft for llama.cpp (-md / -hfd)
            return cls._gguf_source(v)
        return None if v is None else resolve_repo_id(v, "--draft-model")

    @field_validator("gguf_source")
    @classmethod
    def _gguf_source(cls, v: str | None) -> str | None:
        if v is None:
            return None
        if len(v) > 4096 or any(ord(c) < 32 for c in v):
            raise ValueError("the GGUF path or repo must be one line of at most 4096 characters")
        if not v.lower().endswith(".gguf"):
            try:
                validate_repo_id(v.split(":", 1)[0])
            except InputError as exc:
                raise ValueError(str(exc)) from None
        return v

    @field_validator("batch_schedule")
    @classmethod
    def _schedule_text(cls, v: list[str] | None) -> list[str] | None:
        for item in v or []:
            m = _RANGE_RE.fullmatch(item)
            if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
                raise ValueError(f"batch schedule range {item[:40]!r} must look like 1-8:4 (START-END:K, START<=END)")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "EngineConfigInput":
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ValueError("prompt_lookup_min must not exceed prompt_lookup_max (vLLM requires min <= max)")
        if self.method in SEPARATE_REPO_METHODS and not self.draft_model and not method_record(
                self.method).drafter_fused_ok:
            raise ValueError(f"method {self.method} needs --draft-model (the draft or head repo id)")
        if self.draft_tensor_parallel not in (None, 1, self.tensor_parallel):
            allowed = "1" if self.tensor_parallel == 1 else f"1 or the target TP ({self.tensor_parallel})"
            raise ValueError(f"draft tensor parallel must be {allowed}; got {self.draft_tensor_parallel} (vllm#31345)")
        if self.disable_by_batch_size is not None and not 2 <= self.disable_by_batch_size <= self.max_batch_size:
            raise ValueError(f"disable_by_batch_size must be between 2 and max_batch_size ({self.max_batch_size})")
        ranges = self.schedule()
        for (_, end, k), (start, _, _) in zip(ranges, ranges[1:]):
            if start != end + 1:
                raise ValueError("batch schedule ranges must be contiguous and ascending (e.g. 1-8:4 9-32:2)")
        if any(k > self.num_draft_tokens for _, _, k in ranges):
            raise ValueError(f"every K of the batch schedule must be <= N ({self.num_draft_tokens}); vLLM rejects "
                             "larger values")
        if ranges and ranges[-1][1] > self.max_batch_size:
            raise ValueError(f"the batch schedule ends at {ranges[-1][1]}, above max_batch_size {self.max_batch_size}")
        if ranges and self.disable_by_batch_size and self.disable_by_batch_size <= ranges[-1][1]:
            raise ValueError("disable_by_batch_size must come after the last range of the batch schedule")
        return self

    def schedule(self) -> list[tuple[int, int, int]]:
        """The per-batch ranges (start, end, K), not including the 'off' range of ``disable_by_batch_size``."""
        out = []
        for item in self.batch_schedule or []:
            m = _RANGE_RE.fullmatch(item)
            assert m is not None  # validated above
            out.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
        return out

    def full_schedule(self) -> list[tuple[int, int, int]]:
        """Ranges covering 1..max_batch_size: the user's ranges (or N up to the threshold), then K=0 above it."""
        ranges = self.schedule()
        off = self.disable_by_batch_size
        if not ranges and off is None:
            return []
        if not ranges:
            ranges = [(1, off - 1, self.num_draft_tokens)]  # type: ignore[operator]
        last = ranges[-1][1]
        if off is not None:
            if off > last + 1:
                ranges.append((last + 1, off - 1, ranges[-1][2]))
            ranges.append((off, self.max_batch_size, 0))
        return ranges

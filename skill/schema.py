"""The planner's input model, and ``Recommendation``: the answer contract (``tools/answer.py``) with those inputs.

The output models live in ``tools/answer.py``, at the bottom of the layers, so the planner, the renderer, the
Claude conversation, the evals and ``specpick measure --expect`` read one declaration; they are re-exported here for
the callers that import them with ``PlannerInputs``. Markdown and JSON are renderings of ``Recommendation``
(``skill/render.py``). Field names are part of the public JSON contract: add fields, don't rename them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.answer import (  # noqa: F401  (re-exported: the contract's output models)
    SECTION_HEADINGS, Alternative, Answer, CompatCheck, EngineConfig, FallbackStep, Flag, FlagId, MeasuredSpeedup,
    MeasurementPlan, MetricRef, SpeedupEstimate, TreeParams, Trigger,
)
from specpick.tools.validation import (
    HOST_BANDWIDTH_HELP, HOST_MEMORY_HELP, HostBandwidthGbps, HostMemoryGib, OneLineText,
    Concurrency, ContextTokens, EngineVersion, GpuCount, KvDtypeName, ModelName, Probability, Tau, Temperature,
)
from specpick.tools.vocab import (
    Engine,
    LatencyTarget,
    Method,
    Quantization,
    Sampling,
    SpecOverlap,
    VerifierChange,
    WORKLOAD_MEANING,
    Workload,
)


def _cli(**kw: object) -> dict[str, object]:
    return {"cli": kw}


# Evidence inputs (tools/deploy/evidence.py checks N against the method; 100x is past any published speedup).
MeasuredDraftLength = Annotated[int, Field(ge=1, le=64)]
MeasuredSpeedupX = Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)]


class PlannerInputs(BaseModel):
    """The deployment being planned. Every field the user can leave out has a stated default.

    Ranges and finiteness come from the shared types in ``tools/validation.py``: the CLI, the Claude tool and
    MCP reject ``nan``, ``inf`` and out-of-range values the same way. Checks against model facts (tensor
    parallel vs heads, context vs position limit) run in ``planner/context.py``.
    """

    model_config = ConfigDict(extra="forbid")

    verifier: ModelName = Field(description="verifier model: catalog name (llama-3.1-70b) or Hub repo id"
                                ", a GGUF build (owner/name-GGUF[:Q4_K_M] or a local .gguf path)")
    base_model: ModelName | None = Field(None, description="the published model your verifier was derived from "
                                         "(fine-tune, RL, merge, LoRA): its facts are used, your id is the one "
                                         "served")
    verifier_change: VerifierChange = Field("none", description="how your verifier's weights differ from "
                                            "--base-model: none, full-finetune, rl, lora, merge")
    adapters: Annotated[int, Field(ge=1, le=10_000)] | None = Field(None, description="LoRA adapters served "
                                                                    "(with --verifier-change lora)")
    workload: Workload = Field(description="what the model generates: " + "; ".join(
        f"{k} = {v}" for k, v in WORKLOAD_MEANING.items()))
    sampling: Sampling = Field("greedy", description="decoding: greedy, low-temp (T<=0.7), high-temp, beam")
    temperature: Temperature | None = Field(None, description="sampling temperature, 0-2 (sets --sampling if that "
                                            "is not given)")
    gpu: OneLineText = Field("H100-SXM", description="GPU model, e.g. H100, A100-80GB, L40S, RTX 4090")
    gpus: GpuCount = Field(1, description="GPU count (tensor x pipeline parallel; the tensor-parallel size must "
                           "divide the model's attention and KV heads)")
    can_finetune: bool = Field(False, description="can train a speculative head (EAGLE/Medusa) for this verifier",
                               json_schema_extra=_cli(flags=["--can-finetune"], negative=["--no-finetune"]))
    second_model: bool = Field(True, description="can host a second (draft) model beside the verifier",
                               json_schema_extra=_cli(flags=["--second-model"], negative=["--no-second-model"]))
    latency: LatencyTarget = Field("interactive", description="interactive (per-request latency) or throughput-first")
    concurrency: Concurrency = Field(1, description="concurrent requests (batch) the deployment runs at")
    draft: ModelName | None = Field(None, description="candidate draft model (catalog name or repo id)")
    head: ModelName | None = Field(None, description="candidate speculative head repo (EAGLE/Medusa/MTP)")
    method: Method | None = Field(None, description="evaluate this method specifically instead of choosing one")
    engine: Engine = Field("vllm", description="serving engine")
    engine_version: EngineVersion | None = Field(None, description="engine release you run, e.g. 0.16.0 (default: "
                                                 "the newest build we track); methods newer than it are ruled out")
    spec_overlap: SpecOverlap = Field("auto", description="overlap (async) scheduling of the speculative path: auto = "
                                      "the release's default (vLLM >= 0.14 with EAGLE/MTP); on = you run it (SGLang: "
                                      "SGLANG_ENABLE_SPEC_V2=1, chains only); off = you turned it off")
    context_tokens: ContextTokens | None = Field(None, description="tokens in the KV cache per sequence while "
                                                 "decoding (at most the model's limit); default: typical for the "
                                                 "workload, capped by the model's limit",
                                                 json_schema_extra=_cli(flags=["--context", "--context-tokens"]))
    dp_attention: bool = Field(False, description="data-parallel attention (SGLang/vLLM): MLA KV split across ranks "
                               "by sequence instead of replicated on every rank (memory check)")
    quantization: Quantization | None = Field(None, description="verifier weight format (default: as published)")
    alpha: Probability | None = Field(None, description="measured per-token acceptance in (0, 1), overrides the "
                                      "prior")
    tau: Tau | None = Field(None, description="measured mean accepted length (incl. bonus, 1-65), overrides the "
                            "prior")
    measured_n: MeasuredDraftLength | None = Field(None, description="the draft length N your --tau/--alpha was "
                                                   "measured at (default: the method's starting N, stated)")
    measured_method: Method | None = Field(None, description="the method your --tau/--alpha (or speedup) was "
                                           "measured with: it applies to that drafter only")
    measured_speedup: MeasuredSpeedupX | None = Field(None, description="speedup you measured with that drafter "
                                                     "at --measured-n and --concurrency: recalibrates its cost side")
    from_measurement: OneLineText | None = Field(None, description="the JSON `specpick measure --json` or "
                                                     "`specpick tune --json` wrote: its acceptance, N, spread over "
                                                     "prompts and speedup (instead of --tau/--alpha)",
                                                     json_schema_extra=_cli(metavar="FILE"))
    samples: OneLineText | None = Field(None, description="your prompt/output pairs (JSONL: prompt, output): n-gram "
                                        "acceptance simulated on them with the verifier's tokenizer",
                                        json_schema_extra=_cli(metavar="FILE"))
    pipeline_parallel: GpuCount = Field(1, description="pipeline-parallel stages")
    lora: bool = Field(False, description="the deployment serves LoRA adapters")
    kv_cache_dtype: KvDtypeName | None = Field(None, description="KV-cache dtype (auto, fp8, or an exotic quantization)")
    live: bool = Field(False, description="read model facts from the Hugging Face Hub (else the embedded catalog)")
    host_memory_gib: HostMemoryGib | None = Field(None, description=HOST_MEMORY_HELP)
    host_bandwidth_gbps: HostBandwidthGbps | None = Field(None, description=HOST_BANDWIDTH_HELP)


# The contract of tools/answer.py with the planner's inputs it answers (the docstring is the JSON schema's description).
class Recommendation(Answer):
    """The five-section answer."""

    inputs: PlannerInputs

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
from specpick.tools.deployment_input import (  # noqa: F401  (MeasuredDraftLength, MeasuredSpeedupX: re-exported)
    Adapters, Alpha, BaseModelName, Change, ConcurrencyOption, Context, DpAttention, EngineOptional, EngineRelease,
    Gpu, Gpus, HostBandwidth, HostMemory, MeasuredDraftLength, MeasuredMethod, MeasuredN, MeasuredSpeedupOption,
    MeasuredSpeedupX, Overlap, SamplingTemperature, TauMeasured, Verifier, WeightFormat, WorkloadRequired,
)
from specpick.tools.validation import GpuCount, KvDtypeName, ModelName, OneLineText
from specpick.tools.vocab import HIGH_TEMPERATURE_ABOVE, LatencyTarget, Method, Sampling


def _cli(**kw: object) -> dict[str, object]:
    return {"cli": kw}


class PlannerInputs(BaseModel):
    """The deployment being planned. Every field the user can leave out has a stated default.

    Ranges and finiteness come from the shared types in ``tools/validation.py``: the CLI, the Claude tool and
    MCP reject ``nan``, ``inf`` and out-of-range values the same way. Checks against model facts (tensor
    parallel vs heads, context vs position limit) run in ``planner/context.py``.
    """

    model_config = ConfigDict(extra="forbid")

    verifier: Verifier
    base_model: BaseModelName
    verifier_change: Change
    adapters: Adapters
    workload: WorkloadRequired
    sampling: Sampling = Field("greedy", description=f"decoding: greedy, low-temp (T<={HIGH_TEMPERATURE_ABOVE:g}), "
                               "high-temp, beam")
    temperature: SamplingTemperature
    gpu: Gpu
    gpus: Gpus
    can_finetune: bool = Field(False, description="can train a speculative head (EAGLE/Medusa) for this verifier",
                               json_schema_extra=_cli(flags=["--can-finetune"], negative=["--no-finetune"]))
    second_model: bool = Field(True, description="can host a second (draft) model beside the verifier",
                               json_schema_extra=_cli(flags=["--second-model"], negative=["--no-second-model"]))
    latency: LatencyTarget = Field("interactive", description="interactive (per-request latency) or throughput-first")
    concurrency: ConcurrencyOption
    draft: ModelName | None = Field(None, description="candidate draft model (catalog name or repo id)")
    head: ModelName | None = Field(None, description="candidate speculative head repo (EAGLE/Medusa/MTP)")
    method: Method | None = Field(None, description="evaluate this method specifically instead of choosing one")
    engine: EngineOptional
    engine_version: EngineRelease
    spec_overlap: Overlap
    context_tokens: Context
    dp_attention: DpAttention
    quantization: WeightFormat
    alpha: Alpha
    tau: TauMeasured
    measured_n: MeasuredN
    measured_method: MeasuredMethod
    measured_speedup: MeasuredSpeedupOption
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
    host_memory_gib: HostMemory
    host_bandwidth_gbps: HostBandwidth


# The contract of tools/answer.py with the planner's inputs it answers (the docstring is the JSON schema's description).
class Recommendation(Answer):
    """The five-section answer."""

    inputs: PlannerInputs

"""The answer contract: one ``Recommendation`` model carries the five sections.

The deterministic planner produces it, the Claude conversation must end with
it (validated), the eval graders read it, and ``specpick measure --expect``
compares measurements against it. Markdown and JSON are renderings of it
(``skill/render.py``). Field names are part of the public JSON contract:
add fields, don't rename them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.calibration.evidence import MeasuredSpeedup
from specpick.tools.checks.engine_config import EngineConfig  # noqa: F401  (re-exported: part of the contract)
from specpick.tools.validation import (
    OneLineText,
    Concurrency, ContextTokens, EngineVersion, GpuCount, KvDtypeName, ModelName, Probability, Tau, Temperature,
)
from specpick.tools.vocab import (
    Engine,
    LatencyTarget,
    Method,
    Quantization,
    Sampling,
    SpecOverlap,
    Strategy,
    Verdict,
    VerifierChange,
    WORKLOAD_MEANING,
    Workload,
)

SECTION_HEADINGS: tuple[str, ...] = (
    "1. Recommendation",
    "2. Expected speedup",
    "3. Compatibility checks",
    "4. Fallback plan",
    "5. Measurement plan",
)

# Machine-readable identifiers of the "always flag" warnings. Evals check for
# these ids; the message text is free to improve.
FlagId = Literal[
    "tokenizer_mismatch",  # draft/verifier tokenizers differ: hard fail for draft models
    "vocab_padding",  # same tokenizer, config vocab_size padded differently
    "no_room_for_draft",  # draft weights + KV do not fit beside the verifier
    "batch_saturation",  # speculation stops paying above a concurrency
    "high_temperature",  # stochastic sampling lowers acceptance
    "beam_search",  # engines do not combine speculation with beam search
    "eagle_needs_internals",  # EAGLE/MTP read verifier hidden states: needs vLLM/SGLang/TRT-LLM support
    "medusa_data_cost",  # Medusa needs a fine-tune on the verifier's own outputs
    "head_for_other_verifier",  # a published head was trained for a different verifier
    "verifier_modified",  # the verifier is a fine-tune / RL / merge / LoRA of the model the head was trained for
    "no_published_head",  # the method needs a head and none is published for this verifier
    "pipeline_parallel",  # speculation + pipeline parallelism fails in vLLM / TRT-LLM
    "lora",  # speculation + LoRA serving is unsupported
    "quantized_verifier_bf16_head",  # head trained on BF16 verifier, verifier served quantized
    "small_verifier",  # verifier too small for a separate draft to pay (vLLM #15025)
    "low_overlap_ngram",  # n-gram drafting on output that does not copy its input (vLLM #8439)
    "large_k_high_load",  # large draft length under load halves throughput (vLLM #6494, #21278)
    "ngram_tool_calls",  # n-gram with prompt_lookup_min small corrupts tool calls (vLLM #40875)
    "prefix_cache_eagle",  # EAGLE/MTP drop the last prefix-cache block (vLLM #38182)
    "exotic_kv_quant",  # exotic KV-cache quantization + speculation loops (vLLM #40831)
    "draft_tp",  # draft_tensor_parallel_size must be 1 or the target TP (vLLM #31345)
    "acceptance_drifts",  # published acceptance not reproduced on current engine versions (vLLM #26191)
    "concurrency_acceptance",  # acceptance measured at bs=1 does not carry to high concurrency
    "transformers_batch1",  # HF assisted generation is batch-size-1 only
    "transformers_padded_vocab",  # HF universal assisted decoding crashes on padded vocab (transformers #45307)
    "medusa_engine_support",  # Medusa is not in SGLang; TRT-LLM Medusa is TRT-engine-only
    "lookahead_engine_support",  # lookahead only in TRT-LLM's TRT-engine backend
    "suffix_needs_plugin",  # vLLM suffix decoding needs arctic-inference installed
    "mtp_not_available",  # MTP asked for on a model without MTP layers
    "structured_high_acceptance",  # structured output accepts well: push N up
    "mla_dynamic_tree",  # TRT-LLM dynamic tree does not support MLA / SWA models
    "gated_model",  # verifier or draft is gated on the Hub
    "long_context",  # long contexts keep decode memory-bound longer: gains hold at higher batch
    "moe_verification",  # MoE verification touches more experts than one-token decode
    "vram_tight",  # fits, but with little KV headroom
    "verifier_does_not_fit",  # verifier alone does not fit the GPUs given
    "engine_breaks_with",  # the method breaks with a feature this deployment uses, on this engine version
]


class Flag(BaseModel):
    """One "always flag" warning raised for this deployment."""

    id: FlagId
    severity: Literal["info", "warn", "fail"]
    message: str
    source: str = Field(description="where the rule comes from: seed rule, paper, engine doc, issue")


class TreeParams(BaseModel):
    """Draft-tree shape for tree methods (EAGLE-2/3, Medusa)."""

    depth: int = Field(description="draft steps per cycle (SGLang --speculative-num-steps)")
    top_k: int = Field(description="branching per step (SGLang --speculative-eagle-topk)")
    num_verify_tokens: int = Field(description="tokens verified per cycle (SGLang --speculative-num-draft-tokens)")


class SpeedupEstimate(BaseModel):
    """Expected speedup with its assumptions stated."""

    value: float = Field(description="point estimate, x over plain decoding at the same batch")
    low: float
    high: float
    alpha: float | None = Field(None, description="per-token acceptance assumed (chain methods)")
    tau: float = Field(description="mean accepted tokens per verify cycle, bonus token included")
    acceptance_source: str = Field(description="where alpha/tau came from: prior rows, user input, measurement")
    cost_ratio: float = Field(description="c: one draft step relative to one verifier decode step")
    cycle_cost: float = Field(description="k: one draft+verify cycle relative to one verifier decode step")
    batch: int = Field(description="concurrency the estimate holds for")
    break_even_concurrency: int | None = Field(
        None, description="concurrency above which speculation stops paying (None: pays at every batch swept)"
    )
    engine_overhead: float = Field(description="per-cycle runtime overhead factor used for this engine")
    assumptions: list[str] = Field(default_factory=list)
    measured_method: str | None = Field(None, description="the method the measured rows are for (the choice, or "
                                        "with speculation off the option that was turned off)")
    measured: list[MeasuredSpeedup] = Field(
        default_factory=list, description="engine rows measured on this verifier with that method: other hardware, "
        "releases and loads, shown as evidence beside the estimate, not as this deployment's figure")


class CompatCheck(BaseModel):
    """One named compatibility check with its verdict."""

    name: Literal[
        "tokenizer",
        "vocab_padding",
        "head_match",
        "vram_fit",
        "runtime_support",
        "kv_rollback",
        "known_issues",
        "sampling",
        "parallelism",
    ]
    verdict: Verdict
    reason: str
    source: str = ""


class Trigger(BaseModel):
    """A measurable condition: ``metric op value`` (e.g. alpha < 0.6)."""

    metric: Literal["alpha", "tau", "speedup", "concurrency", "tpot_ms_p50", "ttft_ms_p50", "throughput_ratio"]
    op: Literal["<", "<=", ">", ">="]
    value: float


class FallbackStep(BaseModel):
    """What to do when a measured figure crosses a threshold."""

    trigger: Trigger | None = Field(None, description="None: an unconditional next step")
    condition: str = Field(description="the trigger in words")
    action: str
    next_strategy: Strategy | None = None
    next_num_draft_tokens: int | None = None


class MetricRef(BaseModel):
    """An engine metric and how to turn it into alpha / tau."""

    engine: Engine
    name: str
    meaning: str


class MeasurementPlan(BaseModel):
    """How to measure alpha, tau and speedup on a representative sample."""

    sample: str
    definitions: list[str]
    metrics: list[MetricRef]
    commands: list[str]
    steps: list[str]


class Alternative(BaseModel):
    """A strategy considered and not chosen."""

    strategy: Strategy
    speedup: float | None = None
    reason: str


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

    verifier: ModelName = Field(description="verifier model: catalog name (llama-3.1-70b) or Hub repo id")
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


class Recommendation(BaseModel):
    """The five-section answer."""

    # 1. Recommendation
    strategy: Strategy
    strategy_label: str = Field(description='human label, e.g. "EAGLE-3"')
    num_draft_tokens: int | None = Field(None, description="draft length N (chain) or draft steps (tree)")
    tree: TreeParams | None = None
    draft_model: str | None = Field(None, description="draft model or head repo id, if any")
    engine: Engine
    engine_config: EngineConfig
    rationale: list[str]
    # 2. Expected speedup
    expected_speedup: SpeedupEstimate
    # 3. Compatibility checks
    compatibility: list[CompatCheck]
    flags: list[Flag] = Field(default_factory=list)
    # 4. Fallback plan
    fallback: list[FallbackStep]
    # 5. Measurement plan
    measurement_plan: MeasurementPlan
    # Context
    inputs: PlannerInputs
    defaults_used: list[str] = Field(default_factory=list, description="inputs that took a stated default")
    alternatives: list[Alternative] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    facts_source: str = Field("catalog", description="catalog, hub, hub-cache: where model facts came from")

    def flag_ids(self) -> set[str]:
        return {f.id for f in self.flags}

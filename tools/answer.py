"""The answer contract: the five sections every surface produces and reads.

The planner builds it, the Claude conversation must end with it (validated), the renderer turns it into markdown,
the eval graders read it, and ``specpick measure --expect`` checks a measurement against a saved one. It sits at
the bottom of the layers (it imports only the vocabulary), so every one of them imports this one module;
``skill/schema.py`` adds the planner's input model (``Recommendation.inputs``). Field names are part of the public
JSON contract: add fields (with defaults), don't rename them.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.vocab import Engine, Strategy, Verdict

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
    "head_context_exceeded",  # the deployment's context is past the length the head was trained at
    "head_superseded",  # the head's publisher recommends a newer head for the same verifier
    "no_published_head",  # the method needs a head and none is published for this verifier
    "pipeline_parallel",  # speculation + pipeline parallelism fails in vLLM / TRT-LLM
    "lora",  # speculation + LoRA serving is unsupported
    "quantized_verifier_bf16_head",  # head trained on BF16 verifier, verifier served quantized
    "bf16_verifier_quantized_head",  # head trained on a quantized build (-FP8), verifier served in BF16
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


class MeasuredSpeedup(BaseModel):
    """One engine row measured on the verifier with the method, as its source states it."""

    row_id: str = Field(description="the row's id in tools/data/engine_measurements.csv ({source_id}/{n})")
    speedup: float = Field(description="measured speedup over plain decoding")
    engine: str
    engine_version: str
    hardware: str = Field(description="hardware cell as the source states it")
    batch: str = Field(description="batch / concurrency cell as the source states it")
    concurrency: int | None = Field(None, description="the batch / concurrency the row was measured at, when stated")
    config: str = Field(description="draft shape cell as the source states it")
    draft: str = Field(description="the head or draft model the row measured")
    tau: float | None = Field(None, description="measured mean accepted tokens per verify step, when stated")
    source: str


class EngineConfig(BaseModel):
    """Exact runtime configuration for one engine."""

    engine: Engine
    engine_version: str = Field(description="engine version the option names were read from")
    format: Literal["cli-json", "cli-flags", "yaml", "python-kwargs", "none"]
    config: str = Field(description="the option text itself: JSON, flags, YAML or kwargs")
    launch_command: str
    argv: list[str] = Field(default_factory=list, description="the launch command as the argument vector the "
                                                              "shell passes on (empty for Python kwargs)")
    notes: list[str] = Field(default_factory=list)
    setup_commands: list[str] = Field(default_factory=list, description="shell lines to run before the launch "
                                                                        "(llama.cpp: convert safetensors to GGUF)")
    translations: list["EngineTranslation"] = Field(
        default_factory=list, description="the same setting for the other engines (empty unless asked for)")


class EngineTranslation(BaseModel):
    """The same speculative setting on another engine, or why that engine cannot run it."""

    engine: Engine
    runs: bool
    reason: str = Field("", description="why not, when the engine cannot run the setting")
    config: EngineConfig | None = None


EngineConfig.model_rebuild()


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
    outside_domain: list[str] = Field(default_factory=list, description="inputs outside the rows behind the model "
                                      "(architecture features the catalog marks not modelled); the range is widened "
                                      "for them and the answer measures first")
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


TriggerMetric = Literal["alpha", "tau", "speedup", "concurrency", "tpot_ms_p50", "ttft_ms_p50", "throughput_ratio"]
TRIGGER_METRICS: tuple[str, ...] = get_args(TriggerMetric)


class Trigger(BaseModel):
    """A measurable condition: ``metric op value`` (e.g. alpha < 0.6)."""

    metric: TriggerMetric
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


class AnswerInputs(BaseModel):
    """The deployment an answer was planned for, as readers below the planner use it (verifier, workload,
    concurrency); the rest of the planner's inputs are kept as given."""

    model_config = ConfigDict(extra="allow")

    verifier: str | None = None
    workload: str | None = None
    concurrency: int | None = None


class Answer(BaseModel):
    """The five-section answer (``skill.schema.Recommendation`` narrows ``inputs`` to the planner's input model)."""

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
    inputs: AnswerInputs
    defaults_used: list[str] = Field(default_factory=list, description="inputs that took a stated default")
    alternatives: list[Alternative] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    facts_source: str = Field("catalog", description="catalog, hub, hub-cache: where model facts came from")

    def flag_ids(self) -> set[str]:
        return {f.id for f in self.flags}

"""Closed vocabularies shared by every module (methods, workloads, engines, ...).

Kept in one place so the CLI choices, the JSON schemas given to Claude and MCP,
the planner and the eval cases cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BeforeValidator

from specpick.tools.engines.registry import names as engine_names
from specpick.tools.methods import METHOD_NAMES, REGISTRY, method_record, methods_where

# The methods and their families are derived from the method registry (tools/methods.py), their one home.
Method = Literal[METHOD_NAMES]  # type: ignore[valid-type]
Strategy = Literal[(*METHOD_NAMES, "none")]  # type: ignore[valid-type]
METHODS: tuple[str, ...] = get_args(Method)
STRATEGIES: tuple[str, ...] = get_args(Strategy)

# Named views of the registry kept for their many readers (each is one attribute test on the records).
# EAGLE heads (one decoder layer on the verifier's hidden states; EAGLE-2 is EAGLE-1 weights + dynamic tree).
EAGLE_METHODS: frozenset[str] = methods_where(autoregressive_head=True, loads="head_repo")
# The catalog head kinds those heads ship as (a head config's kind; EAGLE-2 loads EAGLE-1 heads).
EAGLE_HEAD_KINDS: frozenset[str] = frozenset(method_record(m).head_kind or m for m in EAGLE_METHODS)
# Parallel drafters: one draft forward proposes all N tokens, so their draft cost barely grows with N.
PARALLEL_DRAFT_METHODS: frozenset[str] = methods_where(parallel_draft=True)
# Drafters that read this verifier's hidden states, in a repository of their own (PARD is not: one PARD draft
# serves a model family).
VERIFIER_BOUND_DRAFTERS: frozenset[str] = methods_where(loads="drafter_repo")
# Methods that need weights trained against this exact verifier (heads, or the model's own MTP layers).
TRAINED_HEAD_METHODS: frozenset[str] = methods_where(verifier_bound=True)
# Heads loaded from a separate repository that draft a tree (MTP layers ship inside the verifier).
TREE_HEAD_METHODS: frozenset[str] = methods_where(tree_head=True)
# Draft models: a separate small LM with its own tokenizer check (PARD is one, drafting in parallel).
DRAFT_MODEL_METHODS: frozenset[str] = methods_where(loads="draft_lm")
# Methods whose engine configuration names a second repository (a draft model or a head).
SEPARATE_REPO_METHODS: frozenset[str] = methods_where(separate_repo=True)
# Methods with weights of their own, whose acceptance describes the verifier and the workload.
MODEL_BASED_METHODS: frozenset[str] = methods_where(model_based=True)
# Methods that draft from text already in the context (no extra weights at all).
MODEL_FREE_METHODS: frozenset[str] = methods_where(loads="nothing")
# Copy-based drafting: acceptance is about how much of the output repeats the input.
COPY_METHODS: frozenset[str] = methods_where(copy_based=True)
# Methods whose published acceptance is a tau at the source's own configuration (no per-token alpha).
MEASURED_TAU_METHODS: frozenset[str] = methods_where(measured_tau=True)
# Methods whose drafts form a tree verified in one pass; they are modelled with mean accepted length tau and
# per-cycle cost k (speedup = tau / k). Lookahead verifies several n-gram candidates per step (a tree to the model).
TREE_METHODS: frozenset[str] = methods_where(tree=True)
# Coarse family of a method, for priors that are shared within a family (temperature effect).
METHOD_FAMILY: dict[str, str] = {r.name: r.family for r in REGISTRY}

Workload = Literal[
    "chat", "code", "math", "summarization", "rag", "qa", "doc-qa", "translation", "structured", "creative",
    "agentic", "code-edit", "doc-edit", "agent-loop",
]
WORKLOADS: tuple[str, ...] = get_args(Workload)
# Copy-heavy work: the answer rewrites its input with small changes, so a copy drafter's acceptance comes in long
# runs on the copied spans and near zero at the edits (issue 26). Their rows form their own reported calibration
# group, never a gated one (tools/model/copy_heavy.py).
COPY_HEAVY_WORKLOADS: frozenset[str] = frozenset({"code-edit", "doc-edit", "agent-loop"})
# Workloads whose output copies long spans of the input: n-gram / suffix drafting pays there.
# "qa" is closed-book question answering (answers from the model's own knowledge: little to copy); "doc-qa" is
# question answering over a document the user supplies in the prompt, which copies spans of it like RAG. A third-
# party benchmark measured EAGLE-2 1.2-2x faster than n-gram on closed-book QA, so "qa" is not input-grounded.
INPUT_GROUNDED_WORKLOADS: frozenset[str] = frozenset({"summarization", "rag", "doc-qa", "agentic", "structured", "code",
                                                     *COPY_HEAVY_WORKLOADS})
# What each workload means, for help texts and the skill (one home, so every surface says the same).
WORKLOAD_MEANING: dict[str, str] = {
    "chat": "open-ended assistant chat", "code": "code generation and editing", "math": "math and reasoning",
    "summarization": "summaries of a supplied text", "rag": "answers from retrieved passages in the prompt",
    "qa": "closed-book question answering (from the model's own knowledge)",
    "doc-qa": "question answering over a document supplied in the prompt",
    "translation": "translation", "structured": "JSON / schema-constrained output",
    "creative": "creative writing", "agentic": "tool calls and multi-step agent traffic",
    "code-edit": "whole-file code edits: the answer rewrites the supplied code with small changes",
    "doc-edit": "document editing: the answer rewrites the supplied text with small changes",
    "agent-loop": "agent loops that re-read tool output and earlier turns and repeat them in the answer",
}

# Who runs a method: its own authors (a paper's own harness and tuning) or a third party. A user is a third party;
# calibration grades the papers' own rows as the authors' runs (tools/catalog/authorship.py).
Runner = Literal["authors", "third_party"]

Sampling = Literal["greedy", "low-temp", "high-temp", "beam"]
SAMPLINGS: tuple[str, ...] = get_args(Sampling)

# Architecture features a catalog row marks as not modelled (models.csv ``unmodelled_features``): the step-time and
# parameter arithmetic treat those layers as attention + gated MLP/MoE, so an estimate for such a verifier lies outside
# the model's applicability domain (tools/model/intervals.py widens its range, the planner measures first).
UnmodelledFeature = Literal[
    "mamba2",  # Mamba-2 state-space layers (Nemotron-H, Nemotron-3)
    "squared_relu_mlp",  # non-gated squared-ReLU MLP layers
    "squared_relu_experts",  # non-gated squared-ReLU routed experts
    "latent_moe",  # routed experts in a latent space narrower than the hidden size (Nemotron-3 Super/Ultra, Kimi-K3)
    "kimi_delta_attention",  # Kimi Delta Attention (linear) projections
    "attention_residuals",  # attention residual connections across layers (Kimi-K3)
    "head_wise_attention_gate",  # a per-head attention gate projection (g_proj; Step-3.7)
]
UNMODELLED_FEATURES: tuple[str, ...] = get_args(UnmodelledFeature)

# The engines are the registry's (tools/engines/registry.py): built-in ones and any registered before this import.
EngineName = Literal[engine_names()]  # type: ignore[valid-type]
ENGINES: tuple[str, ...] = get_args(EngineName)
# Runtimes users ask about that the picker does not model. MLX: 25 public rows (11 threads, Apple M1 Pro to M5 Max)
# spread 0.64-1.67x by runtime for like setups, too few and too spread per model for a cost model
# (docs/pending-data/LLAMACPP-COMMUNITY-2026.md, "MLX").
UNCOVERED_ENGINES: dict[str, str] = {
    name: ("MLX (mlx-lm, LM Studio's MLX runtime) is not covered: its 25 public speculative-decoding measurements "
           "vary 0.64-1.67x by runtime for like setups, too spread to model")
    for name in ("mlx", "mlx-lm", "mlx_lm", "mlxlm", "lmstudio-mlx", "lm-studio-mlx")}


def check_engine(value: object) -> object:
    """Refuse an engine the picker does not model with what it covers (other values go to the Literal's check)."""
    if isinstance(value, str) and value.strip().lower() in UNCOVERED_ENGINES:
        raise ValueError(f"{UNCOVERED_ENGINES[value.strip().lower()]}; covered engines: {', '.join(ENGINES)} "
                         "(llama.cpp for GGUF builds on Apple, consumer and workstation hardware)")
    return value


Engine = Annotated[EngineName, BeforeValidator(check_engine)]
# Overlap (async) scheduling of the speculative path: the engine release's default, or what the user runs
# (tools/model/overlap.py).
SpecOverlap = Literal["auto", "on", "off"]

# Deployment features that break a method on some engine version (engine_support.csv ``breaks_with``).
BreakTag = Literal["pipeline_parallel", "lora", "structured_output", "dp_attention", "overlap_schedule",
                   "quantized_mtp", "sliding_window", "hybrid_attention", "beam_search", "parallel_slots"]
BREAK_TAGS: tuple[str, ...] = get_args(BreakTag)

# Weight formats: the serving engines' checkpoint formats, then llama.cpp's GGUF file types (the `llama-quantize` names,
# lower case; `--quantization Q4_K_M` is accepted in any case). Bits per weight of a GGUF file type are the whole-file
# average of its tensor mix (k-quant files keep the output and some attention/FFN tensors at a higher type), as
# measured on Llama-3.1-8B in ggml-org/llama.cpp tools/quantize/README.md @311c2c9 (bits/weight column); types that
# table leaves out take their ggml block size (ggml/src/ggml-common.h @01243c5: Q4_0 = 2 + 16 bytes per 32 weights =
# 4.5 bits, Q4_1 = 5.0, Q5_0 = 5.5, Q5_1 = 6.0), and Q3_K_M the README's earlier Llama 2 7B table (3.91 bits).
# A larger model averages slightly less than the 8B (its fixed-precision output tensor is a smaller share).
GGUF_BITS_PER_WEIGHT: dict[str, float] = {
    "iq1_s": 2.0042, "iq1_m": 2.1460, "iq2_xxs": 2.3824, "iq2_xs": 2.5882, "iq2_s": 2.7403, "iq2_m": 2.9294,
    "iq3_xxs": 3.2548, "iq3_xs": 3.4977, "iq3_s": 3.6606, "iq3_m": 3.7628, "iq4_xs": 4.4597, "iq4_nl": 4.6818,
    "q2_k_s": 2.9697, "q2_k": 3.1593, "q3_k_s": 3.6429, "q3_k_m": 3.91, "q3_k_l": 4.2979,
    "q4_0": 4.5, "q4_1": 5.0, "q4_k_s": 4.6672, "q4_k_m": 4.8944,
    "q5_0": 5.5, "q5_1": 6.0, "q5_k_s": 5.5704, "q5_k_m": 5.7036, "q6_k": 6.5633, "q8_0": 8.5008,
}
GGUF_QUANTIZATIONS: tuple[str, ...] = tuple(GGUF_BITS_PER_WEIGHT)
# How GGUF and llama.cpp write the 16-bit and MXFP4 files (F16, BF16, MXFP4_MOE) -> our names.
_QUANT_SPELLINGS: dict[str, str] = {"f16": "fp16", "mxfp4_moe": "mxfp4"}


def normalize_quantization(value: object) -> object:
    """``Q4_K_M`` -> ``q4_k_m``, ``F16`` -> ``fp16``: the names llama.cpp prints, in any case (other values pass
    through to the Literal's own check)."""
    if not isinstance(value, str):
        return value
    low = value.strip().lower()
    return _QUANT_SPELLINGS.get(low, low)


QuantizationName = Literal[  # type: ignore[valid-type]
    "bf16", "fp16", "fp8", "int8", "int4", "mxfp4", "nvfp4", *GGUF_QUANTIZATIONS]
Quantization = Annotated[QuantizationName, BeforeValidator(normalize_quantization)]
QUANTIZATIONS: tuple[str, ...] = get_args(QuantizationName)
# Bytes per weight, including the usual group-scale overhead for 4-bit formats
# (group size 128 with an fp16 scale adds 16/128 bit = 0.125 bit per weight;
# MXFP4 uses an 8-bit scale per 32 values = 0.25 bit, as ggml's block_mxfp4: 1 + 16 bytes per 32;
# NVFP4 one FP8 E4M3 scale per 16 FP4 E2M1 values = 0.5 bit, "8 packed FP4 bytes plus one FP8 scale byte, or 9 bytes"
# per 16 values, NVIDIA cuTile tutorial 11 "Inference with NVFP4/MXFP8",
# https://nvidia.github.io/cuda-rust/cutile/latest/tutorials/11-nvfp4-inference.html; its per-tensor FP32 scale is
# 4 bytes per tensor, left out).
BYTES_PER_PARAM: dict[str, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 4.125 / 8,
    "mxfp4": 4.25 / 8,
    "nvfp4": 4.5 / 8,
    **{name: bits / 8 for name, bits in GGUF_BITS_PER_WEIGHT.items()},
}

LatencyTarget = Literal["interactive", "throughput"]
Verdict = Literal["pass", "warn", "fail", "info"]


# The one home of the low-temp / high-temp cut: sampling above it is "high-temp" (the planner's N rule and flag, the
# evals' flag triggers and the priors all read it; source in sampling_from_temperature's docstring).
HIGH_TEMPERATURE_ABOVE = 0.7


def sampling_from_temperature(temperature: float) -> Sampling:
    """Map a sampling temperature to the coarse sampling class used for priors.

    The cut points follow the published measurements we have: papers report
    T=0 (greedy) and T=1 (high); T<=0.7 behaves close to greedy for acceptance
    (REST README: 2.36x greedy vs 2.12x at T=0.8 on HumanEval).
    """
    if temperature <= 0.0:
        return "greedy"
    if temperature <= HIGH_TEMPERATURE_ABOVE:
        return "low-temp"
    return "high-temp"

# How a served verifier's weights differ from the published model its head was trained on (``--verifier-change``):
# none, a full fine-tune, RL training, LoRA adapters, or a weight merge.
VerifierChange = Literal["none", "full-finetune", "rl", "lora", "merge"]
VERIFIER_CHANGES: tuple[str, ...] = get_args(VerifierChange)

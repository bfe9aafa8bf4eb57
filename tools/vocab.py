"""Closed vocabularies shared by every module (methods, workloads, engines, ...).

Kept in one place so the CLI choices, the JSON schemas given to Claude and MCP,
the planner and the eval cases cannot drift apart.
"""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal[
    "draft_model",  # a separate, smaller LLM drafts tokens (Leviathan et al. 2023, Chen et al. 2023)
    "eagle",  # EAGLE-1 head: one decoder layer on the verifier's last hidden state, static tree
    "eagle2",  # EAGLE-1 head weights + dynamic (context-aware) draft tree
    "eagle3",  # EAGLE-3 head: fused low/mid/high verifier features, dynamic tree
    "medusa",  # extra decoding heads on the verifier, tree attention
    "mtp",  # the model's own multi-token-prediction layers (DeepSeek-V3, Qwen3-Next, GLM-4.5, ...)
    "lookahead",  # Jacobi iteration + n-gram pool, no extra model
    "ngram",  # prompt lookup: copy continuations of n-grams found in the context
    "suffix",  # suffix-tree speculation over prompt and previous outputs (Arctic Inference)
    # Parallel drafters (2026): all N draft tokens from ONE draft forward (mask/placeholder inputs).
    "dflash",  # block-diffusion drafter on fused verifier hidden states (arXiv 2602.06036; z-lab)
    "peagle",  # P-EAGLE: EAGLE-3 inputs + shared mask_hidden, N positions per head forward (arXiv 2602.01469)
    "pard",  # PARD: a small target-independent LM adapted with mask tokens (arXiv 2504.18583; AMD)
]
# EAGLE-3.1 (arXiv 2605.09992) is not a method of its own: its heads load through the EAGLE-3 keys of every
# engine (vLLM method eagle3, SGLang EAGLE3, TensorRT-LLM Eagle3), so it is an eagle3 head.
Strategy = Literal[
    "draft_model", "eagle", "eagle2", "eagle3", "medusa", "mtp", "lookahead", "ngram", "suffix",
    "dflash", "peagle", "pard", "none",
]
METHODS: tuple[str, ...] = get_args(Method)
STRATEGIES: tuple[str, ...] = get_args(Strategy)

# Method families: the only home for these sets (the planner, the model, the engine emitters and the evals
# all import them from here).
# EAGLE heads (one decoder layer on the verifier's hidden states; EAGLE-2 is EAGLE-1 weights + dynamic tree).
EAGLE_METHODS: frozenset[str] = frozenset({"eagle", "eagle2", "eagle3"})
# Parallel drafters: one draft forward proposes all N tokens (DFlash a block of B-1, P-EAGLE and PARD N
# mask positions), so their draft cost barely grows with N.
PARALLEL_DRAFT_METHODS: frozenset[str] = frozenset({"dflash", "peagle", "pard"})
# Drafters that read this verifier's hidden states, so one is trained per verifier (PARD is not: one PARD
# draft serves a model family).
VERIFIER_BOUND_DRAFTERS: frozenset[str] = frozenset({"dflash", "peagle"})
# Methods that need weights trained against this exact verifier (heads, or the model's own MTP layers).
TRAINED_HEAD_METHODS: frozenset[str] = EAGLE_METHODS | {"medusa", "mtp"} | VERIFIER_BOUND_DRAFTERS
# Heads loaded from a separate repository that draft a tree (MTP layers ship inside the verifier).
TREE_HEAD_METHODS: frozenset[str] = EAGLE_METHODS | {"medusa"}
# Draft models: a separate small LM with its own tokenizer check (PARD is one, drafting in parallel).
DRAFT_MODEL_METHODS: frozenset[str] = frozenset({"draft_model", "pard"})
# Methods whose engine configuration names a second repository (a draft model or a head).
SEPARATE_REPO_METHODS: frozenset[str] = TREE_HEAD_METHODS | VERIFIER_BOUND_DRAFTERS | DRAFT_MODEL_METHODS
# Methods with weights of their own, whose acceptance describes the verifier and the workload.
MODEL_BASED_METHODS: frozenset[str] = TRAINED_HEAD_METHODS | DRAFT_MODEL_METHODS
# Methods that draft from text already in the context (no extra weights at all).
MODEL_FREE_METHODS: frozenset[str] = frozenset({"ngram", "suffix", "lookahead"})
# Copy-based drafting: acceptance is about how much of the output repeats the input.
COPY_METHODS: frozenset[str] = frozenset({"ngram", "suffix"})
# Methods whose published acceptance is a tau at the source's own configuration (no per-token alpha):
# lookahead's n-gram pool and suffix trees propose variable-length drafts.
MEASURED_TAU_METHODS: frozenset[str] = frozenset({"lookahead", "suffix"})
# Methods whose drafts form a tree verified in one pass; they are modelled with
# mean accepted length tau and per-cycle cost k (speedup = tau / k). Lookahead verifies several n-gram
# candidates per step, which the model treats as a tree.
TREE_METHODS: frozenset[str] = TREE_HEAD_METHODS | {"lookahead"}
# Coarse family of a method, for priors that are shared within a family (temperature effect).
METHOD_FAMILY: dict[str, str] = {
    **{m: "head" for m in TRAINED_HEAD_METHODS}, **{m: "draft" for m in DRAFT_MODEL_METHODS},
    **{m: "model_free" for m in MODEL_FREE_METHODS},
}

Workload = Literal[
    "chat", "code", "math", "summarization", "rag", "qa", "doc-qa", "translation", "structured", "creative",
    "agentic",
]
WORKLOADS: tuple[str, ...] = get_args(Workload)
# Workloads whose output copies long spans of the input: n-gram / suffix drafting pays there.
# "qa" is closed-book question answering (answers from the model's own knowledge: little to copy); "doc-qa" is
# question answering over a document the user supplies in the prompt, which copies spans of it like RAG. A third-
# party benchmark measured EAGLE-2 1.2-2x faster than n-gram on closed-book QA, so "qa" is not input-grounded.
INPUT_GROUNDED_WORKLOADS: frozenset[str] = frozenset({"summarization", "rag", "doc-qa", "agentic", "structured", "code"})
# What each workload means, for help texts and the skill (one home, so every surface says the same).
WORKLOAD_MEANING: dict[str, str] = {
    "chat": "open-ended assistant chat", "code": "code generation and editing", "math": "math and reasoning",
    "summarization": "summaries of a supplied text", "rag": "answers from retrieved passages in the prompt",
    "qa": "closed-book question answering (from the model's own knowledge)",
    "doc-qa": "question answering over a document supplied in the prompt",
    "translation": "translation", "structured": "JSON / schema-constrained output",
    "creative": "creative writing", "agentic": "tool calls and multi-step agent traffic",
}

# Who runs a method: its own authors (a paper's own harness and tuning) or a third party. A user is a third party;
# calibration grades the papers' own rows as the authors' runs (tools/catalog/authorship.py).
Runner = Literal["authors", "third_party"]

Sampling = Literal["greedy", "low-temp", "high-temp", "beam"]
SAMPLINGS: tuple[str, ...] = get_args(Sampling)

Engine = Literal["vllm", "sglang", "trtllm", "llamacpp", "transformers"]
ENGINES: tuple[str, ...] = get_args(Engine)
ENGINE_LABEL: dict[str, str] = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM",
                                "llamacpp": "llama.cpp", "transformers": "HF transformers"}
# Overlap (async) scheduling of the speculative path: the engine release's default, or what the user runs
# (tools/model/overlap.py).
SpecOverlap = Literal["auto", "on", "off"]

# Deployment features that break a method on some engine version (engine_support.csv ``breaks_with``).
BreakTag = Literal["pipeline_parallel", "lora", "structured_output", "dp_attention", "overlap_schedule",
                   "quantized_mtp", "sliding_window", "hybrid_attention", "beam_search", "parallel_slots"]
BREAK_TAGS: tuple[str, ...] = get_args(BreakTag)

Quantization = Literal["bf16", "fp16", "fp8", "int8", "int4", "mxfp4"]
QUANTIZATIONS: tuple[str, ...] = get_args(Quantization)
# Bytes per weight, including the usual group-scale overhead for 4-bit formats
# (group size 128 with an fp16 scale adds 16/128 bit = 0.125 bit per weight;
# MXFP4 uses an 8-bit scale per 32 values = 0.25 bit).
BYTES_PER_PARAM: dict[str, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 4.125 / 8,
    "mxfp4": 4.25 / 8,
}

LatencyTarget = Literal["interactive", "throughput"]
Verdict = Literal["pass", "warn", "fail", "info"]


def sampling_from_temperature(temperature: float) -> Sampling:
    """Map a sampling temperature to the coarse sampling class used for priors.

    The cut points follow the published measurements we have: papers report
    T=0 (greedy) and T=1 (high); T<=0.7 behaves close to greedy for acceptance
    (REST README: 2.36x greedy vs 2.12x at T=0.8 on HumanEval).
    """
    if temperature <= 0.0:
        return "greedy"
    if temperature <= 0.7:
        return "low-temp"
    return "high-temp"

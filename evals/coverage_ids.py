"""The ids the eval suite must cover: every rule of the user's seed (``docs/DECISION-RULES.md``) and every issue of
ENGINES.md section (c).

Kept apart from ``coverage.py`` (which reads the cases) so that ``dataset.py`` can check a case's ``covers:`` ids
without an import cycle: this module imports nothing of ours.
"""

from __future__ import annotations

SEED: dict[str, str] = {
    # Decision rules
    "seed:rule:quick-start": "Quick start, no training: vanilla draft with a same-family 1B-3B model, ~2x",
    "seed:rule:finetune-eagle": "You can fine-tune: EAGLE-2 or EAGLE-3 on the verifier's hidden states, 3-4x",
    "seed:rule:finetune-one-model-medusa": "Can fine-tune but can't run two models: Medusa heads, 2-3x",
    "seed:rule:no-training-no-draft-lookahead": "No training budget, no draft model: lookahead decoding, 1.3-1.6x",
    "seed:rule:batch-heavy": "Batch-heavy serving: gains diminish as the batch grows (verifier saturated)",
    "seed:rule:high-temperature": "High temperature / stochastic sampling: acceptance drops; lower N (2-3) or disable",
    "seed:rule:structured-output": "Structured output (JSON, code): acceptance is high; push N to 7+",
    # Tuning rules
    "seed:tune:n-start-5": "N: start at 5 (no measured acceptance yet)",
    "seed:tune:n-alpha-high-push-7": "N: if alpha > 0.9, push to 7",
    "seed:tune:n-alpha-low-drop-3": "N: if alpha < 0.6, drop to 3",
    "seed:tune:draft-temperature": "Draft temperature: match the verifier's temperature",
    "seed:tune:tree-depth": "Tree depth (EAGLE-2 / Medusa): 3-5; wider trees help only at alpha > 0.8",
    "seed:tune:draft-size": "Draft size: smallest that hits alpha > 0.7; 1B for a 70B verifier; keep tokenizer compat",
    # Always flag
    "seed:flag:tokenizer": "Draft and verifier must share the tokenizer",
    "seed:flag:continuous-batching": "Continuous batching: per-request speedup drops when the batch is saturated",
    "seed:flag:eagle-internals": "EAGLE needs verifier internals (hidden states); prefer vLLM / SGLang",
    "seed:flag:medusa-data-cost": "Medusa needs an SFT on the verifier's own outputs; data gathering dominates",
}

ENGINES_ISSUES: dict[str, str] = {
    "engines:issue:1": "vllm#8439: ngram on a low-overlap workload is slower at batch 1",
    "engines:issue:2": "vllm#15025: 135M draft / 1.7B target ~30% slower; small target or c not << 1",
    "engines:issue:3": "vllm#14941: opt-6.7b + opt-125m 5x slower; bad-input case",
    "engines:issue:4": "vllm#6494, #21278: large k at high QPS halves throughput",
    "engines:issue:5": "ArcticInference#185, sglang#4759, vllm#49548: SD loses at concurrency; schedule only after measuring",
    "engines:issue:6": "vllm#7252 et al.: vocab_size padding differs, tokenizer identical: compatible after padding",
    "engines:issue:7": "sglang#24051: different tokenizer family must be a hard FAIL",
    "engines:issue:8": "transformers#45307: universal assisted decoding crashes on padded vocab (Qwen2.5-7B + 0.5B)",
    "engines:issue:9": "llama.cpp#3812: vocab check by size and per-token content",
    "engines:issue:10": "vllm#31345 et al.: draft_tensor_parallel_size must be 1 or the target TP",
    "engines:issue:11": "vllm#38182, #53670: EAGLE/MTP drop the last prefix-cache block (agent / prefix-heavy)",
    "engines:issue:12": "vllm#40875 et al.: ngram with prompt_lookup_min=2 corrupts tool calls (use min 8)",
    "engines:issue:13": "vllm#40831 et al.: TurboQuant KV x any SD loops while health checks stay green",
    "engines:issue:14": "vllm#9534, TRT-LLM#7842: EAGLE head + FP8 target: acceptance 0; measure before trusting",
    "engines:issue:15": "vllm#14117 et al., TRT-LLM#9009: pipeline parallel + SD fails",
    "engines:issue:16": "vllm#4872: SD + LoRA shape error; SD x LoRA unsupported",
    "engines:issue:17": "sglang#6875 et al.: VRAM must include draft weights, draft KV and the tree budget",
    "engines:issue:18": "vllm#26191: EAGLE3 acceptance on main below the measured 3.53; pin version, measure",
    "engines:issue:19": "vllm#9565: define alpha, tau = 1 + acc/drafts and per-position rates",
    "engines:issue:20": "llama.cpp#27117: acceptance at bs=1 does not carry to high concurrency",
}

COVERAGE_IDS: dict[str, str] = {**SEED, **ENGINES_ISSUES}

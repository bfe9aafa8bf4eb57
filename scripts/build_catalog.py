"""Rebuild the embedded catalog snapshot (tools/data) reproducibly, and stamp its date.

Default (no arguments): read the committed tables in ``tools/data``, check them (exact columns, unique keys,
numbers that parse), rewrite ``models.csv``, ``gpus.csv`` and ``heads.csv`` in one canonical format (the csv
module's default dialect, the format these three were first written in) and write ``snapshot.json``: the
snapshot's date and a SHA-256 and row count per table. Running it twice gives identical bytes. Rows keep their
file order: row ids (``{source_id}/{n}``), alias precedence and "smallest draft first" depend on it.

The snapshot date is ``--date`` if given; else the date already in ``snapshot.json`` when no table changed;
else today (UTC). So the date moves only when the data does, and ``specpick catalog status`` can say how old
the embedded snapshot is.

``--from-shared SRC`` first regenerates the three tables from the team's sourced fact tables in ``SRC``
(``models.csv``, ``gpus.csv``, ``heads.csv``), adding the architecture fields they lack (FFN width, MoE and MLA
shapes, tied embeddings, sliding windows); every added value names its source in ``arch_source``.
``--from-recipes DIR --recipes-commit SHA`` first regenerates ``recipes.csv`` from a vllm-project/recipes
checkout at that commit: every recipe model and each speculative config it serves (``scripts/recipe_facts.py``);
``tests/test_recipes_snapshot.py`` checks the catalog against it.
``--check`` writes nothing and exits 1 if a rebuild would change any byte (for CI).

Usage: python scripts/build_catalog.py [--out DIR] [--from-shared SRC] [--from-recipes DIR --recipes-commit SHA]
       [--date YYYY-MM-DD] [--check]

The 2025-2026 rows were appended once by ``scripts/merge_catalog.py`` from researched tables (each row keeps
its own source); this script keeps them as they are.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HF_CONFIG = "config.json of the HF repo (intermediate_size, tie_word_embeddings, MoE/MLA/sliding fields)"

# repo_id -> extra fields. Tokenizer keys: equal `tokenizer_family` means the same
# id->token map; `tokenizer_specials` names the special/added-token variant.
EXTRA: dict[str, dict] = {
    "meta-llama/Llama-2-7b-chat-hf": dict(aliases="llama-2-7b;llama2-7b;llama-2-7b-chat", intermediate_size=11008, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "meta-llama/Llama-2-13b-chat-hf": dict(aliases="llama-2-13b;llama2-13b;llama-2-13b-chat", intermediate_size=13824, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "meta-llama/Llama-2-70b-chat-hf": dict(aliases="llama-2-70b;llama2-70b;llama-2-70b-chat", intermediate_size=28672, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "meta-llama/Meta-Llama-3-8B-Instruct": dict(aliases="llama-3-8b;llama3-8b;meta-llama-3-8b", intermediate_size=14336, tokenizer_family="llama3-128000", tokenizer_specials="llama3.0"),
    "meta-llama/Meta-Llama-3-70B-Instruct": dict(aliases="llama-3-70b;llama3-70b;meta-llama-3-70b", intermediate_size=28672, tokenizer_family="llama3-128000", tokenizer_specials="llama3.0"),
    "meta-llama/Llama-3.1-8B-Instruct": dict(aliases="llama-3.1-8b;llama3.1-8b;meta-llama-3.1-8b-instruct", intermediate_size=14336, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "meta-llama/Llama-3.1-70B-Instruct": dict(aliases="llama-3.1-70b;llama3.1-70b;meta-llama-3.1-70b-instruct", intermediate_size=28672, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "meta-llama/Llama-3.1-405B-Instruct": dict(aliases="llama-3.1-405b;llama3.1-405b", intermediate_size=53248, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "meta-llama/Llama-3.2-1B-Instruct": dict(aliases="llama-3.2-1b;llama3.2-1b", intermediate_size=8192, tie_word_embeddings=True, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "meta-llama/Llama-3.2-3B-Instruct": dict(aliases="llama-3.2-3b;llama3.2-3b", intermediate_size=8192, tie_word_embeddings=True, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "meta-llama/Llama-3.3-70B-Instruct": dict(aliases="llama-3.3-70b;llama3.3-70b", intermediate_size=28672, tokenizer_family="llama3-128000", tokenizer_specials="llama3.1"),
    "Qwen/Qwen2.5-0.5B-Instruct": dict(aliases="qwen2.5-0.5b", intermediate_size=4864, tie_word_embeddings=True, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-1.5B-Instruct": dict(aliases="qwen2.5-1.5b", intermediate_size=8960, tie_word_embeddings=True, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-3B-Instruct": dict(aliases="qwen2.5-3b", intermediate_size=11008, tie_word_embeddings=True, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-7B-Instruct": dict(aliases="qwen2.5-7b", intermediate_size=18944, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-14B-Instruct": dict(aliases="qwen2.5-14b", intermediate_size=13824, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-32B-Instruct": dict(aliases="qwen2.5-32b", intermediate_size=27648, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-72B-Instruct": dict(aliases="qwen2.5-72b", intermediate_size=29568, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-Coder-1.5B-Instruct": dict(aliases="qwen2.5-coder-1.5b", intermediate_size=8960, tie_word_embeddings=True, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-Coder-7B-Instruct": dict(aliases="qwen2.5-coder-7b", intermediate_size=18944, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen2.5-Coder-32B-Instruct": dict(aliases="qwen2.5-coder-32b", intermediate_size=27648, attention_bias=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen2.5"),
    "Qwen/Qwen3-0.6B": dict(aliases="qwen3-0.6b", intermediate_size=3072, tie_word_embeddings=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-1.7B": dict(aliases="qwen3-1.7b", intermediate_size=6144, tie_word_embeddings=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-4B": dict(aliases="qwen3-4b", intermediate_size=9728, tie_word_embeddings=True, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-8B": dict(aliases="qwen3-8b", intermediate_size=12288, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-14B": dict(aliases="qwen3-14b", intermediate_size=17408, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-32B": dict(aliases="qwen3-32b", intermediate_size=25600, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-30B-A3B": dict(aliases="qwen3-30b-a3b;qwen3-30b", intermediate_size=6144, num_experts=128, experts_per_token=8, moe_intermediate_size=768, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "Qwen/Qwen3-235B-A22B": dict(aliases="qwen3-235b-a22b;qwen3-235b", intermediate_size=12288, num_experts=128, experts_per_token=8, moe_intermediate_size=1536, tokenizer_family="qwen2-151643", tokenizer_specials="qwen3"),
    "mistralai/Mistral-7B-Instruct-v0.3": dict(aliases="mistral-7b;mistral-7b-v0.3;mistral-7b-instruct", intermediate_size=14336, tokenizer_family="mistral-v3-32768", tokenizer_specials="mistral-v3"),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": dict(aliases="mixtral-8x7b;mixtral", intermediate_size=14336, num_experts=8, experts_per_token=2, moe_intermediate_size=14336, tokenizer_family="mistral-v1-32000", tokenizer_specials="mistral-v1"),
    "google/gemma-2-2b-it": dict(aliases="gemma-2-2b;gemma2-2b", intermediate_size=9216, tie_word_embeddings=True, sliding_window=4096, sliding_layer_fraction=0.5, tokenizer_family="gemma-256000", tokenizer_specials="gemma2"),
    "google/gemma-2-9b-it": dict(aliases="gemma-2-9b;gemma2-9b", intermediate_size=14336, tie_word_embeddings=True, sliding_window=4096, sliding_layer_fraction=0.5, tokenizer_family="gemma-256000", tokenizer_specials="gemma2"),
    "google/gemma-2-27b-it": dict(aliases="gemma-2-27b;gemma2-27b", intermediate_size=36864, tie_word_embeddings=True, sliding_window=4096, sliding_layer_fraction=0.5, tokenizer_family="gemma-256000", tokenizer_specials="gemma2"),
    "google/gemma-3-1b-it": dict(aliases="gemma-3-1b;gemma3-1b", intermediate_size=6912, tie_word_embeddings=True, sliding_window=512, sliding_layer_fraction=0.8333, tokenizer_family="gemma3-262144", tokenizer_specials="gemma3"),
    "google/gemma-3-4b-it": dict(aliases="gemma-3-4b;gemma3-4b", intermediate_size=10240, tie_word_embeddings=True, sliding_window=1024, sliding_layer_fraction=0.8333, vision_params_b=0.417, tokenizer_family="gemma3-262144", tokenizer_specials="gemma3"),
    "google/gemma-3-12b-it": dict(aliases="gemma-3-12b;gemma3-12b", intermediate_size=15360, tie_word_embeddings=True, sliding_window=1024, sliding_layer_fraction=0.8333, vision_params_b=0.417, tokenizer_family="gemma3-262144", tokenizer_specials="gemma3"),
    "google/gemma-3-27b-it": dict(aliases="gemma-3-27b;gemma3-27b", intermediate_size=21504, tie_word_embeddings=True, sliding_window=1024, sliding_layer_fraction=0.8333, vision_params_b=0.417, tokenizer_family="gemma3-262144", tokenizer_specials="gemma3"),
    "microsoft/Phi-3-mini-4k-instruct": dict(aliases="phi-3-mini;phi3-mini", intermediate_size=8192, sliding_window=2047, sliding_layer_fraction=1.0, tokenizer_family="llama-spm-32000", tokenizer_specials="phi3"),
    "microsoft/Phi-3.5-mini-instruct": dict(aliases="phi-3.5-mini;phi3.5-mini", intermediate_size=8192, tokenizer_family="llama-spm-32000", tokenizer_specials="phi3"),
    "microsoft/phi-4": dict(aliases="phi-4;phi4", intermediate_size=17920, tokenizer_family="phi4-100352", tokenizer_specials="phi4"),
    "microsoft/Phi-4-mini-instruct": dict(aliases="phi-4-mini;phi4-mini", intermediate_size=8192, tie_word_embeddings=True, tokenizer_family="o200k-200064", tokenizer_specials="phi4-mini"),
    "deepseek-ai/DeepSeek-V3": dict(aliases="deepseek-v3;dsv3", intermediate_size=18432, num_experts=256, experts_per_token=8, moe_intermediate_size=2048, num_shared_experts=1, first_dense_layers=3, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, head_dim=192, mtp_layers=1, tokenizer_family="deepseek-v3-129280", tokenizer_specials="deepseek-v3"),
    "deepseek-ai/DeepSeek-R1": dict(aliases="deepseek-r1;r1", intermediate_size=18432, num_experts=256, experts_per_token=8, moe_intermediate_size=2048, num_shared_experts=1, first_dense_layers=3, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, head_dim=192, mtp_layers=1, tokenizer_family="deepseek-v3-129280", tokenizer_specials="deepseek-r1"),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": dict(aliases="deepseek-r1-distill-llama-8b;r1-distill-llama-8b", intermediate_size=14336, tokenizer_family="llama3-128000", tokenizer_specials="deepseek-r1-distill"),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": dict(aliases="deepseek-r1-distill-llama-70b;r1-distill-llama-70b", intermediate_size=28672, tokenizer_family="llama3-128000", tokenizer_specials="deepseek-r1-distill"),
    "lmsys/vicuna-7b-v1.3": dict(aliases="vicuna-7b;vicuna-7b-v1.3", intermediate_size=11008, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "lmsys/vicuna-13b-v1.3": dict(aliases="vicuna-13b;vicuna-13b-v1.3", intermediate_size=13824, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "lmsys/vicuna-33b-v1.3": dict(aliases="vicuna-33b;vicuna-33b-v1.3", intermediate_size=17920, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": dict(aliases="tinyllama;tinyllama-1.1b", intermediate_size=5632, tokenizer_family="llama-spm-32000", tokenizer_specials="llama"),
    "HuggingFaceTB/SmolLM2-1.7B-Instruct": dict(aliases="smollm2-1.7b", intermediate_size=8192, tie_word_embeddings=True, tokenizer_family="smollm-49152", tokenizer_specials="smollm2"),
    "HuggingFaceTB/SmolLM2-360M-Instruct": dict(aliases="smollm2-360m", intermediate_size=2560, tie_word_embeddings=True, tokenizer_family="smollm-49152", tokenizer_specials="smollm2"),
    "HuggingFaceTB/SmolLM2-135M-Instruct": dict(aliases="smollm2-135m;smollm2", intermediate_size=1536, tie_word_embeddings=True, tokenizer_family="smollm-49152", tokenizer_specials="smollm2"),
    "openai/gpt-oss-20b": dict(aliases="gpt-oss-20b", intermediate_size=0, num_experts=32, experts_per_token=4, moe_intermediate_size=2880, attention_bias=True, sliding_window=128, sliding_layer_fraction=0.5, tokenizer_family="o200k-harmony-201088", tokenizer_specials="harmony"),
    "openai/gpt-oss-120b": dict(aliases="gpt-oss-120b", intermediate_size=0, num_experts=128, experts_per_token=4, moe_intermediate_size=2880, attention_bias=True, sliding_window=128, sliding_layer_fraction=0.5, tokenizer_family="o200k-harmony-201088", tokenizer_specials="harmony"),
}

GPU_KEYS: dict[str, tuple[str, str, dict]] = {
    # name in gpus.csv -> (key, aliases, extra)
    "NVIDIA H100 SXM5 80GB": ("H100-SXM", "h100;h100 sxm;h100-sxm5;h100 sxm5;nvidia h100 80gb hbm3;h100 80gb;h100-80gb", {}),
    "NVIDIA H100 PCIe 80GB": ("H100-PCIE", "h100 pcie;h100-pcie-80gb;nvidia h100 pcie", {}),
    "NVIDIA H100 NVL 94GB (per GPU)": ("H100-NVL", "h100 nvl;h100-nvl-94gb;nvidia h100 nvl", {}),
    "NVIDIA H200 SXM 141GB": ("H200", "h200 sxm;h200-sxm;nvidia h200;h200 141gb;nvidia h200 141gb hbm3e", {}),
    "NVIDIA B200 (HGX/DGX B200, per GPU)": ("B200", "nvidia b200;b200 180gb;hgx b200;dgx b200", {}),
    "NVIDIA GB200 (per Blackwell GPU in GB200 NVL72)": ("GB200", "nvidia gb200;gb200 nvl72", {}),
    "NVIDIA A100 SXM4 80GB": ("A100-80GB", "a100;a100 80gb;a100-sxm4-80gb;nvidia a100-sxm4-80gb;a100 sxm 80gb;a100-sxm-80gb", {}),
    "NVIDIA A100 SXM4 40GB": ("A100-40GB", "a100 40gb;a100-sxm4-40gb;nvidia a100-sxm4-40gb;a100 sxm 40gb", {}),
    "NVIDIA A100 PCIe 80GB": ("A100-PCIE-80GB", "a100 pcie 80gb;nvidia a100 80gb pcie;a100-pcie-80gb", {}),
    "NVIDIA A100 PCIe 40GB": ("A100-PCIE-40GB", "a100 pcie 40gb;nvidia a100-pcie-40gb;a100-pcie-40gb", {}),
    "NVIDIA L40S 48GB": ("L40S", "l40s 48gb;nvidia l40s", {}),
    "NVIDIA L4 24GB": ("L4", "l4 24gb;nvidia l4", {}),
    "NVIDIA A10 24GB": ("A10", "a10 24gb;nvidia a10", {}),
    "NVIDIA A10G 24GB (AWS G5)": ("A10G", "a10g 24gb;nvidia a10g;g5", {"fp16_tflops": 62.5}),
    "NVIDIA GeForce RTX 4090 24GB": ("RTX-4090", "4090;rtx 4090;rtx4090;geforce rtx 4090;nvidia geforce rtx 4090", {}),
    "NVIDIA GeForce RTX 3090 24GB": ("RTX-3090", "3090;rtx 3090;rtx3090;geforce rtx 3090;nvidia geforce rtx 3090", {}),
    "NVIDIA GeForce RTX 5090 32GB": ("RTX-5090", "5090;rtx 5090;rtx5090;geforce rtx 5090;nvidia geforce rtx 5090", {}),
    "NVIDIA T4 16GB": ("T4", "tesla t4;nvidia t4;t4 16gb", {"fp16_tflops": 65.0}),
    "NVIDIA V100 SXM2 32GB (16GB variant identical otherwise)": ("V100", "v100 32gb;tesla v100;v100-sxm2-32gb;tesla v100-sxm2-32gb;nvidia v100", {"fp16_tflops": 125.0}),
    "AMD Instinct MI300X 192GB": ("MI300X", "mi300x;amd mi300x;instinct mi300x;amd instinct mi300x", {"vendor": "amd"}),
    "AMD Instinct MI325X 256GB": ("MI325X", "mi325x;amd mi325x;instinct mi325x", {"vendor": "amd"}),
}

MODEL_FIELDS = [
    "repo_id", "family", "aliases", "params_total_b", "params_active_b", "hidden_size", "num_layers",
    "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size", "vocab_size", "tie_word_embeddings",
    "num_experts", "experts_per_token", "moe_intermediate_size", "num_shared_experts", "first_dense_layers",
    "sliding_window", "sliding_layer_fraction", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank",
    "qk_nope_head_dim", "v_head_dim", "attention_bias", "vision_params_b", "mtp_layers",
    "linear_attention_layer_fraction", "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel", "attn_output_gate", "kv_compress_ratios", "index_head_dim",
    "hybrid_note", "params_note", "unmodelled_features", "tokenizer_family", "tokenizer_specials", "tokenizer_note", "max_position_embeddings", "dtype", "gated",
    "source", "arch_source", "notes",
]
GPU_FIELDS = [
    "key", "name", "aliases", "memory_gb", "bandwidth_gbps", "bf16_tflops", "fp16_tflops", "fp8_tflops",
    "fp4_tflops", "link_gbps", "interconnect", "vendor", "unified_memory", "source", "notes",
]
HEAD_FIELDS = [
    "head_repo_id", "method", "method_detail", "format", "verifier_repo_id", "verifier_revision", "head_params_b",
    "head_params_note", "trained_context_tokens", "runtimes", "engine_versions", "publisher", "trained_dtype",
    "superseded_by", "source", "notes",
]

HEAD_METHOD = [
    (r"^EAGLE-1", "eagle"),
    (r"^EAGLE-3", "eagle3"),
    (r"^Medusa", "medusa"),
    (r"^MLPSpeculator", "mlp_speculator"),
    (r"^MTP", "mtp"),
    (r"P-EAGLE|DFlash", "dflash"),
]


def _gated(v: str) -> str:
    v = v.strip().lower()
    if v.startswith("yes"):
        return "yes"
    if v == "no":
        return "no"
    return "unknown"


def _dtype(v: str) -> str:
    v = v.lower()
    for key, out in (("mxfp4", "mxfp4"), ("fp8", "fp8"), ("bfloat16", "bf16"), ("float16", "fp16")):
        if v.startswith(key) or (key == "mxfp4" and key in v):
            return out
    return "bf16"


def build_models(src: Path, dst: Path) -> None:
    rows = list(csv.DictReader(open(src / "models.csv", encoding="utf-8")))
    fields = MODEL_FIELDS
    out = []
    for r in rows:
        extra = dict(EXTRA[r["repo_id"]])
        head_dim = r["head_dim"].split()[0]
        row = {
            "repo_id": r["repo_id"],
            "family": r["family"],
            "aliases": extra.pop("aliases"),
            "params_total_b": r["params_total_b"],
            "params_active_b": r["params_active_b"],
            "hidden_size": r["hidden_size"],
            "num_layers": r["num_layers"],
            "num_attention_heads": r["num_attention_heads"],
            "num_kv_heads": r["num_key_value_heads"],
            "head_dim": extra.pop("head_dim", head_dim),
            "vocab_size": r["vocab_size"],
            "tokenizer_note": r["tokenizer_family"],
            "max_position_embeddings": r["max_position_embeddings"],
            "dtype": _dtype(r["dtype"]),
            "gated": _gated(r["gated"]),
            "source": r["source"],
            "arch_source": HF_CONFIG,
            "notes": r["notes"],
        }
        for k, v in extra.items():
            row[k] = str(v).lower() if isinstance(v, bool) else v
        out.append({k: row.get(k, "") for k in fields})
    with open(dst / "models.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(out)


def build_gpus(src: Path, dst: Path) -> None:
    rows = list(csv.DictReader(open(src / "gpus.csv", encoding="utf-8")))
    fields = GPU_FIELDS
    out = []
    for r in rows:
        key, aliases, extra = GPU_KEYS[r["name"]]
        out.append({
            "key": key, "name": r["name"], "aliases": aliases, "memory_gb": r["memory_gb"],
            "bandwidth_gbps": r["memory_bandwidth_gbps"], "bf16_tflops": r["bf16_dense_tflops"],
            "fp16_tflops": extra.get("fp16_tflops", ""), "fp8_tflops": r["fp8_dense_tflops"],
            "link_gbps": r["gpu_link_gbps"], "interconnect": r["interconnect"],
            "vendor": extra.get("vendor", "nvidia"), "unified_memory": extra.get("unified_memory", "false"),
            "source": r["source"], "notes": r["notes"],
        })
    with open(dst / "gpus.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(out)


def _runtimes(text: str, method: str) -> str:
    # The bracketed part is a citation list that names every engine's docs; only the
    # text before it says which engines load this head.
    text = re.sub(r"\[[^\]]*\]", "", text)
    found = []
    if "vLLM" in text:
        found.append("vllm")
    if "SGLang" in text and "not in SGLang" not in text:
        found.append("sglang")
    if "TRT-LLM" in text or (method == "mtp" and "as for DeepSeek-V3" in text):
        found.append("trtllm")
    return ";".join(found)


def _head_params(text: str) -> str:
    m = re.match(r"^~?([0-9.]+)B", text.strip())
    return m.group(1) if m else ""


def _publisher(notes: str, repo: str) -> str:
    n = notes.lower()
    if n.startswith("official") or repo.startswith(("yuhuili/", "FasterDecoding/", "deepseek-ai/")):
        return "official"
    if "test" in n or repo.startswith("nm-testing/"):
        return "test"
    if repo.startswith(("nvidia/", "lmsys/", "RedHatAI/", "ibm-ai-platform/")):
        return "vendor"
    return "community"


def build_heads(src: Path, dst: Path) -> None:
    rows = list(csv.DictReader(open(src / "heads.csv", encoding="utf-8")))
    fields = HEAD_FIELDS
    out = []
    for r in rows:
        method = next(m for pat, m in HEAD_METHOD if re.search(pat, r["method"]))
        repo = r["head_repo_id"].split(" (")[0]  # "deepseek-ai/DeepSeek-V3 (built-in MTP, layer 61)"
        out.append({
            "head_repo_id": repo, "method": method, "method_detail": r["method"],
            "verifier_repo_id": r["verifier_repo_id"], "head_params_b": _head_params(r["head_params"]),
            "head_params_note": r["head_params"], "runtimes": _runtimes(r["runtime_support"], method),
            "publisher": _publisher(r["notes"], repo),
            # Published heads are trained against the BF16/FP16 verifier (EAGLE, SpecForge,
            # speculators recipes); quantized verifiers are the exception the planner flags.
            "trained_dtype": "bf16", "source": r["source"], "notes": r["notes"],
        })
    with open(dst / "heads.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(out)



def write_recipes(recipes_dir: Path, commit: str, dst: Path) -> None:
    """``recipes.csv`` from a recipes checkout (canonical dialect, like the three tables above)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from recipe_facts import RECIPE_FIELDS, extract

    rows = extract(recipes_dir, commit)
    (dst / "recipes.csv").write_bytes(canonical_csv([RECIPE_FIELDS] + [[r[k] for k in RECIPE_FIELDS] for r in rows]))


# --- Snapshot: check, normalise, stamp ------------------------------------------------------------------------

DATA = Path(__file__).resolve().parent.parent / "tools" / "data"
SNAPSHOT = "snapshot.json"
# table -> (columns, key columns, numeric columns). These three are the tables this script writes.
NORMALISED: dict[str, tuple[list[str], tuple[str, ...], tuple[str, ...]]] = {
    "models.csv": (MODEL_FIELDS, ("repo_id",), (
        "params_total_b", "params_active_b", "hidden_size", "num_layers", "num_attention_heads", "num_kv_heads",
        "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings")),
    "gpus.csv": (GPU_FIELDS, ("key",), ("memory_gb", "bandwidth_gbps", "bf16_tflops", "fp16_tflops", "fp8_tflops",
                                        "link_gbps")),
    "heads.csv": (HEAD_FIELDS, ("head_repo_id", "verifier_repo_id"), ("head_params_b",)),
}


class TableError(ValueError):
    """A committed table breaks its contract (columns, keys, numbers)."""


def _read_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def check_table(name: str, rows: list[list[str]]) -> list[str]:
    """Every problem of one table (empty list = fine): columns, row width, unique keys, parseable numbers."""
    columns, keys, numeric = NORMALISED[name]
    if not rows or rows[0] != columns:
        return [f"{name}: header is {rows[0] if rows else []}, expected {columns}"]
    problems: list[str] = []
    seen: dict[tuple[str, ...], int] = {}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns):
            problems.append(f"{name}:{n}: {len(row)} fields, expected {len(columns)}")
            continue
        record = dict(zip(columns, row))
        key = tuple(record[k].lower() for k in keys)
        if not all(key):
            problems.append(f"{name}:{n}: empty key {keys}")
        elif key in seen:
            problems.append(f"{name}:{n}: duplicate key {key} (first on line {seen[key]})")
        seen.setdefault(key, n)
        for col in numeric:
            value = record[col].strip()
            try:
                if value and float(value) < 0:
                    problems.append(f"{name}:{n}: {col}={value} is negative")
            except ValueError:
                problems.append(f"{name}:{n}: {col}={value!r} is not a number")
        if not record["source"].strip():
            problems.append(f"{name}:{n}: no source")
    return problems


def canonical_csv(rows: list[list[str]]) -> bytes:
    """The csv module's default dialect (CRLF, minimal quoting): how these tables were first written."""
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue().encode("utf-8")


def snapshot_manifest(tables: dict[str, bytes], date: str) -> bytes:
    """``snapshot.json``: date, and per table its SHA-256 and data-row count; sorted keys, stable bytes."""
    entries = {name: {"sha256": hashlib.sha256(data).hexdigest(),
                      "rows": max(0, len(_read_rows_bytes(data)) - 1)} for name, data in sorted(tables.items())}
    return (json.dumps({"snapshot_date": date, "tables": entries}, indent=1, sort_keys=True) + "\n").encode()


def _read_rows_bytes(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def build_snapshot(src: Path, date: str | None = None) -> dict[str, bytes]:
    """The snapshot's files (name -> bytes) from the tables in ``src``; raises TableError listing every problem."""
    out: dict[str, bytes] = {}
    problems: list[str] = []
    for path in sorted(src.glob("*.csv")):
        if path.name in NORMALISED:
            rows = _read_rows(path)
            problems += check_table(path.name, rows)
            out[path.name] = canonical_csv(rows)
        else:  # hand-written or built by another script: stamped, not rewritten
            out[path.name] = path.read_bytes()
    missing = sorted(set(NORMALISED) - set(out))
    problems += [f"{name}: missing" for name in missing]
    if problems:
        raise TableError("; ".join(problems))
    if date is None:
        date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        previous = src / SNAPSHOT
        if previous.is_file():
            old = json.loads(previous.read_text(encoding="utf-8"))
            if json.loads(snapshot_manifest(out, old.get("snapshot_date", "")))["tables"] == old.get("tables"):
                date = old["snapshot_date"]  # no table changed: the snapshot is as old as it was
    datetime.date.fromisoformat(date)
    out[SNAPSHOT] = snapshot_manifest(out, date)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=DATA, help="the tables to read (default: tools/data)")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: --src, in place)")
    parser.add_argument("--from-shared", type=Path, default=None,
                        help="regenerate models/gpus/heads from the team's fact tables in this folder first")
    parser.add_argument("--from-recipes", type=Path, default=None,
                        help="regenerate recipes.csv from this vllm-project/recipes checkout first")
    parser.add_argument("--recipes-commit", default=None, help="the commit that checkout is at (cited per row)")
    parser.add_argument("--date", default=None, help="snapshot date YYYY-MM-DD (default: see above)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a rebuild changes bytes")
    args = parser.parse_args(argv)
    src, out = args.src, args.out or args.src
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path in src.iterdir():
            if path.is_file() and (path.suffix == ".csv" or path.name == SNAPSHOT):
                shutil.copy2(path, work / path.name)
        if args.from_shared is not None:
            build_models(args.from_shared, work)
            build_gpus(args.from_shared, work)
            build_heads(args.from_shared, work)
        if args.from_recipes is not None:
            if not args.recipes_commit:
                sys.stderr.write("error: --from-recipes needs --recipes-commit (the checkout's commit)\n")
                return 2
            write_recipes(args.from_recipes, args.recipes_commit, work)
        try:
            files = build_snapshot(work, args.date)
        except (TableError, ValueError) as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
    changed = [name for name, data in files.items() if not (out / name).is_file() or (out / name).read_bytes() != data]
    if args.check:
        if changed:
            sys.stderr.write(f"out of date: {', '.join(changed)}: run python scripts/build_catalog.py\n")
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name in changed:
        (out / name).write_bytes(files[name])
    sys.stderr.write(f"wrote {len(changed)} file(s) to {out}: {', '.join(changed) or 'nothing changed'}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

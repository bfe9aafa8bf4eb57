"""Resolve a published row's verifier, draft, hardware and harness into specs the model can run.

Most verifiers are catalog models. The rest are calibration-only stand-ins
defined here with their sources (CodeLlama-34B, Vicuna-68M, T5 v1.1 decoders,
Chinchilla and its 4B draft), or catalog geometries used for models the papers
only describe by size (stated per row). Hardware "not stated" becomes a stated
default: A100-80GB, which most of these papers used, as many as the weights need.
"""

from __future__ import annotations

import math
import re

from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.arch.params import count_params
from specpick.tools.catalog.published import PublishedRow
from specpick.tools.catalog.specs import GpuSpec, ModelSpec

DEFAULT_GPU = "A100-80GB"
FIT_FRACTION = 0.9  # weights may use 90% of GPU memory when choosing a default GPU count

# Published verifier name (lower case, prefix match) -> catalog name, or a stand-in key below.
VERIFIERS: tuple[tuple[str, str], ...] = (
    ("llama-2-chat-7b", "llama-2-7b"), ("llama2-chat-7b", "llama-2-7b"),
    ("llama-2-chat-13b", "llama-2-13b"), ("llama2-chat-13b", "llama-2-13b"),
    ("llama-2-chat-70b", "llama-2-70b"), ("llama2-chat-70b", "llama-2-70b"),
    ("codellama-34b", "codellama-34b"), ("codellama-13b", "llama-2-13b"), ("codellama-7b", "llama-2-7b"),
    ("vicuna-7b", "vicuna-7b"), ("vicuna-13b", "vicuna-13b"), ("vicuna-33b", "vicuna-33b"),
    ("zephyr-7b", "mistral-7b"), ("mistral-7b", "mistral-7b"),
    ("llama3-instruct-8b", "meta-llama-3-8b"), ("llama3-instruct-70b", "llama-3-70b"),
    ("llama-3.1-8b", "llama-3.1-8b"), ("llama-3.3-70b", "llama-3.3-70b"),
    ("deepseek-r1-distill-llama-8b", "r1-distill-llama-8b"), ("mixtral-8x7b", "mixtral"),
    ("deepseek-v3", "deepseek-v3"), ("baichuan-small", "llama-2-7b"), ("7b mtp-trained", "llama-2-7b"),
    ("t5-xxl", "t5-xxl-decoder"), ("chinchilla 70b", "chinchilla-70b"),
)
# Why a stand-in geometry is used (goes into the row's assumptions).
STAND_IN_NOTES: dict[str, str] = {
    "codellama-13b": "CodeLlama-13B: Llama-2-13B geometry (CodeLlama vocab 32016 vs 32000 ignored)",
    "codellama-7b": "CodeLlama-7B: Llama-2-7B geometry (vocab 32016 vs 32000 ignored)",
    "zephyr-7b": "Zephyr-7B-beta: Mistral-7B geometry from the catalog (v0.3 vocab)",
    "mistral-7b": "Mistral-7B-Instruct-v0.1: catalog Mistral-7B v0.3 geometry (vocab 32768 vs 32000)",
    "baichuan-small": "Baichuan-Small (internal 7B): Llama-2-7B geometry assumed",
    "7b mtp-trained": "Gloeckle et al. 7B MTP model: Llama-2-7B geometry assumed",
}


def _spec(**kw: object) -> ModelSpec:
    base = dict(family="calibration stand-in", tokenizer_family="n/a", max_position_embeddings=4096, dtype="bf16",
                num_kv_heads=kw.get("num_attention_heads"), fact_source="user")
    base.update(kw)
    return ModelSpec(**base)  # type: ignore[arg-type]


def _t5_decoder(name: str, d: int, ff: int, layers: int, heads: int, params: float) -> ModelSpec:
    # Decoder-only stand-in for a T5 v1.1 decoder: the cross-attention weights (4 x d x heads*64 per layer)
    # are folded into the gated-FFN width so the bytes read per step match.
    inner = heads * 64
    ff_equiv = ff + round(4 * d * inner / (3 * d))
    return _spec(repo_id=f"calibration/{name}-decoder", params_total_b=params, hidden_size=d, num_layers=layers,
                 num_attention_heads=heads, head_dim=64, intermediate_size=ff_equiv, vocab_size=32128,
                 source="google/t5-v1_1 config.json (d_model, d_ff, num_decoder_layers, num_heads, d_kv=64); "
                 "decoder only, cross-attention folded into the FFN width")


STAND_INS: dict[str, ModelSpec] = {
    "codellama-34b": _spec(repo_id="calibration/CodeLlama-34B", params_total_b=33.7, hidden_size=8192,
                           num_layers=48, num_attention_heads=64, num_kv_heads=8, head_dim=128,
                           intermediate_size=22016, vocab_size=32000,
                           source="codellama/CodeLlama-34b-hf config.json (GQA 8 KV heads)"),
    "vicuna-68m": _spec(repo_id="double7/vicuna-68m", params_total_b=0.068, hidden_size=768, num_layers=2,
                        num_attention_heads=12, head_dim=64, intermediate_size=3072, vocab_size=32000,
                        source="double7/vicuna-68m (fine-tune of JackFram/llama-68m: 2 layers, hidden 768); "
                        "EAGLE-2 Table 1 caption: SpS draft is Vicuna-68M"),
    "t5-xxl-decoder": _t5_decoder("t5-v1_1-xxl", 4096, 10240, 24, 64, 11.0),
    "t5-small": _t5_decoder("t5-v1_1-small", 512, 1024, 8, 6, 0.077),
    "t5-base": _t5_decoder("t5-v1_1-base", 768, 2048, 12, 12, 0.25),
    "t5-large": _t5_decoder("t5-v1_1-large", 1024, 2816, 24, 16, 0.8),
    # Chinchilla (Hoffmann et al. 2022): 80 layers, d_model 8192, 64 heads of 128, FFN 4x (non-gated:
    # width 32768 ~ gated 21845 by parameter count); Chen et al. 2023 draft: d_model 6144, 48 heads, 8 layers.
    "chinchilla-70b": _spec(repo_id="calibration/Chinchilla-70B", params_total_b=70.0, hidden_size=8192,
                            num_layers=80, num_attention_heads=64, head_dim=128, intermediate_size=21845,
                            vocab_size=32000, source="Hoffmann et al. 2022 Table 4 (Chinchilla architecture)"),
    "chen-4b": _spec(repo_id="calibration/Chen-4B-draft", params_total_b=4.0, hidden_size=6144, num_layers=8,
                     num_attention_heads=48, head_dim=128, intermediate_size=16384, vocab_size=32000,
                     source="Chen et al. 2023 (row CHEN-T1 draft_or_head: d_model 6144, 48 heads, 8 layers)"),
}

# Calibration-only hardware (not in the catalog), with sources.
EXTRA_GPUS: dict[str, GpuSpec] = {
    "A6000": GpuSpec(key="RTX-A6000", name="NVIDIA RTX A6000 48GB", memory_gb=48, bandwidth_gbps=768,
                     bf16_tflops=149.7, link_gbps=0, source="servethehome.com RTX A6000 spec table (48 GB GDDR6, "
                     "768 GB/s); tensor rate of the A40 datasheet (same GA102): 149.7 dense BF16"),
    "TPU-v4": GpuSpec(key="TPU-v4", name="Google Cloud TPU v4 (per chip)", memory_gb=34.4, bandwidth_gbps=1200,
                      bf16_tflops=275, link_gbps=537, source="docs.cloud.google.com/tpu/docs/v4 (275 TFLOPS bf16, "
                      "32 GiB HBM2 at 1200 GBps; all-reduce 1.1 PB/s per 4096-chip pod = 268 GB/s per chip)"),
}


def _h800() -> GpuSpec:
    h100 = get_catalog().gpu("H100-SXM")
    return h100.model_copy(update={"key": "H800", "name": "NVIDIA H800 SXM (export H100, NVLink 400 GB/s)",
                                   "link_gbps": 400.0, "source": "assumption: H100 SXM compute and HBM with "
                                   "NVLink cut to 400 GB/s (public export-variant listings)"})


@knowledge_cache("calibration.model_by_key")  # a catalog model: a reload forgets it
def model_by_key(key: str) -> ModelSpec:
    return STAND_INS[key] if key in STAND_INS else get_catalog().model(key)


def resolve_verifier(row: PublishedRow) -> tuple[ModelSpec | None, str]:
    """(spec, note) for the row's verifier; (None, reason) when it cannot be modelled."""
    name = row.verifier_model.lower()
    if ">" in row.verifier_params_b:
        return None, "verifier size is a bound, architecture unknown"
    for prefix, key in VERIFIERS:
        if name.startswith(prefix):
            return model_by_key(key), STAND_IN_NOTES.get(prefix, "")
    return None, f"verifier '{row.verifier_model}' has no architecture on record"


def resolve_draft(row: PublishedRow, verifier: ModelSpec) -> tuple[ModelSpec | None, str]:
    """The separate draft model of a draft_model row, with the rule used."""
    text = row.draft_or_head.lower()
    for key in ("t5-small", "t5-base", "t5-large"):
        if key in text:
            return STAND_INS[key], ""
    if "4b draft" in text:
        return STAND_INS["chen-4b"], ""
    if "68m" in text or (verifier.repo_id.startswith("lmsys/vicuna-") and verifier.params_total_b
                         and verifier.params_total_b < 20):
        return STAND_INS["vicuna-68m"], "SpS draft: Vicuna-68M (EAGLE-2 Table 1 caption)"
    if verifier.repo_id.startswith("lmsys/vicuna-33b"):
        return get_catalog().model("vicuna-7b"), "SpS draft for Vicuna-33B: Vicuna-7B ('7B-class', EAGLE Fig.1)"
    if "llama-3-70b" in verifier.repo_id.lower() or "meta-llama-3-70b" in verifier.repo_id.lower():
        return get_catalog().model("meta-llama-3-8b"), "SpS draft for LLaMA3-70B: LLaMA3-8B assumed (not named)"
    if "llama-2-70b" in verifier.repo_id.lower():
        return get_catalog().model("llama-2-7b"), "SpS draft for LLaMA2-70B: LLaMA2-Chat-7B ('7B-class')"
    return None, "draft model not identifiable"


def _count_for(weights_gb: float, gpu: GpuSpec) -> int:
    need = max(1, math.ceil(weights_gb / (gpu.memory_gb * FIT_FRACTION)))
    return 2 ** math.ceil(math.log2(need))


def _gpu(key: str) -> GpuSpec:
    if key in EXTRA_GPUS:
        return EXTRA_GPUS[key]
    if key == "H800":
        return _h800()
    return get_catalog().gpu(key)


_HW_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"tpu[- ]?v4", "TPU-v4"), (r"a6000", "A6000"), (r"h800", "H800"), (r"h100", "H100-SXM"),
    (r"a100[- ]?40", "A100-40GB"), (r"a100", "A100-80GB"), (r"rtx 3090", "RTX-3090"),
)


def resolve_hardware(row: PublishedRow, verifier: ModelSpec, bpp: float) -> tuple[GpuSpec, int, str]:
    """(gpu, count, note). Per-size statements ('RTX 3090 for 7B; 4x A100-40G for 70B') pick by size."""
    text = row.hardware.lower()
    size = verifier.params_total_b or count_params(verifier).total_b
    weights_gb = size * bpp
    note = ""
    if "for 7b" in text or "(7b)" in text or "7b/13b" in text:
        # per-size statements: small models on the first device, 70B/33B on the stated multi-GPU setup
        parts = re.split(r";|/ (?=\d+x)|, 1x", text)
        text = next((p for p in parts if ("70b" in p and size > 40) or ("33b" in p and 20 < size <= 40)
                     or ("7b" in p and size <= 10)), "not stated")
    if text.startswith("not stated") or text.startswith("n/a") or " or " in text:
        gpu = _gpu(DEFAULT_GPU)
        count = _count_for(weights_gb, gpu)
        return gpu, count, f"hardware not stated: {count}x {DEFAULT_GPU} assumed (most of these papers used A100s)"
    key = next((k for pat, k in _HW_PATTERNS if re.search(pat, text)), None)
    if key is None:
        gpu = _gpu(DEFAULT_GPU)
        return gpu, _count_for(weights_gb, gpu), f"hardware '{row.hardware}' not recognised: {DEFAULT_GPU} assumed"
    gpu = _gpu(key)
    m = re.search(r"(\d+)\s*x", text)
    count = int(m.group(1)) if m else _count_for(weights_gb, gpu)
    if count * gpu.memory_gb * FIT_FRACTION < weights_gb:
        note = f"{count}x {gpu.key} cannot hold the weights; {_count_for(weights_gb, gpu)} assumed"
        count = _count_for(weights_gb, gpu)
    return gpu, count, note


def harness_for(row: PublishedRow) -> str:
    """Which runtime measured the row (sets the overhead constants)."""
    if "sglang" in row.notes.lower():
        return "sglang"
    if "(vllm)" in row.source.lower():
        return "vllm"  # EAGLE3-T5 endpoints measured in vLLM (source cell "EAGLE-3 paper Table 5 (vLLM)")
    if row.source_id in ("LEVIATHAN-T2", "CHEN-T1"):
        return "compiled"  # T5X / XLA on TPU
    if row.source_id in ("DSV3-MTP", "CLOVER"):
        # production serving engines (DeepSeek's own; Baichuan's batched engine): a CUDA-graph engine stands in
        return "vllm"
    return "paper"

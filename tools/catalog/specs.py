"""Typed facts about models, GPUs, speculative heads and drafts.

These are the records every check works on. The embedded catalog
(``tools/catalog/tables.py``) builds them from package CSVs; the Hub path
(``tools/hub/client.py``) builds ``ModelSpec`` from a repo's ``config.json``. Each
record says where its facts came from (``source``) so output can cite it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.engines.base import version_key  # noqa: F401  (the one rule; re-exported for the catalog)
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import BreakTag, UnmodelledFeature

FactSource = Literal["catalog", "hub", "hub-cache", "user", "overlay"]


class ModelSpec(BaseModel):
    """Architecture facts for one model, enough for parameter counts, KV cache and step time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo_id: str
    family: str
    aliases: tuple[str, ...] = ()
    params_total_b: float | None = Field(None, description="published/catalog total parameters, billions")
    params_active_b: float | None = Field(None, description="MoE: parameters active per token, billions")
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int = Field(description="dense FFN width (MoE: width of the dense layers, 0 if none)")
    vocab_size: int = Field(description="config vocab_size (embedding rows, padding included)")
    tie_word_embeddings: bool = False
    # MoE
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    num_shared_experts: int = 0
    first_dense_layers: int = Field(0, description="MoE models whose first k layers are dense (DeepSeek-V3: 3)")
    # Attention variants
    sliding_window: int | None = None
    sliding_layer_fraction: float = Field(
        0.0, description="share of layers using the sliding window (Gemma-2/gpt-oss 0.5, Gemma-3 5/6)"
    )
    kv_lora_rank: int = Field(0, description="MLA: compressed KV width cached per layer (DeepSeek-V3: 512)")
    qk_rope_head_dim: int = Field(0, description="MLA: decoupled RoPE key width cached per layer (64)")
    q_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    attention_bias: bool = False
    vision_params_b: float = Field(0.0, description="vision tower parameters in the same checkpoint")
    mtp_layers: int = Field(0, description="num_nextn_predict_layers: built-in multi-token-prediction layers")
    # Hybrid stacks: some layers keep a constant-size state instead of a KV cache
    linear_attention_layer_fraction: float = Field(
        0.0, description="share of decoder layers with a constant-size state (Gated DeltaNet, Mamba-2, lightning "
        "attention): they hold no KV cache (Qwen3-Next/3.5 3/4, MiniMax-M1 7/8)"
    )
    linear_num_key_heads: int = Field(0, description="Gated DeltaNet key heads (config linear_num_key_heads)")
    linear_num_value_heads: int = Field(0, description="Gated DeltaNet value heads (linear_num_value_heads)")
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = Field(0, description="Gated DeltaNet short convolution width (linear_conv_kernel_dim)")
    attn_output_gate: bool = Field(False, description="full-attention q_proj also emits a per-head output gate")
    # Compressed shared-KV attention (DeepSeek-V4 CSA/HCA): layers cache one shared K=V entry of head_dim values per
    # ``ratio`` tokens, besides the last ``sliding_window`` tokens uncompressed (tools/arch/kv.py).
    kv_compress_ratios: str = Field("", description="compressed-KV layers as 'ratio*layers;...' from the config's "
                                    "compress_ratios (DeepSeek-V4-Flash: '4*21;128*20'); the other layers keep the "
                                    "sliding window only")
    index_head_dim: int = Field(0, description="lightning-indexer key width cached per compressed entry of the "
                                "smallest-ratio (CSA) layers (config index_head_dim)")
    hybrid_note: str = Field("", description="what kind of hybrid stack this is, in words")
    params_note: str = Field(
        "", description="non-empty when the counter cannot reproduce the published total from these fields: why"
    )
    unmodelled_features: tuple[UnmodelledFeature, ...] = Field(
        (), description="architecture features the speed model does not represent (models.csv; the one home of "
        "'not modelled'): an estimate for this verifier is outside the model's applicability domain")
    # Tokenizer and runtime facts
    tokenizer_family: str = Field(description="base vocabulary key: equal keys = same id->token map")
    tokenizer_specials: str = Field(
        "", description="special/added-token variant within the family; differs => same vocab, different specials"
    )
    tokenizer_note: str = ""
    max_position_embeddings: int
    dtype: str = Field(description="weight dtype as published: bf16, fp16, fp8, mxfp4")
    gated: Literal["yes", "no", "unknown"] = "unknown"
    source: str = ""
    notes: str = ""
    fact_source: FactSource = "catalog"

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def compressed_kv_layers(self) -> tuple[tuple[int, int], ...]:
        """(ratio, layers) pairs of the compressed shared-KV layers; empty for every other attention kind."""
        pairs = (part.split("*") for part in self.kv_compress_ratios.split(";") if part.strip())
        return tuple((int(ratio), int(layers)) for ratio, layers in pairs)


class GpuSpec(BaseModel):
    """One accelerator's memory and compute facts (per GPU)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(description="short canonical key, e.g. H100-SXM")
    name: str
    aliases: tuple[str, ...] = ()
    memory_gb: float
    bandwidth_gbps: float = Field(description="HBM/GDDR bandwidth, GB/s")
    bf16_tflops: float | None = Field(None, description="dense BF16 tensor TFLOPS (no sparsity)")
    fp16_tflops: float | None = Field(None, description="dense FP16 tensor TFLOPS where BF16 is absent")
    fp8_tflops: float | None = None
    fp4_tflops: float | None = Field(None, description="dense FP4 (NVFP4/MXFP4) tensor TFLOPS; None = no FP4 units")
    link_gbps: float | None = Field(None, description="GPU-to-GPU link bandwidth; 0 = PCIe only")
    interconnect: str = ""
    vendor: Literal["nvidia", "amd", "intel", "apple"] = "nvidia"
    unified_memory: bool = Field(False, description="CPU and GPU share one memory pool (Apple M-series, Strix Halo, "
                                 "DGX Spark): memory_gb is the whole system's, of which the OS and the GPU's share "
                                 "are configured by the user")
    source: str = ""
    notes: str = ""

    @property
    def memory_gib(self) -> float:
        # Accelerator memory is marketed in binary units: an "80GB" A100 reports 81,920 MiB
        # and an H100 81,559 MiB in nvidia-smi; a "24GB" RTX 4090 24,564 MiB. So the
        # catalog's memory_gb is, to within 0.5%, GiB.
        return self.memory_gb

    def peak_tflops(self, dtype: str) -> float:
        """Dense tensor TFLOPS for a weight dtype, falling back to the best listed rate."""
        # Only NVFP4 checkpoints run FP4 matmuls; mxfp4 weights (gpt-oss) keep the FP8 path as before.
        if dtype in ("fp4", "nvfp4") and self.fp4_tflops:
            return self.fp4_tflops
        if dtype in ("fp8", "int8", "int4", "mxfp4") and self.fp8_tflops:
            return self.fp8_tflops
        for value in (self.bf16_tflops, self.fp16_tflops, self.fp8_tflops):
            if value:
                return value
        # Every catalog GPU has at least one rate; a Hub-only GPU cannot exist.
        raise ValueError(f"{self.key} has no TFLOPS figure")


# The catalog's head kinds (tools/methods.py head_kind, plus IBM's MLPSpeculator, not a method of ours) and the
# draft models that heads.csv lists beside them.
HEAD_METHODS: tuple[str, ...] = tuple(dict.fromkeys(
    [*(r.head_kind for r in REGISTRY if r.head_kind), "mlp_speculator",
     *(r.name for r in REGISTRY if r.loads == "draft_lm")]))
HeadMethod = Literal[HEAD_METHODS]  # type: ignore[valid-type]
# Checkpoint formats: the methods' own (registry native_format), speculators, IBM's, plain HF, or not stated.
HEAD_FORMATS: tuple[str, ...] = ("", *dict.fromkeys(r.native_format for r in REGISTRY if r.native_format),
                                 "speculators", "mlp_speculator", "hf")
HeadFormat = Literal[HEAD_FORMATS]  # type: ignore[valid-type]


class HeadSpec(BaseModel):
    """A published speculative head and the verifier it was trained for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    head_repo_id: str
    method: HeadMethod
    method_detail: str
    format: HeadFormat = Field("", description="checkpoint layout: eagle (EAGLE repo), speculators, dflash, ...")
    verifier_repo_id: str
    verifier_revision: str = Field("", description="verifier commit the head was trained against, when published")
    head_params_b: float | None = None
    head_params_note: str = ""
    trained_context_tokens: int | None = Field(None, description="sequence length the head was trained on")
    runtimes: tuple[str, ...] = Field(description="engines that load it: vllm, sglang, trtllm; empty = unknown")
    engine_versions: str = Field("", description="engine versions that load it, where the source says")
    publisher: Literal["official", "community", "vendor", "test"] = "community"
    trained_dtype: str = Field("bf16", description="dtype the head was trained in; empty = the source does not say")
    superseded_by: str = Field("", description="head repo id its publisher recommends instead")
    source: str = ""
    notes: str = ""
    fact_source: FactSource = Field("catalog", description="catalog (embedded), overlay (`specpick catalog update`)")


class DraftPairing(BaseModel):
    """A known same-family draft model for a verifier family."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verifier_family: str
    draft_repo_id: str
    tokenizer_relation: Literal[
        "identical", "identical_except_padding", "same_vocab_different_specials",
        # transplanted: a small model retokenised to the verifier's vocabulary (transplant-vocab);
        # incompatible: a pairing people try that does not work (recorded so the planner can say why)
        "transplanted", "incompatible",
    ]
    note: str = ""
    source: str = ""


class EngineSupport(BaseModel):
    """Whether an engine runs a method, under which option name, from which version, and what breaks it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    engine_version: str = Field(description="the release(s) this row was read from, as written by the source")
    method: str
    support: Literal["yes", "partial", "no"]
    config_name: str
    knobs: str
    notes: str
    source: str
    min_version: str = Field("", description="first release the row applies to ('' = every release we track)")
    breaks_with: tuple[BreakTag, ...] = Field((), description="deployment features this method breaks with here")
    workaround: str = Field("", description="known workaround flags for the breaking combinations")

    def runs_at(self, version: str | None) -> bool:
        """True when the engine runs the method at ``version`` (None: today's build)."""
        if self.support == "no":
            return False
        return version is None or version_key(self.min_version) <= version_key(version)

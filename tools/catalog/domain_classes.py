"""The classes of the applicability domain that a catalog row decides (issue 34): one home for each rule.

Every rule reads the catalog's own columns (``tools/data/gpus.csv``, ``tools/data/models.csv``), never a name list
kept here, so a new catalog row lands in its class without a code change:

* **GPU class** (``gpu_class``) from the vendor, the unified-memory column and the product line the catalog's
  ``name`` states: Apple (``vendor`` apple: M-series SoCs), APU (``unified_memory`` and not Apple: Strix Halo, DGX
  Spark: one memory pool for CPU and GPU), consumer (the vendors' consumer lines: NVIDIA GeForce, AMD Radeon RX,
  Intel Arc without "Pro"), workstation (the vendors' professional desktop lines: NVIDIA RTX A-series and RTX PRO
  Workstation Edition, AMD Radeon AI PRO, Intel Arc Pro), datacenter (everything else: Instinct, Tesla, H/B/A/L/T/V,
  Gaudi, RTX PRO Server Edition). The line is the vendor's own marketing name, which is what sets the board's
  clocks, memory and cooling.
* **PCIe only** (``pcie_only``): the catalog's ``interconnect`` names the card's own link first ("none (PCIe ...)",
  "PCIe Gen5 x16; optional 2-way NVLink bridge"), or ``link_gbps`` is 0 or unverified (blank): such GPUs talk over
  PCIe unless the deployment states a bridge. A multi-GPU row states its own link where it can
  (``tools/calibration/extrapolation.py``).
* **verifier architecture families** (``arch_families``): hybrid linear attention / Mamba
  (``linear_attention_layer_fraction`` > 0: Gated DeltaNet, lightning attention, Mamba-2 layers hold no KV cache),
  MoE with more than 256 routed experts (``num_experts``), MLA (``kv_lora_rank`` > 0: compressed latent KV) and
  LatentMoE (the catalog row's ``family`` / ``hybrid_note`` says LatentMoE: Nemotron-3's latent-space experts, a
  feature the cost model does not represent).
"""

from __future__ import annotations

from typing import Literal

from specpick.tools.catalog.specs import GpuSpec, ModelSpec

GpuClass = Literal["datacenter", "workstation", "consumer", "apple", "apu"]
GPU_CLASSES: tuple[GpuClass, ...] = ("datacenter", "workstation", "consumer", "apple", "apu")
ArchFamily = Literal["hybrid_linear", "moe_over_256_experts", "mla", "latent_moe"]
ARCH_FAMILIES: tuple[ArchFamily, ...] = ("hybrid_linear", "moe_over_256_experts", "mla", "latent_moe")
MANY_EXPERTS_ABOVE = 256  # issue 34: "MoE with > 256 experts" (DeepSeek-V3 has 256; Kimi-K2 384, Qwen3-Next 512)

# Product-line words in the catalog's GPU name (the vendor's line, checked in this order; the first match decides).
_WORKSTATION_LINES = ("rtx pro 6000 blackwell workstation", "nvidia rtx a", "radeon ai pro", "arc pro")
_CONSUMER_LINES = ("geforce", "radeon rx", "intel arc")


def gpu_class(gpu: GpuSpec) -> GpuClass:
    """The GPU's class (see the module docstring for the rule and why)."""
    if gpu.vendor == "apple":
        return "apple"
    if gpu.unified_memory:
        return "apu"
    name = gpu.name.lower()
    if any(line in name for line in _WORKSTATION_LINES):
        return "workstation"
    if any(line in name for line in _CONSUMER_LINES):
        return "consumer"
    return "datacenter"


def pcie_only(gpu: GpuSpec) -> bool:
    """The GPU's own link to its peers is PCIe (no fabric built into the board or the node)."""
    link = gpu.interconnect.strip().lower()
    return not gpu.link_gbps or link.startswith(("none", "pcie"))


def arch_families(spec: ModelSpec) -> tuple[ArchFamily, ...]:
    """The verifier's architecture families the extrapolation classes hold out (none for a plain transformer)."""
    out: list[ArchFamily] = []
    if spec.linear_attention_layer_fraction > 0:
        out.append("hybrid_linear")
    if spec.num_experts > MANY_EXPERTS_ABOVE:
        out.append("moe_over_256_experts")
    if spec.kv_lora_rank > 0:
        out.append("mla")
    if "latentmoe" in f"{spec.family} {spec.hybrid_note}".lower().replace(" ", ""):
        out.append("latent_moe")
    return tuple(out)

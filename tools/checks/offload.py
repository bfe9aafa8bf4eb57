"""Partial offload (llama.cpp): which of the verifier's layers stay on the GPU, and what the rest cost per token.

llama.cpp runs a model whose weights exceed the GPU memory: ``-ngl N`` keeps N layers on the GPU and runs the others
on the CPU from system RAM; for an MoE model ``--n-cpu-moe N`` keeps the routed experts of N layers in system RAM and
everything else on the GPU (docs/references/LLAMACPP-PLACEMENT.md). Every forward then reads the offloaded weights once
from system RAM at its bandwidth. A verify pass of N+1 tokens reads them once too, so speculation's gain under
offload follows from the step time (``tools/model/steptime.py`` adds the read of ``Hardware.host_read``): no special
case here.

The arithmetic (pure, over plain numbers) is used by the memory check (``tools/checks/method_fit.py``), the
llama-server command (``tools/engines/llamacpp.py``: ``-ngl`` / ``--n-cpu-moe``) and the step time.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from specpick.tools.deployment import HostMemory, HostRead

GIB = 2**30
# System RAM of the machine when the user does not say (--host-memory-gib): a stated assumption, a common desktop
# size for the consumer GPUs this path serves.
HOST_MEMORY_GIB_DEFAULT = 32.0
# What the operating system and the desktop keep of it (stated assumption).
HOST_RESERVED_GIB = 4.0
# Peak bandwidth of dual-channel DDR5-5600 (2 channels x 8 bytes x 5600 MT/s = 89.6 GB/s, the JEDEC DDR5 data rate):
# a stated assumption (--host-bandwidth-gbps to change); CPUs reach less than the peak, so the cost is a floor.
HOST_BANDWIDTH_GBPS_DEFAULT = 89.6


def host_memory(memory_gib: float | None, bandwidth_gbps: float | None) -> tuple[HostMemory, list[str]]:
    """The machine's system RAM (the user's figures, else the stated defaults) and the default lines."""
    lines = []
    if memory_gib is None:
        lines.append(f"system RAM = {HOST_MEMORY_GIB_DEFAULT:g} GiB (assumed; --host-memory-gib), of which "
                     f"{HOST_RESERVED_GIB:g} GiB is left to the OS")
    if bandwidth_gbps is None:
        lines.append(f"system RAM bandwidth = {HOST_BANDWIDTH_GBPS_DEFAULT:g} GB/s (dual-channel DDR5-5600 peak: "
                     "2 x 8 bytes x 5600 MT/s; assumed, --host-bandwidth-gbps)")
    return HostMemory(memory_gib if memory_gib is not None else HOST_MEMORY_GIB_DEFAULT,
                      bandwidth_gbps if bandwidth_gbps is not None else HOST_BANDWIDTH_GBPS_DEFAULT), lines


class Offload(BaseModel):
    """Where the verifier's layers go when its weights do not fit the GPUs, and whether the rest fits system RAM."""

    num_layers: int
    layers_on_gpu: int
    moe: bool = Field(description="MoE: the routed experts of the other layers go to system RAM (--n-cpu-moe)")
    offloaded_weights_gib: float = Field(description="verifier weights read from system RAM per forward")
    host_memory_gib: float
    host_bandwidth_gbps: float
    fits: bool = Field(description="the offloaded weights fit the system RAM left after the OS")
    assumptions: list[str] = Field(default_factory=list)

    @property
    def gpu_layers(self) -> int | None:
        """llama.cpp -ngl for a dense model (None for MoE: all layers on the GPU, experts moved instead)."""
        return None if self.moe else self.layers_on_gpu

    @property
    def n_cpu_moe(self) -> int | None:
        """llama.cpp --n-cpu-moe for an MoE model (None for a dense one)."""
        return self.num_layers - self.layers_on_gpu if self.moe else None

    @property
    def host_read_ms(self) -> float:
        """Reading the offloaded weights once from system RAM (every forward: decode or a verify of N+1 tokens)."""
        return host_read_ms(self.offloaded_weights_gib * GIB, self.host_bandwidth_gbps)

    def host_read(self, repo_id: str) -> HostRead:
        """What the step time adds to each forward of ``repo_id``: the offloaded share read at the host's bandwidth."""
        return HostRead(repo_id, (self.num_layers - self.layers_on_gpu) / self.num_layers, self.host_bandwidth_gbps)

    def verdict(self) -> str:
        """The memory verdict in words."""
        off = self.num_layers - self.layers_on_gpu
        where = f"the routed experts of {off} layers" if self.moe else f"{off} layers"
        if not self.fits:
            return (f"does not fit even with partial offload: {self.offloaded_weights_gib:.1f} GiB of weights would "
                    f"go to system RAM, more than the {self.host_memory_gib - HOST_RESERVED_GIB:g} GiB left of "
                    f"{self.host_memory_gib:g} GiB (--host-memory-gib)")
        # An MoE token reads only the experts it routes to (the step time counts those); a dense one every layer.
        cost = (f"the experts a token routes to read at {self.host_bandwidth_gbps:g} GB/s" if self.moe else
                f"read at {self.host_bandwidth_gbps:g} GB/s each forward: +{self.host_read_ms:.0f} ms per token")
        return (f"fits with partial offload: {self.layers_on_gpu} of {self.num_layers} layers on the GPU ({where} "
                f"in system RAM, {self.offloaded_weights_gib:.1f} GiB; {cost})")


def host_read_ms(offloaded_bytes: float, host_bandwidth_gbps: float) -> float:
    """Milliseconds to read ``offloaded_bytes`` once from system RAM (memory-bound CPU layers)."""
    return offloaded_bytes / (host_bandwidth_gbps * 1e9) * 1e3 if host_bandwidth_gbps > 0 else 0.0


@dataclass(frozen=True)
class GpuBudget:
    """The GPUs' side of the fit, all GPUs together (GiB): what is usable, the verifier's weights and the rest
    (KV at the deployment's context and concurrency, the runtime, the draft or head)."""

    usable_gib: float
    verifier_weights_gib: float
    other_gib: float


def plan_offload(budget: GpuBudget, num_layers: int, moe: bool, host: HostMemory) -> Offload | None:
    """The layer split llama.cpp would run (None when the weights fit the GPUs, or nothing is left for any layer).

    Layers are taken as equal in size (weights / layers): the GPUs keep the share their memory holds after the KV,
    the runtime and the draft. For an MoE model the routed experts go to system RAM first and attention stays on the
    GPU; experts are costed as the whole layer, so ``--n-cpu-moe`` is a floor to start from (the command's note says
    to lower it while it loads).
    """
    if budget.verifier_weights_gib <= 0 or num_layers < 1:
        return None
    room = budget.usable_gib - budget.other_gib
    if room >= budget.verifier_weights_gib or room < 0:
        return None
    on_gpu = max(0, min(num_layers - 1, int(num_layers * room / budget.verifier_weights_gib)))
    offloaded = budget.verifier_weights_gib * (num_layers - on_gpu) / num_layers
    notes = ["partial offload: layers taken as equal in size; the KV cache stays on the GPU (llama.cpp's default "
             "--kv-offload); the CPU layers are taken as memory-bound (their compute is left out)"]
    memory = host.memory_gib if host.memory_gib is not None else HOST_MEMORY_GIB_DEFAULT
    bandwidth = host.bandwidth_gbps if host.bandwidth_gbps is not None else HOST_BANDWIDTH_GBPS_DEFAULT
    return Offload(num_layers=num_layers, layers_on_gpu=on_gpu, moe=moe, offloaded_weights_gib=round(offloaded, 2),
                   host_memory_gib=memory, host_bandwidth_gbps=bandwidth, fits=offloaded <= memory - HOST_RESERVED_GIB,
                   assumptions=notes)


__all__ = ["GpuBudget", "HOST_BANDWIDTH_GBPS_DEFAULT", "HOST_MEMORY_GIB_DEFAULT", "Offload", "host_memory",
           "host_read_ms", "plan_offload"]

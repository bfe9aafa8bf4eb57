"""llama.cpp partial offload: the layer split, the system-RAM fit, the read per forward, and one verdict everywhere."""

from __future__ import annotations

import re

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.render import to_markdown
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.checks.offload import HOST_RESERVED_GIB, GpuBudget, plan_offload
from specpick.tools.commands.engine_config import engine_config_tool
from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
from specpick.tools.commands.vram import VramInput, vram_fit
from specpick.tools.deployment import HostMemory, HostRead
from specpick.tools.model.constants import get_overhead
from specpick.tools.model.overhead import ENGINE_TO_HARNESS
from specpick.tools.model.cost_inputs import Hardware, Precision, Runtime, StepLoad
from specpick.tools.model.steptime import step_time

HOST = HostMemory(64.0, 89.6)
# A 27B Q8_0 GGUF (26.8 GiB of weights) on a 12 GiB RTX 3060: the case a user ran into (issue 25).
QWEN_GGUF = "unsloth/Qwen3.8-27B-GGUF:Q8_0"


def test_the_gpu_keeps_the_share_of_layers_its_memory_holds() -> None:
    # 80 layers of 40 GiB, 24 GiB usable, 4 GiB for KV and runtime: 20 GiB hold half the layers.
    dense = plan_offload(GpuBudget(24.0, 40.0, 4.0), 80, False, HOST)
    moe = plan_offload(GpuBudget(24.0, 40.0, 4.0), 80, True, HOST)
    assert dense is not None and (dense.gpu_layers, dense.n_cpu_moe, dense.offloaded_weights_gib) == (40, None, 20.0)
    assert moe is not None and (moe.gpu_layers, moe.n_cpu_moe) == (None, 40)
    assert dense.fits and "fits with partial offload: 40 of 80 layers on the GPU" in dense.verdict()


def test_no_offload_when_the_weights_fit_or_not_even_the_kv_does() -> None:
    assert plan_offload(GpuBudget(24.0, 10.0, 4.0), 80, False, HOST) is None
    assert plan_offload(GpuBudget(2.0, 40.0, 4.0), 80, False, HOST) is None


def test_offloaded_weights_must_fit_the_system_ram_left_after_the_os() -> None:
    small = HostMemory(16.0, 89.6)
    # 20 GiB would go to RAM; 16 GiB less the OS's share cannot hold it.
    refused = plan_offload(GpuBudget(24.0, 40.0, 4.0), 80, False, small)
    assert refused is not None and not refused.fits and 20.0 > 16.0 - HOST_RESERVED_GIB
    assert "does not fit even with partial offload" in refused.verdict()


def _verifier_step(tokens: int, host_read: HostRead | None) -> float:
    spec = get_catalog().model("llama-3.1-8b")
    hw = Hardware(get_catalog().gpu("RTX-3060"), 1, host_read=host_read)
    return step_time(spec, hw, StepLoad(1, tokens, 512), Precision(1.0), Runtime(get_overhead(ENGINE_TO_HARNESS["llamacpp"]))).total_ms


def test_a_verify_of_n_plus_1_tokens_reads_the_offloaded_layers_once_as_a_decode_does() -> None:
    spec = get_catalog().model("llama-3.1-8b")
    read = HostRead(spec.repo_id, 0.5, 89.6)
    decode_extra = _verifier_step(1, read) - _verifier_step(1, None)
    verify_extra = _verifier_step(5, read) - _verifier_step(5, None)
    assert decode_extra > 0 and verify_extra == pytest.approx(decode_extra, rel=0.05)
    # A draft model is another model: the verifier's offload does not slow it.
    other = HostRead("someone/else", 0.5, 89.6)
    assert _verifier_step(1, other) == _verifier_step(1, None)


def test_speculation_gains_more_the_slower_the_offloaded_layers_are_read() -> None:
    # The same GPU, split and acceptance; only the system RAM's bandwidth moves. Each verifier forward (a decode or
    # a verify of N+1 tokens) pays the read once while a draft step does not, so slower RAM makes drafting pay more:
    # this follows from the step time, with no special case for offload.
    kw = dict(verifier=QWEN_GGUF, method="mtp", engine="llamacpp", workload="chat", tau=2.5, num_draft_tokens=3,
              gpu="RTX-3060")
    fast = estimate_speedup(SpeedupInput(host_bandwidth_gbps=400.0, **kw))  # type: ignore[arg-type]
    slow = estimate_speedup(SpeedupInput(host_bandwidth_gbps=40.0, **kw))  # type: ignore[arg-type]
    assert any(a.startswith("partial offload:") for a in slow.assumptions)
    assert slow.base_step.total_ms > fast.base_step.total_ms
    assert slow.speedup > fast.speedup


def test_the_memory_verdict_and_the_printed_command_agree() -> None:
    rec = plan(PlannerInputs(verifier=QWEN_GGUF, engine="llamacpp", gpu="RTX-3060", workload="chat"))
    text = to_markdown(rec)
    layers = re.search(r"fits with partial offload: (\d+) of (\d+) layers on the GPU", text)
    assert layers is not None, text
    argv = rec.engine_config.argv
    assert argv[argv.index("-ngl") + 1] == layers.group(1)
    assert "does not fit" not in text and "tensor parallel 4" not in text
    assert rec.strategy != "none"


def test_vram_and_engine_config_give_the_same_split_as_recommend() -> None:
    fit = vram_fit(VramInput(verifier=QWEN_GGUF, gpu="RTX-3060", engine="llamacpp", workload="chat"))
    assert fit.fits and fit.offload is not None
    cfg = engine_config_tool(EngineConfigInput(engine="llamacpp", method="none", verifier=QWEN_GGUF,
                                               gpu="RTX-3060", context_tokens=fit.context_tokens))
    assert cfg.argv[cfg.argv.index("-ngl") + 1] == str(fit.offload.gpu_layers)


def test_too_little_system_ram_is_a_refusal_that_says_what_to_change() -> None:
    from specpick.tools.errors import InputError

    fit = vram_fit(VramInput(verifier=QWEN_GGUF, gpu="RTX-3060", engine="llamacpp", host_memory_gib=8))
    assert not fit.fits and "--host-memory-gib" in fit.verdict_line()
    with pytest.raises(InputError, match="host-memory-gib"):
        engine_config_tool(EngineConfigInput(engine="llamacpp", method="none", verifier=QWEN_GGUF, gpu="RTX-3060",
                                             host_memory_gib=8))


def test_a_layer_split_over_several_gpus_is_not_called_tensor_parallel() -> None:
    fit = vram_fit(VramInput(verifier=QWEN_GGUF, gpu="RTX-3060", gpus=2, engine="llamacpp", workload="chat"))
    text = " ".join(fit.assumptions)
    assert "split by layer over 2 GPU(s)" in text and "TP=" not in text
    assert "gpu_memory_utilization" not in fit.reservation


def test_unified_memory_has_no_system_ram_to_offload_to() -> None:
    # An M1 Pro's 32 GB is the GPU's and the CPU's at once (gpus.csv unified_memory): the 27B in BF16 (54 GB) does
    # not fit, and no system RAM is left over to hold the rest.
    fit = vram_fit(VramInput(verifier="Qwen/Qwen3.8-27B", quantization="bf16", gpu="M1-PRO", engine="llamacpp",
                             workload="chat"))
    assert get_catalog().gpu("M1-PRO").unified_memory
    assert not fit.fits and fit.offload is None

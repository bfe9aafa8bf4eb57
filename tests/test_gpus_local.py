"""Consumer, workstation, laptop, APU and Apple parts (issue 25): each resolves the way its owners write it, with
the memory and bandwidth its vendor states, and says whether CPU and GPU share one memory pool."""

from __future__ import annotations

import pytest

from specpick.tools.catalog.tables import get_catalog

# (spelling as written in community threads, key, memory GB, bandwidth GB/s): figures as the cited pages state them.
PARTS = [
    ("RTX 3060 12GB", "RTX-3060", 12, 360),            # pcpartdb: 12 GB, 360 GB/s
    ("RTX 4060 Ti 16GB", "RTX-4060-TI", 16, 288),      # guru3d: 288 GB/s
    ("5060 Ti", "RTX-5060-TI", 16, 448),               # techpowerup: 448 GB/s
    ("RTX 5080", "RTX-5080", 16, 960),                 # notebookcheck: 960 GB/s
    ("RTX 4090 Laptop", "RTX-4090-LAPTOP", 16, 576),   # hmc-tech: 576 GB/s
    ("RTX 5090 mobile", "RTX-5090-LAPTOP", 24, 896),   # hmc-tech: 896 GB/s
    ("RTX A5000", "RTX-A5000", 24, 768),
    ("A6000", "RTX-A6000", 48, 768),                   # servethehome via tools/calibration/specs.py
    ("Tesla P40", "P40", 24, 346),                     # omegaco (NVIDIA text): 346 GB/s
    ("RX 7900 XTX", "RX-7900-XTX", 24, 960),           # guru3d: 960 GB/s
    ("Radeon RX 9070 XT", "RX-9070-XT", 16, 640),      # multiplayer.it: 640 GB/s
    ("9060 XT", "RX-9060-XT", 16, 320),                # techpowerup: 320 GB/s
    ("Radeon AI PRO R9700", "RADEON-AI-PRO-R9700", 32, 640),
    ("Ryzen AI Max+ 395", "STRIX-HALO", 128, 256),     # svethardware: 256 GB/s
    ("Radeon 8060S", "STRIX-HALO", 128, 256),
    ("Arc B580", "ARC-B580", 12, 456),                 # fpsbench: 456 GB/s
    ("Arc Pro B60", "ARC-PRO-B60", 24, 456),           # technical.city: 456 GB/s
    ("DGX Spark", "DGX-SPARK", 128, 273),              # ai-infrastructure.net: 273 GB/s
    ("GB10", "DGX-SPARK", 128, 273),
    ("M1 Max", "M1-MAX", 64, 400),
    ("M2 Ultra", "M2-ULTRA", 192, 800),
    ("Apple M3 Ultra", "M3-ULTRA", 512, 819),          # techpowerup: 819 GB/s, 512 GB
    ("M4 Pro", "M4-PRO", 64, 273),                     # gamebastion: 273 GB/s
    ("M4 Max 128GB", "M4-MAX", 128, 546),              # notebookcheck: 546 GB/s
    ("M5 Max", "M5-MAX", 128, 614),                    # awesomeagents: 614 GB/s
    ("M5 Pro", "M5-PRO", 64, 307),                     # technetbooks: 307 GB/s
]


@pytest.mark.parametrize(("spelling", "key", "memory_gb", "bandwidth_gbps"), PARTS)
def test_local_parts_resolve_with_their_vendor_figures(spelling, key, memory_gb, bandwidth_gbps):
    gpu = get_catalog().gpu(spelling)
    assert (gpu.key, gpu.memory_gb, gpu.bandwidth_gbps) == (key, memory_gb, bandwidth_gbps)


def test_every_spelling_of_every_gpu_finds_its_own_row():
    # Appended rows must neither steal an older row's name nor be shadowed by one ("4090 laptop" is not "4090").
    cat = get_catalog()
    for g in cat.gpus:
        for name in (g.key, g.name, *g.aliases):
            assert cat.gpu(name) is g, f"{name} resolves to {cat.gpu(name).key}, not {g.key}"


def test_unified_memory_marks_the_shared_pool_parts_only():
    cat = get_catalog()
    shared = {g.key for g in cat.gpus if g.unified_memory}
    apple = {g.key for g in cat.gpus if g.vendor == "apple"}
    assert shared == apple | {"STRIX-HALO", "DGX-SPARK"}
    assert {"M1-MAX", "M2-ULTRA", "M3-ULTRA", "M4-MAX", "M5-MAX"} <= apple
    assert not cat.gpu("RTX 4090").unified_memory and not cat.gpu("H100").unified_memory


def test_every_new_part_has_a_rate_the_step_time_can_use_and_cites_a_page():
    cat = get_catalog()
    for g in cat.gpus[30:]:
        assert g.peak_tflops("bf16") > 0, g.key
        assert "http" in g.source or "Apple Newsroom" in g.source, g.key
        # Parts without NVLink carry 0 (PCIe), so tensor parallelism over them is costed as PCIe all-reduce.
        assert g.link_gbps == 0, g.key

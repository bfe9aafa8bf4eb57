"""llama.cpp rows (issue 25): they test the llama.cpp cost model only (never another engine's figure or fit) and are
no acceptance prior; local hardware spellings resolve; the pending transcription keeps the engine table's columns and
tags."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.calibration.engine_rows import HELD_OUT_TAG, NOT_A_PRIOR_TAG, load_engine_rows
from specpick.tools.calibration.engine_specs import resolve_engine_gpu, weights_bytes_per_param
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.vocab import GGUF_BITS_PER_WEIGHT

PENDING = Path(__file__).resolve().parent.parent / "docs" / "pending-data" / "LLAMACPP-COMMUNITY-2026.csv"
NEW_SOURCES = {"LLAMACPP-23398", "GEMMACLAW-346", "GEMMACLAW-282", "LMSTUDIO-LMS-581", "LLAMACPP-22673"}
# The breadth pass (draft model, EAGLE-3, n-gram, DSpark/DFlash; AMD and Apple): appended later, same tags.
BREADTH_SOURCES = {"LLAMASWAP-SPECDEC", "THC1006-RTX3090", "OPENCLAWRADAR-HVAC", "REDDIT-1T8T0DX", "REDDIT-1GZM93O",
                   "FEDI-46973921", "LLAMACPP-25173", "DEVTO-SOMEODDCODEGUY-MTP", "CALEBCOFFIE-MTP",
                   "AIMAESTRO-STRIXHALO-MTP", "JEANFBRITO-DENSE-MOE", "HF-GAZTRAB-27B-MTP-IQ3", "HF-FRAQTL-35B-MTP",
                   "GLUKHOV-RTX4080-MTP", "HF-LOCALWEIGHTS-27B-MTP", "NEOTERIC-3090TI-MTP", "INVENTIVEHQ-DRAFTSWEEP", "LLAMACPP-23752"}


@pytest.mark.parametrize(("cell", "key", "count"), [
    ("1x RTX 4060 Ti (16 GB)", "RTX-4060-TI", 1), ("1x RTX 5090 Laptop", "RTX-5090-LAPTOP", 1),
    ("2x RTX A5000 (NVLink bridge, tensor split)", "RTX-A5000", 2), ("2x Tesla P40 (tensor split)", "P40", 2),
    ("1x RX 7900 XTX (Vulkan)", "RX-7900-XTX", 1), ("1x Radeon AI PRO R9700", "RADEON-AI-PRO-R9700", 1),
    ("1x Apple M3 Ultra (96 GB, Metal)", "M3-ULTRA", 1), ("1x Ryzen AI Max+ 395 (Radeon 8060S iGPU)", "STRIX-HALO", 1),
    ("1x Arc Pro B60", "ARC-PRO-B60", 1), ("1x DGX Spark", "DGX-SPARK", 1),
    ("1x RTX 3090 Ti", "RTX-3090-TI", 1), ("1x RTX 4080", "RTX-4080", 1), ("2x RTX 3090 (layer split)", "RTX-3090", 2),
])
def test_local_hardware_cells_resolve(cell: str, key: str, count: int) -> None:
    gpu, n = resolve_engine_gpu(cell)
    assert (gpu.key, n) == (key, count)


@pytest.mark.parametrize(("cell", "reason"), [
    ("1x RTX 3080 Ti", "not in catalog: RTX 3080 TI"),  # a Ti is not its non-Ti sibling
    ("1x Radeon 8060S (Strix Halo iGPU, 128 GB unified)", "names no catalog GPU"),  # kept out: vLLM rows use it
])
def test_parts_outside_the_catalog_are_named_not_guessed(cell: str, reason: str) -> None:
    assert reason in resolve_engine_gpu(cell)


def test_llamacpp_rows_enter_only_the_llamacpp_figures_and_are_not_priors() -> None:
    sources = NEW_SOURCES | BREADTH_SOURCES | {"QWEN38-MTP-README"}
    rows = [r for r in load_engine_rows() if r.source_id in sources]
    assert {r.source_id for r in rows} == sources  # every listed source has its rows
    for row in rows:
        assert row.engine == "llamacpp" and row.llamacpp and not row.prior_candidate
        assert row_use(row)[0] == "skipped"  # never in another engine's figure or fit
    tagged = [r.row_id for r in load_engine_rows() if HELD_OUT_TAG in r.notes]
    assert not tagged, (f"{len(tagged)} engine rows still carry {HELD_OUT_TAG!r}: llama.cpp rows are chosen by their "
                        "engine cell now; drop the tag from their notes (and refit: tools/model/overhead_llamacpp.py)")
    # and the llama.cpp figures take no other engine's row
    assert all(row_use(r, llamacpp=True)[0] == "skipped" for r in load_engine_rows() if r.engine != "llamacpp")


def test_llamacpp_rows_cost_their_weights_at_the_gguf_type() -> None:
    row = next(r for r in load_engine_rows() if r.source_id == "LLAMACPP-23398")
    case = row_use(row, llamacpp=True)[1]
    bpp, _ = weights_bytes_per_param(row.verifier_model, row.config, case.verifier)
    assert bpp == pytest.approx(GGUF_BITS_PER_WEIGHT["q8_0"] / 8)  # config cell "weights q8_0"


def test_pending_rows_keep_the_engine_columns_and_tags() -> None:
    with PENDING.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    engine_header = (Path(__file__).resolve().parent.parent / "tools" / "data" / "engine_measurements.csv").read_text(
        "utf-8").splitlines()[0].split(",")
    assert list(rows[0].keys()) == engine_header
    assert len({r["source_id"] for r in rows}) >= 8
    for r in rows:
        assert r["source"].strip() and NOT_A_PRIOR_TAG in r["notes"]
        assert r["engine"] == "mlx" or HELD_OUT_TAG in r["notes"]
        assert float(r["speedup"].lstrip("~").split("-")[0]) > 0


@pytest.mark.parametrize(("key", "bandwidth_gbps", "memory_gb"), [("RTX-3090-TI", 1008, 24), ("RTX-4080", 717, 16)])
def test_added_consumer_gpus_carry_their_cited_memory_and_bandwidth(key: str, bandwidth_gbps: float, memory_gb: float) -> None:
    # tweaktown (RTX 3090 Ti: 24 GB GDDR6X, 1008 GB/s) and holynerdvana (RTX 4080: 16 GB, 717 GB/s), cited in gpus.csv
    gpu = get_catalog().gpu(key)
    assert (gpu.bandwidth_gbps, gpu.memory_gb) == (bandwidth_gbps, memory_gb)

"""Extrapolation classes (issue 34): which engine rows each class holds, by the rows' own cells and the catalog, and
that a class is predicted with none of its sources in any prior."""

from __future__ import annotations

import re

import pytest

from specpick.tools.calibration import extrapolation as ex
from specpick.tools.catalog.domain_classes import arch_families, gpu_class, pcie_only
from specpick.tools.catalog.tables import get_catalog


@pytest.fixture(scope="module")
def members():
    return {name: {r.row_id for r, _ in rows} for name, rows in ex.class_members().items()}


@pytest.fixture(scope="module")
def usable():
    return ex.usable_cases()


def _rows(usable, pattern: str, cell: str = "hardware"):
    found = [(r, c) for r, c in usable if re.search(pattern, getattr(r, cell))]
    assert found, f"no usable engine row whose {cell} matches {pattern!r}"
    return found


@pytest.mark.parametrize("pattern, tokens", [
    (r"context depth 32K", 32768), (r"context depth 65K", 66560), (r"~28\.5k context", 29184),
])
def test_a_row_that_states_a_long_context_is_in_the_context_class(usable, members, pattern, tokens):
    for row, _ in _rows(usable, pattern, "task"):
        assert ex.stated_context_tokens(row) == tokens
        assert row.row_id in members[ex.CONTEXT_CLASS]


def test_short_or_unstated_context_rows_are_not_in_it(usable, members):
    for row, _ in _rows(usable, r"ISL/OSL 1024/1024|~15k prompt tokens", "task"):
        assert row.row_id not in members[ex.CONTEXT_CLASS]
    # llama.cpp's --ctx-size is the KV window allocated, not the context decoded over
    for row, _ in _rows(usable, r"--ctx-size 131072", "config"):
        if ex.stated_context_tokens(row) is None:
            assert row.row_id not in members[ex.CONTEXT_CLASS]


@pytest.mark.parametrize("pattern", [r"^2x H100-PCIe", r"^2x RTX 5090 \(tensor split\)", r"^3x Tesla P40",
                                     r"^2x Radeon AI PRO R9700"])
def test_multi_gpu_rows_over_pcie_are_in_the_pcie_class(usable, members, pattern):
    for row, case in _rows(usable, pattern):
        assert case.gpus >= 2 and row.row_id in members[ex.PCIE_CLASS]


def test_single_gpu_and_fabric_rows_are_not_over_pcie(usable, members):
    for row, _ in _rows(usable, r"^1x RTX 3090") + _rows(usable, r"^8x B200") + _rows(usable, r"^8x MI300X"):
        assert row.row_id not in members[ex.PCIE_CLASS]


def test_a_stated_nvlink_bridge_beats_the_catalog_link(usable):
    row, case = _rows(usable, r"^1x RTX 3090")[0]
    two = case.model_copy(update={"gpus": 2})
    assert ex.over_pcie(row.model_copy(update={"hardware": "2x RTX 3090 (layer split)"}), two)
    assert not ex.over_pcie(row.model_copy(update={"hardware": "2x RTX 3090 (NVLink bridge)"}), two)
    assert ex.over_pcie(row.model_copy(update={"hardware": "2x RTX 3090 (no NVLink)"}), two)


def test_four_rtx_pro_6000_workstation_cards_are_pcie_and_workstation(usable):
    """No such row is in the data yet: the rule on the catalog's RTX PRO 6000 rows, in a real row's case."""
    row, case = _rows(usable, r"^2x H100-PCIe")[0]
    ws = get_catalog().gpu("RTX-PRO-6000-BW-WS")
    row4 = row.model_copy(update={"hardware": "4x RTX PRO 6000 Blackwell Workstation Edition (TP 4)"})
    case4 = case.model_copy(update={"gpu": ws, "gpus": 4})
    assert ex.over_pcie(row4, case4) and ex.PCIE_CLASS in ex.row_classes(row4, case4, {})
    assert "gpu_workstation" in ex.row_classes(row4, case4, {})


@pytest.mark.parametrize("key, cls, pcie", [
    ("H100-SXM", "datacenter", False), ("MI355X", "datacenter", False), ("H100-PCIE", "datacenter", True),
    ("RTX-PRO-6000-BW-SERVER", "datacenter", True), ("P40", "datacenter", True),
    ("RTX-PRO-6000-BW-WS", "workstation", True), ("RTX-A5000", "workstation", True),
    ("RADEON-AI-PRO-R9700", "workstation", True), ("ARC-PRO-B60", "workstation", True),
    ("RTX-3090", "consumer", True), ("RTX-5090-LAPTOP", "consumer", True), ("RX-7900-XTX", "consumer", True),
    ("ARC-B580", "consumer", True), ("M2-ULTRA", "apple", True), ("STRIX-HALO", "apu", True),
    ("DGX-SPARK", "apu", True),
])
def test_gpu_class_and_link_from_the_catalog_row(key, cls, pcie):
    gpu = get_catalog().gpu(key)
    assert gpu_class(gpu) == cls and pcie_only(gpu) is pcie


@pytest.mark.parametrize("repo, families", [
    ("deepseek-ai/DeepSeek-V3", {"mla"}), ("moonshotai/Kimi-K2-Instruct", {"mla", "moe_over_256_experts"}),
    ("Qwen/Qwen3.6-27B", {"hybrid_linear"}), ("Qwen/Qwen3-Next-80B-A3B-Instruct", {"hybrid_linear",
                                                                                   "moe_over_256_experts"}),
    ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", {"hybrid_linear", "moe_over_256_experts", "latent_moe"}),
    ("meta-llama/Llama-3.1-8B-Instruct", set()),
])
def test_architecture_families_from_the_catalog_row(repo, families):
    assert set(arch_families(get_catalog().model(repo))) == families


@pytest.mark.parametrize("pattern, cls", [
    (r"DeepSeek-V3|DeepSeek-R1", "arch_mla"), (r"^Kimi-K2", "arch_moe_over_256_experts"),
    (r"^Qwen3\.6-", "arch_hybrid_linear"),
])
def test_rows_on_those_verifiers_are_in_their_architecture_class(usable, members, pattern, cls):
    for row, _ in _rows(usable, pattern, "verifier_model"):
        assert row.row_id in members[cls]


@pytest.mark.parametrize("pattern, cls", [
    (r"Apple M2 Ultra", "gpu_apple"), (r"Ryzen AI Max\+ 395", "gpu_apu"), (r"^1x RTX 3090", "gpu_consumer"),
    (r"Radeon AI PRO R9700", "gpu_workstation"), (r"^8x B200", "gpu_datacenter"), (r"^1x MI355X", "gpu_datacenter"),
])
def test_rows_on_those_gpus_are_in_their_gpu_class(usable, members, pattern, cls):
    for row, _ in _rows(usable, pattern):
        assert row.row_id in members[cls]


def test_the_newest_release_class_holds_the_newest_builds_only(usable, members):
    for row, _ in _rows(usable, r"\(Sep 2026\)", "engine_version"):
        assert row.engine == "vllm" and row.row_id in members["newest_vllm"]
    for row, _ in _rows(usable, r"^V1 main \(Apr 2025\)", "engine_version"):
        assert ex.release_year(row) == 2025 and row.row_id not in members["newest_vllm"]
    v019 = _rows(usable, r"^v0\.19\.0 ROCm", "engine_version")[0][0]  # no year: after 0.14.0 (January 2026)
    assert ex.release_year(v019) == 2026


def test_a_class_is_predicted_with_none_of_its_sources_in_any_prior(monkeypatch):
    rows = ex.class_members()[ex.PCIE_CLASS]
    sources = {r.source_id for r, _ in rows}
    seen = []
    real = ex.predict

    def spy(case, *, own, exclude=frozenset(), **kw):
        seen.append((own, exclude))
        return real(case, own=own, exclude=exclude, **kw)

    monkeypatch.setattr(ex, "predict", spy)
    result = ex.score_class(ex.PCIE_CLASS, "x", rows)
    assert len(seen) == len(rows) and len(sources) >= 2
    assert all(not own and sources <= exclude for own, exclude in seen)
    assert result.stats.n + result.not_covered == len(rows) and result.n_sources == len(sources)


def test_the_report_marks_small_classes_and_is_cached():
    report = ex.extrapolation_report()
    assert ex.extrapolation_report() is report
    for c in report.classes:
        assert c.gated is (c.stats.n >= ex.MIN_ROWS_TO_GATE)
        if c.stats.n:
            assert c.coverage.n == c.stats.n
    assert {c.name for c in report.classes} >= {ex.CONTEXT_CLASS, ex.PCIE_CLASS, "arch_latent_moe", "gpu_apple"}
    failing = ex.gate_failures(report, 1.0)
    assert len(failing) == sum(1 for c in report.classes if c.gated and (c.coverage.share or 0) < 1.0)
    assert ex.gate_failures(report, 1.0, [c.name for c in report.classes]) == []


def test_the_gate_fails_just_above_a_class_figure_and_passes_at_it():
    report = ex.extrapolation_report()
    for c in (c for c in report.classes if c.gated):
        assert any(f"'{c.name}'" in f for f in ex.gate_failures(report, min(1.0, c.coverage.share + 0.001))) \
            or c.coverage.share == 1.0
        assert not any(f"'{c.name}'" in f for f in ex.gate_failures(report, c.coverage.share))


def test_a_sources_widening_comes_from_the_other_sources_only():
    from specpick.tools.calibration.cases import Prediction
    from specpick.tools.calibration.class_widening import cross_fitted_coverage, widening_needed

    p = Prediction(speedup=2.0, low=1.6, high=2.5, tau=3.0)
    assert widening_needed(p, 2.2) == 1.0 and widening_needed(p, 1.6) == 1.0
    assert widening_needed(p, 2.0 * (2.5 / 2.0) ** 2) == pytest.approx(2.0)  # twice the upper side in log space
    assert widening_needed(p, 2.0 * (1.6 / 2.0) ** 3) == pytest.approx(3.0)
    rows = [("A", p, 2.0)] * 5 + [("B", p, 1.0)] * 5  # B misses far below; A sits at the point
    cov, factors = cross_fitted_coverage(rows)
    assert factors["A"] > 3.0 and factors["B"] == 1.0  # B's widening is sized by A's rows, which all held
    assert cov.inside == 5 and cov.below == 5  # B is scored with A's factor: still outside, as it should be
    moved = [("A", p, 2.0)] * 5 + [("B", p, 0.5)] * 5
    assert cross_fitted_coverage(moved)[1]["B"] == factors["B"]  # B's own misses never size B's widening


def test_widening_never_narrows_a_class():
    for c in ex.extrapolation_report().classes:
        if c.widened_coverage is not None:
            assert c.widened_coverage.inside >= c.coverage.inside and all(k >= 1.0 for k in c.widening.values())

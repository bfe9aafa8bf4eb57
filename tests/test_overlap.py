"""Overlap (async) scheduling of the speculative path: which releases have it, and what it hides.

The decisions follow the engines' own records (tools/model/overlap.py): vLLM turned async scheduling on with
EAGLE/MTP speculation in 0.14.0 (vllm#31998); SGLang's spec v2 is opt-in and runs chains only. The cost side is
physics plus one fitted share: host work overlapped with the GPU only shows where it outlasts the GPU work, except
the share of per-request work that stays serial (RuntimeOverhead.overlap_seq_exposed_fraction, fitted end to end in
tools/calibration/fit.py).
"""

from __future__ import annotations

import pytest

from specpick.tools.calibration.engine_cases import row_overlap
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
from specpick.tools.model.constants import get_overhead
from specpick.tools.model.cost_inputs import DraftSetup, Hardware, Precision, Runtime
from specpick.tools.model.cyclecost import cycle_cost
from specpick.tools.model.overlap import VLLM_ASYNC_SPEC_SINCE, spec_overlap

CAT = get_catalog()


@pytest.mark.parametrize("version, method, expected", [
    (None, "eagle3", True),            # the newest release
    (VLLM_ASYNC_SPEC_SINCE, "mtp", True),
    ("0.13.0", "eagle3", False),       # before vllm#31998
    ("0.10.0", "eagle", False),
    ("0.19.0", "ngram", False),        # only EAGLE/MTP switched on by default in 0.14
    ("0.19.0", "draft_model", False),  # draft models followed later (vllm#48341), release not named
])
def test_vllm_overlaps_eagle_and_mtp_from_0_14(version, method, expected):
    d = spec_overlap("vllm", version, method)
    assert d.overlap is expected
    assert ("overlaps the GPU" in d.note) is expected


def test_sglang_spec_v2_is_opt_in_and_user_off_wins():
    assert not spec_overlap("sglang", "0.5.4", "eagle3").overlap
    assert "SGLANG_ENABLE_SPEC_V2=1" in spec_overlap("sglang", None, "eagle3").note
    assert spec_overlap("sglang", None, "eagle3", setting="on").overlap
    assert not spec_overlap("sglang", None, "ngram", setting="on").overlap  # no spec v2 path for n-gram
    assert not spec_overlap("vllm", None, "eagle3", setting="off").overlap
    assert not spec_overlap("trtllm", None, "mtp").overlap


def _cycle(harness: str, *, overlap: bool, tree: bool = False, batch: int = 8, model: str = "llama-3.1-8b"):
    draft = DraftSetup(method="eagle3", num_draft_tokens=4, tree_top_k=4 if tree else 1,
                       tree_tokens=16 if tree else None)
    return cycle_cost(draft, CAT.model(model), Precision(2.0), Hardware(CAT.gpu("H100"), 1),
                      Runtime(get_overhead(harness), overlap=overlap), batch=batch, context_tokens=512)


@pytest.mark.parametrize("harness", ["vllm", "sglang"])
@pytest.mark.parametrize("batch", [1, 8, 64])
def test_overlap_hides_a_dense_verifiers_host_work_up_to_the_gpu_time(harness, batch):
    serial, overlapped = _cycle(harness, overlap=False, batch=batch), _cycle(harness, overlap=True, batch=batch)
    gpu_ms = serial.draft_ms + serial.verify.total_ms
    assert overlapped.overhead_ms == pytest.approx(max(0.0, serial.overhead_ms - gpu_ms)
                                                   + get_overhead(harness).overlap_exposed_ms)
    assert overlapped.cycle_cost < serial.cycle_cost
    assert overlapped.draft_ms == serial.draft_ms and overlapped.verify.total_ms == serial.verify.total_ms


@pytest.mark.parametrize("harness", ["vllm", "sglang"])
def test_a_moe_verifier_keeps_its_serial_per_request_share_at_high_concurrency(harness):
    """The fitted share (MoE rows only) stays on the critical path however long the GPU work, so at concurrency 64 a
    MoE cycle under overlap costs more than the same cycle with all host work hidden, and never more than serial."""
    from specpick.tools.calibration.fit import path_constants

    all_hidden = path_constants({"engine.overlap_seq_exposed_fraction": 0.0})
    moe = CAT.model("Qwen/Qwen3-30B-A3B")
    eagle3, h100x2, bf16 = DraftSetup(method="eagle3", num_draft_tokens=3), Hardware(CAT.gpu("H100"), 2), Precision(2.0)
    kw = dict(batch=64, context_tokens=512)
    hidden = cycle_cost(eagle3, moe, bf16, h100x2, Runtime(all_hidden.overhead(harness), all_hidden, True), **kw)
    committed = cycle_cost(eagle3, moe, bf16, h100x2, Runtime(get_overhead(harness), overlap=True), **kw)
    serial = cycle_cost(eagle3, moe, bf16, h100x2, Runtime(get_overhead(harness), overlap=False), **kw)
    assert hidden.cycle_cost < committed.cycle_cost <= serial.cycle_cost
    # a dense verifier is not given the share: no dense row was measured with overlap
    dense = _cycle(harness, overlap=True, batch=64)
    dense_hidden = cycle_cost(DraftSetup(method="eagle3", num_draft_tokens=4), CAT.model("llama-3.1-8b"), bf16,
                              Hardware(CAT.gpu("H100"), 1), Runtime(all_hidden.overhead(harness), all_hidden, True),
                              batch=64, context_tokens=512)
    assert dense.cycle_cost == pytest.approx(dense_hidden.cycle_cost)


def test_sglang_runs_spec_v2_for_chains_only():
    assert _cycle("sglang", overlap=True, tree=True).overhead_ms == _cycle("sglang", overlap=False, tree=True).overhead_ms
    assert _cycle("vllm", overlap=True, tree=True).overhead_ms < _cycle("vllm", overlap=False, tree=True).overhead_ms


def test_the_engine_version_moves_the_speedup_and_the_answer_says_why():
    base = dict(verifier="llama-3.1-8b", method="eagle3", gpu="H100", workload="chat", engine="vllm", tau=3.08,
                num_draft_tokens=4)
    old = estimate_speedup(SpeedupInput(**base, engine_version="0.10.0"))
    new = estimate_speedup(SpeedupInput(**base, engine_version="0.19.0"))
    assert new.speedup > old.speedup and new.cycle_cost < old.cycle_cost
    assert any("adds to each cycle" in a and "0.10.0" in a for a in old.assumptions)
    assert any("overlaps the GPU" in a for a in new.assumptions)
    # the papers' own harness has no scheduling mode: no overlap line at all
    paper = estimate_speedup(SpeedupInput(**{**base, "engine": None}, harness="paper"))
    assert not any("overlap" in a for a in paper.assumptions)


def test_engine_rows_read_their_overlap_from_the_version_they_state():
    by_version = {}
    for row in load_engine_rows():
        if row.engine in ("vllm", "sglang") and row.method:
            by_version.setdefault((row.engine, row.engine_version, row.method), row_overlap(row)[0])
    assert by_version[("vllm", "V1 main (Jul 2025)", "eagle3")] is False
    assert by_version[("vllm", "main (May 2026, MRV2)", "mtp")] is True
    assert by_version[("vllm", "v0.19.0 ROCm (vllm/vllm-openai-rocm:v0.19.0, MML 2248)", "eagle3")] is True
    assert by_version[("sglang", "SpecForge bench on SGLang spec v2 (2026)", "eagle3")] is True
    assert by_version[("sglang", "not stated (Dec 2025)", "eagle3")] is False


@pytest.mark.parametrize("verify_tokens", [5, 12])  # depth + 1 with top-4 is still no chain to SGLang spec v2
def test_a_top_k_draft_on_sglang_spec_v2_says_the_overlap_does_not_apply_to_it(verify_tokens):
    base = dict(verifier="llama-3.1-8b", method="eagle3", gpu="H100", workload="chat", engine="sglang",
                spec_overlap="on", tau=3.0, num_draft_tokens=4)
    chain = estimate_speedup(SpeedupInput(**base))
    tree = estimate_speedup(SpeedupInput(**base, tree_top_k=4, num_verify_tokens=verify_tokens))
    assert not any("chain drafts (top-k 1) only" in a for a in chain.assumptions)
    assert any("chain drafts (top-k 1) only: this draft's per-cycle host work adds" in a for a in tree.assumptions)
    assert tree.engine_overhead > chain.engine_overhead


def test_spec_v2_users_get_a_chain_not_a_wider_tree():
    """The wide-tree rule would pick top-4 at high acceptance; with spec v2 on, SGLang has no such tree to offer."""
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    on = plan(PlannerInputs(verifier="vicuna-7b", workload="chat", gpu="H100", engine="sglang", spec_overlap="on"))
    assert on.tree is None or on.tree.top_k == 1
    assert "--speculative-eagle-topk 4" not in on.engine_config.config
    assert any("overlap scheduling runs chains only" in n or "chains of EAGLE" in n
               for n in [*on.rationale, *on.expected_speedup.assumptions])


def test_recommend_applies_the_overlap_setting_to_the_named_engine_only():
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    base = dict(verifier="llama-3.1-8b", workload="chat", gpu="H100", engine="vllm", method="eagle3")
    auto = plan(PlannerInputs(**base))
    off = plan(PlannerInputs(**base, spec_overlap="off"))
    old = plan(PlannerInputs(**base, engine_version="0.10.0"))
    assert off.expected_speedup.value < auto.expected_speedup.value
    assert old.expected_speedup.value == off.expected_speedup.value  # 0.10 predates async scheduling with EAGLE
    # and the same inputs through `speedup` give the same number
    sp = estimate_speedup(SpeedupInput(verifier="llama-3.1-8b", method="eagle3", gpu="H100", workload="chat",
                                       engine="vllm", spec_overlap="off", num_draft_tokens=off.num_draft_tokens))
    assert round(sp.speedup, 2) == off.expected_speedup.value


def test_running_the_overlap_scheduler_raises_the_methods_that_break_with_it():
    """SGLang's NGRAM path disables the overlap scheduler (engine_support.csv breaks_with overlap_schedule): a user
    who says they run spec v2 is told, instead of getting the overlap credited."""
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    rec = plan(PlannerInputs(verifier="llama-3.1-8b", workload="rag", gpu="H100", engine="sglang", spec_overlap="on",
                             method="ngram"))
    flag = next(f for f in rec.flags if f.id == "engine_breaks_with")
    assert "overlap_schedule" in flag.message and flag.severity == "warn"
    assert not any("overlaps the GPU" in a for a in rec.expected_speedup.assumptions)

"""Model constants live in one frozen object: the fit and callers vary copies, never the defaults."""

from __future__ import annotations

import pydantic
import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants, get_overhead
from specpick.tools.model.estimate import EstimateRequest, estimate_for_specs

CAT = get_catalog()


def _request(**kw) -> EstimateRequest:
    args = dict(verifier=CAT.model("llama-3.1-8b"), gpu=CAT.gpu("H100"), method="eagle3", num_draft_tokens=3,
                alpha=0.7, harness="vllm")
    return EstimateRequest(**{**args, **kw})


def test_constants_are_frozen():
    with pytest.raises(pydantic.ValidationError):
        DEFAULT_CONSTANTS.flops_efficiency = 0.5  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError):
        DEFAULT_CONSTANTS.overheads.vllm.cycle_ms = 9.0  # type: ignore[misc]


def test_the_fit_does_not_mutate_the_default_constants():
    from specpick.tools.calibration.fit import fit_all

    before = DEFAULT_CONSTANTS.model_dump()
    paper_before = get_overhead("paper")
    fits = fit_all(paper_grid={"host_per_layer_ms": (0.6, 1.4), "cycle_ms": (0.0, 2.0)},
                   batch_grid={"FLOPS_EFFICIENCY": (0.3, 0.4), "engine.spec_forward_ms": (0.0, 1.0)},
                   path_grid={"engine.moe_layer_ms": (0.0, 0.06), "sglang.one_model_cycle_ms": (0.0, 1.0)},
                   overlap_grid={"engine.overlap_seq_exposed_fraction": (0.0, 1.0)},
                   llamacpp_grid={"verify_token_frac": (0.0, 0.5), "cycle_ms": (0.0, 6.0)})
    assert DEFAULT_CONSTANTS.model_dump() == before
    assert get_overhead("paper") is paper_before
    paper, batch, paths, overlap, llamacpp = fits
    assert llamacpp.committed == {"verify_token_frac": before["overheads"]["llamacpp"]["verify_token_frac"],
                                  "cycle_ms": before["overheads"]["llamacpp"]["cycle_ms"]}
    # "committed" is read after the grid ran: had a grid point leaked into the defaults it would show here
    assert paths.committed == {"engine.moe_layer_ms": before["overheads"]["sglang"]["moe_layer_ms"],
                               "sglang.one_model_cycle_ms": before["overheads"]["sglang"]["one_model_cycle_ms"]}
    # the grid points really were scored with other values: committed and grid best differ in score
    assert paper.committed == {"host_per_layer_ms": before["overheads"]["paper"]["host_per_layer_ms"],
                               "cycle_ms": before["overheads"]["paper"]["cycle_ms"]}
    assert batch.committed == {"FLOPS_EFFICIENCY": before["flops_efficiency"],
                               "engine.spec_forward_ms": before["overheads"]["vllm"]["spec_forward_ms"]}
    assert overlap.committed == {"engine.overlap_seq_exposed_fraction":
                                 before["overheads"]["sglang"]["overlap_seq_exposed_fraction"]}
    assert paper.best_score_pct != paper.committed_score_pct or paper.best != paper.committed


def test_fit_grid_points_are_copies_with_the_values_set():
    from specpick.tools.calibration.fit import batch_constants, paper_constants

    before = DEFAULT_CONSTANTS.model_dump()
    c = batch_constants({"FLOPS_EFFICIENCY": 0.4, "ROOFLINE_SHARPNESS": 3.0, "engine.cycle_ms": 5.0})
    assert (c.flops_efficiency, c.roofline_sharpness) == (0.4, 3.0)
    assert all(c.overhead(h).cycle_ms == 5.0 for h in ("vllm", "sglang", "trtllm"))
    assert c.overhead("paper") == DEFAULT_CONSTANTS.overhead("paper")
    p = paper_constants({"host_per_layer_ms": 1.4})
    assert p.overhead("paper").host_per_layer_ms == 1.4
    assert p.overhead("transformers") == DEFAULT_CONSTANTS.overhead("transformers")
    assert DEFAULT_CONSTANTS.model_dump() == before  # the copies left the defaults as they were


@pytest.mark.parametrize("update", [
    {"bandwidth_efficiency": 0.5},
    {"flops_efficiency": 0.1},
    {"overheads": DEFAULT_CONSTANTS.overheads.model_copy(
        update={"vllm": DEFAULT_CONSTANTS.overhead("vllm").model_copy(update={"one_model_spec_forward_ms": 3.0})})},
])
def test_a_modified_copy_changes_the_estimate_and_the_default_path_does_not(update):
    req = _request(batch=32)
    default = estimate_for_specs(req)
    changed = estimate_for_specs(req, constants=DEFAULT_CONSTANTS.model_copy(update=update))
    again = estimate_for_specs(req)
    assert changed.cycle_cost != pytest.approx(default.cycle_cost, rel=1e-3)
    assert changed.tau == default.tau  # constants are the cost model; acceptance does not move
    assert again.model_dump() == default.model_dump()
    assert estimate_for_specs(req, constants=DEFAULT_CONSTANTS).model_dump() == default.model_dump()


def test_routing_reuse_copy_moves_a_moe_verify_and_its_stated_assumption():
    req = _request(verifier=CAT.model("qwen3-30b-a3b"), num_draft_tokens=5)
    default = estimate_for_specs(req)
    independent = estimate_for_specs(req, constants=ModelConstants(routing_reuse=0.0))
    assert independent.verify_step.experts_touched_per_layer > default.verify_step.experts_touched_per_layer
    assert any("probability 0.0 beyond chance" in a for a in independent.assumptions)
    assert any(f"probability {DEFAULT_CONSTANTS.routing_reuse} beyond chance" in a for a in default.assumptions)

"""llama.cpp's own cost constants (tools/model/overhead_llamacpp.py): fitted on the llama.cpp rows of the fit split only,
graded leave-one-source-out, carried by every llama.cpp answer."""

from __future__ import annotations

import pytest

from specpick.tools.calibration import llamacpp_fit
from specpick.tools.calibration.engine_rows import load_engine_rows
from specpick.tools.calibration.llamacpp_fit import fit_llamacpp, llamacpp_cases, refit_loso_errors
from specpick.tools.calibration.split import split_of_source
from specpick.tools.model import overhead_llamacpp
from specpick.tools.model.intervals import load_bands

# The first test to ask for the engine report computes it (the llama.cpp strict refit, ~70 s alone on 2 cores);
# on a loaded CI machine that passed the 300 s per-test timeout, which is for hangs, not for this known cost.
pytestmark = pytest.mark.timeout(900)

SMALL_GRID = {"verify_token_frac": (0.0, 0.1), "spec_forward_ms": (0.5, 1.0)}


def test_the_fit_rests_on_the_rows_it_names():
    fit = llamacpp_cases("fit")
    assert len(fit) == overhead_llamacpp.FIT_ROWS
    assert tuple(sorted({c.row.source_id for c in fit})) == overhead_llamacpp.FIT_SOURCES
    assert all(c.row.engine == "llamacpp" and c.harness == "llamacpp" for c in llamacpp_cases())


def test_the_fit_never_sees_the_holdout_half(monkeypatch):
    """Halve every holdout llama.cpp row's measured speedup: the fit (best point, score, rows) must not move, while the
    holdout figure it reports must."""
    before = fit_llamacpp(SMALL_GRID)
    real = load_engine_rows()
    halved = tuple(r.model_copy(update={"speedup": (r.speedup or 1.0) / 2})
                   if r.engine == "llamacpp" and split_of_source(r.source_id) == "holdout" else r for r in real)
    monkeypatch.setattr(llamacpp_fit, "load_engine_rows", lambda: halved)
    after = fit_llamacpp(SMALL_GRID)
    for key in ("best", "best_score_pct", "n_rows", "committed_score_pct"):
        assert after[key] == before[key]
    assert after["holdout"]["committed_mean_ape_pct"] != before["holdout"]["committed_mean_ape_pct"]


def test_the_strict_leave_one_source_out_covers_every_row():
    assert len(refit_loso_errors()) == len(llamacpp_cases())


def test_llamacpp_has_its_own_bands_and_they_are_never_zero_width():
    bands = load_bands()
    for group in ("llamacpp:end_to_end", "llamacpp:cost_model"):
        assert bands[group].q_low < 0.0 < bands[group].q_high
        assert bands[group].n_rows == overhead_llamacpp.FIT_ROWS  # the fit split's llama.cpp rows, no other engine's


@pytest.mark.parametrize("gpu", ["RTX-4090", "M3-ULTRA", "RX-7900-XTX"])
def test_a_llamacpp_answer_says_it_is_for_the_llamacpp_path_and_cites_the_fit(gpu):
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    ans = estimate_speedup(SpeedupInput(verifier="Qwen/Qwen3.8-27B", method="mtp", gpu=gpu, engine="llamacpp",
                                        workload="chat", quantization="q4_k_m"))
    assert ans.harness == "llamacpp"
    note = next(a for a in ans.assumptions if a.startswith("llama.cpp path"))
    assert "tools/model/overhead_llamacpp.py" in note and f"{overhead_llamacpp.FIT_ROWS} llama.cpp rows" in note
    assert "compiled-decoder" not in " ".join(ans.assumptions)
    assert 0 < ans.low < ans.speedup < ans.high

"""The 80% interval: sized from out-of-sample residuals, committed file in sync with its build script."""

from __future__ import annotations

import math

import pytest

from scripts.build_intervals import build_bands, csv_path, render_csv
from specpick.tools.model.intervals import conformal_bounds, interval_group, load_bands, speedup_interval


def test_committed_bands_match_the_build_script():
    assert csv_path().read_text(encoding="utf-8") == render_csv(build_bands()), \
        "run `python scripts/build_intervals.py` after changing the model or the measurement sets"


def test_every_group_has_a_band_resting_on_several_sources():
    bands = load_bands()
    for engine in (True, False):
        for user in (True, False):
            band = bands[interval_group(engine, user)]
            assert band.n_rows >= 8 and band.n_sources >= 2, band
            assert band.q_low <= band.q_high


@pytest.mark.parametrize("family", ["draft", "model_free"])
@pytest.mark.parametrize("user", [True, False])
def test_drafts_and_model_free_methods_on_an_engine_get_a_band_of_their_own(family, user):
    """The fit split has too few engine rows of these families to stand alone, so their band is the envelope of the
    pooled engine band and the published rows' band of the family: never narrower than either, and it says so."""
    from scripts.build_intervals import FAMILY_MIN_ROWS, _of_family
    from specpick.tools.calibration.engines import engine_cases

    assert len(_of_family(engine_cases("fit"), family, user)) < FAMILY_MIN_ROWS
    bands = load_bands()
    band, pooled = bands[interval_group(True, user, family)], bands[interval_group(True, user)]
    assert band.q_low <= pooled.q_low and band.q_high >= pooled.q_high
    assert band.rows_used.startswith("envelope of the pooled engine band") and family in band.rows_used
    assert band.n_rows > pooled.n_rows
    # the paper harness and trained heads keep the groups they had
    assert interval_group(False, user, family) == interval_group(False, user)
    assert interval_group(True, user, "head") == interval_group(True, user)


def test_a_missing_family_band_is_an_error_outside_the_build():
    from specpick.tools.model import intervals

    assert not intervals.BUILDING
    with pytest.raises(KeyError, match="build_intervals.py"):
        speedup_interval(2.0, "engine:end_to_end:nonexistent")


def test_an_engine_n_gram_estimate_states_the_model_free_band():
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    res = estimate_speedup(SpeedupInput(verifier="meta-llama/Llama-3.1-8B-Instruct", method="ngram", gpu="H100-SXM",
                                        workload="chat", engine="vllm"))
    band = load_bands()["engine:end_to_end:model_free"]
    assert res.low == pytest.approx(res.speedup * math.exp(band.q_low), rel=1e-9)
    assert any("engine:end_to_end:model_free: envelope of" in a for a in res.assumptions)


def test_interval_scales_the_estimate_by_the_residual_band():
    band = load_bands()["engine:end_to_end"]
    low, high, note = speedup_interval(2.0, "engine:end_to_end")
    assert low == pytest.approx(2.0 * math.exp(band.q_low))
    assert high == pytest.approx(2.0 * math.exp(band.q_high))
    assert "80% interval" in note and "held-out" in note


@pytest.mark.parametrize(("n", "lo_rank", "hi_rank"), [
    (70, 7, 64),   # floor(71 x 0.1) = 7, ceil(71 x 0.9) = 64: wider than the 10th/90th percentiles
    (29, 3, 27),   # n + 1 = 30: 30 x (1 - 0.8) / 2 is 2.9999999999999996 in floating point, still rank 3
    (9, 1, 9),     # ceil(10 x 0.9) = 9: a small sample gives its extremes
    (3, 1, 3),     # fewer than 1/0.1 - 1 residuals: clamped to the sample
])
def test_conformal_bounds_are_the_finite_sample_order_statistics(n, lo_rank, hi_rank):
    values = [float(i) for i in range(n, 0, -1)]  # n..1, unsorted on purpose
    assert conformal_bounds(values) == (float(lo_rank), float(hi_rank))


def test_conformal_bounds_cover_at_least_the_stated_share_of_new_draws():
    """Exchangeable draws: the next one falls inside [low, high] at least 80% of the time (checked exactly)."""
    import random

    rng = random.Random(7)
    inside = trials = 0
    for _ in range(4000):
        sample = [rng.gauss(0, 1) for _ in range(31)]
        low, high = conformal_bounds(sample[:30])
        inside += low <= sample[30] <= high
        trials += 1
    assert inside / trials >= 0.78  # >= 80% in expectation; 4000 draws put 78% ~3 standard errors below

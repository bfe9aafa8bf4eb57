"""The 80% interval: sized from out-of-sample residuals, committed file in sync with its build script."""

from __future__ import annotations

import math

import pytest

from scripts.build_intervals import build_bands, csv_path, render_csv
from specpick.tools.model.intervals import QUANTILES, interval_group, load_bands, quantile, speedup_interval


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


@pytest.mark.parametrize(("values", "q", "expected"), [
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.5, 3.0),
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.9, 4.6),   # type-7: 1 + 0.9 * 4 = 4.6th order statistic
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.1, 1.4),
    ([7.0], 0.9, 7.0),
])
def test_quantile_is_the_interpolated_order_statistic(values, q, expected):
    assert quantile(values, q) == pytest.approx(expected)


def test_quantiles_are_monotone_so_p90_is_never_below_the_median():
    values = [0.3, 5.0, 1.1, 0.9, 2.2, 0.1, 7.5]
    assert quantile(values, QUANTILES[0]) <= quantile(values, 0.5) <= quantile(values, QUANTILES[1])


def test_interval_scales_the_estimate_by_the_residual_band():
    band = load_bands()["engine:end_to_end"]
    low, high, note = speedup_interval(2.0, "engine:end_to_end")
    assert low == pytest.approx(2.0 * math.exp(band.q_low))
    assert high == pytest.approx(2.0 * math.exp(band.q_high))
    assert "80% interval" in note and "held-out" in note

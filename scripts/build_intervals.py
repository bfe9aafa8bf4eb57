"""Build ``tools/data/interval_residuals.csv``: the residual bands that size every estimate's 80% interval.

For each group (``tools/model/intervals.py``) the calibration rows are predicted out of sample, and the 10th and
90th percentiles of ``log(measured / predicted)`` are written with how many rows and sources they rest on:

* ``paper:end_to_end`` -- every usable published (dev-set) row, acceptance priors rebuilt without its source;
* ``paper:cost_model`` -- the published rows that state their own tau/alpha, fed that acceptance (the eager
  constants were fitted on these rows, so this band is in-sample for the cycle cost; stated in the file);
* ``engine:end_to_end`` -- engine-measured rows of the *fit* split only, priors without the row's source;
* ``engine:cost_model`` -- fit-split engine rows that state their own tau/alpha;
* ``llamacpp:end_to_end`` / ``llamacpp:cost_model`` -- llama.cpp's own, from its fit-split rows only;
* ``engine:<mode>:draft`` and ``engine:<mode>:model_free`` -- the engine bands for separate draft models and for
  model-free drafting. The fit split's engine rows are nearly all trained heads (one-model path), whose misses say
  little about a two-model or host-side path; a family with fewer than ``FAMILY_MIN_ROWS`` fit-split rows from
  ``FAMILY_MIN_SOURCES`` sources takes the wider of the pooled engine band and the band of the published rows of
  the same family (``rows_used`` says which).

The ends are split-conformal order statistics (``tools/model/intervals.py conformal_bounds``).

The holdout split is never used here, so ``specpick calibrate --engines`` can check the intervals on it.
Run ``python scripts/build_intervals.py`` after changing the model or the measurement sets;
``tests/test_intervals.py`` fails if the committed file drifts from what this script computes.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from specpick.tools.calibration.cases import CalibCase, build_case, predict_speedup
from specpick.tools.calibration.engines import engine_cases
from specpick.tools.calibration.llamacpp_fit import llamacpp_cases
from specpick.tools.catalog.published import load_published
from specpick.tools.errors import InputError
from specpick.tools.model import intervals
from specpick.tools.model.intervals import ENVELOPE_FAMILIES, conformal_bounds
from specpick.tools.vocab import METHOD_FAMILY

COLUMNS = ("group", "n_rows", "n_sources", "q_low", "q_high", "rows_used")
FAMILY_MIN_ROWS, FAMILY_MIN_SOURCES = 15, 3  # below this a family's own engine band is too thin to stand alone


def _residuals(cases: list[CalibCase], own: bool) -> list[tuple[str, float]]:
    """(source, log(measured / predicted)) per case, out of sample (priors without the row's source)."""
    out = []
    for c in cases:
        try:
            pred = predict_speedup(c, own=own, exclude=frozenset() if own else frozenset({c.row.source_id}))
        except InputError:  # no prior left without the row's own source: not covered, not a residual
            continue
        out.append((c.row.source_id, math.log((c.row.speedup or 1.0) / pred)))
    return out


def _band(group: str, residuals: list[tuple[str, float]], rows_used: str) -> dict[str, object]:
    low, high = conformal_bounds([r for _, r in residuals])
    return {"group": group, "n_rows": len(residuals), "n_sources": len({s for s, _ in residuals}),
            "q_low": round(low, 4), "q_high": round(high, 4), "rows_used": rows_used}


def _family_band(mode: str, family: str, engine: list[tuple[str, float]], pooled: dict[str, object],
                 published: list[tuple[str, float]], runtime: str = "engine") -> dict[str, object]:
    """The ``runtime`` band (engine, llamacpp) of one method family: its own fit-split rows where enough, else the
    envelope of the pooled band and the published rows' band of that family."""
    group = f"{runtime}:{mode}:{family}"
    sources = {s for s, _ in engine}
    if len(engine) >= FAMILY_MIN_ROWS and len(sources) >= FAMILY_MIN_SOURCES:
        return _band(group, engine, f"{runtime} rows of the fit split, {family} methods")
    paper = _band(group, published, "")
    in_sample = "; the published rows' cycle cost is in-sample (eager constants fitted on them)" \
        if mode == "cost_model" else ""
    return {"group": group, "n_rows": int(pooled["n_rows"]) + len(published),  # type: ignore[call-overload]
            "n_sources": int(pooled["n_sources"]) + len({s for s, _ in published}),  # type: ignore[call-overload]
            "q_low": min(pooled["q_low"], paper["q_low"]), "q_high": max(pooled["q_high"], paper["q_high"]),  # type: ignore[type-var]
            "rows_used": f"envelope of the pooled {runtime} band ({pooled['n_rows']} fit-split {runtime} predictions) "
                         f"and the {family} published rows' band ({len(published)} predictions): only {len(engine)} "
                         f"fit-split {runtime} rows of {family} methods ({len(sources)} sources){in_sample}"}


def _of_family(cases: list[CalibCase], family: str, own: bool) -> list[CalibCase]:
    """The cases of one method family (with their own acceptance, for a cost-model band)."""
    return [c for c in cases if METHOD_FAMILY.get(c.row.method or "") == family and (c.own_acceptance or not own)]


def _llamacpp_bands(dev: list[CalibCase]) -> list[dict[str, object]]:
    """llama.cpp's bands, from the fit split's llama.cpp rows only (never another engine's). A cost-model band needs
    rows that state their own acceptance; while fewer than ``FAMILY_MIN_ROWS`` from ``FAMILY_MIN_SOURCES`` sources
    do, it takes the end-to-end band, which carries the acceptance misses as well (the wider claim). Separate draft
    models and model-free drafting get family bands as on the serving engines (``_family_band``)."""
    fit = llamacpp_cases("fit")
    e2e = _band("llamacpp:end_to_end", _residuals(fit, False),
                "llama.cpp rows of the fit split, priors without the row's source")
    own = [c for c in fit if c.own_acceptance]
    if len(own) >= FAMILY_MIN_ROWS and len({c.row.source_id for c in own}) >= FAMILY_MIN_SOURCES:
        cost = _band("llamacpp:cost_model", _residuals(own, True), "llama.cpp rows of the fit split with their own "
                     "acceptance")
    else:
        cost = {**e2e, "group": "llamacpp:cost_model",
                "rows_used": f"the llama.cpp end-to-end band: only {len(own)} fit-split llama.cpp rows state their "
                             "own acceptance"}
    families = []
    for family in ENVELOPE_FAMILIES:
        band = _family_band("end_to_end", family, _residuals(_of_family(fit, family, False), False), e2e,
                            _residuals(_of_family(dev, family, False), False), runtime="llamacpp")
        families += [band, {**band, "group": f"llamacpp:cost_model:{family}"}]
    return [e2e, cost, *families]


def build_bands() -> list[dict[str, object]]:
    """The residual bands (see module docstring)."""
    intervals.BUILDING = True  # family groups borrow their pooled band while this predicts (only points are read)
    try:
        dev = [c for c in (build_case(r) for r in load_published()) if isinstance(c, CalibCase)]
        fit = engine_cases("fit")
        pooled = {
            "end_to_end": _band("engine:end_to_end", _residuals(fit, False),
                                "engine rows of the fit split, priors without the row's source"),
            "cost_model": _band("engine:cost_model", _residuals([c for c in fit if c.own_acceptance], True),
                                "engine rows of the fit split with their own acceptance"),
        }
        families = [_family_band(mode, family, _residuals(_of_family(fit, family, own), own), pooled[mode],
                                 _residuals(_of_family(dev, family, own), own))
                    for family in ENVELOPE_FAMILIES for mode, own in (("end_to_end", False), ("cost_model", True))]
        return [
            _band("paper:end_to_end", _residuals(dev, False), "published rows, priors without the row's source"),
            _band("paper:cost_model", _residuals([c for c in dev if c.own_acceptance], True),
                  "published rows with their own acceptance (eager constants fitted on them: in-sample cost)"),
            pooled["end_to_end"], pooled["cost_model"], *families, *_llamacpp_bands(dev),
        ]
    finally:
        intervals.BUILDING = False


def render_csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def csv_path() -> Path:
    """The CSV in the source tree (a build never writes into site-packages)."""
    return Path(__file__).resolve().parent.parent / "tools" / "data" / "interval_residuals.csv"


if __name__ == "__main__":  # maintenance entry point: python scripts/build_intervals.py
    csv_path().write_text(render_csv(build_bands()), encoding="utf-8")
    print(f"wrote {csv_path()}")

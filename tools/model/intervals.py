"""The 80% interval around a speedup estimate, sized from out-of-sample residuals.

A range is a claim: ``[low, high]`` should hold the measured speedup four times in five. Its width comes
from how far the model's predictions have missed measurements it was not built from, not from a guess:
``scripts/build_intervals.py`` predicts every calibration row with acceptance priors that leave out the row's
own source (and, for engine rows, only rows of the *fit* split), takes the residuals
``log(measured / predicted)`` per group, and writes their 10th and 90th percentiles to
``tools/data/interval_residuals.csv``. An estimate then reports
``[speedup x exp(q10), speedup x exp(q90)]`` for its group; ``specpick calibrate`` reports how often the
held-out rows fall inside.

Groups: the runtime class (``engine``: vLLM / SGLang / TensorRT-LLM; ``llamacpp``: llama.cpp, from its own rows;
``paper``: the papers' eager harnesses and HF generate) times whether the acceptance was given (``cost_model``: the user's measured tau/alpha, so only the
cycle cost can miss) or came from the priors (``end_to_end``); on an engine, separate draft models and
model-free drafting have bands of their own (``ENVELOPE_FAMILIES``): the engine rows are nearly all trained heads.
One band per engine was tried (vLLM and SGLang have 33 fit-split rows each) and rejected: vLLM's rests on 5 sources, 27 of its rows from two of them, and its
narrow band held 64% of the holdout engine rows against 72% for the pooled band; spread across sources is what a
band must carry, and no single engine has enough sources yet.

The band's ends are split-conformal order statistics (Lei et al. 2018, "Distribution-free predictive inference for
regression", JASA 113:1094): with n held-out residuals, the lower end is the floor((n + 1) x 0.1)-th smallest and
the upper the ceil((n + 1) x 0.9)-th, which covers a new exchangeable residual with probability >= 80% where the
plain 10th/90th percentiles of n residuals fall short of it by O(1/n).
"""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, Field

INTERVAL_COVERAGE = 0.80  # the stated coverage of [low, high]
# Method families (tools/vocab.py METHOD_FAMILY) with an engine band of their own: the pooled engine band rests on
# trained heads (one-model path), so separate draft models and model-free drafting on an engine get bands built
# for them (scripts/build_intervals.py: their own fit-split rows where enough, else the wider of the pooled band
# and the published rows' band of the family).
ENVELOPE_FAMILIES: tuple[str, ...] = ("draft", "model_free")
# Set by scripts/build_intervals.py only: it predicts through speedup_interval while writing the file that will hold
# the family bands, so until then a family group borrows its pooled band (the build reads point estimates only).
BUILDING = False


class ResidualBand(BaseModel):
    """Percentiles of log(measured / predicted) for one group of held-out predictions."""

    group: str
    n_rows: int
    n_sources: int
    q_low: float = Field(description="lower split-conformal end of log(measured / predicted)")
    q_high: float = Field(description="upper split-conformal end of log(measured / predicted)")
    rows_used: str = Field(description="which predictions the residuals come from")


def interval_group(engine: bool, user_acceptance: bool, family: str | None = None, *, llamacpp: bool = False) -> str:
    """The residual group of an estimate: runtime class x where its acceptance came from (x the method family on an
    engine, for the families in ``ENVELOPE_FAMILIES``). llama.cpp has bands of its own, from llama.cpp rows only."""
    if llamacpp:
        group = f"llamacpp:{'cost_model' if user_acceptance else 'end_to_end'}"
        return f"{group}:{family}" if family in ENVELOPE_FAMILIES else group
    group = f"{'engine' if engine else 'paper'}:{'cost_model' if user_acceptance else 'end_to_end'}"
    return f"{group}:{family}" if engine and family in ENVELOPE_FAMILIES else group


@lru_cache(maxsize=1)
def load_bands() -> dict[str, ResidualBand]:
    """The committed residual bands (package data written by scripts/build_intervals.py)."""
    text = resources.files("specpick.tools").joinpath("data", "interval_residuals.csv").read_text("utf-8")
    out = {}
    for r in csv.DictReader(text.splitlines()):
        band = ResidualBand(group=r["group"], n_rows=int(r["n_rows"]), n_sources=int(r["n_sources"]),
                            q_low=float(r["q_low"]), q_high=float(r["q_high"]), rows_used=r["rows_used"])
        out[band.group] = band
    return out


def speedup_interval(speedup: float, group: str) -> tuple[float, float, str]:
    """(low, high, the assumption to state) for a point estimate in ``group``."""
    bands = load_bands()
    if group in bands:
        band = bands[group]
    elif BUILDING and group.rsplit(":", 1)[0] in bands:
        band = bands[group.rsplit(":", 1)[0]]  # only the residuals are read while the build runs, not this band
    elif BUILDING:  # a runtime's first band (llama.cpp's): the build reads the point only
        return speedup, speedup, ""
    else:
        raise KeyError(f"no interval band '{group}' in tools/data/interval_residuals.csv: run "
                       "`python scripts/build_intervals.py`")
    low, high = speedup * math.exp(band.q_low), speedup * math.exp(band.q_high)
    rows = (f"{band.rows_used}" if band.rows_used.startswith("envelope") else
            f"{band.n_rows} held-out predictions from {band.n_sources} sources, {band.rows_used}")
    note = (f"low/high: {INTERVAL_COVERAGE:.0%} interval from the model's out-of-sample misses ({band.group}: "
            f"{rows}; measured/predicted between {math.exp(band.q_low):.2f} and {math.exp(band.q_high):.2f})")
    return low, high, note


def out_of_domain_band(group: str) -> ResidualBand:
    """The band an estimate outside the model's applicability domain takes at least: no calibration row measures a
    verifier whose architecture features the catalog marks not modelled, so there is no measured error for that class;
    the floor is the widest band measured for the estimate's runtime class (every group of ``engine``, ``llamacpp`` or
    ``paper``), stated as an assumption, not as that class's error."""
    runtime = group.split(":", 1)[0]
    bands = [b for g, b in load_bands().items() if g.split(":", 1)[0] == runtime] or list(load_bands().values())
    low, high = min(bands, key=lambda b: b.q_low), max(bands, key=lambda b: b.q_high)
    return ResidualBand(group=f"{runtime}:out_of_domain", n_rows=0, n_sources=0, q_low=low.q_low, q_high=high.q_high,
                        rows_used=f"the widest {runtime} bands: low end of {low.group}, high end of {high.group}")


def conformal_bounds(residuals: list[float], coverage: float = INTERVAL_COVERAGE) -> tuple[float, float]:
    """(low, high) split-conformal order statistics of ``residuals`` for a two-sided ``coverage`` interval.

    Lower end: the floor((n + 1) a)-th smallest, upper: the ceil((n + 1)(1 - a))-th, a = (1 - coverage) / 2,
    clamped to the sample (n < 1/a - 1 gives the sample's extremes). See the module docstring.
    """
    v = sorted(residuals)
    if not v:
        raise ValueError("no residuals")
    a = (1.0 - coverage) / 2.0
    n = len(v)
    # rounded before floor/ceil: a = (1 - 0.8) / 2 is 0.09999999999999998 in floating point, so (n + 1) x a at
    # n + 1 = 30 is 2.9999999999999996 and a bare floor would take rank 2 instead of 3
    lo = min(max(math.floor(round((n + 1) * a, 9)), 1), n)
    hi = min(max(math.ceil(round((n + 1) * (1.0 - a), 9)), 1), n)
    return v[lo - 1], v[hi - 1]

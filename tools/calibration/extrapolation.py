"""Extrapolation tests beside leave-one-source-out (issue 34): hold a whole class of engine rows out and predict it.

Leave-one-source-out asks how the model does on a source it has not seen; a class asks how it does on a kind of
deployment it has not seen. Each engine row with a point speedup the model can run (the serving engines' rows and
llama.cpp's, each predicted by its own cost model) is put in every class its own fields and the catalog say it
belongs to, by these rules (the catalog rules' home is ``tools/catalog/domain_classes.py``):

* **context >= 16k** (``CONTEXT_CLASS_FROM``): the prompt context the row *states* in its benchmark cell (else its
  notes): "ISL 32768", "context depth 32K", "~28.5k context", "8K input", "(64K) decode". llama.cpp's
  ``--ctx-size`` is not read: it is the KV window allocated, not the tokens the decode attends over. A row that
  states no context is in no context class (the model then assumes its workload's typical context).
* **multi-GPU over PCIe**: two or more GPUs and a link the row states ("PCIe" in its hardware cell; "NVLink"/"SXM"
  there says otherwise), else the catalog GPU's own link (``domain_classes.pcie_only``).
* **newest release family per engine**: the family is the calendar year of the build the version cell names (the
  newest year it names: "Dec 2025-Jan 2026" is 2026); a release number without a year, at or after the release
  its engine names as a year's first (``EngineSpec.release_years``: vLLM 0.14.0, January 2026), is that year's.
  The year is the unit issue 34
  states the release miss in (2026 vLLM builds vs the 2025 rows), and most cells name a date, few a release number.
  The class is the newest year among that engine's usable rows.
* **verifier architecture family**: ``domain_classes.arch_families`` of the catalog row the verifier resolves to.
* **GPU class**: ``domain_classes.gpu_class`` of the catalog GPU the hardware cell names.

"Held out" means the class's rows are in no prior the prediction reads: every row of the class is predicted with the
acceptance priors rebuilt without *every source that has a row in the class* (a superset of the class's own rows),
and, for a serving-engine row of the holdout half, without every holdout source too, as the engine LOSO does
(``engines._result``). As in the LOSO the global constants and the 80% bands are as committed (fitted on the dev rows
and the engine fit half; llama.cpp's on its fit half); refitting them per class would cost a refit per class
(``llamacpp_fit.refit_loso_errors`` alone is most of the engine report's time), so a class is out of sample for the
acceptance priors, not for the constants. Coverage is the share of measured speedups inside the predicted 80% range.
A class with fewer than ``MIN_ROWS_TO_GATE`` rows is reported and marked "too few rows to gate".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import CalibCase, predict
from specpick.tools.calibration.class_widening import cross_fitted_coverage
from specpick.tools.calibration.engine_cases import row_use
from specpick.tools.calibration.engine_rows import EngineRow, load_engine_rows
from specpick.tools.calibration.split import holdout_sources, split_of_source
from specpick.tools.calibration.stats import Coverage, Stats, error_stats, interval_coverage
from specpick.tools.catalog.domain_classes import ARCH_FAMILIES, GPU_CLASSES, arch_families, gpu_class, pcie_only
from specpick.tools.catalog.knowledge import knowledge_cache
from specpick.tools.engines.base import version_key
from specpick.tools.engines.lookup import engine as engine_spec, is_engine
from specpick.tools.errors import InputError

CONTEXT_CLASS_FROM = 16_000  # tokens: issue 34's "context >= 16k" (a row stating 16K or ISL 16384 is in)
MIN_ROWS_TO_GATE = 10  # issue 34: coverage is gated in every class with >= 10 rows
TOO_FEW = "too few rows to gate"
# Class keys (what --ungated-classes names) and the labels printed for them.
CONTEXT_CLASS = "context_16k"
PCIE_CLASS = "pcie_multi_gpu"
LABELS = {CONTEXT_CLASS: "context >= 16k tokens", PCIE_CLASS: "multi-GPU over PCIe",
          "arch_hybrid_linear": "hybrid linear attn / Mamba", "arch_moe_over_256_experts": "MoE > 256 experts",
          "arch_mla": "MLA", "arch_latent_moe": "LatentMoE", **{f"gpu_{g}": f"GPU {g}" for g in GPU_CLASSES}}

_K = r"(\d+(?:\.\d+)?)\s*([kK])?"
# Prompt context as the rows state it (the first form that matches a cell wins; the largest figure of that form).
_CONTEXT_FORMS = (
    re.compile(rf"\bISL\s*(?:/\s*OSL\s*)?{_K}"),
    re.compile(rf"context depth\s*{_K}", re.IGNORECASE),
    re.compile(r"~?(\d+(?:\.\d+)?)\s*([kK])\s+(?:prompt tokens|context|input)\b", re.IGNORECASE),
    re.compile(r"\((\d+(?:\.\d+)?)([kK])\)\s*decode", re.IGNORECASE),
)
_YEAR = re.compile(r"\b(20\d\d)\b")
_RELEASE_NUMBER = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?)")


def stated_context_tokens(row: EngineRow) -> int | None:
    """The prompt context the row states (its benchmark cell, else its notes), in tokens; None: not stated."""
    for cell in (row.task, row.notes):
        for form in _CONTEXT_FORMS:
            found = [float(m.group(1)) * (1024 if m.group(2) else 1) for m in form.finditer(cell)]
            if found:
                return int(max(found))
    return None


def release_year(row: EngineRow) -> int | None:
    """The build's release family: the newest year its version cell names (see the module docstring)."""
    years = [int(y) for y in _YEAR.findall(row.engine_version)]
    if years:
        return max(years)
    m = _RELEASE_NUMBER.search(row.engine_version)
    if m is None or not is_engine(row.engine):
        return None
    dated = [year for since, year in engine_spec(row.engine).release_years
             if version_key(m.group(1)) >= version_key(since)]
    return max(dated) if dated else None


def over_pcie(row: EngineRow, case: CalibCase) -> bool:
    """Two or more GPUs linked over PCIe: the row's own statement first, else the catalog GPU's link."""
    if case.gpus < 2:
        return False
    cell = row.hardware.lower()
    if "pcie" in cell:
        return True
    if re.search(r"(?<!no )nvlink|nvswitch|\bsxm", cell):
        return False
    return pcie_only(case.gpu)


def row_classes(row: EngineRow, case: CalibCase, newest: dict[str, int]) -> tuple[str, ...]:
    """Every extrapolation class the row is in (``newest``: engine -> its newest release year)."""
    out = []
    context = stated_context_tokens(row)
    if context is not None and context >= CONTEXT_CLASS_FROM:
        out.append(CONTEXT_CLASS)
    if over_pcie(row, case):
        out.append(PCIE_CLASS)
    year = release_year(row)
    if year is not None and year == newest.get(row.engine):
        out.append(newest_label(row.engine, year))
    out += [f"arch_{f}" for f in arch_families(case.verifier)]
    out.append(f"gpu_{gpu_class(case.gpu)}")
    return tuple(out)


def newest_label(engine: str, year: int) -> str:
    """The key of an engine's newest-release class (the year is in its label)."""
    return f"newest_{engine}"


class ExtrapolationClass(BaseModel):
    name: str = Field(description="the class's key (--ungated-classes takes it)")
    label: str
    n_sources: int
    sources: list[str]
    stats: Stats = Field(description="speedup predicted with the class's sources out of every prior vs measured")
    coverage: Coverage = Field(description="measured inside the predicted 80% range")
    not_covered: int = Field(0, description="rows with no prior left once the class's sources are removed")
    gated: bool = Field(description=f"the class has >= {MIN_ROWS_TO_GATE} predicted rows (else '{TOO_FEW}')")
    widened_coverage: Coverage | None = Field(None, description="coverage with each source's ranges widened by the "
                                              "error measured on the class's other sources (class_widening.py; a "
                                              "diagnostic, not gated, no estimate reads it yet)")
    widening: dict[str, float] = Field(default_factory=dict, description="source -> the log-space widening factor "
                                       "its rows were scored with (from the class's other sources)")


class ExtrapolationReport(BaseModel):
    min_rows_to_gate: int = MIN_ROWS_TO_GATE
    rule: str = Field(description="how a row is put in a class and what 'held out' means")
    classes: list[ExtrapolationClass]


RULE = ("each class predicted with the acceptance priors rebuilt without every source that has a row in it "
        "(serving-engine holdout rows: without every holdout source too); constants and 80% bands as committed. "
        "Context: the prompt context a row states (>= 16k tokens); PCIe: >= 2 GPUs, the row's stated link else the "
        "catalog GPU's; release: newest build year per engine; arch and GPU class: tools/catalog/domain_classes.py")


@knowledge_cache("extrapolation.cases")
def usable_cases() -> tuple[tuple[EngineRow, CalibCase], ...]:
    """Every engine row with a point speedup the model can run, serving engines' and llama.cpp's, with its case."""
    out = []
    for row in load_engine_rows():
        use, case = row_use(row, llamacpp=row.llamacpp)
        if use in ("cost_model", "end_to_end") and not isinstance(case, str):
            out.append((row, case))
    return tuple(out)


def newest_years(rows: Iterable[EngineRow]) -> dict[str, int]:
    """engine -> the newest release year among ``rows``."""
    out: dict[str, int] = {}
    for row in rows:
        year = release_year(row)
        if year is not None:
            out[row.engine] = max(year, out.get(row.engine, year))
    return out


def class_members() -> dict[str, list[tuple[EngineRow, CalibCase]]]:
    """class name -> its rows and cases, classes in a fixed order (context, PCIe, release, arch, GPU)."""
    cases = usable_cases()
    newest = newest_years(r for r, _ in cases)
    names = [CONTEXT_CLASS, PCIE_CLASS, *(newest_label(e, y) for e, y in sorted(newest.items())),
             *(f"arch_{f}" for f in ARCH_FAMILIES), *(f"gpu_{g}" for g in GPU_CLASSES)]
    members: dict[str, list[tuple[EngineRow, CalibCase]]] = {n: [] for n in names}
    for row, case in cases:
        for name in row_classes(row, case, newest):
            members[name].append((row, case))
    return members


def _held_out_prediction(row: EngineRow, case: CalibCase, class_sources: frozenset[str]):  # noqa: ANN202
    exclude = class_sources
    if not row.llamacpp and split_of_source(row.source_id) == "holdout":
        exclude = exclude | holdout_sources()
    try:
        return predict(case, own=False, exclude=exclude)
    except InputError:  # no prior left once the class's sources are out: not covered
        return None


def score_class(name: str, label: str, members: list[tuple[EngineRow, CalibCase]]) -> ExtrapolationClass:
    """One class predicted with its sources out of every prior, scored against the measurements."""
    sources = frozenset(r.source_id for r, _ in members)
    scored = [(r, p) for r, c in members if (p := _held_out_prediction(r, c, sources)) is not None]
    stats = error_stats([(p.speedup, r.speedup or 0.0) for r, p in scored])
    coverage = interval_coverage([(p.low, p.high, r.speedup or 0.0) for r, p in scored])
    wide, factors = cross_fitted_coverage([(r.source_id, p, r.speedup or 0.0) for r, p in scored]) if scored \
        else (None, {})
    return ExtrapolationClass(name=name, label=label, n_sources=len(sources), sources=sorted(sources), stats=stats,
                              coverage=coverage, not_covered=len(members) - len(scored),
                              gated=stats.n >= MIN_ROWS_TO_GATE, widened_coverage=wide,
                              widening={s: round(k, 3) for s, k in sorted(factors.items())})


@knowledge_cache("extrapolation.report")  # reads the catalog and the rows: reload() drops it
def extrapolation_report() -> ExtrapolationReport:
    """Every extrapolation class, held out and predicted (cached for the process)."""
    newest = newest_years(r for r, _ in usable_cases())
    labels = {**LABELS, **{newest_label(e, y): f"newest {e} release ({y})" for e, y in newest.items()}}
    return ExtrapolationReport(rule=RULE, classes=[score_class(n, labels[n], m) for n, m in class_members().items()])


def gate_failures(report: ExtrapolationReport, min_coverage: float | None,
                  ungated: Iterable[str] = ()) -> list[str]:
    """Every gated class (>= MIN_ROWS_TO_GATE rows, not listed in ``ungated``) whose coverage is below the floor."""
    if min_coverage is None:
        return []
    skip = set(ungated)
    return [f"extrapolation class '{c.name}' interval coverage {c.coverage.share:.1%} is below "
            f"--min-class-coverage {min_coverage:g}" for c in report.classes
            if c.gated and c.name not in skip and c.coverage.share is not None and c.coverage.share < min_coverage]

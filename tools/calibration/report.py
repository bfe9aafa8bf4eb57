"""`specpick calibrate`: the speedup model against every usable published measurement.

Three figures, each as median absolute percentage error (APE), bias (median
signed error, + = model too optimistic), overall and per method:

* **cost model** (mode a): the row's own tau/alpha fed in, so only the cycle
  cost (roofline + runtime overhead) is tested; rows without an acceptance
  figure are not in this mode.
* **end to end** (mode b): acceptance from the priors, as a user gets it. The
  priors are built from some of these same rows, so this is in-sample...
* **leave one source out** (the headline): ...which is why each row is also
  predicted with the priors rebuilt without its own source; rows whose method
  then has no prior left are counted as not covered. Only the priors are rebuilt:
  the global constants are as committed, and were fitted on these rows (the
  eager-harness constants on the rows with their own tau/alpha, the roofline and
  engine constants on the batch > 1 rows), so LOSO is out of sample for the
  acceptance priors, not for the constants.

Each mode also reports interval coverage: the share of rows whose measured speedup
lies inside the prediction's stated [low, high].

No constant is fitted per row. The few global constants (``DEFAULT_CONSTANTS`` of
``tools/model/constants.py``) are listed in the report with their sources.
"""

from __future__ import annotations

import math

from typing import Any, Literal

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import build_case, predict
from specpick.tools.calibration.stats import Coverage, Stats, error_stats, interval_coverage
from specpick.tools.errors import InputError
from specpick.tools.catalog.published import load_published
from specpick.tools.model.constants import DEFAULT_CONSTANTS as consts
from specpick.tools.model.intervals import load_bands
from specpick.tools.model.priors import decay_for
from specpick.tools.model.priors import draft_ratio_slope
from specpick.tools.model.priors import measured_workload_ratios
from specpick.tools.model.priors import runner_ratio
from specpick.tools.model.priors import temperature_rho
from specpick.tools.model.priors import tree_factor
from specpick.tools.model.same_setup import measured_variant_gaps
from specpick.tools.model.prior_rows import engine_decay
from specpick.tools.model.prior_rules import position_decay

TARGET_MEDIAN_APE_PCT = 15.0


class RowResult(BaseModel):
    row_id: str
    source_id: str
    method: str
    variant: str
    workload: str
    harness: str
    hardware: str
    batch: int
    temperature: float
    measured: float
    cost_model: float | None = Field(None, description="prediction with the row's own tau/alpha")
    end_to_end: float | None = Field(None, description="prediction with acceptance priors")
    loso: float | None = Field(None, description="prediction with priors excluding the row's source")
    loso_grouped: float | None = Field(None, description="the same, excluding every source of the row's "
                                       "shared-benchmark group (SHARED_BENCHMARK_GROUPS)")
    intervals: dict[str, tuple[float, float]] = Field(default_factory=dict,
                                                      description="mode -> the prediction's [low, high]")
    notes: list[str] = Field(default_factory=list)


class ModeReport(BaseModel):
    mode: Literal["cost_model", "end_to_end", "leave_one_source_out"]
    overall: Stats
    per_method: dict[str, Stats]
    per_harness: dict[str, Stats]
    batch_above_1: Stats
    not_covered: int = 0
    coverage: Coverage | None = Field(None, description="measured inside the prediction's [low, high]")
    coverage_per_method: dict[str, Coverage] = Field(default_factory=dict)
    coverage_per_harness: dict[str, Coverage] = Field(default_factory=dict)


class CalibrationReport(BaseModel):
    n_published: int
    n_used: int
    skipped: dict[str, int] = Field(description="reason -> rows skipped")
    cost_model: ModeReport
    end_to_end: ModeReport
    leave_one_source_out: ModeReport | None
    loso_grouped: Stats | None = Field(None, description="leave one source out with SHARED_BENCHMARK_GROUPS left out "
                                       "together (reported, not gated)")
    target_median_ape_pct: float = TARGET_MEDIAN_APE_PCT
    constants: dict[str, str]
    fit: list[dict[str, object]] | None = Field(None, description="global fit figures (with --fit)")
    engines: dict[str, Any] | None = Field(None, description="held-out engine rows (with --engines): an EngineReport "
                                           "of tools/calibration/engines.py, never mixed into the figures above")
    rows: list[RowResult]


def _coverage(rows: list[RowResult], attr: str) -> Coverage:
    return interval_coverage([(*r.intervals[attr], r.measured) for r in rows if attr in r.intervals])


def _mode(name: str, results: list[RowResult], attr: str) -> ModeReport:
    pairs = [(getattr(r, attr), r.measured, r) for r in results if getattr(r, attr) is not None]
    methods = sorted({r.method for _, _, r in pairs})
    covered = [r for _, _, r in pairs]
    return ModeReport(
        mode=name,  # type: ignore[arg-type]
        overall=error_stats([(p, m) for p, m, _ in pairs]),
        per_method={k: error_stats([(p, m) for p, m, r in pairs if r.method == k]) for k in methods},
        per_harness={k: error_stats([(p, m) for p, m, r in pairs if r.harness == k])
                     for k in sorted({r.harness for _, _, r in pairs})},
        batch_above_1=error_stats([(p, m) for p, m, r in pairs if r.batch > 1]),
        not_covered=len(results) - len(pairs) if name == "leave_one_source_out" else 0,
        coverage=_coverage(covered, attr),
        coverage_per_method={k: _coverage([r for r in covered if r.method == k], attr) for k in methods},
        coverage_per_harness={k: _coverage([r for r in covered if r.harness == k], attr)
                              for k in sorted({r.harness for r in covered})},
    )


def constants_used() -> dict[str, str]:
    """The global constants of the model and where each came from."""

    engine_measured = sorted(engine_decay(frozenset())["method"])  # methods whose engine sweeps set a decay
    out = {
        "BANDWIDTH_EFFICIENCY": f"{consts.bandwidth_efficiency} (EAGLE-GPTFAST row: gpt-fast 55.1 tok/s, 79% of "
                                "RTX 3090 bandwidth)",
        "FLOPS_EFFICIENCY": f"{consts.flops_efficiency} (global fit on the batch > 1 rows)",
        "ROOFLINE_SHARPNESS": f"{consts.roofline_sharpness} (global fit on the batch > 1 rows)",
        "position decay": f"{position_decay():.3f} per drafted position for draft heads except EAGLE-3 in the papers' "
                          "harnesses (EAGLE1-PAPER n-alpha, blockwise MTP rows); in engines "
                          + ", ".join(f"{m} {decay_for(m, 'engine'):.3f}" for m in engine_measured)
                          + " (medians of engine chain-length sweeps, by verifier family for MTP: "
                          "tools/data/prior_rules.json)",
        "tree factor F": f"{tree_factor():.3f} (EAGLE1-PAPER chain alpha vs tree tau)",
        "third party / authors": "{:.3f} of tau-1, median of {} third-party sources (papers'-harness rows levelled "
                                 "to who runs the method; tools/data/method_authors.csv)".format(*runner_ratio()),
        "variant / plain method": ", ".join(f"{m}/{v} {g:.2f} ({', '.join(src)})"
                                            for (m, v), (g, src) in measured_variant_gaps().items())
        + " (tau ratio of same-setup runs; moves a borrowed variant's rows: tools/model/same_setup.py)",
        "workload / borrowed workload": ", ".join(f"{f} {w}/{b} {g:.2f} ({', '.join(src)})"
                                                  for (f, w, b), (g, src) in measured_workload_ratios().items())
        + " ((tau-1) ratio of same-setup runs; moves papers'-harness estimates where the move was assumed)",
        "draft-size slope S": "{:+.3f} alpha per decade, {} sweeps (Leviathan T2/T3)".format(*draft_ratio_slope()),
        "temperature rho": ", ".join(f"{k} {v[0]:.3f} ({v[1]} pairs)" for k, v in sorted(temperature_rho().items())),
        "NGRAM/SUFFIX/REST lookup ms": f"{consts.ngram_lookup_ms}/{consts.suffix_lookup_ms}/"
                                        f"{consts.rest_lookup_ms} (assumptions)",
        "80% interval bands": "; ".join(f"{b.group} x[{math.exp(b.q_low):.2f}, {math.exp(b.q_high):.2f}] "
                                         f"({b.n_rows} rows)" for b in load_bands().values())
        + " (tools/data/interval_residuals.csv, out-of-sample residuals)",
        "ROUTING_REUSE": f"{consts.routing_reuse} (Mixtral paper arXiv 2401.04088 Table 5, first-choice "
                         "consecutive-token expert repeats above chance; not fitted)",
    }
    for name, o in consts.overheads.items():
        out[f"overhead[{name}]"] = (f"host/layer {o.host_per_layer_ms} ms, gap/layer {o.gpu_gap_per_layer_ms} ms, "
                                    f"per forward {o.per_forward_ms} ms, draft step {o.draft_step_host_ms} ms, "
                                    f"cycle {o.cycle_ms} ms (+{o.cycle_tree_ms} tree, +{o.cycle_per_seq_ms}/seq"
                                    + (f" MoE, {o.cycle_per_seq_dense_ms}/seq dense"
                                       if o.cycle_per_seq_dense_ms is not None else "") + ", "
                                    f"+{o.spec_forward_ms}/forward in the cycle)"
                                    + (f"; one-model path {o.one_model_spec_forward_ms} ms/forward + "
                                       f"{o.one_model_cycle_ms} ms/cycle" if o.one_model_spec_forward_ms is not None
                                       else "")
                                    + (f"; with overlap scheduling {o.overlap_seq_exposed_fraction:.0%} of the "
                                       f"per-request work stays serial on MoE verifiers (+{o.overlap_exposed_ms} ms "
                                       "sync)"
                                       if o.overlap_seq_exposed_fraction or o.overlap_exposed_ms else "")
                                    + (f"; MoE layer {o.moe_layer_ms} ms/forward" if o.moe_layer_ms else "")
                                    + (f" ({o.moe_layer_16bit_ms} ms with 16-bit experts)"
                                       if o.moe_layer_ms and o.moe_layer_16bit_ms is not None else "")
                                    + f"; {o.source}")
    return out


# Sources that ran one benchmark's own harness and prompts (Spec-Bench's six tasks): each one's per-task ratios
# inform the other's rows (tools/model/same_setup.py). A stricter leave-one-out leaves such a group out together; it
# is reported beside the headline, which leaves one source out as the issue defines it.
SHARED_BENCHMARK_GROUPS: tuple[frozenset[str], ...] = (frozenset({"SAMD-README", "SPECBENCH-LB"}),)


def _group_of(source_id: str) -> frozenset[str]:
    return next((g for g in SHARED_BENCHMARK_GROUPS if source_id in g), frozenset({source_id}))


def calibrate(*, loso: bool = True) -> CalibrationReport:
    """Run the model over the published rows (see module docstring)."""
    published = load_published()
    skipped: dict[str, int] = {}
    results: list[RowResult] = []
    for row in published:
        case = build_case(row)
        if isinstance(case, str):
            skipped[case] = skipped.get(case, 0) + 1
            continue
        res = RowResult(
            row_id=row.row_id, source_id=row.source_id, method=row.method or "", variant=row.variant,
            workload=row.workload or "", harness=case.harness, hardware=f"{case.gpus}x {case.gpu.key}",
            batch=case.batch, temperature=case.temperature, measured=row.speedup or 0.0, notes=case.notes,
        )
        preds = {}
        if case.own_acceptance:
            preds["cost_model"] = predict(case, own=True)
        preds["end_to_end"] = predict(case, own=False)
        if loso:
            # each figure on its own: a row with no prior left is not covered in that figure only
            for attr, exclude in (("loso", frozenset({row.source_id})), ("loso_grouped", _group_of(row.source_id))):
                if attr == "loso_grouped" and len(exclude) == 1:
                    if "loso" in preds:
                        preds[attr] = preds["loso"]
                    continue
                try:
                    preds[attr] = predict(case, own=False, exclude=exclude)
                except InputError:  # no prior left once the source(s) are removed: counted as not covered
                    pass
        for attr, p in preds.items():
            setattr(res, attr, p.speedup)
            res.intervals[attr] = (p.low, p.high)
        results.append(res)
    return CalibrationReport(
        n_published=len(published), n_used=len(results), skipped=dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
        cost_model=_mode("cost_model", results, "cost_model"),
        end_to_end=_mode("end_to_end", results, "end_to_end"),
        leave_one_source_out=_mode("leave_one_source_out", results, "loso") if loso else None,
        loso_grouped=error_stats([(r.loso_grouped, r.measured) for r in results if r.loso_grouped is not None])
        if loso else None,
        constants=constants_used(), rows=results,
    )

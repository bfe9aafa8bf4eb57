"""`specpick calibrate`: the speedup model against every usable published measurement.

Three figures, each as median absolute percentage error (APE), bias (median
signed error, + = model too optimistic), overall and per method:

* **cost model** (mode a): the row's own tau/alpha fed in, so only the cycle
  cost (roofline + runtime overhead) is tested; rows without an acceptance
  figure are not in this mode.
* **end to end** (mode b): acceptance from the priors, as a user gets it. The
  priors are built from some of these same rows, so this is in-sample...
* **leave one source out**: ...which is why each row is also predicted with the
  priors rebuilt without its own source; rows whose method then has no prior
  left are counted as not covered.

No constant is fitted per row. The few global constants (``tools/model/overhead.py``,
``tools/model/steptime.py``) are listed in the report with their sources.
"""

from __future__ import annotations

import statistics
from typing import Any, Literal

from pydantic import BaseModel, Field

from specpick.tools.calibration.cases import CalibCase, build_case
from specpick.tools.errors import InputError, ThresholdError
from specpick.tools.catalog.published import load_published
from specpick.tools.model.estimate import estimate_for_specs

TARGET_MEDIAN_APE_PCT = 15.0


class CalibrateInput(BaseModel):
    """Options of `specpick calibrate`."""

    rows: bool = Field(False, description="list every row with its measured and predicted speedup")
    max_median_ape_pct: float | None = Field(
        None, description="fail (exit 8) if the end-to-end median absolute % error exceeds this"
    )
    loso: bool = Field(True, description="also predict each row with priors rebuilt without its own source")
    fit: bool = Field(False, description="also re-run the global fit of the runtime constants (slow, ~10 s) and "
                      "report committed vs best values")
    engines: bool = Field(False, description="also report the engine-measured rows (tools/data/engine_measurements."
                          "csv: vLLM, SGLang, TensorRT-LLM) as a held-out set, separately from the dev-set figures")


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
    notes: list[str] = Field(default_factory=list)


class Stats(BaseModel):
    n: int
    median_ape_pct: float | None
    bias_pct: float | None = Field(description="median signed error, + = model above measurement")
    p90_ape_pct: float | None


class ModeReport(BaseModel):
    mode: Literal["cost_model", "end_to_end", "leave_one_source_out"]
    overall: Stats
    per_method: dict[str, Stats]
    per_harness: dict[str, Stats]
    batch_above_1: Stats
    not_covered: int = 0


class CalibrationReport(BaseModel):
    n_published: int
    n_used: int
    skipped: dict[str, int] = Field(description="reason -> rows skipped")
    cost_model: ModeReport
    end_to_end: ModeReport
    leave_one_source_out: ModeReport | None
    target_median_ape_pct: float = TARGET_MEDIAN_APE_PCT
    constants: dict[str, str]
    fit: list[dict[str, object]] | None = Field(None, description="global fit figures (with --fit)")
    engines: dict[str, Any] | None = Field(None, description="held-out engine rows (with --engines): an EngineReport "
                                           "of tools/calibration/engines.py, never mixed into the figures above")
    rows: list[RowResult]


def _pct(pred: float, meas: float) -> float:
    return (pred - meas) / meas * 100.0


def _stats(pairs: list[tuple[float, float]]) -> Stats:
    if not pairs:
        return Stats(n=0, median_ape_pct=None, bias_pct=None, p90_ape_pct=None)
    errs = [_pct(p, m) for p, m in pairs]
    ape = sorted(abs(e) for e in errs)
    return Stats(n=len(pairs), median_ape_pct=round(statistics.median(ape), 2),
                 bias_pct=round(statistics.median(errs), 2), p90_ape_pct=round(ape[int(0.9 * (len(ape) - 1))], 2))


def _predict(case: CalibCase, *, own: bool, exclude: frozenset[str] = frozenset()) -> float:
    preds = []
    for w in case.workloads:
        r = estimate_for_specs(
            case.verifier, case.gpu, case.row.method or "", draft=case.draft, gpus=case.gpus, workload=w,
            temperature=case.temperature, batch=case.batch, num_draft_tokens=case.num_draft_tokens, tree=case.tree,
            alpha=case.alpha if own and case.tau is None else None, tau=case.tau if own else None,
            harness=case.harness, weight_bytes_per_param=case.bpp, variant=case.row.variant,
            exclude_sources=exclude, sweep=False, lookahead=case.lookahead, medusa_heads=case.medusa_heads,
        )
        preds.append(r.speedup)
    return statistics.fmean(preds)


def _mode(name: str, results: list[RowResult], attr: str) -> ModeReport:
    pairs = [(getattr(r, attr), r.measured, r) for r in results if getattr(r, attr) is not None]
    methods = sorted({r.method for _, _, r in pairs})
    return ModeReport(
        mode=name,  # type: ignore[arg-type]
        overall=_stats([(p, m) for p, m, _ in pairs]),
        per_method={k: _stats([(p, m) for p, m, r in pairs if r.method == k]) for k in methods},
        per_harness={k: _stats([(p, m) for p, m, r in pairs if r.harness == k])
                     for k in sorted({r.harness for _, _, r in pairs})},
        batch_above_1=_stats([(p, m) for p, m, r in pairs if r.batch > 1]),
        not_covered=len(results) - len(pairs) if name == "leave_one_source_out" else 0,
    )


def constants_used() -> dict[str, str]:
    """The global constants of the model and where each came from."""
    from specpick.tools.model import cyclecost, overhead, steptime
    from specpick.tools.model import estimate as speedup_model
    from specpick.tools.model.priors import draft_ratio_slope, temperature_rho, tree_factor
    from specpick.tools.model.prior_rules import position_decay

    out = {
        "BANDWIDTH_EFFICIENCY": f"{steptime.BANDWIDTH_EFFICIENCY} (EAGLE-GPTFAST row: gpt-fast 55.1 tok/s, 79% of "
                                "RTX 3090 bandwidth)",
        "FLOPS_EFFICIENCY": f"{steptime.FLOPS_EFFICIENCY} (global fit on the batch > 1 rows)",
        "ROOFLINE_SHARPNESS": f"{steptime.ROOFLINE_SHARPNESS} (global fit on the batch > 1 rows)",
        "position decay": f"{position_decay():.3f} per drafted position for draft heads except EAGLE-3 (EAGLE1-PAPER n-alpha, "
                          "blockwise MTP rows)",
        "tree factor F": f"{tree_factor():.3f} (EAGLE1-PAPER chain alpha vs tree tau)",
        "draft-size slope S": "{:+.3f} alpha per decade, {} sweeps (Leviathan T2/T3)".format(*draft_ratio_slope()),
        "temperature rho": ", ".join(f"{k} {v[0]:.3f} ({v[1]} pairs)" for k, v in sorted(temperature_rho().items())),
        "NGRAM/SUFFIX/REST lookup ms": f"{cyclecost.NGRAM_LOOKUP_MS}/{cyclecost.SUFFIX_LOOKUP_MS}/"
                                        f"{cyclecost.REST_LOOKUP_MS} (assumptions)",
        "COST_MODEL_REL_ERROR": f"{speedup_model.COST_MODEL_REL_ERROR} (mode a median APE, rounded)",
        "ROUTING_REUSE": f"{steptime.ROUTING_REUSE} (Mixtral paper arXiv 2401.04088 Table 5, first-choice "
                         "consecutive-token expert repeats above chance; not fitted)",
    }
    for name, o in overhead.OVERHEADS.items():
        out[f"overhead[{name}]"] = (f"host/layer {o.host_per_layer_ms} ms, gap/layer {o.gpu_gap_per_layer_ms} ms, "
                                    f"per forward {o.per_forward_ms} ms, draft step {o.draft_step_host_ms} ms, "
                                    f"cycle {o.cycle_ms} ms (+{o.cycle_tree_ms} tree, +{o.cycle_per_seq_ms}/seq, "
                                    f"+{o.spec_forward_ms}/forward in the cycle); "
                                    f"{o.source}")
    return out


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
        if case.tau is not None or case.alpha is not None:
            res.cost_model = _predict(case, own=True)
        res.end_to_end = _predict(case, own=False)
        if loso:
            try:
                res.loso = _predict(case, own=False, exclude=frozenset({row.source_id}))
            except InputError:
                res.loso = None
        results.append(res)
    return CalibrationReport(
        n_published=len(published), n_used=len(results), skipped=dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
        cost_model=_mode("cost_model", results, "cost_model"),
        end_to_end=_mode("end_to_end", results, "end_to_end"),
        leave_one_source_out=_mode("leave_one_source_out", results, "loso") if loso else None,
        constants=constants_used(), rows=results,
    )


def calibrate_tool(inp: CalibrateInput) -> CalibrationReport:
    """Tool entry point: the report, or ThresholdError when the median error exceeds the limit."""
    report = calibrate(loso=inp.loso)
    if inp.fit:
        from specpick.tools.calibration.fit import fit_all

        report = report.model_copy(update={"fit": [f.model_dump() for f in fit_all()]})
    if inp.engines:
        from specpick.tools.calibration.engines import engine_report

        eng = engine_report()
        if not inp.rows:
            eng = eng.model_copy(update={"rows": []})
        report = report.model_copy(update={"engines": eng.model_dump()})
    if not inp.rows:
        report = report.model_copy(update={"rows": []})
    limit = inp.max_median_ape_pct
    med = report.end_to_end.overall.median_ape_pct
    if limit is not None and med is not None and med > limit:
        raise ThresholdError(f"calibration median error {med:.1f}% exceeds --max-median-ape-pct {limit:g}%")
    return report


def _line(label: str, s: Stats) -> str:
    if not s.n:
        return f"  {label:<22} n=0"
    return (f"  {label:<22} n={s.n:<4} median APE {s.median_ape_pct:5.1f}%   bias {s.bias_pct:+6.1f}%   "
            f"p90 {s.p90_ape_pct:5.1f}%")


def render_text(report: CalibrationReport) -> str:
    """Human summary: per mode, overall and per method; skips; constants; optional rows."""
    out = [f"published rows: {report.n_published}, used: {report.n_used}, "
           f"target median APE <= {report.target_median_ape_pct:g}%"]
    out.append("skipped:")
    out += [f"  {n:>3}  {reason}" for reason, n in report.skipped.items()]
    modes = [report.cost_model, report.end_to_end] + ([report.leave_one_source_out]
                                                      if report.leave_one_source_out else [])
    titles = {"cost_model": "cost model (row's own tau/alpha)", "end_to_end": "end to end (acceptance priors)",
              "leave_one_source_out": "leave one source out (priors without the row's source)"}
    for m in modes:
        out.append(f"\n{titles[m.mode]}:")
        out.append(_line("overall", m.overall))
        out.append(_line("batch > 1", m.batch_above_1))
        out += [_line(k, s) for k, s in m.per_method.items()]
        out += [_line(f"harness {k}", s) for k, s in m.per_harness.items()]
        if m.not_covered:
            out.append(f"  not covered (no prior without the source): {m.not_covered}")
    out.append("\nglobal constants:")
    out += [f"  {k}: {v}" for k, v in report.constants.items()]
    for f in report.fit or []:
        out.append(f"  fit '{f['name']}' ({f['n_rows']} rows, {f['objective']}): committed {f['committed']} -> "
                   f"{f['committed_score_pct']}%; grid best {f['best']} -> {f['best_score_pct']}%")
        if f.get("holdout"):
            h = f["holdout"]
            out.append(f"    held-out engine rows ({h['n_rows']:.0f}, never fitted): committed {h['committed_mean_ape_pct']}%"
                       f", grid best {h['best_mean_ape_pct']}% mean APE")
    if report.engines:
        from specpick.tools.calibration.engines import EngineReport, render_engine_text

        out.append(render_engine_text(EngineReport.model_validate(report.engines), rows=bool(report.rows)))
    if report.rows:
        out.append("\nrows (measured | cost model | end to end | leave-one-source-out):")
        for r in report.rows:
            f = lambda v: "   -  " if v is None else f"{v:6.2f}"
            out.append(f"  {r.row_id} {r.source_id:<15} {r.method:<11} {r.variant:<10} {r.workload:<13} "
                       f"bs{r.batch:<3} {r.measured:6.2f} | {f(r.cost_model)} | {f(r.end_to_end)} | {f(r.loso)}")
    return "\n".join(out)

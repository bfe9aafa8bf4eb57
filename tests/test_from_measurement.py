"""Measured evidence in `recommend`: it applies to the drafter and N it was measured with, nothing else.

The reports below are built with the measure and tune verbs' own models and written the way `--json` writes them,
so the reader is tested against what those verbs print. Figures asserted come from those files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.skill.surfaces.cli import main
from specpick.tools.deploy.measured_file import read_measurement
from specpick.tools.errors import EXIT_INPUT, EXIT_NOT_FOUND
from specpick.tools.measure.classes import RequestFigures
from specpick.tools.measure.metrics import Acceptance
from specpick.tools.measure.report import ConcurrencyResult, MeasureReport, Percentiles, RunFigures
from specpick.tools.tune.analysis import TunePoint
from specpick.tools.tune.run import TuneReport

L8 = "llama-3.1-8b"
# (drafts, accepted, accepted per position 1..4): 4 prompts that copy their input, 4 that do not (N = 4).
COPY = [(20, 60, [20, 16, 13, 11]), (25, 70, [24, 19, 15, 12]), (22, 66, [22, 18, 14, 12]), (30, 80, [29, 22, 16, 13])]
FREE = [(60, 12, [10, 2, 0, 0]), (55, 8, [7, 1, 0, 0]), (58, 10, [9, 1, 0, 0]), (62, 9, [8, 1, 0, 0])]


def _run(label: str) -> RunFigures:
    return RunFigures(label=label, concurrency=1, num_requests=8, completion_tokens=800, wall_s=10.0,  # type: ignore[arg-type]
                      output_tokens_per_s=80.0, ttft_ms=Percentiles(), tpot_ms=Percentiles())


def _measure_report(path: Path, speedup: float | None = 1.3) -> Path:
    rows = COPY + FREE
    requests = [RequestFigures(origin=f"p:{i}", prompt_class="copy" if i < 4 else "free",
                               classified_by="prompts file", copy_overlap=0.0, spec_decode_ms=100.0, spec_tokens=100,
                               drafts=d, draft_tokens=4 * d, accepted=a, accepted_per_position=pp)
                for i, (d, a, pp) in enumerate(rows)]
    drafts = sum(d for d, _, _ in rows)
    per_pos = [sum(pp[i] for _, _, pp in rows) / drafts for i in range(4)]
    acc = Acceptance(source="vllm-per-request", alpha=sum(a for _, a, _ in rows) / (4 * drafts),
                     tau=1 + sum(a for _, a, _ in rows) / drafts, per_position=per_pos, num_drafts=drafts,
                     num_draft_tokens=4 * drafts, num_accepted_tokens=sum(a for _, a, _ in rows))
    res = ConcurrencyResult(concurrency=1, speculative=_run("speculative"), baseline=_run("baseline"),
                            acceptance=acc, speedup=speedup, requests=requests)
    path.write_text(MeasureReport(mode="endpoint", engine="vllm", results=[res], acceptance=acc).model_dump_json())
    return path


def _tune_report(path: Path) -> Path:
    pts = [TunePoint(num_draft_tokens=6, concurrency=1, measured=True, tau_measured=2.6, tau_measured_low=2.2,
                     tau_measured_high=3.0, speedup_measured=1.4),
           TunePoint(num_draft_tokens=4, concurrency=1, measured=False, tau_predicted=2.4),
           TunePoint(num_draft_tokens=2, concurrency=1, measured=False, tau_predicted=1.9)]
    rep = TuneReport(engine="vllm", method="ngram", points=pts, best_n={1: 6}, schedule=[(1, 256, 6)],
                     runs_measured=1, runs_saved=2, results_file="t.jsonl")
    path.write_text(rep.model_dump_json())
    return path


def _rec(**kw: object):
    return plan(PlannerInputs(verifier=L8, workload="code", engine="vllm", **kw))


def test_a_measure_report_gives_its_tau_n_and_a_bootstrap_range_within_its_prompts(tmp_path: Path) -> None:
    fig = read_measurement(_measure_report(tmp_path / "m.json"), concurrency=1)
    per_request = [1 + a / d for d, a, _ in COPY + FREE]
    total_d, total_a = sum(d for d, _, _ in COPY + FREE), sum(a for _, a, _ in COPY + FREE)
    assert fig.num_draft_tokens == 4 and fig.tau == pytest.approx(1 + total_a / total_d)
    assert fig.tau_low is not None and fig.tau_high is not None
    assert min(per_request) <= fig.tau_low < fig.tau < fig.tau_high <= max(per_request)
    assert fig.speedup == 1.3 and fig.num_requests == 8


def test_from_measurement_applies_to_the_measured_method_only(tmp_path: Path) -> None:
    path = str(_measure_report(tmp_path / "m.json"))
    fig = read_measurement(Path(path), concurrency=1)
    mine = _rec(method="ngram", from_measurement=path, measured_method="ngram")
    e = mine.expected_speedup
    if mine.num_draft_tokens == 4:
        assert e.tau == pytest.approx(fig.tau, abs=0.01)
    else:  # per-position acceptance gives every shorter N: 1 + the accepted share of positions 1..N
        n = mine.num_draft_tokens
        assert n is not None and n < 4
        drafts = sum(d for d, _, _ in COPY + FREE)
        want = 1 + sum(sum(pp[:n]) for _, _, pp in COPY + FREE) / drafts
        assert e.tau == pytest.approx(want, abs=0.01)
    text = " ".join(e.assumptions)
    assert "prior vs measured for N-gram (prompt lookup) at N=4" in text and "the prior was" in text
    prior_only = _rec(method="eagle3").expected_speedup
    other = _rec(method="eagle3", from_measurement=path, measured_method="ngram").expected_speedup
    assert other.tau == prior_only.tau and other.value == prior_only.value  # another drafter keeps its prior
    assert "user-stated" not in other.acceptance_source


def test_the_range_is_the_measurements_spread_not_zero_width(tmp_path: Path) -> None:
    path = str(_measure_report(tmp_path / "m.json"))
    rec = _rec(method="ngram", from_measurement=path, measured_method="ngram", measured_n=4)
    line = next(a for a in rec.expected_speedup.assumptions if a.startswith("acceptance range used"))
    lo, hi = (float(x) for x in line.split("tau ")[1].split(" ")[0].split("-"))
    assert lo < hi


def test_a_tune_report_names_its_method_and_gives_the_taus_of_the_n_it_swept(tmp_path: Path) -> None:
    fig = read_measurement(_tune_report(tmp_path / "t.json"), concurrency=1)
    assert fig.method == "ngram" and fig.num_draft_tokens == 6 and fig.tau == 2.6
    assert dict(fig.tau_by_n) == {2: 1.9, 4: 2.4, 6: 2.6}
    from specpick.skill.planner.candidates import Candidate, estimate
    from specpick.skill.planner.context import build_context

    ctx = build_context(PlannerInputs(verifier=L8, workload="code", engine="vllm",
                                      from_measurement=str(tmp_path / "t.json")))
    cand = Candidate(strategy="ngram", engine="vllm", feasible=True, reason="")
    for n, tau in fig.tau_by_n:
        assert estimate(ctx, cand, num_draft_tokens=n, sweep=False).tau == pytest.approx(tau)
    swept = estimate(ctx, cand, num_draft_tokens=6)
    assert max(p.num_draft_tokens for p in swept.draft_sweep) == 6  # nothing is known past the measured N


def test_a_bare_tau_with_its_method_applies_there_and_states_the_assumed_n() -> None:
    rec = plan(PlannerInputs(verifier=L8, workload="chat", engine="vllm", method="eagle3", tau=1.8,
                             measured_method="eagle3"))
    text = " ".join(rec.expected_speedup.assumptions)
    assert "measured at N=3 (assumed" in text
    other = plan(PlannerInputs(verifier=L8, workload="chat", engine="vllm", method="eagle", tau=1.8,
                               measured_method="eagle3"))
    alone = plan(PlannerInputs(verifier=L8, workload="chat", engine="vllm", method="eagle"))
    assert other.expected_speedup.tau == alone.expected_speedup.tau


def test_a_measured_speedup_recalibrates_that_drafter_at_the_measured_point() -> None:
    from specpick.skill.planner.candidates import Candidate, estimate
    from specpick.skill.planner.context import build_context
    from specpick.tools.catalog.tables import get_catalog

    inp = PlannerInputs(verifier=L8, workload="chat", engine="vllm", tau=1.8, measured_method="eagle3",
                        measured_n=3, measured_speedup=1.1)
    ctx = build_context(inp)
    head = get_catalog().head("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    cand = Candidate(strategy="eagle3", engine="vllm", feasible=True, reason="", head=head)
    at = estimate(ctx, cand, num_draft_tokens=3, sweep=False)
    assert at.speedup == pytest.approx(1.1, rel=1e-6)
    assert any("recalibrated to your measured speedup 1.10x" in a for a in at.assumptions)


@pytest.mark.parametrize("argv, code, needle", [
    (["--from-measurement", "{tmp}/missing.json"], EXIT_NOT_FOUND, "no such file"),
    (["--from-measurement", "{tmp}/notjson.json"], EXIT_INPUT, "not JSON"),
    (["--from-measurement", "{tmp}/other.json"], EXIT_INPUT, "not a measure or tune report"),
    (["--tau", "1.8", "--measured-method", "eagle3", "--measured-n", "65"], EXIT_INPUT, "measured-n"),
    (["--tau", "1.8", "--measured-method", "lookahead", "--measured-n", "3"], EXIT_INPUT, "has no draft length"),
    (["--tau", "4.5", "--measured-method", "eagle3", "--measured-n", "2"], EXIT_INPUT, "N + 1"),
    (["--tau", "1.8", "--measured-method", "fastest"], EXIT_INPUT, "measured-method"),
    (["--measured-speedup", "1.2"], EXIT_INPUT, "needs the acceptance"),
    (["--measured-n", "3"], EXIT_INPUT, "add --tau or --alpha"),
    (["--tau", "1.8", "--from-measurement", "{tmp}/t.json"], EXIT_INPUT, "not both"),
    (["--from-measurement", "{tmp}/m.json"], EXIT_INPUT, "add --measured-method"),
])
def test_bad_evidence_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                          code: int, needle: str) -> None:
    (tmp_path / "notjson.json").write_text("{nope")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    _tune_report(tmp_path / "t.json")
    _measure_report(tmp_path / "m.json")
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        rc = main(["recommend", "--verifier", L8, "--workload", "chat", *args])
    except SystemExit as exc:  # argparse's own refusals (a choice outside the list) exit from the parser
        rc = int(exc.code or 0)
    err = capsys.readouterr().err.strip()
    assert rc == code
    assert err.startswith("error:") and needle in err and "\n" not in err


@pytest.mark.parametrize("method, gpus, gpu, verifier", [("mtp", 8, "B200", "deepseek-v3"),
                                                         ("eagle3", 1, "H100-SXM", L8)])
def test_a_best_at_the_sweeps_limit_is_said_so_not_called_the_best(method: str, gpus: int, gpu: str,
                                                                   verifier: str) -> None:
    from specpick.skill.planner.candidates import Candidate, estimate
    from specpick.skill.planner.context import build_context
    from specpick.tools.catalog.tables import get_catalog
    from specpick.tools.methods import method_record

    inp = PlannerInputs(verifier=verifier, workload="chat", engine="vllm", method=method, gpus=gpus, gpu=gpu)
    rec, ctx = plan(inp), build_context(inp)
    head = get_catalog().head(rec.draft_model) if method != "mtp" and rec.draft_model else None
    est = estimate(ctx, Candidate(strategy=method, engine="vllm", feasible=True, reason="", head=head),
                   num_draft_tokens=3)
    top = method_record(method).max_sweep_draft_len
    assert max(p.num_draft_tokens for p in est.draft_sweep) == top  # the registry's bound is the sweep's
    at_limit = max(est.draft_sweep, key=lambda p: p.speedup).num_draft_tokens == top
    said = any(a.startswith(f"best at the sweep's limit N={top}") for a in est.assumptions)
    # MTP's limit is where measured speed peaks (MethodRecord.sweep_len_is_cap): longer N was measured and lost, so
    # it is not called untested; any other method's limit is only the longest N published.
    cap = method_record(method).sweep_len_is_cap
    assert said == (at_limit and not cap)
    if at_limit and rec.num_draft_tokens == top and not cap:
        assert any("not a proven best" in r for r in rec.rationale)


def test_copy_based_drafts_are_not_shortened_on_a_low_average_alpha() -> None:
    """N-gram acceptance is bursty: its own prior alpha on code is below 0.6, and the answer must not tell the user to
    cut N to 3 on the alpha they will measure (issue 26); the per-position rates decide instead."""
    rec = plan(PlannerInputs(verifier="qwen3-8b", workload="code", engine="vllm", method="ngram"))
    assert rec.strategy == "ngram" and rec.expected_speedup.alpha is not None and rec.expected_speedup.alpha < 0.6
    assert not [s for s in rec.fallback if s.trigger is not None and s.trigger.metric == "alpha"]
    assert any("per-position acceptance" in s.condition for s in rec.fallback)


def test_between_the_ns_a_tune_swept_tau_is_monotone_and_the_measured_point_is_the_measured_speedup(
        tmp_path: Path) -> None:
    from specpick.skill.planner.candidates import Candidate, estimate
    from specpick.skill.planner.context import build_context

    path = _tune_report(tmp_path / "t.json")
    ctx = build_context(PlannerInputs(verifier=L8, workload="code", engine="vllm", from_measurement=str(path)))
    est = estimate(ctx, Candidate(strategy="ngram", engine="vllm", feasible=True, reason=""), tuned=True)
    taus = [p.tau for p in est.draft_sweep]
    assert taus == sorted(taus) and [p.num_draft_tokens for p in est.draft_sweep] == list(range(1, 7))
    at6 = next(p for p in est.draft_sweep if p.num_draft_tokens == 6)
    assert at6.speedup == pytest.approx(1.4, rel=1e-6)  # the tune report's speedup_measured at N=6
    assert "1.40x" in est.draft_length_rule or est.num_draft_tokens != 6

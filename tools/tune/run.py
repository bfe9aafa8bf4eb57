"""``run_tune``: measure the settings it must, predict the rest, pick N per batch-size range, emit the schedule.

Order of work (``--strategy predict``): the largest N first, with the baseline server, at every concurrency; every
smaller N predicted from that run's per-request acceptance; the chosen N (per concurrency) confirmed by one run
each where it was not the largest; the runs not needed are reported as saved. ``--strategy measure-all`` measures
every N as well and prints the predictions beside the measurements. Peers (vLLM ``bench sweep``, SGLang
``bench_speculative.py``) measure every point and predict none.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import re

from pydantic import BaseModel, Field, ValidationError

from specpick.tools.checks.engine_config import build_engine_config
from specpick.tools.engines.setting import EngineConfig, EngineConfigInput
from specpick.tools.errors import InputError, format_validation_error
from specpick.tools.measure.report import MeasureReport
from specpick.tools.measure.run import MeasureInput, run_measure
from specpick.tools.tune import launch, results
from specpick.tools.tune.analysis import TunePoint, points
from specpick.tools.tune.inputs import TuneInput, default_executable, endpoint_map, predictable, serve_args
from specpick.tools.tune.predict import Point, best_n_per_concurrency, schedule_ranges

ProgressFn = Callable[[int, int, str], None]
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


class TuneReport(BaseModel):
    """What ``specpick tune`` found, and the setting to deploy."""

    engine: str
    method: str
    points: list[TunePoint]
    best_n: dict[int, int] = Field(description="concurrency -> best draft length (0: speculation off there)")
    schedule: list[tuple[int, int, int]] = Field(description="(first batch size, last batch size, N)")
    configs: list[EngineConfig] = Field(default_factory=list, description="the schedule in each engine's form")
    runs_measured: int
    runs_saved: int = Field(description="draft lengths predicted and not measured")
    results_file: str
    assumptions: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)


def _measure(inp: TuneInput, n: int, url: str, baseline: str | None, progress: ProgressFn | None) -> MeasureReport:
    return run_measure(MeasureInput(
        endpoint=url, baseline_endpoint=baseline, prompts=inp.prompts, num_prompts=inp.num_prompts,
        concurrency=sorted(set(inp.concurrency)), max_tokens=inp.max_tokens, temperature=inp.temperature,
        api=inp.api, warmup=inp.warmup, timeout_s=inp.timeout_s,
    ), (lambda d, t, what: progress(d, t, f"N={n}, {what}")) if progress else None)


class _Runner:
    """Runs one draft length against a server the user runs or one this command starts."""

    def __init__(self, inp: TuneInput) -> None:
        self.inp = inp
        self.urls = endpoint_map(inp) if inp.endpoint else {}
        self.spec = None if inp.endpoint else launch.LaunchSpec(
            engine=inp.engine, executable=default_executable(inp), model=inp.serve_model or "",
            extra_args=serve_args(inp), engine_version=inp.engine_version,
            startup_timeout_s=inp.startup_timeout_s, log_dir=inp.results.parent / "specpick-tune-logs")

    def run(self, n: int, with_baseline: bool, progress: ProgressFn | None) -> MeasureReport:
        inp = self.inp
        if self.spec is None:
            return _measure(inp, n, self.urls[n], inp.baseline_endpoint if with_baseline else None, progress)
        args = launch.speculative_args(self.spec, inp.method, n, inp.draft,
                                       (inp.prompt_lookup_min, inp.prompt_lookup_max))
        with launch.running(self.spec, args, f"n{n}") as url:
            if not with_baseline:
                return _measure(inp, n, url, None, progress)
            with launch.running(self.spec, [], "baseline") as base_url:
                return _measure(inp, n, url, base_url, progress)


def schedule_configs(inp: TuneInput, schedule: list[tuple[int, int, int]],
                     out_warnings: list[str] | None = None) -> list[EngineConfig]:
    """The schedule spelled for the engine tuned (and the others that take a per-batch schedule)."""
    out_warnings = [] if out_warnings is None else out_warnings
    top_n = max(k for _, _, k in schedule)
    if top_n == 0:
        return []
    # The trailing K=0 ranges become the engine's off threshold; a K=0 range between two that draft stays a range
    # (noisy measurements can give 2, 0, 4): dropping it would leave the ranges non-contiguous, and no config.
    last_on = max(i for i, (_, _, k) in enumerate(schedule) if k > 0)
    text = [f"{a}-{b}:{k}" for a, b, k in schedule[:last_on + 1]]
    off = schedule[last_on + 1][0] if last_on + 1 < len(schedule) else None
    out = []
    # A local folder or .gguf path is no repo id: the commands name a placeholder the user swaps for their model.
    model = inp.serve_model if inp.serve_model and REPO_ID.fullmatch(inp.serve_model) else "your-org/your-model"
    for engine in dict.fromkeys([inp.engine, "vllm", "trtllm", "sglang"]):
        try:
            out.append(build_engine_config(EngineConfigInput(
                engine=engine, method=inp.method, verifier=model, draft_model=inp.draft,
                num_draft_tokens=top_n, batch_schedule=text, disable_by_batch_size=off,
                max_batch_size=inp.max_batch_size, prompt_lookup_min=inp.prompt_lookup_min,
                prompt_lookup_max=inp.prompt_lookup_max,
                engine_version=inp.engine_version if engine == inp.engine else None)))  # type: ignore[arg-type]
        except (InputError, ValidationError) as exc:
            if engine == inp.engine:  # the engine tuned: say why its schedule is missing (it was dropped silently)
                why = exc if isinstance(exc, InputError) else format_validation_error(exc, audience="cli")
                out_warnings.append(f"no {engine} configuration emitted for the schedule: {str(why)[:200]}")
            continue  # another engine that does not run this method (or the release predates it): nothing to emit
    return out


def _assumptions(inp: TuneInput, can_predict: bool) -> list[str]:
    notes = [
        "tau per point = 1 + accepted drafts / verify steps with drafts, from vLLM's per-request figures; intervals "
        "are 80% bootstrap intervals over the prompts",
        "speedup = baseline decode ms per token / speculative decode ms per token on the same prompts and "
        "concurrency (the baseline server is measured once, with the largest N's run)",
        "best N per concurrency: the highest measured speedup, else the highest predicted; 0 (off) where none is "
        "above 1.0; each measured concurrency's N holds from just above the previous one up to it",
    ]
    if can_predict:
        notes.append("smaller N predicted by re-cutting the largest N's accepted runs into steps of N (drafts at a "
                     "smaller N are prefixes of the larger N's); past the largest N's horizon (a step that accepted "
                     "every draft) the last measured position's conditional acceptance stands in; predicted speedup assumes the same step cost at "
                     "both lengths, which holds while decoding is memory-bound and not on a compute-bound host")
    return notes


def run_tune(inp: TuneInput, progress: ProgressFn | None = None) -> TuneReport:
    """Sweep, predict, choose and emit (see the module docstring).

    Raises:
        InputError: bad options or files; UnavailableError / ServiceError: a server failed.
    """
    prompts_text = results.check_paths(Path(inp.prompts), inp.results, inp.plot_dir)
    key = results.run_key(inp, prompts_text)
    done = {} if inp.fresh else results.load(inp.results, key, inp.concurrency)
    can_predict = predictable(inp.method)
    lengths = sorted(set(inp.draft_lengths), reverse=True)
    warnings = [] if can_predict else [f"{inp.method} drafts are not prefixes of a longer draft's: every N is "
                                       "measured, none predicted"]
    todo = lengths if inp.strategy == "measure-all" or not can_predict else lengths[:1]
    runner = _Runner(inp)
    for n in todo:
        if n not in done:
            done[n] = runner.run(n, with_baseline=n == lengths[0], progress=progress)
            results.append(inp.results, key, n, done[n])
    pts = points(done, lengths, can_predict)
    best = best_n_per_concurrency([_as_point(p) for p in pts])
    for n in sorted(set(best.values()) - set(done) - {0}):  # confirm the chosen N where it was predicted
        done[n] = runner.run(n, with_baseline=False, progress=progress)
        results.append(inp.results, key, n, done[n])
        pts = points(done, lengths, can_predict)
        best = best_n_per_concurrency([_as_point(p) for p in pts])
    schedule = schedule_ranges(best, inp.max_batch_size)
    report = TuneReport(
        engine=inp.engine, method=inp.method, points=pts, best_n=best, schedule=schedule,
        configs=schedule_configs(inp, schedule, warnings), runs_measured=len(done),
        runs_saved=len(lengths) - len(set(done) & set(lengths)),
        results_file=str(inp.results), assumptions=_assumptions(inp, can_predict), warnings=warnings)
    for run in done.values():
        report.warnings += [w for w in run.warnings if w not in report.warnings]
    if inp.plot_dir is not None:
        from specpick.tools.tune.plot import write_plot

        report.plots = [write_plot(report.points, report.method, report.engine, inp.plot_dir)]
    return report


def _as_point(p: TunePoint) -> Point:
    return Point(num_draft_tokens=p.num_draft_tokens, concurrency=p.concurrency, measured=p.speedup_measured,
                 predicted=p.speedup_predicted)

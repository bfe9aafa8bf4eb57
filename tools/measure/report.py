"""Result models of ``specpick measure`` and their table rendering.

``MeasureReport`` is what ``run_measure`` returns and what ``--json`` prints.
Timing figures follow the usual serving-benchmark names: TTFT (time to first
token), TPOT (time per output token after the first), output tokens/s over
the wall time of a batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.measure.classes import ClassResult, RequestFigures
from specpick.tools.measure.compare import Comparison
from specpick.tools.measure.metrics import Acceptance
from specpick.tools.measure.ngram_sim import NgramParams


class Percentiles(BaseModel):
    """Distribution summary; None where there were no values."""

    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method), q in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(rank), math.ceil(rank)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def summarize(values: Sequence[float]) -> Percentiles:
    if not values:
        return Percentiles()
    return Percentiles(
        mean=sum(values) / len(values),
        p50=percentile(values, 50),
        p90=percentile(values, 90),
        p99=percentile(values, 99),
    )


class RunFigures(BaseModel):
    """One configuration (speculative or baseline) at one concurrency."""

    label: Literal["speculative", "baseline"]
    concurrency: int
    num_requests: int
    completion_tokens: int
    wall_s: float
    output_tokens_per_s: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles = Field(description="per-request time per output token after the first")
    decode_ms_per_token: float | None = Field(
        None, description="all requests' decode time / all their tokens after the first (token-weighted TPOT)"
    )


class Timing(BaseModel):
    """One request's timing, as both the endpoint and the local runner record it."""

    ttft_ms: float = Field(description="request sent -> first output token")
    decode_ms: float = Field(description="first output token -> last output token")
    tokens: int = Field(description="output tokens")
    text: str = Field("", description="the output, to compare speculative with baseline")


def run_figures(
    label: Literal["speculative", "baseline"], concurrency: int, wall_s: float, timings: Sequence[Timing]
) -> RunFigures:
    """Aggregate per-request timings; TPOT of a request = decode time / (tokens - 1)."""
    decoding = [t for t in timings if t.tokens > 1]
    decode_tokens = sum(t.tokens - 1 for t in decoding)
    total = sum(t.tokens for t in timings)
    return RunFigures(
        label=label,
        concurrency=concurrency,
        num_requests=len(timings),
        completion_tokens=total,
        wall_s=wall_s,
        output_tokens_per_s=total / wall_s if wall_s > 0 else 0.0,
        ttft_ms=summarize([t.ttft_ms for t in timings]),
        tpot_ms=summarize([t.decode_ms / (t.tokens - 1) for t in decoding]),
        decode_ms_per_token=sum(t.decode_ms for t in decoding) / decode_tokens if decode_tokens else None,
    )


class ConcurrencyResult(BaseModel):
    """Everything measured at one concurrency."""

    concurrency: int
    speculative: RunFigures
    baseline: RunFigures | None = None
    acceptance: Acceptance | None = Field(None, description="from the engine's counters over this batch")
    per_request_acceptance: Acceptance | None = Field(
        None, description="sum of the engine's per-request figures, where it reports them"
    )
    speedup: float | None = Field(
        None, description="baseline decode ms/token over speculative decode ms/token (per-request decode speed)"
    )
    throughput_ratio: float | None = Field(None, description="speculative output tokens/s over baseline")
    outputs_identical: bool | None = Field(None, description="greedy only: every speculative output == baseline's")
    requests: list[RequestFigures] = Field(default_factory=list, description="per prompt, in the prompts' order: "
                                           "its class, decode time, tokens and (vLLM) accepted drafts per position")
    per_class: list[ClassResult] = Field(default_factory=list, description="the same figures per traffic class "
                                         "(the prompts file's 'class', else copy/free from the output's overlap "
                                         "with the prompt), with the decision per class")
    num_mismatched: int = Field(0, description="requests whose speculative output differs from the baseline's")

    def compare_with_baseline(self, spec: Sequence[Timing], base: Sequence[Timing], greedy: bool) -> None:
        """Fill the ratios and, for greedy decoding, whether speculation changed any output."""
        s, b = self.speculative, self.baseline
        if b is None:
            return
        if s.decode_ms_per_token and b.decode_ms_per_token:
            self.speedup = b.decode_ms_per_token / s.decode_ms_per_token
        if b.output_tokens_per_s > 0:
            self.throughput_ratio = s.output_tokens_per_s / b.output_tokens_per_s
        if greedy:
            self.num_mismatched = sum(x.text != y.text for x, y in zip(spec, base, strict=True))
            self.outputs_identical = self.num_mismatched == 0


class LocalDetails(BaseModel):
    """What the in-process run used and whether speculation changed the text."""

    model: str
    drafter: str = Field(description="prompt lookup with its settings, or the assistant model")
    dtype: str
    torch_threads: int


class NgramEstimate(BaseModel):
    """The n-gram drafting simulation on the user's own prompt + output pairs."""

    params: NgramParams
    tokenizer: str = Field(description="which tokenizer produced the token ids")
    num_samples: int
    num_output_tokens: int
    acceptance: Acceptance


class MeasureReport(BaseModel):
    """The result of ``specpick measure`` in any of its three modes."""

    mode: Literal["endpoint", "local", "estimate-ngram"]
    engine: str | None = None
    model: str | None = None
    endpoint: str | None = None
    baseline_endpoint: str | None = None
    prompts_source: str | None = None
    num_prompts: int = 0
    max_tokens: int | None = None
    temperature: float | None = None
    results: list[ConcurrencyResult] = Field(default_factory=list)
    acceptance: Acceptance | None = Field(None, description="over every measured request")
    local: LocalDetails | None = None
    ngram: NgramEstimate | None = None
    comparison: Comparison | None = None
    plots: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def print_trailer(console: object, warnings: list[str], assumptions: list[str], plots: list[str]) -> None:
    """The lines every measurement report ends with (measure and tune): warnings, assumptions, plot files."""
    for line in warnings:
        console.print(f"warning: {line}")  # type: ignore[attr-defined]
    for line in assumptions:
        console.print(f"assumption: {line}")  # type: ignore[attr-defined]
    for path in plots:
        console.print(f"plot: {path}")  # type: ignore[attr-defined]


def format_or_dash(value: float | None, fmt: str = "{:.2f}") -> str:
    """``fmt`` applied to ``value``, or "-" where nothing was measured."""
    return _f(value, fmt)


def _f(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def render_text(report: MeasureReport, width: int = 110) -> str:
    """Render the report as rich tables into plain text (rich imported lazily)."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    # markup off: actions, prompts and model names are data, and "[ok]"-like text must print as written.
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, markup=False, highlight=False)
    head = f"specpick measure ({report.mode})"
    if report.model:
        head += f": {report.model}"
    if report.engine:
        head += f" on {report.engine}"
    console.print(head)
    acc = report.acceptance or (report.ngram.acceptance if report.ngram else None)
    if acc is not None:
        t = Table(title=f"Acceptance ({acc.source})")
        for col in ("alpha", "tau", "drafts", "draft tokens", "accepted", "per position"):
            t.add_column(col)
        t.add_row(
            _f(acc.alpha, "{:.3f}"),
            _f(acc.tau, "{:.2f}"),
            _f(acc.num_drafts, "{}"),
            _f(acc.num_draft_tokens, "{}"),
            _f(acc.num_accepted_tokens, "{}"),
            " ".join(f"{p:.2f}" for p in acc.per_position) or "-",
        )
        console.print(t)
        if acc.note:
            console.print(f"note: {acc.note}")
    if report.results:
        t = Table(title="Timings (ms) and throughput per concurrency")
        for col in (
            "conc",
            "run",
            "req",
            "tok/s",
            "TTFT p50",
            "TTFT p90",
            "TPOT p50",
            "TPOT p90",
            "alpha",
            "tau",
            "speedup",
        ):
            t.add_column(col, justify="right")
        for r in report.results:
            for run in (r.speculative, r.baseline):
                if run is None:
                    continue
                spec = run.label == "speculative"
                t.add_row(
                    str(r.concurrency),
                    run.label,
                    str(run.num_requests),
                    _f(run.output_tokens_per_s, "{:.1f}"),
                    _f(run.ttft_ms.p50, "{:.0f}"),
                    _f(run.ttft_ms.p90, "{:.0f}"),
                    _f(run.tpot_ms.p50, "{:.1f}"),
                    _f(run.tpot_ms.p90, "{:.1f}"),
                    _f(r.acceptance.alpha if spec and r.acceptance else None, "{:.3f}"),
                    _f(r.acceptance.tau if spec and r.acceptance else None, "{:.2f}"),
                    _f(r.speedup if spec else None, "{:.2f}x"),
                )
        console.print(t)
    _render_classes(console, report)
    if report.local is not None:
        loc = report.local
        console.print(f"local: {loc.drafter}; dtype {loc.dtype}; {loc.torch_threads} threads")
    for r in report.results:
        if r.outputs_identical is not None:
            same = "identical" if r.outputs_identical else f"{r.num_mismatched} of {r.speculative.num_requests} differ"
            console.print(f"concurrency {r.concurrency}: greedy outputs with and without speculation {same}")
    if report.ngram is not None:
        ng, p = report.ngram, report.ngram.params
        low = p.prompt_lookup_min if p.engine == "vllm" else 1
        console.print(f"n-gram estimate: {ng.num_samples} samples, {ng.num_output_tokens} output tokens")
        console.print(f"  {p.engine} drafter N={p.num_draft_tokens}, n-gram {low}..{p.prompt_lookup_max}")
        console.print(f"  tokenizer {ng.tokenizer}")
        acc = ng.acceptance
        if report.acceptance is not None:  # a local run: the estimate next to what the model accepted
            console.print(f"  simulated alpha {_f(acc.alpha, '{:.3f}')}, tau {_f(acc.tau, '{:.2f}')}")
    if report.comparison is not None:
        _render_comparison(console, report.comparison)
    print_trailer(console, report.warnings, report.assumptions, report.plots)
    return buf.getvalue()


def _render_classes(console: object, report: MeasureReport) -> None:
    """Per-class rows, only when the prompts fall in more than one class (one class is the table above)."""
    from rich.table import Table

    rows = [(r.concurrency, c) for r in report.results for c in r.per_class]
    if len({c.name for _, c in rows}) < 2:
        return
    t = Table(title="Per traffic class (speedup: 80% bootstrap interval over the class's prompts)")
    for col in ("conc", "class", "by", "req", "overlap", "alpha", "tau", "speedup", "interval", "speculation"):
        t.add_column(col, justify="right")
    for conc, c in rows:
        acc = c.acceptance
        interval = f"{c.speedup_low:.2f}-{c.speedup_high:.2f}" if c.speedup_low is not None and c.speedup_high \
            is not None else "-"
        t.add_row(str(conc), c.name, c.classified_by, str(c.num_requests), f"{c.copy_overlap:.2f}",
                  _f(acc.alpha if acc else None, "{:.3f}"), _f(acc.tau if acc else None, "{:.2f}"),
                  _f(c.speedup, "{:.2f}x"), interval, c.decision or "-")
    console.print(t)  # type: ignore[attr-defined]


def _render_comparison(console: object, cmp: Comparison) -> None:
    from rich.table import Table

    t = Table(title=f"Measured vs predicted ({cmp.strategy}, N={_f(cmp.num_draft_tokens, '{}')}): {cmp.verdict}")
    for col in ("metric", "predicted", "measured", "verdict", "note"):
        t.add_column(col)
    for c in cmp.checks:
        pred = _f(c.expected, "{:.3f}")
        if c.low is not None and c.high is not None:
            pred += f" [{c.low:.2f}, {c.high:.2f}]"
        t.add_row(c.metric, pred, _f(c.measured, "{:.3f}"), c.verdict, c.note)
    console.print(t)  # type: ignore[attr-defined]
    for step in cmp.fallback:
        mark = "FIRES" if step.fired else ("n/a" if step.measured is None else "ok")
        console.print(f"fallback [{mark}] {step.condition}: {step.action}")  # type: ignore[attr-defined]

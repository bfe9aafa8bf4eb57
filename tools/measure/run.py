"""``run_measure``: the entry point behind ``specpick measure``, in three modes.

* ``--endpoint URL``: load an OpenAI-compatible server (vLLM, SGLang) at each
  concurrency, read its speculative metrics before and after, and, with
  ``--baseline-endpoint``, the same load on a server without speculation.
* ``--local MODEL``: transformers in-process, plain vs assisted generation.
* ``--estimate-ngram --samples FILE``: simulate n-gram drafting on recorded
  prompt + output pairs, no model needed.

Every mode can compare with a saved recommendation (``--expect``) and write
plots (``--plot-dir``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from specpick.tools.errors import InputError, RemoteDataError, ServiceError, format_validation_error
from specpick.tools.measure import compare as cmp
from specpick.tools.measure import endpoint as ep
from specpick.tools.measure.classes import RequestFigures, class_of, copy_overlap, split_by_class
from specpick.tools.measure.metrics import (
    Acceptance, SpecSnapshot, acceptance_from_counts, acceptance_from_llama_timings, check_accepted_within_output,
    spec_delta, spec_snapshot,
)
from specpick.tools.sanitize import redact
from specpick.tools.measure.ngram_sim import NgramEngine, NgramParams
from specpick.tools.measure.preflight import preflight
from specpick.tools.measure.prompts import PromptItem, builtin_prompts, load_prompts
from specpick.tools.measure.report import ConcurrencyResult, MeasureReport, RunFigures, run_figures
from specpick.tools.measured_checks import MAX_MEASURED_CONCURRENCY
from specpick.tools.vocab import Workload
from specpick.tools.measure.tokenizer import verifier_repo
from specpick.tools.measure.tokenizer import verifier_tokenizer_file

ProgressFn = Callable[[int, int, str], None]  # (done, total, what is running)
DEFAULT_NUM_DRAFT_TOKENS = 4


def _opt(description: str, metavar: str | None = None, **kw: object) -> object:
    """A Field whose ``cli`` hint gives argparse a readable metavar."""
    extra = {"cli": {"metavar": metavar}} if metavar else None
    return Field(description=description, json_schema_extra=extra, **kw)  # type: ignore[call-overload]


class MeasureInput(BaseModel):
    """Options of ``specpick measure``; field ``foo_bar`` is flag ``--foo-bar``."""

    model_config = ConfigDict(extra="forbid")

    # Where to measure: exactly one of endpoint, local, estimate_ngram.
    endpoint: str | None = _opt("OpenAI-compatible server with speculation on (vLLM, SGLang)", "URL", default=None)
    baseline_endpoint: str | None = _opt("the same model served without speculation", "URL", default=None)
    model: str | None = _opt("served model name (default: the only one the server lists)", "NAME", default=None)
    local: str | None = _opt(
        "run this model in-process with transformers: folder, .gguf or repo id", "MODEL", default=None
    )
    draft_model: str | None = _opt("--local: assistant model instead of prompt lookup", "MODEL", default=None)
    estimate_ngram: bool = _opt("simulate n-gram drafting on --samples, no model needed", default=False)
    samples: Path | None = _opt("JSONL of {prompt|messages, output} pairs for --estimate-ngram", "FILE", default=None)
    # What to send.
    prompts: Path | None = _opt(".jsonl or text file of prompts", "FILE", default=None)
    workload: Workload | None = _opt("use the built-in prompt sample for this workload", default=None)
    num_prompts: int | None = _opt("use only the first N prompts", "N", default=None, ge=1)
    concurrency: list[int] = _opt(
        "requests in flight; several values measure each (default: 1)", "C", default_factory=lambda: [1]
    )
    max_tokens: int = _opt("output tokens per request", "N", default=128, ge=1, le=32768)
    temperature: float = _opt("sampling temperature (0 = greedy)", "T", default=0.0, ge=0.0, le=2.0)
    api: Literal["chat", "completions"] = _opt("chat (template applied) or raw completions", default="chat")
    warmup: int = _opt("unmeasured requests sent first to each server", "N", default=1, ge=0, le=16)
    timeout_s: float = _opt("per-request read timeout, seconds", "S", default=300.0, gt=0, le=3600)
    # Drafter settings for --local and the estimate (a server's drafter is fixed when it starts).
    num_draft_tokens: int | None = _opt(
        "draft length N (default: the recommendation's, else 4)", "N", default=None, ge=1, le=64
    )
    prompt_lookup_max: int = _opt("longest n-gram matched (max_matching_ngram_size)", "N", default=3, ge=1, le=64)
    prompt_lookup_min: int = _opt("shortest n-gram matched (vLLM semantics only)", "N", default=1, ge=1, le=64)
    ngram_engine: NgramEngine = _opt("whose n-gram proposer the estimate mimics", default="transformers")
    tokenizer: str | None = _opt(
        "estimate: model folder, tokenizer.json, .tiktoken file or tiktoken encoding", "PATH", default=None
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = _opt("--local weights dtype", default="auto")
    # Outputs.
    expect: Path | None = _opt("a saved `recommend --json` output to compare against", "FILE", default=None)
    plot_dir: Path | None = _opt("write PNG plots here", "DIR", default=None)
    save_samples: Path | None = _opt("--local: write prompt/output pairs here (JSONL)", "FILE", default=None)


def measure_input(**kwargs: object) -> MeasureInput:
    """Build a MeasureInput, turning validation errors into one-line InputErrors (for the CLI)."""
    try:
        return MeasureInput(**kwargs)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, audience="cli", subject="measure")) from exc


def _check(inp: MeasureInput) -> Literal["endpoint", "local", "estimate-ngram"]:
    modes = [
        m for m, on in (("endpoint", inp.endpoint), ("local", inp.local), ("estimate-ngram", inp.estimate_ngram)) if on
    ]
    if len(modes) != 1:
        raise InputError("give exactly one of --endpoint URL, --local MODEL or --estimate-ngram --samples FILE")
    if not inp.concurrency or any(c < 1 or c > MAX_MEASURED_CONCURRENCY for c in inp.concurrency):
        raise InputError(f"--concurrency values must be between 1 and {MAX_MEASURED_CONCURRENCY}, got "
                         f"{inp.concurrency}")
    if inp.baseline_endpoint and not inp.endpoint:
        raise InputError("--baseline-endpoint needs --endpoint (the server with speculation)")
    if inp.estimate_ngram and inp.samples is None:
        raise InputError("--estimate-ngram needs --samples FILE (JSONL of prompt + output pairs)")
    if inp.samples is not None and not inp.estimate_ngram:
        raise InputError("--samples is for --estimate-ngram; to send prompts use --prompts")
    if inp.prompt_lookup_min > inp.prompt_lookup_max:
        raise InputError("--prompt-lookup-min must not exceed --prompt-lookup-max")
    if inp.save_samples is not None and not inp.local:
        raise InputError("--save-samples is for --local runs (it records the local model's outputs)")
    if inp.draft_model and not inp.local:
        raise InputError("--draft-model is for --local runs; a server's drafter is set when the server starts")
    return modes[0]  # type: ignore[return-value]


def _prompts(inp: MeasureInput, expectation: cmp.Expectation | None) -> tuple[list[PromptItem], str]:
    if inp.prompts is not None:
        items, source = load_prompts(inp.prompts), str(inp.prompts)
    else:
        workload = inp.workload or (expectation.inputs.workload if expectation and expectation.inputs else None)
        if workload is None:
            raise InputError("pass --prompts FILE (JSONL or text) or --workload NAME for a built-in sample")
        items, source = builtin_prompts(workload), f"builtin:{workload}"
    return (items[: inp.num_prompts] if inp.num_prompts else items), source


def _ngram_params(inp: MeasureInput, expectation: cmp.Expectation | None) -> NgramParams:
    n = inp.num_draft_tokens or (expectation.num_draft_tokens if expectation else None) or DEFAULT_NUM_DRAFT_TOKENS
    return NgramParams(
        engine=inp.ngram_engine,
        num_draft_tokens=n,
        prompt_lookup_max=inp.prompt_lookup_max,
        prompt_lookup_min=inp.prompt_lookup_min,
    )


def _per_request_acceptance(records: list[ep.RequestRecord]) -> Acceptance | None:
    specs = [r.spec for r in records if r.spec is not None]
    if not specs or len(specs) != len(records):
        return None
    per_pos: list[float] = []
    for s in specs:
        # histogram[j] = verify steps that accepted exactly j drafts; position i is accepted when j > i.
        per_pos += [0.0] * max(0, len(s.acceptance_histogram) - 1 - len(per_pos))
        for j, count in enumerate(s.acceptance_histogram):
            for i in range(j):
                per_pos[i] += count
    acc = acceptance_from_counts(
        "vllm-per-request",
        sum(s.num_spec_steps for s in specs),
        sum(s.num_draft_tokens for s in specs),
        sum(s.num_accepted_draft_tokens for s in specs),
        per_pos,
    )
    acc.note = "summed from vLLM's per-request metrics (--per-request-spec-decode-metrics)"
    return acc


def request_figures(item: PromptItem, spec: ep.RequestRecord, base: ep.RequestRecord | None) -> RequestFigures:
    """One prompt's figures on the speculative server (and the baseline's, paired), with its traffic class."""
    overlap = copy_overlap(item.as_text(), spec.text)
    name, how = class_of(item.prompt_class, overlap)
    per_pos: list[int] = []
    drafts = draft_tokens = accepted = 0
    if spec.spec is not None:
        hist = spec.spec.acceptance_histogram
        # histogram[j] = verify steps that accepted exactly j drafts; position i is accepted when j > i.
        per_pos = [sum(hist[j] for j in range(i + 1, len(hist))) for i in range(max(0, len(hist) - 1))]
        drafts, draft_tokens = spec.spec.num_spec_steps, spec.spec.num_draft_tokens
        accepted = spec.spec.num_accepted_draft_tokens
    elif spec.llama is not None:  # llama-server: draft tokens and accepted ones, no draft count
        draft_tokens, accepted = spec.llama.draft_n, spec.llama.draft_n_accepted
    return RequestFigures(origin=item.origin, prompt_class=name, classified_by=how, copy_overlap=overlap,
                          spec_decode_ms=spec.decode_ms, spec_tokens=spec.tokens,
                          base_decode_ms=base.decode_ms if base else None, base_tokens=base.tokens if base else None,
                          drafts=drafts, draft_tokens=draft_tokens, accepted=accepted, accepted_per_position=per_pos)


def _expected_n(inp: MeasureInput) -> int | None:
    return cmp.load_expectation(inp.expect).num_draft_tokens if inp.expect else None


def _llama_probe(client: object, root: str, model: str, inp: MeasureInput) -> bool:
    """True when one short request comes back with llama-server's draft counts (timings.draft_n)."""
    probe = PromptItem(prompt="Count from one to twenty.", origin="probe")
    try:
        return ep.stream_request(client, root, model, probe, inp.api, 32, 0.0).llama is not None
    except (ServiceError, RemoteDataError):
        return False  # not a llama-server answering completions: the caller reports the missing metrics


def _llama_acceptance(recs: list[ep.RequestRecord], n: int | None,
                      report: MeasureReport | None = None) -> Acceptance:
    """Acceptance from llama-server's per-response timings: this batch's, or (with ``report``) every batch's."""
    pairs = [(r.llama.draft_n, r.llama.draft_n_accepted) for r in recs if r.llama is not None]
    if report is not None:
        pairs = [(q.draft_tokens, q.accepted) for res in report.results for q in res.requests]
    return acceptance_from_llama_timings(pairs, n)


def _snapshot(client: object, root: str, model: str) -> SpecSnapshot | None:
    samples = ep.fetch_metrics(client, root)
    return None if samples is None else spec_snapshot(samples, model)  # None: llama-server reports per response


class _Ticker:
    """Counts finished requests across batches and reports them to the progress callback."""

    def __init__(self, total: int, progress: ProgressFn | None) -> None:
        self.done, self.total, self.progress = 0, total, progress

    def for_label(self, label: str) -> Callable[[], None]:
        def tick() -> None:
            self.done += 1
            if self.progress:
                self.progress(self.done, self.total, label)

        return tick


def _timed_batch(
    client: object,
    root: str,
    model: str,
    batch: list[PromptItem],
    c: int,
    inp: MeasureInput,
    label: Literal["speculative", "baseline"],
    ticker: _Ticker,
) -> tuple[RunFigures, list[ep.RequestRecord]]:
    recs, wall = ep.run_batch(
        client,
        root,
        model,
        batch,
        c,
        inp.api,
        inp.max_tokens,
        inp.temperature,
        ticker.for_label(f"{label}, concurrency {c}"),
    )
    return run_figures(label, c, wall, recs), recs


def _run_endpoint(
    inp: MeasureInput, report: MeasureReport, items: list[PromptItem], progress: ProgressFn | None
) -> None:
    root = ep.normalize_root(inp.endpoint or "")
    base_root = ep.normalize_root(inp.baseline_endpoint, "--baseline-endpoint") if inp.baseline_endpoint else None
    concurrencies = sorted(set(inp.concurrency))
    with ep.make_client(inp.timeout_s, max(concurrencies)) as client:
        model = ep.resolve_served_model(client, root, inp.model)
        first = _snapshot(client, root, model)
        if first is None and not _llama_probe(client, root, model, inp):
            raise ServiceError(
                f"{root} exposes no speculative-decoding metrics (vllm:spec_decode_*, sglang:spec_accept_*, "
                "llama-server timings.draft_n): start it with speculation on (vLLM --speculative-config, SGLang "
                "--speculative-algorithm, llama-server --spec-type) or pass it as --baseline-endpoint"
            )
        base_model = ""
        if base_root:
            served = ep.served_models(client, base_root)
            base_model = model if model in served else ep.resolve_served_model(client, base_root, None)
            base_metrics = ep.fetch_metrics(client, base_root)
            if base_metrics is not None and spec_snapshot(base_metrics, base_model) is not None:
                report.warnings.append(
                    f"the baseline {base_root} also reports speculative metrics: is speculation off?"
                )
        # The report is printed and saved: a password in the URL's userinfo is redacted there (requests keep it).
        report.engine, report.model = (first.engine if first else "llamacpp"), model
        report.endpoint, report.baseline_endpoint = redact(root), redact(base_root) if base_root else None
        batches = {c: [items[i % len(items)] for i in range(max(len(items), c))] for c in concurrencies}
        ticker = _Ticker(sum(len(b) for b in batches.values()) * (2 if base_root else 1), progress)

        # First requests pay one-off costs (allocation, kernel selection) that are not steady state. The warm-up
        # prompt is its own: a measured prompt would land in the engine's prefix cache.
        warm = PromptItem(prompt="Warm-up request. Reply with one short sentence.", origin="warmup")
        for _ in range(inp.warmup):
            for r, m in [(root, model)] + ([(base_root, base_model)] if base_root else []):
                ep.stream_request(client, r, m, warm, inp.api, min(inp.max_tokens, 16), inp.temperature)
        start_snap = _snapshot(client, root, model)
        for c, batch in batches.items():
            before = _snapshot(client, root, model)
            spec, recs = _timed_batch(client, root, model, batch, c, inp, "speculative", ticker)
            after = _snapshot(client, root, model)
            batch_acceptance = (spec_delta(before, after) if before and after
                                else _llama_acceptance(recs, inp.num_draft_tokens or _expected_n(inp)))
            check_accepted_within_output(batch_acceptance, sum(r.tokens for r in recs),
                                         f"{redact(root)} at concurrency {c}")
            res = ConcurrencyResult(
                concurrency=c,
                speculative=spec,
                acceptance=batch_acceptance,
                per_request_acceptance=_per_request_acceptance(recs),
            )
            brecs: list[ep.RequestRecord] | None = None
            if base_root:
                res.baseline, brecs = _timed_batch(client, base_root, base_model, batch, c, inp, "baseline", ticker)
                res.compare_with_baseline(recs, brecs, greedy=inp.temperature == 0)
            res.requests = [request_figures(item, rec, brecs[i] if brecs else None)
                            for i, (item, rec) in enumerate(zip(batch, recs))]
            res.per_class = split_by_class(res.requests)
            report.results.append(res)
        end_snap = _snapshot(client, root, model)
    if start_snap is None or end_snap is None:  # llama-server: the sum of every batch's responses
        report.acceptance = _llama_acceptance([], inp.num_draft_tokens or _expected_n(inp), report)
        report.assumptions.append("llama-server: alpha = sum of draft_n_accepted / sum of draft_n over the "
                                  "responses' timings (no server-wide counters are read)")
    else:
        report.acceptance = spec_delta(start_snap, end_snap)
    report.assumptions += [
        *([] if report.acceptance.source == "llamacpp-timings" else [
            "alpha = d(accepted)/d(draft tokens), tau = 1 + d(accepted)/d(drafts), per-position = "
            "d(accepted at i)/d(drafts), from the engine's counters read before and after each batch "
            "(SGLang: its gauges after the run); the counters are server-wide, so the server should carry no other "
            "traffic while it is measured"]),
        "closed-loop load: each concurrency keeps C requests in flight over max(C, prompts) requests",
        "the same prompts are sent at every concurrency: an engine with prefix caching serves later prefills "
        "from cache, so TTFT after the first concurrency is optimistic (decode figures are unaffected)",
        "speedup = baseline decode ms per token / speculative decode ms per token, same prompts and concurrency",
    ]
    differ = sum(r.num_mismatched for r in report.results)
    if differ:
        report.warnings.append(
            f"{differ} greedy outputs differ between the speculative and the baseline server: verifying several "
            "tokens in one pass can round differently in bf16/fp16, which flips near-ties; many differences, or "
            "different model settings on the two servers, deserve a look"
        )
    if first is not None and first.engine == "vllm" and any(r.acceptance and r.acceptance.num_drafts == 0
                                                             for r in report.results):
        report.warnings.append("some batches proposed no drafts: the prompts give n-gram drafting nothing to copy")


def _estimate_tokenizer(inp: MeasureInput, expectation: cmp.Expectation | None, report: MeasureReport) -> str | None:
    """--tokenizer, else the verifier's own when it is known (--model, or the --expect answer's verifier): o200k is a
    stand-in only when no verifier is named."""
    if inp.tokenizer is not None:
        return inp.tokenizer

    named = inp.model or (expectation.inputs.verifier if expectation and expectation.inputs else None)
    repo = verifier_repo(named)
    if repo is None:
        return None
    report.assumptions.append(f"tokenizer: {repo}'s tokenizer.json (the verifier's; --tokenizer to change)")
    return verifier_tokenizer_file(repo, flag="--estimate-ngram")


def run_measure(inp: MeasureInput, progress: ProgressFn | None = None) -> MeasureReport:
    """Measure speculative decoding: on a live engine, a local model, or by n-gram simulation.

    Args:
        inp: the options (see ``MeasureInput``).
        progress: called as ``progress(done, total, label)`` after each request or sample.

    Returns:
        The report; ``report.comparison`` is set with ``--expect``, ``report.plots`` with ``--plot-dir``.

    Raises:
        InputError: contradictory options, bad files (with file:line).
        NotFoundError: missing files, unknown served model, unloadable local model.
        UnavailableError: the server cannot be reached or timed out.
        ServiceError: the server failed, or exposes no speculative metrics.
    """
    mode = _check(inp)
    # Before the first request or model load: a run can take many minutes, its outputs must not fail at the end.
    preflight(plot_dir=inp.plot_dir, save_samples=inp.save_samples)
    expectation = cmp.load_expectation(inp.expect) if inp.expect else None
    report = MeasureReport(mode=mode, max_tokens=inp.max_tokens, temperature=inp.temperature)
    if mode == "estimate-ngram":
        from specpick.tools.measure.estimate import run_estimate

        run_estimate(inp.samples, _estimate_tokenizer(inp, expectation, report), _ngram_params(inp, expectation),
                     report, progress)  # type: ignore[arg-type]
    else:
        items, source = _prompts(inp, expectation)
        report.prompts_source, report.num_prompts = source, len(items)
        if mode == "endpoint":
            _run_endpoint(inp, report, items, progress)
        else:
            from specpick.tools.measure.local import run_local

            run_local(inp, report, items, _ngram_params(inp, expectation), progress)
    if expectation is not None:
        report.comparison = cmp.compare(expectation, *_measured_for(report, expectation))
    if inp.plot_dir is not None:
        from specpick.tools.measure.plots import write_plots

        report.plots = write_plots(report, inp.plot_dir)
    return report


def _measured_for(report: MeasureReport, exp: cmp.Expectation) -> tuple[dict[str, float | None], str]:
    """The figures fallback triggers test, taken at the concurrency the recommendation was made for."""
    acc = report.acceptance or (report.ngram.acceptance if report.ngram else None)
    values: dict[str, float | None] = {"alpha": acc.alpha if acc else None, "tau": acc.tau if acc else None}
    if not report.results:
        return values, "no timing run (the n-gram estimate measures acceptance only)"
    target = exp.expected_speedup.batch or (exp.inputs.concurrency if exp.inputs else None) or 1
    res = min(report.results, key=lambda r: (abs(r.concurrency - target), r.concurrency))
    values.update(
        speedup=res.speedup,
        throughput_ratio=res.throughput_ratio,
        concurrency=float(res.concurrency),
        tpot_ms_p50=res.speculative.tpot_ms.p50,
        ttft_ms_p50=res.speculative.ttft_ms.p50,
    )
    note = f"measured at concurrency {res.concurrency}" + (
        "" if res.concurrency == target else f" (closest to {target})"
    )
    return values, note

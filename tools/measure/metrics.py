"""Speculative-decoding metrics from an engine's Prometheus ``/metrics`` text.

vLLM exposes counters (``vllm/v1/spec_decode/metrics.py``; the exposition adds
``_total``), so figures come from the difference of two snapshots taken
around a measured run (docs/references/ENGINES.md):

* acceptance rate    alpha = d(accepted) / d(draft_tokens)
* mean accepted length tau = 1 + d(accepted) / d(drafts)   (bonus token included)
* per-position rate  p_i   = d(accepted_per_pos[i]) / d(drafts)

SGLang exposes gauges (``sglang:spec_accept_length``, accepted drafts + bonus
per forward, and ``sglang:spec_accept_rate``) over its recent window, so its
figures are the value read after the run, and it has no per-position rates.

The text-format parser is small and strict enough for these two engines;
nothing here imports more than the standard library and pydantic.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.engines import sglang, vllm
from specpick.tools.errors import RemoteDataError

VLLM_PREFIX = "vllm:spec_decode_"
# The metric names are the engines' own facts (tools/engines/vllm.py, sglang.py), named here by what they count.
VLLM_DRAFTS = vllm.COUNTER_DRAFTS
VLLM_DRAFT_TOKENS = vllm.COUNTER_DRAFT_TOKENS
VLLM_ACCEPTED = vllm.COUNTER_ACCEPTED
VLLM_PER_POS = vllm.COUNTER_ACCEPTED_PER_POS
SGLANG_ACCEPT_LENGTH = sglang.GAUGE_ACCEPT_LENGTH
SGLANG_ACCEPT_RATE = sglang.GAUGE_ACCEPT_RATE

MAX_METRICS_BYTES = 16 * 2**20  # a metrics page is tens of KB; refuse anything absurd
# No engine drafts more than this many tokens per verify step (vLLM and SGLang configs are single digits to a few
# dozen; trees reach a few hundred nodes): an SGLang accept length beyond 1 + this is not a real measurement.
MAX_TOKENS_PER_STEP = 1024
_LINE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


class Sample(BaseModel):
    """One exposition line: metric name, labels, value."""

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    value: float


def _unescape(value: str) -> str:
    return value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


def parse_prometheus(text: str) -> list[Sample]:
    """Parse Prometheus text exposition format (comments and ``# TYPE`` lines skipped).

    Raises:
        RemoteDataError: a line that is not a metric sample, or an oversized page.
    """
    if len(text) > MAX_METRICS_BYTES:
        raise RemoteDataError(f"the /metrics page is {len(text) // 2**20} MiB; expected a Prometheus page of KBs")
    samples: list[Sample] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise RemoteDataError(f"/metrics line {lineno} is not Prometheus text format: {line[:80]!r}")
        labels: dict[str, str] = {}
        body = m.group("labels") or ""
        pos = 0
        while pos < len(body):
            lm = _LABEL.match(body, pos)
            if lm is None:
                raise RemoteDataError(f"/metrics line {lineno} has malformed labels: {line[:80]!r}")
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
        try:
            value = float(m.group("value"))  # accepts NaN, +Inf, -Inf as Prometheus writes them
        except ValueError as exc:
            raise RemoteDataError(f"/metrics line {lineno} has a non-numeric value: {line[:80]!r}") from exc
        samples.append(Sample(name=m.group("name"), labels=labels, value=value))
    return samples


class SpecSnapshot(BaseModel):
    """Speculative-decoding metrics read at one instant."""

    engine: Literal["vllm", "sglang"]
    num_drafts: float = 0.0
    num_draft_tokens: float = 0.0
    num_accepted_tokens: float = 0.0
    accepted_per_pos: list[float] = Field(default_factory=list)
    accept_length: float | None = None  # SGLang gauge
    accept_rate: float | None = None  # SGLang gauge


def _matches_model(sample: Sample, model: str | None) -> bool:
    # Servers label by served model name; a server with several models must only count ours.
    return model is None or sample.labels.get("model_name", model) == model


def spec_snapshot(samples: list[Sample], model: str | None = None) -> SpecSnapshot | None:
    """Extract vLLM counters or SGLang gauges; None when the page has no speculative metrics.

    Counters are summed over engines (``engine="0"``, ``"1"``...) for the model.
    """
    vllm = [s for s in samples if s.name.startswith(VLLM_PREFIX) and _matches_model(s, model)]
    if vllm:
        snap = SpecSnapshot(engine="vllm")
        per_pos: dict[int, float] = {}
        for s in vllm:
            if s.name in _VLLM_COUNTERS:
                # Counters from an engine are untrusted: NaN, infinite or negative counts would end as alpha 2.5
                # or a traceback further on, so they stop here with the metric named.
                _check_count(s.name, s.value)
            if s.name == VLLM_DRAFTS:
                snap.num_drafts += s.value
            elif s.name == VLLM_DRAFT_TOKENS:
                snap.num_draft_tokens += s.value
            elif s.name == VLLM_ACCEPTED:
                snap.num_accepted_tokens += s.value
            elif s.name == VLLM_PER_POS and s.labels.get("position", "").isdigit():
                pos = int(s.labels["position"])
                if pos >= MAX_TOKENS_PER_STEP:  # the list below has one slot per position: bound it
                    raise RemoteDataError(
                        f"the engine reports {VLLM_PER_POS} at position {pos}: no engine drafts more than "
                        f"{MAX_TOKENS_PER_STEP} tokens per step; check the server's metrics"
                    )
                per_pos[pos] = per_pos.get(pos, 0.0) + s.value
            # *_created gauges are timestamps, not counts: ignored.
        snap.accepted_per_pos = [per_pos.get(i, 0.0) for i in range(max(per_pos) + 1)] if per_pos else []
        return snap
    length = [s.value for s in samples if s.name == SGLANG_ACCEPT_LENGTH and _matches_model(s, model)]
    rate = [s.value for s in samples if s.name == SGLANG_ACCEPT_RATE and _matches_model(s, model)]
    if length or rate:
        # NaN is what SGLang reports before its window holds a request: no figure yet, not bad data.
        finite_len = [v for v in length if math.isfinite(v)]
        finite_rate = [v for v in rate if math.isfinite(v)]
        for v in finite_len:
            check_engine_number(SGLANG_ACCEPT_LENGTH, v, high=1 + MAX_TOKENS_PER_STEP, what="an accept length")
        for v in finite_rate:
            check_engine_number(SGLANG_ACCEPT_RATE, v, high=1.0, what="an acceptance rate")
        return SpecSnapshot(
            engine="sglang",
            accept_length=sum(finite_len) / len(finite_len) if finite_len else None,
            accept_rate=sum(finite_rate) / len(finite_rate) if finite_rate else None,
        )
    return None


class Acceptance(BaseModel):
    """Acceptance figures over one measured interval, with where they came from."""

    source: Literal["vllm-counters", "vllm-per-request", "sglang-gauges", "transformers", "ngram-simulation",
                    "llamacpp-timings"]
    alpha: float | None = Field(None, description="accepted / drafted tokens")
    tau: float | None = Field(None, description="mean accepted length per draft, bonus token included")
    per_position: list[float] = Field(default_factory=list, description="P(position i accepted) per draft")
    num_drafts: int | None = None
    num_draft_tokens: int | None = None
    num_accepted_tokens: int | None = None
    note: str = ""


_VLLM_COUNTERS = (VLLM_DRAFTS, VLLM_DRAFT_TOKENS, VLLM_ACCEPTED, VLLM_PER_POS)
# What each source calls its counts, so an impossible figure is reported under the name its producer uses.
_COUNT_NAMES: dict[str, tuple[str, str, str, str]] = {
    "vllm-counters": (VLLM_DRAFTS, VLLM_DRAFT_TOKENS, VLLM_ACCEPTED, VLLM_PER_POS),
    "vllm-per-request": (
        "speculative_decoding.num_spec_steps",
        "speculative_decoding.num_draft_tokens",
        "speculative_decoding.num_accepted_draft_tokens",
        "speculative_decoding.acceptance_histogram",
    ),
}
_GENERIC_NAMES = ("drafts", "draft tokens", "accepted tokens", "accepted at position")


# Engines keep their counters as float64 (Prometheus text): past 2**53 a count no longer holds whole tokens, and
# no server has produced that many (10**15 tokens is years of a large fleet), so a larger figure is not a count.
MAX_ENGINE_COUNT = float(2**53)


def check_engine_number(name: str, value: float, *, low: float = 0.0, high: float = MAX_ENGINE_COUNT,
                        what: str = "a token count") -> float:
    """The one validator for a number read from an engine: finite and in ``[low, high]``, else ``RemoteDataError``.

    Counters, per-position counts, SGLang gauges and the cross-checks below all go through it, so an impossible
    figure (NaN, infinite, negative, 1e300) stops here with the metric named instead of ending as alpha or tau.
    """
    if not math.isfinite(value) or not low <= value <= high:
        raise RemoteDataError(
            f"the engine reports {name} = {value:g}: {what} must be a finite number between {low:g} and {high:g}; "
            "check the server's /metrics (or its version) and rerun"
        )
    return value


def _check_count(name: str, value: float) -> None:
    check_engine_number(name, value)


def check_accepted_within_output(acceptance: "Acceptance", output_tokens: int, where: str) -> None:
    """Accepted draft tokens are output tokens: more accepted than the requests produced is not a measurement.

    Raises:
        RemoteDataError: the counters say tokens were accepted while the usage chunks say fewer were generated.
    """
    accepted = acceptance.num_accepted_tokens or 0
    if accepted > output_tokens:
        raise RemoteDataError(
            f"{where}: the counters say {accepted} draft tokens were accepted, but the requests' usage reports "
            f"{output_tokens} completion tokens in all; accepted tokens are part of the output, so one of the two "
            "is wrong (other traffic on the server, or a broken usage chunk): measure an idle server and rerun"
        )


def _check_counts(source: str, drafts: float, draft_tokens: float, accepted: float, per_pos: list[float]) -> None:
    """Reject counts no engine can produce (the ENGINES.md definitions assume 0 <= accepted <= drafted)."""
    n_drafts, n_tokens, n_acc, n_pos = _COUNT_NAMES.get(source, _GENERIC_NAMES)
    for name, value in ((n_drafts, drafts), (n_tokens, draft_tokens), (n_acc, accepted)):
        _check_count(name, value)
    for i, value in enumerate(per_pos):
        _check_count(f"{n_pos}[{i}]", value)
    if accepted > draft_tokens:
        raise RemoteDataError(
            f"the engine reports {n_acc} = {accepted:g} > {n_tokens} = {draft_tokens:g}: more tokens accepted than "
            "drafted is impossible; check the server's metrics (or that nothing reset them mid-run) and rerun"
        )
    if draft_tokens < drafts:
        raise RemoteDataError(
            f"the engine reports {n_tokens} = {draft_tokens:g} < {n_drafts} = {drafts:g}: every draft proposes at "
            "least one token; check the server's metrics and rerun"
        )
    for i, value in enumerate(per_pos):
        if value > drafts:
            raise RemoteDataError(
                f"the engine reports {n_pos}[{i}] = {value:g} > {n_drafts} = {drafts:g}: a position cannot be "
                "accepted more often than drafts were made; check the server's metrics and rerun"
            )


def acceptance_from_counts(
    source: Literal["vllm-counters", "vllm-per-request", "transformers", "ngram-simulation"],
    drafts: float,
    draft_tokens: float,
    accepted: float,
    per_pos: list[float],
) -> Acceptance:
    """Apply the ENGINES.md definitions to raw counts (shared by vLLM deltas, the local hook and the simulation).

    Raises:
        RemoteDataError: counts no engine can produce (NaN, negative, more accepted than drafted), naming the metric.
    """
    _check_counts(source, drafts, draft_tokens, accepted, per_pos)
    if drafts <= 0 or draft_tokens <= 0:
        return Acceptance(
            source=source,
            num_drafts=round(drafts),
            num_draft_tokens=round(draft_tokens),
            num_accepted_tokens=round(accepted),
            note="no drafts were proposed (nothing in the context matched), so alpha and tau are undefined",
        )
    return Acceptance(
        source=source,
        alpha=accepted / draft_tokens,
        tau=1.0 + accepted / drafts,
        per_position=[p / drafts for p in per_pos],
        num_drafts=round(drafts),
        num_draft_tokens=round(draft_tokens),
        num_accepted_tokens=round(accepted),
    )


def acceptance_from_llama_timings(pairs: list[tuple[int, int]], num_draft_tokens: int | None) -> Acceptance:
    """alpha (and tau, given N) from llama-server's per-response (draft_n, draft_n_accepted) pairs.

    The responses do not count drafts (verify steps), so tau takes every draft as N tokens long: drafts =
    draft_n / N, tau = 1 + accepted / drafts. That holds while --spec-draft-p-min stays at its default 0
    (README @00dc805) and overstates tau when drafts stop early; without N, tau is left out.

    Raises:
        RemoteDataError: more accepted than drafted in a response.
    """
    drafted = sum(d for d, _ in pairs)
    accepted = sum(a for _, a in pairs)
    for d, a in pairs:
        if a > d:
            raise RemoteDataError(f"llama-server reports draft_n_accepted = {a} > draft_n = {d} in one response: "
                                  "more accepted than drafted is impossible; check the server build and rerun")
    if drafted == 0:
        return Acceptance(source="llamacpp-timings", num_draft_tokens=0, num_accepted_tokens=0,
                          note="no drafts were proposed, so alpha and tau are undefined")
    drafts = drafted / num_draft_tokens if num_draft_tokens else None
    return Acceptance(
        source="llamacpp-timings", alpha=accepted / drafted,
        tau=1.0 + accepted / drafts if drafts else None,
        num_drafts=round(drafts) if drafts else None, num_draft_tokens=drafted, num_accepted_tokens=accepted,
        note="summed from llama-server's per-response timings (draft_n, draft_n_accepted)"
             + (f"; tau takes every draft as N={num_draft_tokens} tokens (drafts are not counted)"
                if num_draft_tokens else "; tau needs the draft length: pass --num-draft-tokens"),
    )


def spec_delta(before: SpecSnapshot, after: SpecSnapshot) -> Acceptance:
    """Acceptance over the interval between two snapshots of the same server.

    Raises:
        RemoteDataError: counters went backwards (the server restarted mid-run).
    """
    if after.engine == "sglang":
        if after.accept_rate is None and after.accept_length is None:
            # NaN gauges after the run: SGLang's window held none of our requests, so nothing was measured.
            raise RemoteDataError(
                f"the engine reports {SGLANG_ACCEPT_LENGTH} and {SGLANG_ACCEPT_RATE} as NaN after the run: nothing "
                "was measured (its window holds no speculative request); check that speculation is on and rerun"
            )
        return Acceptance(
            source="sglang-gauges",
            alpha=after.accept_rate,
            tau=after.accept_length,
            note="SGLang gauges cover its recent window, not exactly this run; no per-position rates",
        )
    d_drafts = after.num_drafts - before.num_drafts
    d_tokens = after.num_draft_tokens - before.num_draft_tokens
    d_acc = after.num_accepted_tokens - before.num_accepted_tokens
    if min(d_drafts, d_tokens, d_acc) < 0:
        raise RemoteDataError("vLLM spec-decode counters went backwards during the run: the server restarted; rerun")
    n = max(len(before.accepted_per_pos), len(after.accepted_per_pos))
    b = before.accepted_per_pos + [0.0] * (n - len(before.accepted_per_pos))
    a = after.accepted_per_pos + [0.0] * (n - len(after.accepted_per_pos))
    return acceptance_from_counts("vllm-counters", d_drafts, d_tokens, d_acc, [x - y for x, y in zip(a, b)])

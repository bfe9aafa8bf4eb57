"""Results per traffic class: one aggregate hides that copy-heavy prompts and free-form prompts behave oppositely.

A prompt's class is the one the user gave (``class`` in the prompts file), else it is classified from the output
the server returned: **copy** when most of the output repeats spans of the prompt (what n-gram and suffix drafting
feed on), **free** otherwise. Per class, acceptance comes from vLLM's per-request figures and the speedup from the
same prompts' decode speed on the baseline server, with an 80% bootstrap interval over the class's requests, so
the advice can be "on for this class, off for that one" where the interval says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.bootstrap import bootstrap_interval
from specpick.tools.measure.metrics import Acceptance, acceptance_from_counts

# Design choices, stated in the report's assumptions: a word 4-gram is long enough that a chance match between
# prompt and output is rare in prose and code, and "most of the output" is half of its words.
COPY_NGRAM_WORDS = 4
COPY_OVERLAP_MIN = 0.5
_WORD = re.compile(r"\w+|[^\w\s]")

Decision = Literal["on", "off", "within noise"]


class RequestFigures(BaseModel):
    """What one prompt gave on both servers (the pairing the per-class figures are built from)."""

    origin: str = Field(description="the prompt's file:line")
    prompt_class: str = Field(description="its traffic class")
    classified_by: Literal["prompts file", "output overlap"]
    copy_overlap: float = Field(description="share of output words inside a word 4-gram of the prompt")
    spec_decode_ms: float
    spec_tokens: int
    base_decode_ms: float | None = None
    base_tokens: int | None = None
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_position: list[int] = Field(default_factory=list)


class ClassResult(BaseModel):
    """One traffic class at one concurrency."""

    name: str
    classified_by: Literal["prompts file", "output overlap"]
    num_requests: int
    copy_overlap: float = Field(description="mean share of output words inside a word 4-gram of the prompt")
    acceptance: Acceptance | None = Field(None, description="summed from the engine's per-request figures")
    speedup: float | None = Field(None, description="baseline over speculative decode ms per token, this class")
    speedup_low: float | None = Field(None, description="10th percentile over bootstrap resamples of the requests")
    speedup_high: float | None = Field(None, description="90th percentile over bootstrap resamples of the requests")
    decision: Decision | None = Field(None, description="on: the interval is above 1; off: below 1; else within "
                                                        "noise (measure more prompts of this class)")


def copy_overlap(prompt: str, output: str, n: int = COPY_NGRAM_WORDS) -> float:
    """Share of the output's words covered by a word n-gram that also occurs in the prompt."""
    out = _WORD.findall(output)
    if len(out) < n:
        return 0.0
    src = _WORD.findall(prompt)
    grams = {tuple(src[i:i + n]) for i in range(len(src) - n + 1)}
    covered = [False] * len(out)
    for i in range(len(out) - n + 1):
        if tuple(out[i:i + n]) in grams:
            covered[i:i + n] = [True] * n
    return sum(covered) / len(out)


def class_of(given: str | None, overlap: float) -> tuple[str, Literal["prompts file", "output overlap"]]:
    """The user's class, else copy/free from the output's overlap with the prompt."""
    if given:
        return given, "prompts file"
    return ("copy" if overlap >= COPY_OVERLAP_MIN else "free"), "output overlap"


def _speedup(rows: Sequence[RequestFigures]) -> float | None:
    """Token-weighted decode speed ratio over ``rows`` (the same definition as the whole run's speedup)."""
    spec_tokens = sum(r.spec_tokens - 1 for r in rows if r.spec_tokens > 1)
    base_rows = [r for r in rows if r.base_tokens and r.base_tokens > 1 and r.base_decode_ms is not None]
    base_tokens = sum((r.base_tokens or 0) - 1 for r in base_rows)
    spec_ms = sum(r.spec_decode_ms for r in rows if r.spec_tokens > 1)
    base_ms = sum(r.base_decode_ms or 0.0 for r in base_rows)
    if not spec_tokens or not base_tokens or spec_ms <= 0 or base_ms <= 0:
        return None
    return (base_ms / base_tokens) / (spec_ms / spec_tokens)


def speedup_interval(rows: Sequence[RequestFigures]) -> tuple[float | None, float | None]:
    """80% bootstrap interval of the class speedup over its requests (None with fewer than two requests)."""
    return bootstrap_interval(rows, _speedup)


def decide(low: float | None, high: float | None) -> Decision | None:
    if low is None or high is None:
        return None
    return "on" if low > 1.0 else "off" if high < 1.0 else "within noise"


def histogram(fig: RequestFigures) -> list[int]:
    """Verify steps that accepted exactly j drafts, j = 0..N, rebuilt from the per-position counts."""
    at_least = [fig.drafts, *fig.accepted_per_position]  # steps accepting >= 0, >= 1, ... drafts
    return [at_least[j] - (at_least[j + 1] if j + 1 < len(at_least) else 0) for j in range(len(at_least))]


def _acceptance(rows: Sequence[RequestFigures]) -> Acceptance | None:
    if not any(r.drafts for r in rows):
        return None
    width = max(len(r.accepted_per_position) for r in rows)
    per_pos = [float(sum(r.accepted_per_position[i] for r in rows if i < len(r.accepted_per_position)))
               for i in range(width)]
    return acceptance_from_counts("vllm-per-request", sum(r.drafts for r in rows), sum(r.draft_tokens for r in rows),
                                  sum(r.accepted for r in rows), per_pos)


def split_by_class(requests: Sequence[RequestFigures]) -> list[ClassResult]:
    """Per-class figures of a batch's requests, classes by name."""
    out: list[ClassResult] = []
    for name in sorted({r.prompt_class for r in requests}):
        rows = [r for r in requests if r.prompt_class == name]
        low, high = speedup_interval(rows)
        out.append(ClassResult(
            name=name, classified_by=rows[0].classified_by, num_requests=len(rows),
            copy_overlap=sum(r.copy_overlap for r in rows) / len(rows), acceptance=_acceptance(rows),
            speedup=_speedup(rows), speedup_low=low, speedup_high=high, decision=decide(low, high),
        ))
    return out

"""Acceptance effects a flag cites, priced into the estimate instead of printed beside it (issue 34).

A flag such as ``head_context_exceeded`` or ``quantized_verifier_bf16_head`` cites a published acceptance effect.
Printing it beside an unchanged headline left the reader to redo the arithmetic; here each effect moves the
acceptance the cost model uses (point and range, at every draft length the sweeps try), so the draft length, the
speedup, its 80% range and the ranking all follow from the priced acceptance. Only prior-based acceptance is
priced: a user's measurement already holds whatever the deployment does to acceptance.

Each effect is one cited figure of ``tools/data/training_evidence.csv``:

- ``tau_ratio``: the drafter's tau is multiplied by the source's own ratio (EAGLE-3 past its trained context).
- ``alpha_points``: per-token acceptance moves by the source's points, the range by its low and high ends
  (a BF16-trained head on a 4-bit verifier).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from specpick.tools.model.acceptance import alpha_from_tau, expected_tokens

# Rule 2 of train-plan (tools/training/rules.py reads it from here): a head whose trained length is not published is
# assumed good to 8K: a full-attention EAGLE-3 head measured tau 1.69 at 8K, 1.40 at 10K, ~1.09 from 16K (F17).
UNKNOWN_HEAD_CONTEXT_DESIGN = 8192

# training_evidence.csv F17 (vllm-project/speculators PR#684, Qwen3-8B EAGLE-3 on LongBench-v2, full attention):
# acceptance length by context. A head is taken to hold its acceptance up to its trained length (8K when unpublished,
# the flag's own rule), so the priced ratio is the curve at the deployment's context over the curve at that length
# (at 2K, the PR's shortest context, for a head trained shorter); past 20K, its longest, the curve is held at 20K
# (flat from 16K: 1.090, 1.084), so a head trained past 20K is not priced. It does not transfer to every head:
# lightseekorg/kimi-k2.5-eagle3 held tau 3.93 of 4 at a 10K input (engine rows ROCM-BLOG-KIMI-EAGLE3-MI325X-2026).
EAGLE3_CONTEXT_CURVE: tuple[tuple[int, float], ...] = (
    (2048, 2.295), (4096, 2.040), (8192, 1.687), (10240, 1.400), (16384, 1.090), (20480, 1.084))
EAGLE3_CONTEXT_EVIDENCE = "F17"
EAGLE3_CONTEXT_SOURCE = "speculators PR#684"

# training_evidence.csv F10 (Neroued/ninfer#119, Qwen3.8-27B MTP3, ~20.9K production requests): the 4-bit weight
# format moved first-position acceptance by -8.9 points (<8K: 54.0% vs 62.9%) to +6.3 points (8-32K: 65.9% vs
# 59.6%). The point moves by the middle of the two, the range by its ends.
QUANT4_ALPHA_POINTS: tuple[float, float] = (-0.089, 0.063)
QUANT4_EVIDENCE = "F10"
QUANT4_SOURCE = "ninfer#119"
# The 4-bit families F10 speaks for. A GGUF type counts by its bits per weight, as the flag's own fitness check does:
# below 0.75 bytes (6 bits) per parameter is the 4-bit family (Q4_K_M ~0.6, Q5_K_M ~0.71), above it the 8-bit one
# (Q6_K ~0.82, Q8_0 ~1.06; tools/vocab.py BYTES_PER_PARAM): a design cut between the two, not a measured figure.
QUANT4_FORMATS = frozenset({"int4", "nvfp4", "mxfp4"})
QUANT4_BELOW_BYTES_PER_PARAM = 0.75


@dataclass(frozen=True)
class AcceptanceEffect:
    """One flag's cited acceptance effect: (point, low end, high end) of a tau ratio or of alpha points."""

    flag: str
    kind: Literal["tau_ratio", "alpha_points"]
    point: float
    low: float
    high: float
    evidence: str  # the training_evidence.csv id
    source: str  # the public source, short
    why: str = ""  # the deployment's condition in words

    def stated(self) -> str:
        """The effect in words: ``tau x0.64 (F17, speculators PR#684)``."""
        cite = f"({self.evidence}, {self.source})"
        if self.kind == "tau_ratio":
            return f"tau x{self.point:.2f} {cite}"
        return (f"alpha {self.point:+.3f} (range {self.low:+.3f} to {self.high:+.3f}) per drafted token {cite}")


def _curve(context_tokens: int) -> float:
    """F17's acceptance length at ``context_tokens`` (linear between its points, held at its ends)."""
    pts = EAGLE3_CONTEXT_CURVE
    if context_tokens <= pts[0][0]:
        return pts[0][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if context_tokens <= x1:
            return y0 + (y1 - y0) * (context_tokens - x0) / (x1 - x0)
    return pts[-1][1]


def context_ratio(context_tokens: int, trained_tokens: int) -> float:
    """F17's acceptance length at ``context_tokens`` over its length at the head's trained length (at most 1)."""
    return min(1.0, _curve(context_tokens) / _curve(trained_tokens))


def context_effect(context_tokens: int, trained_tokens: int, assumed: bool = False) -> AcceptanceEffect | None:
    """``head_context_exceeded``: an EAGLE head read past the length it was trained at (None: F17 cannot price it).

    ``assumed``: the head's trained length is not published (``trained_tokens`` is the 8K the flag assumes).
    """
    r = context_ratio(context_tokens, trained_tokens)
    if r >= 1.0:
        return None
    return AcceptanceEffect("head_context_exceeded", "tau_ratio", r, r, r, EAGLE3_CONTEXT_EVIDENCE,
                            EAGLE3_CONTEXT_SOURCE, f"context {context_tokens} tokens, head trained at "
                            + (f"an unpublished length, {trained_tokens} assumed" if assumed else f"{trained_tokens}"))


def quant4_effect(served_format: str) -> AcceptanceEffect:
    """``quantized_verifier_bf16_head``: a BF16-trained head on a 4-bit verifier."""
    lo, hi = QUANT4_ALPHA_POINTS
    return AcceptanceEffect("quantized_verifier_bf16_head", "alpha_points", (lo + hi) / 2, lo, hi, QUANT4_EVIDENCE,
                            QUANT4_SOURCE, f"head trained on BF16, verifier served in {served_format}")


def _shift(tau: float, n: int, decay: float, points: float) -> float:
    """tau of a chain of ``n`` whose per-token acceptance moved by ``points``."""
    if n <= 0 or tau <= 1.0:
        return tau
    a = alpha_from_tau(tau, n, decay)
    return expected_tokens(min(max(a + points, 0.0), 0.999), n, decay)


def priced(taus: tuple[float, float, float], n: int, decay: float,
           effects: tuple[AcceptanceEffect, ...]) -> tuple[float, float, float]:
    """(tau, low, high) with every effect applied; each stays at least 1 (the bonus token).

    A tree is shifted as the chain of its depth with the same tau (decay 1): its effective per-depth acceptance.
    """
    t, lo, hi = taus
    for e in effects:
        if e.kind == "tau_ratio":
            t, lo, hi = t * e.point, lo * e.low, hi * e.high
        else:
            t, lo, hi = _shift(t, n, decay, e.point), _shift(lo, n, decay, e.low), _shift(hi, n, decay, e.high)
    return max(1.0, t), max(1.0, lo), max(1.0, hi)


def spread(tau: float, n: int, decay: float, effects: tuple[AcceptanceEffect, ...]) -> tuple[float, float]:
    """(low / point, high / point) the effects' own ranges give the priced point tau (1, 1 for a ratio effect)."""
    lo = hi = 1.0
    for e in effects:
        if e.kind == "alpha_points" and tau > 1.0:
            mid = _shift(tau, n, decay, e.point)
            lo *= _shift(tau, n, decay, e.low) / mid
            hi *= _shift(tau, n, decay, e.high) / mid
    return lo, hi


__all__ = ["AcceptanceEffect", "EAGLE3_CONTEXT_CURVE", "QUANT4_ALPHA_POINTS", "QUANT4_BELOW_BYTES_PER_PARAM",
           "QUANT4_FORMATS", "UNKNOWN_HEAD_CONTEXT_DESIGN", "context_effect", "context_ratio", "priced",
           "quant4_effect", "spread"]

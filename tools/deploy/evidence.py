"""The user's measured evidence: what it was measured with, where it applies, and what it says of the priors.

Measured acceptance belongs to the drafter it was measured with (its method and, when known, its head or draft
repo) at the N it was measured at; every other candidate keeps its prior. Its range is the spread over the
measurement's prompts (bootstrap, ``measured_file.tau_interval``); with no per-prompt figures the prior's relative
spread at the same N is used and said so, never a zero-width range. A measured speedup recalibrates the cost side
of that one deployment: measured / predicted at the measured N and concurrency scales the candidate's speedup.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from specpick.tools.deploy.lengths import start_draft_length
from specpick.tools.deploy.measured_file import MeasuredFigures
from specpick.tools.deployment import Deployment, Drafter, Evidence
from specpick.tools.errors import InputError
from specpick.tools.methods import REGISTRY, is_method, methods_where
from specpick.tools.vocab import METHODS
from specpick.tools.model.draftlength import draft_length_rule_text
from specpick.tools.errors import PickerError
from specpick.tools.model.estimate import estimate_for_specs

if TYPE_CHECKING:
    from specpick.tools.model.estimate import EstimateRequest, SpeedupResult

# A measured N past this is no draft length any engine runs (the tau input's own ceiling is 65 = 64 + bonus).
MEASURED_N_MAX = 64
# Methods without a draft length to state (lookahead's window is set by its own W/N/G).
NO_DRAFT_LENGTH = frozenset({"lookahead"})
# Methods whose tau is not bounded by N + 1 per chain: variable-length drafts (suffix drafts a tree of matches up to
# its cap, lookahead verifies an n-gram pool).
UNBOUNDED_TAU: frozenset[str] = methods_where(measured_tau=True)
# Catalog head kind -> the method that loads it as its own head (an EAGLE-1 head is method eagle, not eagle2).
HEAD_METHOD: dict[str, str] = {r.head_kind: r.name for r in REGISTRY if r.head_kind == r.name
                               and r.loads in ("head_repo", "verifier_layers")}


def _method(q_method: str | None, measured_method: str | None, file_method: str | None,
            drafter: Drafter | None) -> str | None:
    for given, flag in ((measured_method, "--measured-method"), (q_method, "--method")):
        if given is not None and not is_method(given):
            raise InputError(f"{flag} {given!r} is not a method; one of: {', '.join(METHODS)}")
    if measured_method and file_method and measured_method != file_method:
        raise InputError(f"--measured-method {measured_method} contradicts the measurement file (a {file_method} "
                         "run); drop one of them")
    if measured_method or file_method:
        return measured_method or file_method
    if q_method:
        return q_method
    if drafter is not None and drafter.kind == "draft":
        return "draft_model"
    if drafter is not None and drafter.head is not None:
        return HEAD_METHOD.get(drafter.head.method)
    return None


def check_measured_n(method: str | None, n: int, tau: float | None) -> None:
    """Refuse an N the method cannot have been measured at, or a tau that N cannot give."""
    if method in NO_DRAFT_LENGTH:
        raise InputError(f"--measured-n {n}: {method} has no draft length (its window is W/N/G); drop --measured-n")
    if not 1 <= n <= MEASURED_N_MAX:
        raise InputError(f"--measured-n {n} is outside 1-{MEASURED_N_MAX} draft tokens; give the N the server ran "
                         "(vLLM num_speculative_tokens)")
    if tau is not None and method not in UNBOUNDED_TAU and tau > n + 1:
        raise InputError(f"measured tau {tau:g} is more than N + 1 = {n + 1} tokens a chain of N={n} can yield; "
                         "check --measured-n (or name the method with --measured-method)")


def build_evidence(*, alpha: float | None, tau: float | None, measured_n: int | None, measured_method: str | None,
                   measured_speedup: float | None, measurement_file: str | None, method: str | None,
                   drafter: Drafter | None, concurrency: int, check_n: bool = True,
                   figures: MeasuredFigures | None = None, figures_source: str = "") -> Evidence | None:
    """The Evidence for what the user gave (flags or a measure/tune report), or None without any.

    Raises:
        InputError: a speedup without acceptance, both a file and --tau/--alpha, a method that is none, an N
            outside the method's range; NotFoundError: no such measurement file.
    """
    if figures is not None and (measurement_file is not None or alpha is not None or tau is not None):
        raise InputError(f"give {figures_source or '--samples'} or --from-measurement/--tau/--alpha, not both "
                         "(each is a measured acceptance)")
    if measurement_file is None and alpha is None and tau is None and figures is None:
        if measured_speedup is not None:
            raise InputError("--measured-speedup needs the acceptance it was measured with: add --tau (or --alpha) "
                             "and --measured-n, or --from-measurement FILE")
        if (check_n and measured_n is not None) or measured_method is not None:
            flag = "--measured-n" if measured_n is not None else "--measured-method"
            raise InputError(f"{flag} describes a measurement: add --tau or --alpha (or --from-measurement FILE)")
        return None
    if measurement_file is not None and (alpha is not None or tau is not None):
        raise InputError("give --from-measurement FILE or --tau/--alpha, not both (the file holds the acceptance)")
    file = figures
    if measurement_file is not None:
        from specpick.tools.deploy.measured_file import read_measurement

        file = read_measurement(Path(measurement_file), concurrency)
    m = _method(method, measured_method, file.method if file else None, drafter)
    if file is not None and m is None:
        raise InputError(f"{measurement_file}: a measure report does not say which method the server ran; add "
                         "--measured-method (ngram, eagle3, ...)")
    n = measured_n if measured_n is not None else (file.num_draft_tokens if file else None)
    n_assumed = n is None
    if n is None and m not in NO_DRAFT_LENGTH:
        n = start_draft_length(m) if m else 3
    t = file.tau if file else tau
    if n is not None and ((check_n and measured_n is not None) or file is not None):
        check_measured_n(m, n, t)
    if file is not None and measured_n is not None and file.num_draft_tokens not in (None, measured_n):
        raise InputError(f"--measured-n {measured_n} contradicts the measurement file (run at N="
                         f"{file.num_draft_tokens}); drop --measured-n")
    repo = drafter.repo_id if drafter is not None and m in ("draft_model", *HEAD_METHOD) else None
    per_pos = file.per_position if file else ()
    by_n = file.tau_by_n if file and file.tau_by_n else ()
    return Evidence(
        alpha=None if file else alpha,
        tau=t, method=m, num_draft_tokens=n, n_assumed=n_assumed, drafter_repo=repo, per_position=per_pos,
        tau_at_n=by_n, tau_low=file.tau_low if file else None, tau_high=file.tau_high if file else None,
        speedup=file.speedup if file and measured_speedup is None else measured_speedup,
        concurrency=file.concurrency if file and file.concurrency else concurrency,
        num_requests=file.num_requests if file else None,
        source=(f"{measurement_file or figures_source} (specpick {file.kind}"
                + (" report" if file.kind != "samples" else "") + (f", {file.num_requests} prompts" if
                file.num_requests else "") + ")") if file else "your --tau/--alpha",
        notes=tuple(file.notes) if file else ())


def applies_to(ev: Evidence | None, method: str, drafter_repo: str | None, parallel: bool,
               model_based: bool) -> bool:
    """Whether measured evidence belongs to this candidate: its method and, when the measurement names one, its
    head or draft. Without a method (a bare --tau/--alpha) it applies to the one-token-per-forward model-based
    drafters (stated in the answer)."""
    if ev is None:
        return False
    if ev.method is None:
        return model_based and not parallel
    if ev.method != method:
        return False
    return ev.drafter_repo is None or drafter_repo is None or ev.drafter_repo.lower() == drafter_repo.lower()


def with_spread(ev: Evidence, prior_tau: float, prior_low: float, prior_high: float) -> Evidence:
    """The evidence with the prior at its N recorded, and a range: the measurement's own, else the prior's
    relative spread around the measured tau (never zero width)."""
    ev = replace(ev, prior_tau=prior_tau, prior_tau_low=prior_low, prior_tau_high=prior_high)
    if ev.tau is None or (ev.tau_low is not None and ev.tau_high is not None and ev.tau_high > ev.tau_low):
        return ev
    lo, hi = prior_low / prior_tau, prior_high / prior_tau
    if hi - lo < 1e-6:
        return ev
    return replace(ev, tau_low=max(1.0, ev.tau * lo), tau_high=ev.tau * hi, spread_from_prior=True)


def tau_spread(ev: Evidence) -> tuple[float, float] | None:
    """(low / tau, high / tau) of the measured range, for the speed model."""
    if ev.tau is None or ev.tau_low is None or ev.tau_high is None or ev.tau <= 0:
        return None
    return min(1.0, ev.tau_low / ev.tau), max(1.0, ev.tau_high / ev.tau)


def prior_miss_text(ev: Evidence, label: str) -> str | None:
    """How far the prior was off at the measured N, in words (None: no prior to compare)."""
    if ev.prior_tau is None or ev.tau is None:
        return None
    off = (ev.prior_tau - ev.tau) / ev.tau
    rng = (f" ({ev.tau_low:.2f}-{ev.tau_high:.2f} over {ev.num_requests} prompts)" if ev.num_requests and
           ev.tau_low is not None and not ev.spread_from_prior else "")
    return (f"prior vs measured for {label} at N={ev.num_draft_tokens}: prior tau {ev.prior_tau:.2f} "
            f"({ev.prior_tau_low:.2f}-{ev.prior_tau_high:.2f}) vs measured {ev.tau:.2f}{rng}: the prior was "
            f"{abs(off):.0%} {'high' if off > 0 else 'low'}")


def recalibrated(result: SpeedupResult, ratio: float, ev: Evidence) -> SpeedupResult:
    """``result`` with its cost side scaled by measured / predicted speedup (acceptance stays measured)."""
    sweep = [p.model_copy(update={"speedup": p.speedup * ratio, "cycle_cost": p.cycle_cost / ratio})
             for p in result.draft_sweep]
    batches = [p.model_copy(update={"speedup": p.speedup * ratio, "cycle_cost": p.cycle_cost / ratio})
               for p in result.batch_sweep]
    note = (f"cost side recalibrated to your measured speedup {ev.speedup:.2f}x at N={ev.num_draft_tokens}, "
            f"concurrency {ev.concurrency}: the model predicted {ev.speedup / ratio:.2f}x there with your measured "
            f"acceptance, so this deployment's cycle cost is scaled by {1 / ratio:.2f}")

    rule = draft_length_rule_text(sweep) if sweep else result.draft_length_rule
    notes = [f"draft length: {rule}" if a.startswith("draft length: ") else a for a in result.assumptions]
    return result.model_copy(update={
        "speedup": result.speedup * ratio, "low": result.low * ratio, "high": result.high * ratio,
        "cycle_cost": result.cycle_cost / ratio, "draft_sweep": sweep, "batch_sweep": batches,
        "draft_length_rule": rule, "assumptions": [*notes, note]})


def measured_estimate(req: EstimateRequest, ev: Evidence,
                      run: Callable[[EstimateRequest], SpeedupResult]) -> SpeedupResult:
    """``run(req)`` for the drafter the evidence belongs to: a range where the evidence has none, and the cost side
    recalibrated where a speedup was measured."""

    if req.tau_spread is None and ev.num_draft_tokens:
        # No spread over prompts (a bare --tau/--alpha): this drafter's own prior relative spread at the measured N
        # gives the tau range (stated in the evidence lines), never zero width; it does not widen the speedup.
        try:
            prior = estimate_for_specs(replace(req, alpha=None, tau=None, tau_at_draft_tokens=None,
                                               tau_by_draft_tokens=(), num_draft_tokens=ev.num_draft_tokens,
                                               tree=None, sweep=False))
            if prior.tau > 0 and prior.tau_high > prior.tau_low:
                req = replace(req, tau_spread=(prior.tau_low / prior.tau, prior.tau_high / prior.tau),
                              tau_spread_measured=False)
        except PickerError:
            pass  # no prior here either: the range stays the stated figure
    result = run(req)
    if ev.speedup is not None and ev.num_draft_tokens is not None:
        # Measured / predicted at the measured N and concurrency, with the measured acceptance: the cost side's miss.
        at = estimate_for_specs(replace(req, num_draft_tokens=ev.num_draft_tokens, batch=ev.concurrency or req.batch,
                                        tree=None, sweep=False))
        result = recalibrated(result, ev.speedup / at.speedup, ev)
    return result


def evidence_lines(dep: Deployment, label: str) -> list[str]:
    """The answer's statements about the evidence: where it applies, at which N, its range and the prior's miss."""
    ev = dep.evidence
    if ev is None:
        return []
    what = f"alpha={ev.alpha:g}" if ev.alpha is not None and ev.tau is None else f"tau={ev.tau:.2f}"
    where = (f"{label}" + (f" with {ev.drafter_repo}" if ev.drafter_repo else "")) if ev.method else (
        "the model-based drafters that propose one token per forward (draft model, EAGLE, Medusa, MTP: no method "
        "named; name it with --measured-method to apply it to that drafter only)")
    lines = [f"measured {what} from {ev.source} applied to {where}; every other candidate keeps its published "
             "prior"]
    if ev.num_draft_tokens is not None:
        lines.append(f"measured at N={ev.num_draft_tokens}" + (
            " (assumed: the method's starting draft length; give --measured-n with the N you ran)" if ev.n_assumed
            else "") + ("; per-position acceptance gives every shorter N directly" if ev.per_position else ""))
    if ev.tau_low is None and (ev.method is None or ev.tau is None):
        lines.append("measured range: no per-prompt figures were given, so each drafter's own prior relative spread "
                     "at that N is used (--from-measurement gives your prompts' spread)")
    if ev.spread_from_prior:
        lines.append(f"measured range tau {ev.tau_low:.2f}-{ev.tau_high:.2f}: no per-prompt figures were given, so "
                     "the prior's relative spread at that N is used (--from-measurement gives your prompts' spread)")
    miss = prior_miss_text(ev, label)
    if miss:
        lines.append(miss)
    lines.extend(ev.notes)
    return lines


__all__ = ["applies_to", "build_evidence", "check_measured_n", "evidence_lines", "measured_estimate", "prior_miss_text",
           "recalibrated", "tau_spread", "with_spread"]

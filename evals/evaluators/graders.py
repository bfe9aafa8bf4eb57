"""Deterministic graders: one per field of the answer, each returning pass / fail / not applicable with evidence.

A grader is a plain function ``(ctx) -> CheckResult``. "Not applicable" (``na``)
means the case states no expectation for that field, or the run produced no
recommendation to look at; it never counts against the pass rate. Whether the
*run* failed (a crash, an API failure) is decided before grading and reported
apart (``evals/report.py``); the ``outcome`` grader checks that an expected error
was the right one.
"""

from __future__ import annotations

import re
from typing import Callable

from specpick.evals.evaluators.base import CheckResult, GradeContext, Grader, Status, not_applicable, per_strategy, check_result
from specpick.evals.evaluators.configcheck import check_config
from specpick.evals.evaluators.contradiction import grade_contradiction
from specpick.evals.evaluators.prose import grade_asked, grade_mentions, grade_sections
from specpick.evals.dataset import ERROR_EXIT
from specpick.skill.schema import Recommendation
from specpick.tools.engines.lookup import engine as engine_spec, is_engine
from specpick.tools.vocab import TREE_METHODS, TRAINED_HEAD_METHODS

__all__ = ["CHECK_NAMES", "GRADERS", "CheckResult", "GradeContext", "Grader", "Status", "grade"]


# -- outcome ------------------------------------------------------------------
def grade_outcome(ctx: GradeContext) -> CheckResult:
    """Recommendation vs expected error vs decline."""
    exp, rec = ctx.expected, ctx.recommendation
    name = "outcome"
    if ctx.runner == "agent" and exp.outcome in ("error", "decline"):
        # A conversation cannot exit with a code: declining or explaining the error in prose, without
        # submitting a recommendation, is the agent's form of both outcomes.
        if rec is not None:
            return check_result(name, False, f"expected {exp.outcome}; the agent submitted a recommendation ({rec.strategy})")
        return check_result(name, True, f"no recommendation submitted ({exp.outcome} expected)")
    if exp.outcome == "error":
        want = ERROR_EXIT[exp.error]  # type: ignore[index]
        also = ERROR_EXIT[exp.or_error] if exp.or_error else None
        if ctx.error_exit_code is not None:
            alt = f" or {exp.or_error} (exit {also})" if also else ""
            return check_result(name, ctx.error_exit_code in (want, also),
                      f"expected {exp.error} error (exit {want}){alt}; got exit {ctx.error_exit_code}: "
                      f"{ctx.error_message}")
        if rec is not None:
            return check_result(name, False, f"expected {exp.error} error (exit {want}); got a recommendation ({rec.strategy})")
        return check_result(name, False, f"expected {exp.error} error (exit {want}); got neither an error nor an answer")
    if exp.outcome == "decline":
        if rec is not None:
            return check_result(name, False, f"expected a decline; got a recommendation ({rec.strategy})")
        return check_result(name, ctx.error_exit_code is None,
                  "declined without a recommendation" if ctx.error_exit_code is None
                  else f"expected a decline; got error exit {ctx.error_exit_code}: {ctx.error_message}")
    if rec is not None:
        return check_result(name, True, f"recommendation produced ({rec.strategy})")
    if ctx.error_exit_code is not None and exp.or_error and ctx.error_exit_code == ERROR_EXIT[exp.or_error]:
        return check_result(name, True, f"accepted alternative: {exp.or_error} error ({ctx.error_message})")
    got = f"error exit {ctx.error_exit_code}: {ctx.error_message}" if ctx.error_exit_code is not None else "no answer"
    return check_result(name, False, f"expected a recommendation; got {got}")


def _needs_rec(fn: Callable[[GradeContext, Recommendation], CheckResult], name: str) -> Grader:
    def grader(ctx: GradeContext) -> CheckResult:
        if ctx.expected.outcome != "recommend":
            return not_applicable(name, f"case expects {ctx.expected.outcome}; the outcome check covers it")
        if ctx.recommendation is None:
            return not_applicable(name, "no recommendation to grade")
        return fn(ctx, ctx.recommendation)
    grader.__name__ = f"grade_{name}"
    grader.__doc__ = fn.__doc__
    return grader


# -- recommendation fields -----------------------------------------------------
def _strategy(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Chosen strategy is one of the acceptable ones."""
    exp = ctx.expected
    if exp.strategies == "any":
        return not_applicable("strategy", "any strategy is acceptable for this case")
    return check_result("strategy", exp.acceptable(rec.strategy), f"chose {rec.strategy}; acceptable {exp.strategies}")


def _forbidden(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Forbidden strategies are neither chosen nor offered as a fallback."""
    bad = set(ctx.expected.forbidden_strategies)
    if not bad:
        return not_applicable("forbidden_strategies", "none forbidden")
    offered = [s.next_strategy for s in rec.fallback if s.next_strategy in bad]
    if rec.strategy in bad:
        return check_result("forbidden_strategies", False, f"chose forbidden {rec.strategy}")
    return check_result("forbidden_strategies", not offered,
              f"fallback offers forbidden {offered}" if offered else f"avoided {sorted(bad)}")


def _num_draft_tokens(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """N within the expected range for the chosen strategy."""
    rng = per_strategy(ctx.expected.num_draft_tokens, rec.strategy)
    if rng is None or rec.strategy == "none":
        return not_applicable("num_draft_tokens", f"no N expectation for {rec.strategy}")
    if rec.num_draft_tokens is None:
        return check_result("num_draft_tokens", False, f"no N given; expected {rng}")
    return check_result("num_draft_tokens", rng.contains(rec.num_draft_tokens), f"N={rec.num_draft_tokens}; expected {rng}")


def _tree(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Tree depth / top-k / verify tokens within range (tree methods on engines that run trees)."""
    exp = ctx.expected.tree
    if exp is None or rec.strategy not in TREE_METHODS | {"mtp"} or rec.engine in ("vllm", "transformers"):
        return not_applicable("tree", "no tree expectation for this strategy/engine")
    if rec.tree is None:
        return check_result("tree", False, "no tree parameters given")
    got = {"depth": rec.tree.depth, "top_k": rec.tree.top_k, "num_verify_tokens": rec.tree.num_verify_tokens}
    bad = [f"{k}={got[k]} not in {getattr(exp, k)}" for k in got if getattr(exp, k) and not getattr(exp, k).contains(got[k])]
    return check_result("tree", not bad, "; ".join(bad) or f"tree {got} within expectations")


def _speedup_band(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Point estimate inside the source-based band for the chosen strategy."""
    band = per_strategy(ctx.expected.speedup, rec.strategy)
    if band is None:
        return not_applicable("speedup_band", f"no band for {rec.strategy}")
    v = rec.expected_speedup.value
    return check_result("speedup_band", band.low <= v <= band.high, f"{v:.2f}x; band [{band.low}, {band.high}] ({band.basis})")


def _speedup_stated(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The estimate states its assumptions: range brackets the value, tau >= 1, alpha in (0,1), source, batch."""
    s, bad = rec.expected_speedup, []
    if not s.low <= s.value <= s.high:
        bad.append(f"value {s.value} outside its own range [{s.low}, {s.high}]")
    if rec.strategy == "none":
        if abs(s.value - 1.0) > 0.05:
            bad.append(f"strategy none but speedup {s.value}")
    else:
        if s.tau < 1.0:
            bad.append(f"tau {s.tau} < 1 (tau includes the bonus token)")
        if s.alpha is not None and not 0.0 < s.alpha < 1.0:
            bad.append(f"alpha {s.alpha} outside (0, 1)")
        if not s.acceptance_source.strip():
            bad.append("acceptance source not stated")
        if s.cycle_cost <= 0 or s.cost_ratio < 0:
            bad.append(f"cycle cost {s.cycle_cost} / cost ratio {s.cost_ratio} not positive")
    if s.batch != rec.inputs.concurrency:
        bad.append(f"estimate holds for batch {s.batch}, deployment runs at concurrency {rec.inputs.concurrency}")
    return check_result("speedup_stated", not bad, "; ".join(bad) or "assumptions stated and consistent")


def _flags(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Required flags (and the ones required for the chosen strategy) are raised."""
    need = set(ctx.expected.flags) | set(ctx.expected.flags_if.get(rec.strategy, []))  # type: ignore[arg-type]
    if not need:
        return not_applicable("flags", "no flags required")
    missing = sorted(need - rec.flag_ids())
    severity = {f.id: f.severity for f in rec.flags}
    weak = [f"{fid} is {severity[fid]} (want {allowed})" for fid, allowed in ctx.expected.flag_severity.items()
            if fid in severity and severity[fid] not in allowed]
    bad = ([f"missing {missing}; raised {sorted(rec.flag_ids())}"] if missing else []) + weak
    return check_result("flags", not bad, "; ".join(bad) or f"raised {sorted(need)}")


def _forbidden_flags(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Flags that would be wrong here are not raised."""
    bad = set(ctx.expected.forbidden_flags)
    if not bad:
        return not_applicable("forbidden_flags", "none forbidden")
    hit = sorted(bad & rec.flag_ids())
    return check_result("forbidden_flags", not hit, f"raised wrong flag(s) {hit}" if hit else f"none of {sorted(bad)}")


def _compatibility(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Named compatibility checks carry an allowed verdict."""
    exp = {k: v for k, v in ctx.expected.compatibility.items() if not v.when or rec.strategy in v.when}
    if not exp:
        return not_applicable("compatibility", "no verdict expectations for this strategy")
    got: dict[str, list[str]] = {}
    for c in rec.compatibility:
        got.setdefault(c.name, []).append(c.verdict)
    bad = []
    for name, want in exp.items():
        verdicts = got.get(name)
        if not verdicts:
            bad.append(f"{name} missing (want {want.verdicts})")
        elif not any(v in want.verdicts for v in verdicts):
            bad.append(f"{name}={verdicts} (want {want.verdicts})")
    return check_result("compatibility", not bad, "; ".join(bad) or f"verdicts as expected for {sorted(exp)}")


def _compat_coverage(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The BRIEF's compatibility checks are present for the chosen strategy."""
    if rec.strategy == "none":
        return not_applicable("compat_coverage", "no speculation to check")
    need = {"vram_fit", "runtime_support", "kv_rollback"}
    if rec.strategy == "draft_model":
        need |= {"tokenizer", "vocab_padding"}
    if rec.strategy in TRAINED_HEAD_METHODS:
        need.add("head_match")
    missing = sorted(need - {c.name for c in rec.compatibility})
    return check_result("compat_coverage", not missing, f"missing checks {missing}" if missing else f"has {sorted(need)}")


def _draft_model(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The draft/head repo is an acceptable one for the chosen strategy."""
    allowed = ctx.expected.draft_models.get(rec.strategy)  # type: ignore[call-overload]
    if not allowed:
        return not_applicable("draft_model", f"no draft/head expectation for {rec.strategy}")
    got = (rec.draft_model or "").lower()
    return check_result("draft_model", got in {a.lower() for a in allowed}, f"{rec.draft_model!r}; acceptable {allowed}")


def _engine(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The answer targets the engine the user runs."""
    want = ctx.expected.engine
    if want is None:
        return not_applicable("engine", "engine not fixed by the case")
    ok = rec.engine == want and rec.engine_config.engine == want
    return check_result("engine", ok, f"engine {rec.engine}, config for {rec.engine_config.engine}; expected {want}")


def _engine_config(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The emitted config parses and agrees with the recommendation and the engine's rules."""
    cfg = rec.engine_config
    bad = []
    if cfg.engine != rec.engine:
        bad.append(f"config is for {cfg.engine}, recommendation for {rec.engine}")
    if not cfg.engine_version.strip():
        bad.append("engine version not recorded")
    if not cfg.launch_command.strip():
        bad.append("no launch command")
    tree = (rec.tree.depth, rec.tree.top_k, rec.tree.num_verify_tokens) if rec.tree else None
    tp = max(1, rec.inputs.gpus // max(1, rec.inputs.pipeline_parallel))
    problems, _ = check_config(rec.strategy, cfg.engine, cfg.format, cfg.config, cfg.launch_command,
                               n=rec.num_draft_tokens, tree=tree, draft_model=rec.draft_model, target_tp=tp)
    bad += problems
    return check_result("engine_config", not bad, "; ".join(bad) or f"{cfg.engine} {cfg.format} config consistent")


def _config_values(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Case-specific config keys (e.g. prompt_lookup_min >= 8 for tool calls) for the chosen strategy."""
    exps = [e for e in ctx.expected.config if e.strategy == rec.strategy]
    if not exps:
        return not_applicable("config_values", f"no config expectation for {rec.strategy}")
    cfg = rec.engine_config
    _, parsed = check_config(rec.strategy, cfg.engine, cfg.format, cfg.config, cfg.launch_command,
                             n=None, tree=None, draft_model=None, target_tp=1)
    if parsed is None:
        return check_result("config_values", False, "config does not parse")
    bad = []
    for e in exps:
        value = parsed.get(e.key)
        if e.absent:
            if value is not None:
                bad.append(f"{e.key} set to {value!r}; should be absent ({e.why})")
        elif e.present:
            if value is None:
                bad.append(f"{e.key} missing ({e.why})")
        elif value is None:
            bad.append(f"{e.key} missing; expected {e.range or e.equals} ({e.why})")
        elif e.equals is not None and str(value).strip("'\"") != str(e.equals):
            bad.append(f"{e.key}={value!r}; expected {e.equals!r} ({e.why})")
        elif e.range is not None:
            try:
                ok = e.range.contains(float(str(value).strip("'\"")))
            except ValueError:
                ok = False
            if not ok:
                bad.append(f"{e.key}={value!r}; expected {e.range} ({e.why})")
    return check_result("config_values", not bad, "; ".join(bad) or f"{[e.key for e in exps]} as expected")


def _fallback(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """Fallback steps carry machine-readable triggers, on the metrics the case needs."""
    triggers = [s.trigger for s in rec.fallback if s.trigger is not None]
    metrics = {t.metric for t in triggers}
    groups = ctx.expected.fallback_metrics
    if rec.strategy == "none" and not groups:
        return not_applicable("fallback", "speculation off and no trigger expectation")
    bad = []
    if not triggers:
        bad.append("no fallback step has a machine-readable trigger")
    if rec.strategy != "none" and not metrics & {"alpha", "tau", "speedup", "tpot_ms_p50", "throughput_ratio"}:
        bad.append(f"no trigger on measured acceptance or speed (triggers on {sorted(metrics)})")
    for group in groups:
        if not metrics & set(group.split("|")):
            bad.append(f"no trigger on {group}")
    return check_result("fallback", not bad, "; ".join(bad) or f"triggers on {sorted(metrics)}")




def _measurement_metrics(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """The measurement plan names the engine's own acceptance metrics and gives commands."""
    m = rec.measurement_plan
    if rec.strategy == "none":
        return not_applicable("measurement_metrics", "speculation off")
    text = " ".join([x.name for x in m.metrics] + m.commands + m.steps)
    need = engine_spec(rec.engine).read_metrics if is_engine(rec.engine) else ()  # the names `measure` reads
    missing = [n for n in need if n not in text]
    bad = [f"missing {missing}"] if missing else []
    if not m.commands:
        bad.append("no commands")
    return check_result("measurement_metrics", not bad, "; ".join(bad) or f"names {list(need) or 'commands'} for {rec.engine}")


_DEFINITIONS = {
    "acceptance rate (alpha)": r"α|alpha|acceptance rate",
    "mean acceptance length (tau)": r"τ|tau|acceptance length|accepted length",
    "per-position rates": r"per.position",
}


def _measurement_definitions(ctx: GradeContext, rec: Recommendation) -> CheckResult:
    """alpha, tau = 1 + accepted/drafts and per-position rates are defined (vllm#9565)."""
    if rec.strategy == "none":
        return not_applicable("measurement_definitions", "speculation off")
    text = " ".join(rec.measurement_plan.definitions)
    missing = [k for k, pat in _DEFINITIONS.items() if not re.search(pat, text, re.IGNORECASE)]
    return check_result("measurement_definitions", not missing, f"undefined: {missing}" if missing else "alpha, tau, per-position defined")


GRADERS: tuple[Grader, ...] = (
    grade_outcome,
    _needs_rec(_strategy, "strategy"),
    _needs_rec(_forbidden, "forbidden_strategies"),
    _needs_rec(_num_draft_tokens, "num_draft_tokens"),
    _needs_rec(_tree, "tree"),
    _needs_rec(_speedup_band, "speedup_band"),
    _needs_rec(_speedup_stated, "speedup_stated"),
    _needs_rec(grade_contradiction, "contradiction"),
    _needs_rec(_flags, "flags"),
    _needs_rec(_forbidden_flags, "forbidden_flags"),
    _needs_rec(_compatibility, "compatibility"),
    _needs_rec(_compat_coverage, "compat_coverage"),
    _needs_rec(_draft_model, "draft_model"),
    _needs_rec(_engine, "engine"),
    _needs_rec(_engine_config, "engine_config"),
    _needs_rec(_config_values, "config_values"),
    _needs_rec(_fallback, "fallback"),
    _needs_rec(_measurement_metrics, "measurement_metrics"),
    _needs_rec(_measurement_definitions, "measurement_definitions"),
    grade_sections,
    grade_mentions,
    grade_asked,
)
CHECK_NAMES: tuple[str, ...] = tuple(g.__name__.removeprefix("grade_") for g in GRADERS)


def grade(ctx: GradeContext) -> dict[str, CheckResult]:
    """Run every grader; a grader that raises is a bug in the grader and reported as a failed check."""
    out: dict[str, CheckResult] = {}
    for grader in GRADERS:
        name = grader.__name__.removeprefix("grade_")
        try:
            out[name] = grader(ctx)
        except Exception as exc:  # noqa: BLE001 - a broken grader must not hide the other checks
            out[name] = CheckResult(name=name, status="fail", reason=f"grader error {type(exc).__name__}: {exc}")
    return out

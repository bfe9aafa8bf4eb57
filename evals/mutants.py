"""Mutation testing of the graders: wrong answers made from each case's real answer must fail the case.

A grader that passes whatever it is shown proves nothing. For every case the planner answers, ``mutants`` builds
answers that are wrong in one known way and otherwise well-formed (configs rewritten to agree, so that only the
mistake can be caught), and ``grade_mutants`` grades them against the same case:

| kind | the wrong answer | the grader meant to catch it |
|---|---|---|
| ``other_method`` | the planner's own full answer with another method forced (``inputs.method``) | strategy |
| ``n_far`` | N moved far off (2N + 4), config rewritten to match | num_draft_tokens |
| ``speedup_x2`` / ``speedup_x0.5`` | the speedup estimate (value, low, high) doubled / halved | speedup_band |
| ``drop_flag`` | one warn/fail flag that says something breaks removed (one the deployment triggers, about the
  user's or the chosen draft) | flags |
| ``other_head`` | the draft/head swapped for one trained for another verifier, config rewritten | draft_model |
| ``config_contradicts`` | the engine config names another method than the answer | engine_config |
| ``self_contradiction`` | the chosen method's runtime-support check turned to "fail" | contradiction |
| ``other_error`` | (error cases) an error of another class | outcome |

A mutant is *killed* when a check that passed (or was n/a) on the real answer fails on the mutant. The report
counts kills overall (any check), per kind, and per target grader: of the mutants aimed at a grader that it
judged (the case states that field), how many it failed. The overall rate measures the suite (a case without
the field lets its mutant survive); the per-grader rate measures the grader itself. Survivors are listed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel, Field

from specpick.evals.dataset import Case
from specpick.evals.evaluators.base import GradeContext
from specpick.evals.evaluators.graders import grade
from specpick.evals.flag_triggers import untriggered
from specpick.evals.runners import RunOutput
from specpick.skill.schema import Recommendation
from specpick.tools.errors import EXIT_INPUT, EXIT_NOT_FOUND, PickerError
from specpick.skill.render import to_markdown
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.methods import is_method
from specpick.tools.methods import method_record
from specpick.evals.runners import run_planner

# Flags that say something breaks or does not pay (dropping one hides a real problem). Information-only flags
# (gated model, acceptance drift, MoE verification cost, ...) are not mutated: an answer without them is not wrong.
BREAKING_FLAGS = frozenset({
    "tokenizer_mismatch", "vocab_padding", "no_room_for_draft", "batch_saturation", "high_temperature",
    "beam_search", "head_for_other_verifier", "no_published_head", "pipeline_parallel", "lora",
    "quantized_verifier_bf16_head", "small_verifier", "low_overlap_ngram", "large_k_high_load", "ngram_tool_calls",
    "exotic_kv_quant", "draft_tp", "transformers_batch1", "transformers_padded_vocab", "medusa_engine_support",
    "lookahead_engine_support", "mtp_not_available", "mla_dynamic_tree", "verifier_does_not_fit",
    "engine_breaks_with",
})
KIND_TARGET: dict[str, str] = {
    "other_method": "strategy", "n_far": "num_draft_tokens", "speedup_x2": "speedup_band",
    "speedup_x0.5": "speedup_band", "drop_flag": "flags", "other_head": "draft_model",
    "config_contradicts": "engine_config", "self_contradiction": "contradiction", "other_error": "outcome",
}


@dataclass(frozen=True)
class Mutant:
    case_id: str
    kind: str
    what: str
    output: RunOutput


class MutantResult(BaseModel):
    """One graded mutant."""

    case_id: str
    kind: str
    target: str
    what: str
    killed: bool
    killed_by: list[str] = Field(default_factory=list)
    target_killed: bool
    target_applicable: bool = Field(description="the target grader judged the mutant (the case states that field)")


def _render(rec: Recommendation) -> str:

    return to_markdown(rec)


def _out(orig: RunOutput, rec: Recommendation) -> RunOutput:
    return orig.model_copy(update={"recommendation": rec, "markdown": _render(rec), "error": None})


def _sub_all(pattern: str, repl: Callable[[re.Match[str]], str], *texts: str) -> tuple[str, ...]:
    return tuple(re.sub(pattern, repl, t) for t in texts)


def rewrite_n(rec: Recommendation, n_new: int) -> Recommendation:
    """``rec`` with draft length ``n_new`` in the answer, its tree and its engine config, all agreeing."""
    cfg = rec.engine_config
    texts = (cfg.config, cfg.launch_command)
    tree = rec.tree
    num = lambda m: m.group(1) + str(n_new)  # noqa: E731
    if rec.engine == "vllm":
        texts = _sub_all(r'("num_speculative_tokens"\s*:\s*)\d+', num, *texts)
    elif rec.engine == "trtllm":
        texts = _sub_all(r"(max_draft_len:\s*)\d+", num, *texts)
    elif rec.engine == "llamacpp":
        texts = _sub_all(r"(--spec-draft-n-max[ =])\d+", num, *texts)
    elif rec.engine == "transformers":
        texts = _sub_all(r"((?:prompt_lookup_num_tokens|num_assistant_tokens)\s*=\s*)\d+", num, *texts)
    elif rec.engine == "sglang" and tree is not None:
        ndt = n_new * tree.top_k + 1 if tree.top_k > 1 else n_new + 1
        texts = _sub_all(r"(--speculative-num-steps[ =])\d+", num, *texts)
        texts = _sub_all(r"(--speculative-num-draft-tokens[ =])\d+", lambda m: m.group(1) + str(ndt), *texts)
        tree = tree.model_copy(update={"depth": n_new, "num_verify_tokens": ndt})
    new_cfg = cfg.model_copy(update={"config": texts[0], "launch_command": texts[1]})
    return rec.model_copy(deep=True, update={"num_draft_tokens": n_new, "tree": tree, "engine_config": new_cfg})


def _swap_repo(rec: Recommendation, repo: str) -> Recommendation:
    cfg = rec.engine_config
    old = re.escape(rec.draft_model or "")
    texts = _sub_all(old, lambda m: repo, cfg.config, cfg.launch_command) if old else (cfg.config, cfg.launch_command)
    new_cfg = cfg.model_copy(update={"config": texts[0], "launch_command": texts[1]})
    return rec.model_copy(deep=True, update={"draft_model": repo, "engine_config": new_cfg})


def _real_warning(fid: str, message: str, case: Case, rec: Recommendation) -> bool:
    """Whether dropping this flag makes the answer wrong: not when the deployment never triggers it (a batch warning
    at concurrency 1), nor when it is about a draft the planner weighed and dropped (no user's or chosen repo)."""
    if untriggered([fid], case.inputs):
        return False
    if fid == "no_room_for_draft":
        repos = [r for r in (case.inputs.get("draft"), rec.draft_model) if r]
        return any(str(r).lower() in message.lower() for r in repos)
    return True


def _other_repo(rec: Recommendation) -> str | None:
    """A published head (or draft) of the same method, trained for another verifier family."""

    verifier = rec.inputs.verifier.lower().split("/")[-1]
    family = re.split(r"[-_.]", verifier)[0]
    # The catalog's heads of the kind this method loads (EAGLE-2 loads EAGLE-1 heads).
    method = (method_record(rec.strategy).head_kind if is_method(rec.strategy) else None) or rec.strategy
    pool = [h.head_repo_id for h in get_catalog().heads
            if h.method == method and family not in h.verifier_repo_id.lower()
            and h.head_repo_id.lower() != (rec.draft_model or "").lower()]
    if rec.strategy == "draft_model":
        pool += [d for d in ("Qwen/Qwen2.5-0.5B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
                             "google/gemma-2-2b-it") if family not in d.lower()]
    return pool[0] if pool else None


def _config_contradicts(rec: Recommendation) -> Recommendation | None:
    cfg = rec.engine_config
    if rec.strategy == "none":
        extra = {"vllm": " --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'",
                 "sglang": " --speculative-algorithm NGRAM", "trtllm": " --speculative_config decoding_type=NGram",
                 "llamacpp": " --spec-type ngram-simple", "transformers": ""}[rec.engine]
        if not extra:  # transformers: the kwargs turn speculation on
            new = cfg.model_copy(update={"config": "prompt_lookup_num_tokens=3"})
        else:
            new = cfg.model_copy(update={"launch_command": cfg.launch_command + extra})
        return rec.model_copy(deep=True, update={"engine_config": new})
    words = {
        "vllm": (r'"method"\s*:\s*"[a-z0-9_]+"', '"method":"ngram"' if rec.strategy != "ngram" else '"method":"eagle3"'),
        "trtllm": (r"decoding_type:\s*\w+", "decoding_type: NGram" if rec.strategy != "ngram" else "decoding_type: MTP"),
        "sglang": (r"--speculative-algorithm[ =]\w+",
                   "--speculative-algorithm NGRAM" if rec.strategy != "ngram" else "--speculative-algorithm EAGLE3"),
        "llamacpp": (r"--spec-type[ =][\w,-]+",
                     "--spec-type ngram-simple" if rec.strategy != "ngram" else "--spec-type draft-mtp"),
        "transformers": (r"(assistant_model|prompt_lookup_num_tokens)\s*=", "num_beams="),
    }[rec.engine]
    texts = _sub_all(words[0], lambda m: words[1], cfg.config, cfg.launch_command)
    if texts == (cfg.config, cfg.launch_command):
        return None
    new = cfg.model_copy(update={"config": texts[0], "launch_command": texts[1]})
    return rec.model_copy(deep=True, update={"engine_config": new})


def _other_method(case: Case, rec: Recommendation) -> RunOutput | None:
    """The planner's answer with another method forced: a complete, self-consistent answer for the wrong method."""

    accepted = case.expected.strategies
    ranked = [a.strategy for a in rec.alternatives if a.speedup is not None] + [a.strategy for a in rec.alternatives]
    for method in dict.fromkeys(ranked):
        if method in ("none", rec.strategy) or (accepted != "any" and method in accepted):
            continue
        forced = case.model_copy(update={"inputs": {**case.inputs, "method": method}})
        out = run_planner(forced)
        if out.recommendation is not None and out.recommendation.strategy == method:
            # graded as the answer to the original question: the forcing input is not part of it
            fixed = out.recommendation.model_copy(update={"inputs": rec.inputs})
            return out.model_copy(update={"recommendation": fixed, "case_id": case.id})
    return None


def mutants(case: Case, orig: RunOutput) -> Iterator[Mutant]:
    """The wrong answers made from ``orig`` (the real run of ``case``)."""
    rec = orig.recommendation
    if rec is None:
        if orig.error is not None and orig.error.kind == "picker":
            other = EXIT_NOT_FOUND if orig.error.exit_code == EXIT_INPUT else EXIT_INPUT
            err = orig.error.model_copy(update={"exit_code": other})
            yield Mutant(case.id, "other_error", f"exit {orig.error.exit_code} -> {other}",
                         orig.model_copy(update={"error": err}))
        return
    alt = _other_method(case, rec)
    if alt is not None:
        yield Mutant(case.id, "other_method", f"{rec.strategy} -> {alt.recommendation.strategy}", alt)  # type: ignore[union-attr]
    if rec.strategy != "none" and rec.num_draft_tokens is not None:
        n_far = 2 * rec.num_draft_tokens + 4
        yield Mutant(case.id, "n_far", f"N {rec.num_draft_tokens} -> {n_far}", _out(orig, rewrite_n(rec, n_far)))
    for kind, factor in (("speedup_x2", 2.0), ("speedup_x0.5", 0.5)):
        s = rec.expected_speedup
        scaled = s.model_copy(update={"value": s.value * factor, "low": s.low * factor, "high": s.high * factor})
        yield Mutant(case.id, kind, f"{s.value:.2f}x -> {s.value * factor:.2f}x",
                     _out(orig, rec.model_copy(deep=True, update={"expected_speedup": scaled})))
    for flag in rec.flags:
        if flag.id in BREAKING_FLAGS and flag.severity != "info" and _real_warning(flag.id, flag.message, case, rec):
            kept = [f for f in rec.flags if f is not flag]
            yield Mutant(case.id, "drop_flag", f"dropped {flag.id} ({flag.severity})",
                         _out(orig, rec.model_copy(deep=True, update={"flags": kept})))
    if rec.draft_model:
        repo = _other_repo(rec)
        if repo is not None:
            yield Mutant(case.id, "other_head", f"{rec.draft_model} -> {repo}", _out(orig, _swap_repo(rec, repo)))
    bad_cfg = _config_contradicts(rec)
    if bad_cfg is not None:
        yield Mutant(case.id, "config_contradicts", f"config names another method than {rec.strategy}",
                     _out(orig, bad_cfg))
    if rec.strategy != "none":
        checks = [c.model_copy(update={"verdict": "fail", "reason": "not supported here"})
                  if c.name == "runtime_support" else c for c in rec.compatibility]
        if checks != rec.compatibility:
            yield Mutant(case.id, "self_contradiction", f"{rec.strategy} kept with runtime_support = fail",
                         _out(orig, rec.model_copy(deep=True, update={"compatibility": checks})))


def grade_context(case: Case, out: RunOutput) -> GradeContext:
    return GradeContext(case=case, runner="planner", expected=case.expected_for("planner"),
                        recommendation=out.recommendation, markdown=out.markdown,
                        error_exit_code=out.error.exit_code if out.error else None,
                        error_message=out.error.message if out.error else "")


def grade_mutants(case: Case, orig: RunOutput) -> list[MutantResult]:
    """Grade every mutant of ``orig``; killed = a check that did not fail on ``orig`` fails on the mutant.

    Only answers the suite accepts are mutated: when ``orig`` already fails a check (a known failure), a wrong
    variant of it says nothing about the graders, so none is made (``[]``).
    """
    try:
        base = grade(grade_context(case, orig))
    except PickerError:
        return []
    before = {n for n, c in base.items() if c.status == "fail"}
    if before:
        return []
    out = []
    for m in mutants(case, orig):
        checks = grade(grade_context(case, m.output))
        new = sorted(n for n, c in checks.items() if c.status == "fail" and n not in before)
        target = KIND_TARGET[m.kind]
        out.append(MutantResult(case_id=case.id, kind=m.kind, target=target, what=m.what, killed=bool(new),
                                killed_by=new, target_killed=target in new,
                                target_applicable=checks[target].status != "na"))
    return out


class MutationSummary(BaseModel):
    """Kill counts overall, per kind and per target grader, and the survivors."""

    total: int
    killed: int
    per_kind: dict[str, dict[str, int]]
    per_grader: dict[str, dict[str, int]] = Field(
        description="target grader -> mutants aimed at it (total), those it judged (applicable: the case states "
                    "that field), those it failed (killed)")
    survivors: list[MutantResult]

    @property
    def rate(self) -> float | None:
        return self.killed / self.total if self.total else None


def summarize_mutants(results: list[MutantResult]) -> MutationSummary:
    per_kind: dict[str, dict[str, int]] = {}
    per_grader: dict[str, dict[str, int]] = {}
    for r in results:
        k = per_kind.setdefault(r.kind, {"total": 0, "killed": 0})
        k["total"] += 1
        k["killed"] += r.killed
        g = per_grader.setdefault(r.target, {"total": 0, "applicable": 0, "killed": 0})
        g["total"] += 1
        g["applicable"] += r.target_applicable
        g["killed"] += r.target_killed
    return MutationSummary(total=len(results), killed=sum(r.killed for r in results),
                           per_kind=dict(sorted(per_kind.items())), per_grader=dict(sorted(per_grader.items())),
                           survivors=[r for r in results if not r.killed])


def survivors_json(summary: MutationSummary) -> str:
    return json.dumps([r.model_dump() for r in summary.survivors], indent=2)

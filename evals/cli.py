"""``specpick eval``: the command-line wrapper around ``run_eval`` (registered in ``skill/surfaces/cli.py`` COMMANDS).

The report goes to stdout (``render_text``), one progress line per case to stderr, the full report to
``--json FILE``. A missed ``--min-pass`` / ``--min-check`` threshold, or a case failing outside
``--known-failures`` (or a listed case passing), exits 8; bad options exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys

from specpick.tools.errors import InputError
from specpick.evals.report import render_text
from specpick.evals.report import run_eval
from specpick.evals.training import case_pass_counts
from specpick.evals.training import run_selected
from specpick.evals.training import summary
from specpick.tools.errors import ThresholdError

EPILOG = """examples:
  specpick eval --runner planner --known-failures evals/known_failures.txt --min-check sections=1
  specpick eval --runner planner --category drafts serving
  specpick eval --runner agent --repeat 3 --mode compare --rubric      (needs ANTHROPIC_API_KEY)
  specpick eval --runner train-plan                                     (every train-plan case must pass)
"""
# Options of the recommend suites that the train-plan runner has no use for (its cases have their own folder and
# graders, evals/training.py); given with --runner train-plan they are an input error, not silently ignored.
_NOT_FOR_TRAIN_PLAN = ("cases_dir", "categories", "known_failures", "mode", "model", "user_model", "rubric",
                       "mutants", "min_mutant_kill")


def add_arguments(parser: argparse.ArgumentParser, verb: str = "eval") -> None:
    """Add the ``eval`` options."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--runner", choices=["planner", "agent", "train-plan"], default="planner",
                        help="planner: the deterministic planner (CI); agent: Claude through the chat loop; "
                             "train-plan: the train-plan / head-check cases (evals/cases/training)")
    parser.add_argument("--cases-dir", help="directory of case YAML files (default: the packaged cases)")
    parser.add_argument("--category", nargs="+", dest="categories", help="run only these categories")
    parser.add_argument("--case", nargs="+", dest="case_ids", help="run only these case ids")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (agent runs vary)")
    parser.add_argument("--json", dest="json_path", metavar="FILE", help="also write the full report as JSON")
    parser.add_argument("--min-pass", type=float, help="exit 8 when the pass rate is below this fraction")
    parser.add_argument("--min-check", action="append", default=[], metavar="CHECK=X",
                        help="exit 8 when a check's pass rate is below X (repeatable)")
    parser.add_argument("--known-failures", metavar="FILE",
                        help="the only cases allowed to fail, one 'case_id  reason' per line (e.g. "
                             "evals/known_failures.txt); exit 8 when another case fails or a listed one passes")
    parser.add_argument("--mode", choices=["with-skill", "without-skill", "compare"], default=None,
                        help="agent only: with SKILL.md and tools, without them, or both side by side "
                             "(default: with-skill)")
    parser.add_argument("--model", help="agent model (default: $SPECPICK_MODEL or the built-in default)")
    parser.add_argument("--user-model", help="model that plays the user (default: as --model)")
    parser.add_argument("--rubric", action="store_true", help="add the model-graded prose rubric (needs a key)")
    parser.add_argument("--mutants", action="store_true",
                        help="planner only: also grade wrong answers made from each real one (another method, N far "
                             "off, speedup x2 / x0.5, a dropped flag, another verifier's head, a contradicting "
                             "config) and report how many the graders kill (mutants_total / mutants_killed in --json)")
    parser.add_argument("--min-mutant-kill", type=float, metavar="X",
                        help="with --mutants: exit 8 when the kill rate, overall or of any target grader, is below X")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _min_check(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise InputError(f"--min-check takes CHECK=FRACTION (e.g. sections=1), got '{item}'")
    return out


def run(args: argparse.Namespace, verb: str = "eval") -> int:
    """Run the suite, print the report, and raise ``ThresholdError`` (exit 8) below a threshold."""

    if args.runner == "train-plan":
        return _run_train_plan(args)
    if args.runner == "planner" and args.mode is not None:  # the planner has no skill to take away
        raise InputError(f"--mode {args.mode} is for --runner agent (the planner runs no model, with or without "
                         "SKILL.md); drop --mode, or add --runner agent")
    args.mode = args.mode or "with-skill"
    client = None
    if args.runner == "agent" or args.rubric:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            if args.runner == "agent":
                raise InputError("the agent runner needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a local "
                                 "stand-in); `specpick eval --runner planner` needs no key.")
        else:
            import anthropic

            client = anthropic.Anthropic()

    def progress(result) -> None:  # type: ignore[no-untyped-def]
        if not args.quiet:
            mark = "RUN-FAILED" if result.run_failed else ("pass" if result.passed else "FAIL")
            sys.stderr.write(f"{mark:<10} {result.case_id} [{result.variant}]\n")

    try:
        known = None
        if args.known_failures:
            from specpick.evals.report import load_known_failures

            try:
                known = load_known_failures(args.known_failures)
            except OSError as exc:
                raise InputError(f"--known-failures {args.known_failures}: {exc.strerror or exc}; give the path "
                                 "of the allow-list file") from None
        report = run_eval(args.runner, cases_dir=args.cases_dir, categories=args.categories,
                          case_ids=args.case_ids, repeat=args.repeat, json_path=args.json_path,
                          min_pass=args.min_pass, min_check=_min_check(args.min_check),
                          known_failures=known, mode=args.mode,
                          client=client, model=args.model, user_model=args.user_model, rubric=args.rubric,
                          progress=progress, mutants=args.mutants, min_mutant_kill=args.min_mutant_kill)
    except ValueError as exc:  # unknown category / case id, bad threshold, malformed case file
        raise InputError(str(exc).splitlines()[0]) from None
    sys.stdout.write(render_text(report))
    report.raise_for_threshold()
    return 0


def _run_train_plan(args: argparse.Namespace) -> int:
    """The train-plan category: print its summary, write ``--json``, exit 8 below ``--min-pass`` (default 1.0)."""
    import json


    extra = [f"--{name.replace('_', '-')}" for name in _NOT_FOR_TRAIN_PLAN if getattr(args, name, None)]
    extra += [f"--min-check {item}" for item in args.min_check] + (["--repeat"] if args.repeat != 1 else [])
    if extra:
        raise InputError(f"{', '.join(extra)} {'does' if len(extra) == 1 else 'do'} not apply to --runner "
                         "train-plan; it takes --case, --json, --min-pass and --quiet")
    min_pass = 1.0 if args.min_pass is None else args.min_pass
    if not 0.0 <= min_pass <= 1.0:
        raise InputError(f"--min-pass is a fraction between 0 and 1, got {min_pass}")
    try:
        results = run_selected(args.case_ids)
    except ValueError as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    passed, total = case_pass_counts(results)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump({"runner": "train-plan", "cases_total": total, "cases_passed": passed, "min_pass": min_pass,
                       "results": [r.model_dump() for r in results]}, fh, indent=2)
    sys.stdout.write(summary(results))
    if passed < min_pass * total:
        raise ThresholdError(f"train-plan eval: {passed}/{total} cases passed, below --min-pass {min_pass}")
    return 0

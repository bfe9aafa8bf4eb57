"""``specpick tune``: the command-line wrapper around ``run_tune`` (options generated from ``TuneInput``)."""

from __future__ import annotations

import argparse
import sys

from specpick.tools.tune.inputs import TuneInput, tune_input
from specpick.skill.surfaces.cli_args import add_model_arguments
from specpick.skill.surfaces.measure_cli import progress_bar
from specpick.tools.tune.run import run_tune

EPILOG = """examples:
  # servers you run (one per N, plus the baseline):
  specpick tune --endpoint 2=http://127.0.0.1:8002 4=http://127.0.0.1:8004 6=http://127.0.0.1:8006 \\
      --baseline-endpoint http://127.0.0.1:8000 --draft-lengths 2 4 6 --concurrency 1 4 --prompts prompts.jsonl
  # let it start vLLM for each setting:
  specpick tune --serve-model ./my-model --serve-executable ~/vllm-venv/bin/python \\
      --serve-args='--max-model-len 4096' --draft-lengths 2 4 6 --concurrency 1 4 16 --prompts prompts.jsonl
"""


def add_arguments(parser: argparse.ArgumentParser, verb: str = "tune") -> None:

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    add_model_arguments(parser, TuneInput)
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")


def run(args: argparse.Namespace, verb: str = "tune") -> int:

    options = dict(vars(args))
    as_json = bool(options.pop("json", False))
    inp = tune_input(**options)
    with progress_bar() as progress:
        report = run_tune(inp, progress)
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        from specpick.tools.tune.render import render_text

        sys.stdout.write(render_text(report).rstrip() + "\n")
    return 0

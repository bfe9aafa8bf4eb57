"""``specpick measure``: the command-line wrapper around ``run_measure``.

Options are generated from ``MeasureInput`` (``skill/surfaces/cli_args.py``), so the
CLI, the JSON schema and the function cannot drift apart. A progress bar runs
on stderr when it is a terminal; the table (or ``--json``) goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from specpick.tools.measure.run import MeasureInput, ProgressFn, measure_input, run_measure
from specpick.skill.surfaces.cli_args import add_model_arguments
from specpick.tools.sanitize import clean
from specpick.tools.sanitize import json_for_terminal
from specpick.tools.sanitize import redact

EPILOG = """examples:
  specpick measure --endpoint http://127.0.0.1:8000 --baseline-endpoint http://127.0.0.1:8001 \\
      --prompts prompts.jsonl --concurrency 1 4 16 --plot-dir plots/
  specpick measure --local ./SmolLM2-135M-Instruct --workload summarization --save-samples pairs.jsonl
  specpick measure --estimate-ngram --samples pairs.jsonl --tokenizer ./SmolLM2-135M-Instruct
  specpick measure --endpoint http://127.0.0.1:8000 --workload code --expect rec.json   (rec.json: recommend --json)
"""


def add_arguments(parser: argparse.ArgumentParser, verb: str = "measure") -> None:
    """Add the ``measure`` options (one per ``MeasureInput`` field) and ``--json``."""

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    add_model_arguments(parser, MeasureInput)
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")


@contextmanager
def progress_bar() -> Iterator[ProgressFn | None]:
    """A rich progress bar on stderr, or nothing when stderr is not a terminal (CI logs, pipes)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def update(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        yield update


def run(args: argparse.Namespace, verb: str = "measure") -> int:
    """Run the measurement and print the table or the JSON report."""
    options = dict(vars(args))
    as_json = bool(options.pop("json", False))
    inp = measure_input(**options)
    with progress_bar() as progress:
        report = run_measure(inp, progress)
    # Server strings (served model ids, warnings, URLs with a password) pass the one sanitizer on the way out.

    if as_json:
        sys.stdout.write(json_for_terminal(redact(report.model_dump_json(indent=2))) + "\n")
    else:
        from specpick.tools.measure.report import render_text

        sys.stdout.write(clean(render_text(report)).rstrip() + "\n")
    return 0

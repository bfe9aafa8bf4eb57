"""``specpick measure --estimate-ngram``: the acceptance n-gram drafting would get on the user's own samples.

Reads prompt + output pairs, tokenizes them (the verifier's tokenizer when
given, else tiktoken), replays each output through the n-gram drafter
(``ngram_sim``) and pools the counts with the same definitions as the engines'
counters. The resulting alpha feeds ``specpick recommend --alpha``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from specpick.tools.measure.ngram_sim import NgramParams, SimCounts, simulate
from specpick.tools.measure.prompts import load_samples
from specpick.tools.measure.report import MeasureReport, NgramEstimate
from specpick.tools.measure.tokenizer import load_tokenizer


def run_estimate(
    samples: Path,
    tokenizer: str | None,
    params: NgramParams,
    report: MeasureReport,
    progress: Callable[[int, int, str], None] | None = None,
) -> None:
    """Fill ``report.ngram`` from the samples file (see module docstring)."""
    items = load_samples(samples)
    tok = load_tokenizer(tokenizer)
    counts = SimCounts()
    for i, item in enumerate(items, start=1):
        counts.add(simulate(tok.encode(item.as_text()), tok.encode(item.output or ""), params, tok.eos_ids))
        if progress:
            progress(i, len(items), "n-gram simulation")
    report.prompts_source, report.num_prompts = str(samples), len(items)
    report.ngram = NgramEstimate(
        params=params,
        tokenizer=tok.name,
        num_samples=len(items),
        num_output_tokens=counts.num_output_tokens,
        acceptance=counts.acceptance(),
    )
    report.assumptions += [
        "greedy verification: a drafted token is accepted when it equals the recorded output token; "
        "sampling at temperature > 0 accepts less",
        f"drafter: {params.engine} prompt lookup, N={params.num_draft_tokens}, "
        f"n-gram {1 if params.engine == 'transformers' else params.prompt_lookup_min}..{params.prompt_lookup_max}",
    ]
    if not tok.name.startswith("tokenizers:"):
        report.warnings.append(
            "token ids come from tiktoken, not the verifier's tokenizer: boundaries differ, so alpha is approximate; "
            "pass --tokenizer with the verifier's folder or tokenizer.json for the exact figure"
        )

"""`recommend --samples pairs.jsonl`: n-gram acceptance from the user's own prompt/output pairs.

Replays each recorded output through vLLM's prompt-lookup drafter (``tools/measure/ngram_sim``) with the
verifier's own tokenizer (its ``tokenizer.json`` from the Hub or the local cache; offline without it, an error
that names the file to fetch) at the draft length the engine setting emits its matches with, and returns the
figures as a measurement: tau per N from the per-position counts, and the spread over the pairs (bootstrap).
Suffix decoding copies the same spans, but its tree and confidence cap are not simulated: the figures are for
n-gram and the answer says so.
"""

from __future__ import annotations

from pathlib import Path

from specpick.tools.deploy.measured_file import MeasuredFigures, pooled_tau, tau_interval
from specpick.tools.measure.ngram_sim import NgramParams
from specpick.tools.measure.ngram_sim import SimCounts
from specpick.tools.measure.ngram_sim import simulate
from specpick.tools.measure.prompts import load_samples
from specpick.tools.measure.tokenizer import load_tokenizer
from specpick.tools.measure.tokenizer import verifier_tokenizer_file

# The longest chain simulated: per-position counts then give every shorter N (the model's chain sweep's top,
# tools/model/estimate.py CHAIN_SWEEP_MAX).
SIM_DRAFT_TOKENS = 12
# The match window the emitted vLLM setting uses (tools/engines/setting.py defaults).
LOOKUP_MIN, LOOKUP_MAX = 2, 5


def samples_figures(path: Path, repo_id: str, tokenizer: str | None = None) -> MeasuredFigures:
    """The n-gram figures of the pairs file, tokenized with the verifier's tokenizer (or ``tokenizer``)."""

    items = load_samples(path)
    tok = load_tokenizer(tokenizer or verifier_tokenizer_file(repo_id))
    params = NgramParams(engine="vllm", num_draft_tokens=SIM_DRAFT_TOKENS, prompt_lookup_min=LOOKUP_MIN,
                         prompt_lookup_max=LOOKUP_MAX)
    total, pairs = SimCounts(), []
    for item in items:
        one = simulate(tok.encode(item.as_text()), tok.encode(item.output or ""), params, tok.eos_ids)
        total.add(one)
        pairs.append((one.num_drafts, one.num_accepted_tokens))
    acc = total.acceptance()
    tau = pooled_tau(pairs)
    notes = [f"n-gram acceptance simulated on your {len(items)} prompt/output pairs with {tok.name} "
             f"(vLLM prompt lookup, match {LOOKUP_MIN}-{LOOKUP_MAX} tokens, greedy: sampling accepts less)"]
    if tau is None:  # nothing to look up: every step decodes one token, and the lookup still costs its share
        tau = 1.0
        notes.append(f"no output in {path} repeats a {LOOKUP_MIN}-{LOOKUP_MAX} token span of its prompt: n-gram "
                     "drafts nothing on these pairs")
    low, high = tau_interval(pairs)
    return MeasuredFigures(
        kind="samples", tau=tau, alpha=acc.alpha, num_draft_tokens=SIM_DRAFT_TOKENS, method="ngram",
        per_position=tuple(acc.per_position), tau_low=low, tau_high=high, num_requests=len(items), notes=notes)


__all__ = ["samples_figures"]

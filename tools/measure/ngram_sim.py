"""Simulate prompt-lookup (n-gram) drafting on recorded prompt + output pairs.

Greedy verification accepts a drafted token exactly when it equals the token
the verifier produced, so replaying the verifier's own output through the
drafter gives the acceptance that n-gram speculation would get on that
workload, with no model and no GPU. Each step: propose from the context
(prompt + output so far), accept the longest prefix equal to the next output
tokens, append those plus the verifier's bonus token.

Two drafters, matching the engines' code:

* ``transformers`` — ``PromptLookupCandidateGenerator`` (transformers 5.x
  ``generation/candidate_generator.py``): n-gram sizes from
  ``max_matching_ngram_size`` down to 1; the *first* (leftmost) earlier
  occurrence of the context's last n tokens wins; up to
  ``prompt_lookup_num_tokens`` tokens follow it, cut at the first EOS; no
  draft when fewer than one token would be left before ``max_length``.
* ``vllm`` — ``vllm/v1/spec_decode/ngram_proposer.py``
  (``_find_longest_matched_ngram_and_propose_tokens``): the *longest* match
  with length in [``prompt_lookup_min``, ``prompt_lookup_max``], ties to the
  leftmost occurrence; up to ``num_speculative_tokens`` tokens follow it.

Sampling at temperature > 0 accepts less than this (the estimate is for greedy
decoding), and real engines may trim drafts at the end of a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.measure.metrics import Acceptance, acceptance_from_counts

NgramEngine = Literal["transformers", "vllm"]


class NgramParams(BaseModel):
    """Drafter settings, named as the engines name them."""

    engine: NgramEngine = "transformers"
    num_draft_tokens: int = Field(4, ge=1, le=64, description="prompt_lookup_num_tokens / num_speculative_tokens")
    prompt_lookup_max: int = Field(3, ge=1, le=64, description="max_matching_ngram_size / prompt_lookup_max")
    prompt_lookup_min: int = Field(1, ge=1, le=64, description="vLLM prompt_lookup_min (transformers always goes to 1)")


class SimCounts(BaseModel):
    """Raw counts of one or more simulated generations (vLLM counter semantics)."""

    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    accepted_per_pos: list[int] = Field(default_factory=list)
    num_steps: int = 0
    num_output_tokens: int = 0
    steps: list[tuple[int, int]] = Field(default_factory=list, description="(drafted, accepted) per draft, if recorded")

    def add(self, other: SimCounts) -> None:
        self.num_drafts += other.num_drafts
        self.num_draft_tokens += other.num_draft_tokens
        self.num_accepted_tokens += other.num_accepted_tokens
        self.num_steps += other.num_steps
        self.num_output_tokens += other.num_output_tokens
        self.steps += other.steps
        n = max(len(self.accepted_per_pos), len(other.accepted_per_pos))
        a = self.accepted_per_pos + [0] * (n - len(self.accepted_per_pos))
        b = other.accepted_per_pos + [0] * (n - len(other.accepted_per_pos))
        self.accepted_per_pos = [x + y for x, y in zip(a, b)]

    def acceptance(self) -> Acceptance:
        return acceptance_from_counts(
            "ngram-simulation",
            self.num_drafts,
            self.num_draft_tokens,
            self.num_accepted_tokens,
            [float(x) for x in self.accepted_per_pos],
        )


class _NgramIndex:
    """Leftmost start position of every n-gram (n <= max_n) seen so far, grown as tokens are appended."""

    def __init__(self, max_n: int) -> None:
        self.max_n = max_n
        self.tokens: list[int] = []
        self.first: dict[tuple[int, ...], int] = {}

    def extend(self, new: Sequence[int]) -> None:
        for tok in new:
            self.tokens.append(tok)
            end = len(self.tokens)
            for n in range(1, min(self.max_n, end) + 1):
                self.first.setdefault(tuple(self.tokens[end - n : end]), end - n)

    def leftmost_earlier(self, n: int) -> int | None:
        """Leftmost start of an occurrence of the last n tokens other than the suffix itself."""
        end = len(self.tokens)
        if n > end:
            return None
        start = self.first.get(tuple(self.tokens[end - n :]))
        # setdefault keeps the first start, so the suffix itself is returned only when it is the only occurrence.
        return None if start is None or start == end - n else start


def propose(index: _NgramIndex, params: NgramParams, eos_ids: frozenset[int], budget: int | None) -> list[int]:
    """Draft tokens for the current context, following the chosen engine's proposer."""
    tokens = index.tokens
    length = len(tokens)
    k = params.num_draft_tokens
    if params.engine == "transformers":
        # transformers returns no candidates when only the verifier's own token fits in max_length.
        if budget is not None and budget <= 1:
            return []
        for n in range(min(params.prompt_lookup_max, length - 1), 0, -1):
            start = index.leftmost_earlier(n)
            if start is None:
                continue
            chosen = tokens[start + n : min(start + n + k, length)]
            for i, tok in enumerate(chosen):
                if tok in eos_ids:
                    chosen = chosen[:i]
                    break
            # A match was found even if EOS emptied it: transformers then stops searching.
            return chosen
        return []
    # vLLM: the longest n in [min, max] whose suffix n-gram occurs earlier; existence is monotone in n
    # (an earlier n-gram occurrence contains an earlier (n-1)-gram one), so scan from the top.
    for n in range(min(params.prompt_lookup_max, length - 1), params.prompt_lookup_min - 1, -1):
        start = index.leftmost_earlier(n)
        if start is not None:
            return tokens[start + n : min(start + n + k, length)]
    return []


def simulate(
    prompt_ids: Sequence[int],
    output_ids: Sequence[int],
    params: NgramParams,
    eos_ids: Sequence[int] = (),
    cap_at_output_end: bool = True,
    record_steps: bool = False,
) -> SimCounts:
    """Replay one greedy generation through the drafter and count drafts and acceptances.

    Args:
        prompt_ids: the prompt as the verifier saw it (chat template applied).
        output_ids: the verifier's generated tokens, in order.
        params: drafter settings.
        eos_ids: end-of-sequence ids (transformers cuts drafts at the first one).
        cap_at_output_end: treat the end of ``output_ids`` as the ``max_length``
            transformers knows about (true when the run stopped on its token
            budget; harmless otherwise, since it only affects the last step).
        record_steps: keep (drafted, accepted) of every draft in ``steps``.
    """
    if params.engine == "vllm" and params.prompt_lookup_min > params.prompt_lookup_max:
        raise InputError("prompt_lookup_min must not exceed prompt_lookup_max")
    index = _NgramIndex(params.prompt_lookup_max)
    index.extend(prompt_ids)
    counts = SimCounts(num_output_tokens=len(output_ids))
    eos = frozenset(eos_ids)
    pos = 0
    total = len(output_ids)
    while pos < total:
        budget = total - pos if cap_at_output_end else None
        draft = propose(index, params, eos, budget) if len(index.tokens) > 0 else []
        accepted = 0
        for tok in draft:
            if pos + accepted < total and output_ids[pos + accepted] == tok:
                accepted += 1
            else:
                break
        # Accepted drafts plus the verifier's own token. When the generation ends inside the draft, the
        # last token counts as the verifier's (transformers recomputes n_matches = len(valid) - 1; vLLM
        # counts accepted = generated - 1 the same way).
        step = min(accepted + 1, total - pos)
        accepted = step - 1
        if draft:
            counts.num_drafts += 1
            counts.num_draft_tokens += len(draft)
            counts.num_accepted_tokens += accepted
            if len(counts.accepted_per_pos) < len(draft):
                counts.accepted_per_pos += [0] * (len(draft) - len(counts.accepted_per_pos))
            for i in range(accepted):
                counts.accepted_per_pos[i] += 1
            if record_steps:
                counts.steps.append((len(draft), accepted))
        counts.num_steps += 1
        index.extend(output_ids[pos : pos + step])
        pos += step
    return counts

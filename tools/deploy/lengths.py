"""The draft length an estimate starts from, per method: one rule for `recommend`, `speedup` and the listings.

Kept apart from ``requests.py`` so the planner can read it at import time without importing the speed model.
"""

from __future__ import annotations

# Suffix decoding's N is a cap, not a length the sweep tunes: each draft is sized by match confidence and the vLLM
# docs suggest 16-32 (features/speculative_decoding suffix section). `recommend` and `speedup` both use it.
FIXED_DRAFT_LENGTH: dict[str, int] = {"suffix": 16}
# Until the method registry is on this branch: the lengths parallel drafters were published with (DFlash -b16
# blocks draft 15, z-lab; P-EAGLE best K=7 at BS1, vllm PR #32887; PARD doc example 12).
_PUBLISHED_START = {"dflash": 15, "peagle": 7, "pard": 12}


def start_draft_length(method: str) -> int:
    """The draft length an estimate starts from before any tuning: the cap of a capped method, the method's
    published length where it has one (parallel drafters), else the shared start of the draft-length rule
    (``tools/model/draftshape.START_N``)."""
    if method in FIXED_DRAFT_LENGTH:
        return FIXED_DRAFT_LENGTH[method]
    from specpick.tools.model.draftshape import START_N

    try:
        from specpick.tools.methods import method_record
    except ImportError:  # the registry lands separately
        return _PUBLISHED_START.get(method, START_N)
    return method_record(method).start_draft_len or START_N


def published_start_length(method: str) -> int | None:
    """A parallel drafter's published draft length (None: the method has none)."""
    try:
        from specpick.tools.methods import method_record
    except ImportError:
        return _PUBLISHED_START.get(method)
    return method_record(method).start_draft_len


__all__ = ["FIXED_DRAFT_LENGTH", "published_start_length", "start_draft_length"]

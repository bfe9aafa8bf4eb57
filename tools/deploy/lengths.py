"""The draft length an estimate starts from, per method: one rule for `recommend`, `speedup` and the listings.

Kept apart from ``requests.py`` so the planner can read it at import time without importing the speed model.
"""

from __future__ import annotations

from specpick.tools.methods import method_record
from specpick.tools.model.draftshape import START_N

# Suffix decoding's N is a cap, not a length the sweep tunes (the method registry has no field for a cap yet; this
# is the one home of the figure, moved from the planner): each draft is sized by match confidence and the vLLM
# docs suggest 16-32 (features/speculative_decoding suffix section). `recommend` and `speedup` both use it.
FIXED_DRAFT_LENGTH: dict[str, int] = {"suffix": 16}


def start_draft_length(method: str) -> int:
    """The draft length an estimate starts from before any tuning: the cap of a capped method, the method's
    published length where it has one (parallel drafters), else the shared start of the draft-length rule
    (``tools/model/draftshape.START_N``)."""
    if method in FIXED_DRAFT_LENGTH:
        return FIXED_DRAFT_LENGTH[method]

    return method_record(method).start_draft_len or START_N


def published_start_length(method: str) -> int | None:
    """A parallel drafter's published draft length (None: the method has none; tools/methods.py)."""
    return method_record(method).start_draft_len


__all__ = ["FIXED_DRAFT_LENGTH", "published_start_length", "start_draft_length"]

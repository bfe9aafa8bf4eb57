"""The cost model's inputs, grouped by what travels together (frozen, hashable values).

Every step-time and cycle-cost function used to take the same eight to twenty loose arguments. They fall into
a few groups that always move as one:

* ``Hardware``: the GPUs serving the verifier (one GPU's facts, how many, how they split it): the Deployment's
  own value (``tools/deployment.py``), so the speed model and the memory check read one hardware;
* ``Precision``: how weights and KV cache are stored (bytes per weight, KV dtype);
* ``Runtime``: the engine or harness running the loop (its overhead row, the constant set that row came from,
  whether it overlaps the speculative path's host work with the GPU);
* ``StepLoad``: what one forward pass is fed (sequences, tokens per sequence, tokens already cached);
* ``DraftSetup``: the shape of the draft (method, N or tree depth, tree width and budget, the draft model and
  its precision, the method's own knobs).

They are plain values: no validation happens on construction, so the checks (and their messages) stay where
they were, in ``steptime._check`` and ``cyclecost.cycle_cost``. Being frozen and hashable, they key the
step-time caches as the loose arguments did.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.deployment import Hardware
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants
from specpick.tools.model.overhead import RuntimeOverhead


@dataclass(frozen=True)
class Precision:
    """Storage of the weights a pass reads: 2 bytes per weight for bf16, 1 for fp8, ~0.52 for int4; the KV-cache
    dtype key of ``tools/arch/kv.py``."""

    weight_bytes_per_param: float
    kv_dtype: str = "auto"

    def with_weights(self, weight_bytes_per_param: float | None) -> Precision:
        """The same KV cache with other weights (a draft model's own precision); ``None`` keeps these."""
        if weight_bytes_per_param is None:
            return self
        return replace(self, weight_bytes_per_param=weight_bytes_per_param)


@dataclass(frozen=True)
class Runtime:
    """The runtime (engine or harness) that runs the loop.

    ``overhead`` is its row of ``constants.overheads``; ``constants`` also supplies the roofline, all-reduce and
    model-free lookup figures (a fit passes a modified copy). ``overlap``: the engine prepares the next cycle on
    the host while the GPU runs this one (``tools/model/overlap.py``).
    """

    overhead: RuntimeOverhead
    constants: ModelConstants = DEFAULT_CONSTANTS
    overlap: bool = False


@dataclass(frozen=True)
class StepLoad:
    """What one forward pass is fed: ``batch`` sequences of ``tokens_per_seq`` new tokens each (1 = decode,
    N+1 = chain verify, the tree budget = tree verify) over ``context_tokens`` already in each KV cache."""

    batch: int
    tokens_per_seq: int
    context_tokens: int

    def feeding(self, tokens_per_seq: int) -> StepLoad:
        """The same sequences and cache, fed ``tokens_per_seq`` new tokens each."""
        return replace(self, tokens_per_seq=tokens_per_seq)


@dataclass(frozen=True, kw_only=True)
class DraftSetup:
    """The shape of the draft for one cycle.

    ``num_draft_tokens`` is N (chains) or the tree depth; ``tree_top_k``/``tree_tokens`` the tree's width and
    verify budget (top-k 1: a chain). ``draft`` is the separate draft model (draft_model, PARD) and
    ``draft_bytes_per_param`` its weights' precision (``None``: the verifier's). ``variant`` (REST under
    suffix), ``lookahead`` (W, N, G) and ``medusa_heads`` are the methods' own knobs.
    """

    method: str
    num_draft_tokens: int
    tree_top_k: int = 1
    tree_tokens: int | None = None
    draft: ModelSpec | None = None
    draft_bytes_per_param: float | None = None
    variant: str = ""
    lookahead: tuple[int, int, int] | None = None
    medusa_heads: int | None = None

    def at(self, num_draft_tokens: int) -> DraftSetup:
        """The same draft at chain length / tree depth ``num_draft_tokens``."""
        return replace(self, num_draft_tokens=num_draft_tokens)


__all__ = ["DraftSetup", "Hardware", "Precision", "Runtime", "StepLoad"]

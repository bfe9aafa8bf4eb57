"""From a ``Deployment`` to what a launch line must agree with: the checkpoint served and the context sized.

The memory check weighs the verifier at ``dep.verifier.weight_format`` and the KV at ``dep.context_tokens``; the
printed command must load that format and cap sequences at that context (issue 35: a BF16 repo printed for an
INT4 check, no ``--max-model-len`` for a 512-token check). The planner and `engine-config` both build the
engine-config input's checkpoint and context fields here; each engine spells them (``EngineSpec.checkpoint``,
``context_args``).
"""

from __future__ import annotations

from specpick.tools.catalog.quant_names import split_quant_name
from specpick.tools.deployment import Deployment
from specpick.tools.hub.quant_ref import known_quant_build

# Formats that are the model as trained: a checkpoint in one of them is not "quantized" to another.
UNQUANTIZED = frozenset({"bf16", "fp16", "fp32"})


def checkpoint_format(dep: Deployment) -> str:
    """The weight format of the repo the deployment names: its name's (``-FP8``), else the facts row's dtype."""
    named = split_quant_name(dep.verifier.served_repo_id)
    if named is not None:
        return named.quantization
    return dep.verifier.spec.dtype if dep.verifier.spec.dtype else "bf16"


def served_checkpoint(dep: Deployment) -> tuple[str, str | None]:
    """(the repo to load, the weight format the engine must still quantize it to, None: it is in that format).

    A format the named repo is not in: the catalog's build in that format when it names one, else the format is
    handed to the engine (its on-the-fly option, or a placeholder: ``EngineSpec.checkpoint``).
    """
    served, fmt = dep.verifier.served_repo_id, dep.verifier.weight_format
    have = checkpoint_format(dep)
    if fmt == have or fmt in UNQUANTIZED or dep.verifier.quantization_given is None:
        return served, None
    build = known_quant_build(dep.verifier.repo_id, fmt) if dep.verifier.served_id is None else None
    return (build, None) if build is not None else (served, fmt)


def launch_fields(dep: Deployment) -> dict[str, object]:
    """The engine-config input's verifier, weight format and context, from the deployment the checks ran on."""
    verifier, fmt = served_checkpoint(dep)
    return {"verifier": verifier, "weight_format": fmt, "context_tokens": dep.context_tokens}

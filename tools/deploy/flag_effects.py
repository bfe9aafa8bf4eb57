"""Which cited acceptance effects apply to a deployment, a method and its head: one home for each flag's condition.

The planner's flags (``skill/planner/flags.py``) raise ``head_context_exceeded`` and ``quantized_verifier_bf16_head``
on these conditions, and ``requests.estimate_request`` prices the same effects into the speed model
(``tools/model/acceptance_effects.py``), so a flag and the number beside it always describe the same deployment.
"""

from __future__ import annotations

from specpick.tools.catalog.quant_names import split_quant_name
from specpick.tools.catalog.specs import HeadSpec
from specpick.tools.deployment import Deployment
from specpick.tools.methods import method_record
from specpick.tools.model.acceptance_effects import (
    QUANT4_BELOW_BYTES_PER_PARAM, QUANT4_FORMATS, UNKNOWN_HEAD_CONTEXT_DESIGN, AcceptanceEffect, context_effect,
    quant4_effect,
)
from specpick.tools.vocab import EAGLE_METHODS


def served_format(dep: Deployment, head: HeadSpec | None) -> tuple[str | None, bool]:
    """(the verifier's served weight format, whether it is served below its checkpoint's precision)."""
    served = dep.verifier
    fmt = served.quantization_given  # the user's --quantization, or the format a GGUF build declares
    quantized = fmt is not None and served.bytes_per_param < 2.0 and fmt != served.spec.dtype
    if (fmt is None and head is not None and served.bytes_per_param < 2.0
            and head.verifier_repo_id.lower() != served.spec.repo_id.lower()):
        # A catalog build row (meta-llama/Llama-4-Maverick-...-FP8) served with a head published for its base.
        fmt, quantized = served.weight_format, True
    return fmt, quantized


def head_trained_on(head: HeadSpec | None) -> str | None:
    """The weight format of the build a head was published for (RedHatAI/...-FP8's head: fp8), None for BF16."""
    build = split_quant_name(head.verifier_repo_id) if head is not None else None
    return build.quantization if build is not None else None


def bf16_head_on_quantized(dep: Deployment, method: str, head: HeadSpec | None) -> str | None:
    """The served format when a BF16-trained head runs on a verifier served quantized (the
    ``quantized_verifier_bf16_head`` condition), else None."""
    if head is None or method_record(method).in_verifier_checkpoint or head.trained_dtype != "bf16":
        return None
    fmt, quantized = served_format(dep, head)
    return fmt if quantized and head_trained_on(head) != fmt else None


def context_exceeded(dep: Deployment, head: HeadSpec | None) -> bool:
    """The context is past the head's trained length (8K assumed when unpublished): ``head_context_exceeded``."""
    return head is not None and dep.context_tokens > (head.trained_context_tokens or UNKNOWN_HEAD_CONTEXT_DESIGN)


def acceptance_effects(dep: Deployment, method: str, head: HeadSpec | None) -> tuple[AcceptanceEffect, ...]:
    """The cited effects priced for ``method`` with ``head`` here.

    Context: F17 measured a full-attention EAGLE-3 head, so the EAGLE family is priced (other heads keep the flag
    unpriced). Precision: F10 measured 4-bit formats, so a 4-bit verifier is priced; FP8/INT8 are not (their cited
    collapse, F8, is a requantized draft layer, not a BF16 head).
    """
    out: list[AcceptanceEffect] = []
    if method in EAGLE_METHODS and head is not None and context_exceeded(dep, head):
        ctx = context_effect(dep.context_tokens, head.trained_context_tokens or UNKNOWN_HEAD_CONTEXT_DESIGN,
                             assumed=not head.trained_context_tokens)
        out += [ctx] if ctx is not None else []
    fmt = bf16_head_on_quantized(dep, method, head)
    if fmt is not None and (fmt in QUANT4_FORMATS or dep.verifier.bytes_per_param < QUANT4_BELOW_BYTES_PER_PARAM):
        out.append(quant4_effect(fmt))
    return tuple(out)


__all__ = ["acceptance_effects", "bf16_head_on_quantized", "context_exceeded", "head_trained_on", "served_format"]

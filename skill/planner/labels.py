"""Display names of the strategies, as the answer and its rationale print them (the methods' from the registry)."""

from specpick.tools.methods import REGISTRY

LABEL: dict[str, str] = {r.name: r.answer_label for r in REGISTRY} | {"none": "No speculative decoding"}

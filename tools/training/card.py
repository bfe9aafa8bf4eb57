"""With --live: what a repo's model card and config say it was derived from.

The Hub's model-card metadata (https://huggingface.co/docs/hub/model-cards#specifying-a-base-model) names the
parent in ``base_model`` and how the repo relates to it in ``base_model_relation`` (``adapter``, ``merge``,
``quantized``, ``finetune``); ``config.json`` carries ``quantization_config`` for a quantized checkpoint and an
``adapter_config.json`` marks a PEFT adapter. Read as data: bounded sizes, YAML's safe loader, no aliases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from specpick.tools.hub.client import fetch_optional
from specpick.tools.hub.client import read_json_file
from specpick.tools.hub.discover import card_base_model

MAX_CARD_BYTES = 256_000  # the front matter sits at the top; a card larger than this is not read
MAX_CARD_DEPTH = 16  # card metadata nests 2-3 levels
# base_model_relation -> --verifier-change
RELATION_CHANGE = {"finetune": "full-finetune", "adapter": "lora", "merge": "merge", "quantized": "none"}
# quantization_config.quant_method -> --quantization (fp8 / int4 families as the engines name them)
QUANT_METHODS = {"fp8": "fp8", "compressed-tensors": None, "gptq": "int4", "awq": "int4", "bitsandbytes": None,
                 "modelopt": None, "mxfp4": "mxfp4", "nvfp4": "nvfp4"}


@dataclass(frozen=True)
class CardFacts:
    base_model: str | None
    change: str | None
    quantization: str | None
    notes: list[str]


def front_matter(text: str) -> dict[str, Any]:
    """The YAML block between the first two ``---`` lines of a model card ({} when there is none)."""
    import yaml

    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    block = text[3:end]
    try:
        depth = 0
        for event in yaml.parse(block, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                return {}  # aliases expand exponentially; a card never needs them
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_CARD_DEPTH:
                    return {}
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _quantization(config: dict[str, Any] | None) -> str | None:
    q = (config or {}).get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method", "")).lower()
    if method in QUANT_METHODS and QUANT_METHODS[method]:
        return QUANT_METHODS[method]
    text = str(q).lower()
    for key in ("nvfp4", "mxfp4", "fp8", "int4", "int8"):
        if key in text:
            return key
    return None


def read_card(repo_id: str, *, settings: Any = None) -> CardFacts:
    """base model, relation and quantization of ``repo_id`` from its card and configs.

    Raises what ``fetch_file`` raises for the repo itself (NotFound, access, offline with nothing cached).
    """

    notes: list[str] = []
    card = fetch_optional(repo_id, "README.md", settings=settings, max_bytes=MAX_CARD_BYTES)
    meta: dict[str, Any] = {}
    if card is not None:
        with open(card.path, encoding="utf-8", errors="replace") as handle:
            meta = front_matter(handle.read(MAX_CARD_BYTES))
    base = card_base_model(meta)
    relation = str(meta.get("base_model_relation") or "").lower() or None
    config_file = fetch_optional(repo_id, "config.json", settings=settings)
    config = read_json_file(config_file) if config_file is not None else None
    adapter = fetch_optional(repo_id, "adapter_config.json", settings=settings)
    if adapter is not None and relation is None:
        relation = "adapter"
        notes.append(f"{repo_id} holds adapter_config.json: a LoRA adapter")
        if base is None:
            base = read_json_file(adapter).get("base_model_name_or_path")
    change = RELATION_CHANGE.get(relation or "")
    if base and change is None:
        change = "full-finetune"  # a base model without a relation: the Hub's default reading is a fine-tune
        notes.append(f"model card names base_model {base} without base_model_relation: read as a fine-tune")
    if base:
        notes.append(f"model card: base_model {base}" + (f", base_model_relation {relation}" if relation else ""))
    quant = _quantization(config)
    if quant:
        notes.append(f"config.json quantization_config: {quant}")
    return CardFacts(base_model=base if isinstance(base, str) else None, change=change, quantization=quant,
                     notes=notes)

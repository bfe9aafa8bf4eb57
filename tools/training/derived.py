"""Derived verifiers: a fine-tuned, RL-trained, merged or LoRA-adapted model described by the model it came from.

The user's repo id stays the one printed (configs, commands); the architecture facts come from the base model's
catalog row, because a fine-tune keeps the base architecture (same config.json shapes) while its weights move.
"""

from __future__ import annotations

from dataclasses import dataclass

from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError, NotFoundError

CHANGE_WORDS: dict[str, str] = {
    "full-finetune": "fully fine-tuned", "rl": "RL-trained", "lora": "LoRA-adapted", "merge": "a weight merge",
}


@dataclass(frozen=True)
class DerivedVerifier:
    """The id the user serves, the catalog row its facts come from, and how its weights differ."""

    repo_id: str
    facts: ModelSpec
    change: str
    adapters: int | None

    @property
    def modified(self) -> bool:
        return self.change != "none"

    def describe(self) -> str:
        if not self.modified:
            return self.repo_id
        what = CHANGE_WORDS[self.change] + (f" ({self.adapters} adapters)" if self.adapters and self.adapters > 1
                                            else "")
        return f"{self.repo_id} ({what} from {self.facts.repo_id})"


def resolve_derived(verifier: str, base_model: str | None, change: str, adapters: int | None) -> DerivedVerifier:
    """Resolve the facts row; the user's id is kept as given.

    Raises:
        InputError: --adapters without --verifier-change lora.
        NotFoundError: neither the verifier nor the base model is in the catalog.
    """
    if adapters is not None and change != "lora":
        raise InputError("--adapters counts LoRA adapters: add --verifier-change lora (or drop --adapters)")
    cat = get_catalog()
    if base_model is not None:
        facts = cat.find_model(base_model)
        if facts is None:
            raise NotFoundError(f"base model {base_model!r} is not in the catalog: name the published model your "
                                "verifier was derived from (`specpick models` lists them)")
        return DerivedVerifier(verifier, facts, change, adapters if change == "lora" else None)
    facts = cat.find_model(verifier)
    if facts is None:
        raise NotFoundError(f"{verifier!r} is not in the catalog; if it is a fine-tune or adapter of a published "
                            "model, add --base-model <that model> --verifier-change {full-finetune,rl,lora,merge}")
    return DerivedVerifier(facts.repo_id, facts, change, adapters if change == "lora" else None)

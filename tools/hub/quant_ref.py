"""A safetensors quantized build the catalog lacks (``zai-org/GLM-5.2-FP8``, ``RedHatAI/Llama-3.1-8B-Instruct-FP8``)
-> its base model's catalog row and the weight format the name says (the name rule: tools/catalog/quant_names.py).

Used where the Hub's ``config.json`` cannot answer: offline, the Hub unreachable, or a verb that never reads the Hub
(``catalog_only``: speedup, vram, engine-config). Online the config's ``quantization_config`` answers instead, as for
any repo the catalog lacks. An exact catalog row always wins (``zai-org/GLM-4.7-FP8`` is one) and is never reached here.
"""

from __future__ import annotations

from specpick.tools.catalog.quant_names import QuantName, split_quant_name
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.catalog.tables import get_catalog

# The wording the answer carries, in the style of the GGUF note (tools/hub/gguf_ref.py).
NAME_RULE_NOTE = "base model and format taken from the repo name; online the config's quantization_config is read"


def quant_build_base(name: str) -> tuple[ModelSpec, QuantName] | None:
    """The catalog row a quantized build's name points at, or None (no suffix, or no unique base).

    The same owner's ``<org>/<model>`` first; else the one catalog model, of any owner, whose repo name is ``<model>``
    (RedHatAI/Llama-3.1-8B-Instruct-FP8 -> meta-llama/Llama-3.1-8B-Instruct). Two owners with that name: None (the
    caller's not-found lists the close matches), never a guess between them.
    """
    q = split_quant_name(name)
    if q is None:
        return None
    catalog = get_catalog()
    if q.org:
        same_owner = catalog.find_model(f"{q.org}/{q.model}")
        if same_owner is not None:
            return same_owner, q
    low = q.model.lower()
    named = {m.repo_id: m for m in catalog.models if m.repo_id.split("/", 1)[-1].lower() == low}
    return (next(iter(named.values())), q) if len(named) == 1 else None


def quant_build_note(name: str, base: ModelSpec, q: QuantName) -> str:
    """One line saying what the name was taken to be."""
    return (f"{name}: a {q.quantization} build ({q.token}) of {base.repo_id}; {NAME_RULE_NOTE}")


def known_quant_build(base_repo_id: str, quantization: str) -> str | None:
    """A ``quantization`` build of ``base_repo_id`` the catalog names (a models.csv row, or a verifier heads.csv was
    published for: ``Qwen/Qwen3-235B-A22B-Instruct-2507-FP8``), or None. The base model's own owner first."""
    catalog = get_catalog()
    names = [m.repo_id for m in catalog.models] + [h.verifier_repo_id for h in catalog.heads]
    model = base_repo_id.rsplit("/", 1)[-1].lower()
    found = [n for n in dict.fromkeys(names) if (q := split_quant_name(n)) is not None
             and q.quantization == quantization and q.model.lower() == model]
    return sorted(found, key=lambda n: not n.lower().startswith(base_repo_id.split("/", 1)[0].lower() + "/"))[0] \
        if found else None

"""The draft models the catalog knows for a verifier: one query that `heads`, `model`, `recommend` and `speedup` read.

A draft is known from two tables: ``drafts.csv`` (same-family pairings with their tokenizer relation) and the
``draft_model`` rows of ``heads.csv`` (drafts published for one exact verifier, with their size). Before, the
listings showed both while the answers looked only for drafts with an architecture row in ``models.csv``: the
DeepSeek-R1 drafts were listed and then said not to exist. Here every listed draft gets a ``ModelSpec``: its own
catalog row, its PARD base's, or, when only its size is known, the geometry of the closest-sized catalog model
(stated, the same stand-in `speedup --draft-params-b` uses).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specpick.tools.catalog.parallel_drafts import is_pard_repo, pard_draft_spec
from specpick.tools.catalog.quant_names import same_weights
from specpick.tools.catalog.specs import HeadSpec, ModelSpec
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.methods import methods_where
from specpick.tools.checks.method_fit import HEAD_METHOD_FOR

# transplant-vocab retokenises a small model to the verifier's vocabulary (drafts.csv, heads.csv notes): the
# draft's token map is the verifier's.
TRANSPLANTED = "transplanted"


@dataclass(frozen=True)
class KnownDraft:
    """One draft the catalog lists for a verifier, sized for the memory check and the speed model."""

    repo_id: str
    spec: ModelSpec
    relation: str  # tokenizer relation from drafts.csv ("" when only heads.csv lists it)
    note: str  # where its architecture came from
    incompatible: bool = False  # recorded as a pairing that does not work (drafts.csv "incompatible")
    incompatible_note: str = ""
    runtimes: tuple[str, ...] = ()  # engines heads.csv says load it (GGUF-only drafts: llamacpp); () = any

    def runs_on(self, engine: str | None) -> bool:
        """Whether ``engine`` loads this draft (no engine, or no runtimes recorded: yes)."""
        return engine is None or not self.runtimes or engine in self.runtimes

    def refusal(self, engine: str) -> str:
        return (f"{self.repo_id} loads in {', '.join(self.runtimes)}, not {engine} (heads.csv runtimes: "
                "published for that engine's format)")


def synthetic_draft(params_b: float, verifier: ModelSpec, repo_id: str | None = None,
                    same_tokenizer: bool = False) -> tuple[ModelSpec, str]:
    """A draft of ``params_b`` billions with the geometry of the closest-sized dense catalog model.

    The verifier's vocabulary is assumed (a draft must share it); ``same_tokenizer`` also takes the verifier's
    tokenizer facts (a transplanted vocabulary).
    """
    cat = get_catalog()
    dense = [m for m in cat.models if not m.is_moe and m.params_total_b]
    near = min(dense, key=lambda m: abs(math.log(m.params_total_b / params_b)))  # type: ignore[operator]
    update: dict[str, object] = {"repo_id": repo_id or f"draft-{params_b:g}B", "params_total_b": params_b,
                                 "vocab_size": verifier.vocab_size, "fact_source": "user", "aliases": ()}
    if same_tokenizer:
        update.update(tokenizer_family=verifier.tokenizer_family, tokenizer_specials=verifier.tokenizer_specials)
    spec = near.model_copy(update=update)
    return spec, (f"draft of {params_b:g}B: geometry of {near.repo_id} ({near.params_total_b:g}B, "
                  f"{near.num_layers} layers) assumed, verifier vocabulary")


def _sized(repo_id: str, verifier: ModelSpec, relation: str) -> tuple[ModelSpec | None, str]:
    cat = get_catalog()
    own = cat.find_model(repo_id)
    if own is not None:
        return own, "catalog row"
    if is_pard_repo(repo_id):
        pard = pard_draft_spec(repo_id)
        return pard, (pard.notes if pard is not None else "")
    head = cat.head(repo_id)
    if head is not None and head.head_params_b:
        spec, note = synthetic_draft(head.head_params_b, verifier, repo_id, same_tokenizer=relation == TRANSPLANTED)
        return spec, f"{note} (size from heads.csv: {head.head_params_note or head.source})"
    return None, ""


def known_drafts(verifier: ModelSpec) -> list[KnownDraft]:
    """Drafts listed for ``verifier``: drafts.csv pairings of its family, then heads.csv drafts for it exactly.

    Drafts with neither an architecture nor a size are left out (nothing can be estimated for them).
    """
    cat = get_catalog()
    rows: dict[str, tuple[str, bool, str]] = {}
    for d in cat.drafts_for(verifier):
        rows.setdefault(d.draft_repo_id, (d.tokenizer_relation, d.tokenizer_relation == "incompatible", d.note))
    for h in cat.heads_for(verifier.repo_id):
        if h.method == "draft_model" and h.publisher != "test" and h.head_repo_id != verifier.repo_id:
            # heads.csv says these drafts were retokenised to the target (transplant-vocab) when its notes say so.
            relation = TRANSPLANTED if "transplant" in (h.method_detail + h.notes).lower() else ""
            rows.setdefault(h.head_repo_id, (relation, False, ""))
    out = []
    for repo_id, (relation, bad, note) in rows.items():
        spec, how = _sized(repo_id, verifier, relation)
        row = cat.head(repo_id)
        runtimes = row.runtimes if row is not None and row.method == "draft_model" else ()
        if spec is not None:
            out.append(KnownDraft(repo_id, spec, relation, how, bad, note if bad else "", runtimes))
    return out


def find_known_draft(verifier: ModelSpec, name: str) -> KnownDraft | None:
    """The listed draft named ``name`` (repo id, any case) for this verifier."""
    low = name.lower()
    return next((d for d in known_drafts(verifier) if d.repo_id.lower() == low), None)


def published_heads(verifier_repo_id: str, method: str, engine: str | None = None) -> list[HeadSpec]:
    """Published heads of ``method`` for exactly this verifier, newest of each line, best publisher first.

    A head whose publisher names a successor (``superseded_by``) is replaced by that successor
    when the catalog holds it for the same verifier and method; with ``engine`` only heads whose
    ``runtimes`` include it are kept (an empty runtimes list means no engine is known to load it).
    """
    cat = get_catalog()
    out: list[HeadSpec] = []
    for head in cat.heads_for(verifier_repo_id):
        if head.method != method or head.publisher == "test":
            continue
        seen = {head.head_repo_id}
        while head.superseded_by and head.superseded_by not in seen:
            newer = cat.head(head.superseded_by)
            if newer is None or newer.method != method or not same_weights(newer.verifier_repo_id, verifier_repo_id):
                break
            seen.add(newer.head_repo_id)
            head = newer
        if head not in out and (engine is None or engine in head.runtimes):
            out.append(head)
    rank = {"official": 0, "vendor": 1, "community": 2}
    # A head trained on exactly this repo before one trained on its quantized build or base (tables.heads_for).
    return sorted(out, key=lambda h: (h.verifier_repo_id.lower() != verifier_repo_id.lower(),
                                      rank.get(h.publisher, 3)))


def head_runtime_filter(engine: str | None, method: str) -> str | None:
    """The engine a published head must list to be loadable: llama.cpp loads EAGLE-3 and DFlash drafters converted
    to GGUF (convert_hf_to_gguf.py; engine_support.csv), so any published one will do there (None)."""
    return None if engine == "llamacpp" and method in GGUF_CONVERTIBLE else engine


# Methods whose published drafters llama.cpp loads after conversion to GGUF (engine_support.csv llamacpp rows).
GGUF_CONVERTIBLE: frozenset[str] = methods_where(gguf_converted=True)


def best_published_head(verifier_repo_id: str, method: str, engine: str | None = None) -> HeadSpec | None:
    """The head `recommend` would take for ``method`` (its catalog head method) on ``engine``: the first of
    ``published_heads`` (the same query `speedup` sizes memory with)."""

    wanted = HEAD_METHOD_FOR.get(method)
    heads = published_heads(verifier_repo_id, wanted, head_runtime_filter(engine, method)) if wanted else []
    return heads[0] if heads else None


__all__ = ["GGUF_CONVERTIBLE", "KnownDraft", "best_published_head", "find_known_draft", "head_runtime_filter", "known_drafts", "published_heads",
           "synthetic_draft"]

"""The embedded catalog: models, GPUs, published heads, known drafts, engine support.

Loaded once from the package CSVs in ``tools/data/`` (each row keeps its
``source``). Model look-ups are exact: a repo id (``org/name``) matches a catalog
repo id in any case; a name without ``/`` matches a repo's name part or an alias
(case and separators ignored). Nothing else matches: a prefix or a typo
(``Qwen/Qwen2.5-7B``, ``Llama-3.1-70B-Instruc``) is a different model, so it
raises ``NotFoundError`` listing close matches rather than planning for a
neighbour. GPU names accept marketing spellings (``NVIDIA H100 80GB HBM3``, ``4090``).
"""

from __future__ import annotations

import csv
import difflib
import re
from importlib import resources

from specpick.tools.errors import NotFoundError, close_matches_hint
from specpick.tools.catalog.knowledge import knowledge
from specpick.tools.catalog.overlay_location import overlay_present
from specpick.tools.catalog.specs import DraftPairing, EngineSupport, GpuSpec, HeadSpec, ModelSpec, version_key
from specpick.tools.catalog.quant_names import same_weights

_INT_FIELDS = {
    "hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size",
    "vocab_size", "num_experts", "experts_per_token", "moe_intermediate_size", "num_shared_experts",
    "first_dense_layers", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "qk_nope_head_dim", "v_head_dim",
    "mtp_layers", "max_position_embeddings", "sliding_window",
    "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
    "linear_conv_kernel", "index_head_dim",
}
_FLOAT_FIELDS = {
    "params_total_b", "params_active_b", "sliding_layer_fraction", "vision_params_b", "linear_attention_layer_fraction",
}
_BOOL_FIELDS = {"tie_word_embeddings", "attention_bias", "attn_output_gate"}


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("specpick.tools").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def _model_from_row(row: dict[str, str]) -> ModelSpec:
    data: dict[str, object] = {}
    for key, raw in row.items():
        if key == "arch_source":
            continue
        value = raw.strip()
        if key in _INT_FIELDS:
            data[key] = int(value) if value else (None if key == "sliding_window" else 0)
        elif key in _FLOAT_FIELDS:
            data[key] = float(value) if value else (None if key.startswith("params") else 0.0)
        elif key in _BOOL_FIELDS:
            data[key] = value.lower() == "true"
        elif key in ("aliases", "unmodelled_features"):
            data[key] = tuple(a for a in value.split(";") if a)
        else:
            data[key] = value
    data["source"] = f"{row['source']}; architecture: {row['arch_source']}"
    return ModelSpec(**data)


def _float_or_none(raw: str) -> float | None:
    return float(raw) if raw.strip() else None


def _gpu_from_row(r: dict[str, str]) -> GpuSpec:
    return GpuSpec(
        key=r["key"], name=r["name"], aliases=tuple(a for a in r["aliases"].split(";") if a),
        memory_gb=float(r["memory_gb"]), bandwidth_gbps=float(r["bandwidth_gbps"]),
        bf16_tflops=_float_or_none(r["bf16_tflops"]), fp16_tflops=_float_or_none(r["fp16_tflops"]),
        fp8_tflops=_float_or_none(r["fp8_tflops"]), fp4_tflops=_float_or_none(r.get("fp4_tflops", "")),
        link_gbps=_float_or_none(r["link_gbps"]),
        interconnect=r["interconnect"], vendor=r["vendor"],
        unified_memory=r.get("unified_memory", "").strip().lower() == "true", source=r["source"], notes=r["notes"],
    )


def _head_from_row(r: dict[str, str]) -> HeadSpec:
    return HeadSpec(
        head_repo_id=r["head_repo_id"], method=r["method"], method_detail=r["method_detail"],
        format=r.get("format", ""), verifier_repo_id=r["verifier_repo_id"],
        verifier_revision=r.get("verifier_revision", ""), head_params_b=_float_or_none(r["head_params_b"]),
        head_params_note=r["head_params_note"],
        trained_context_tokens=int(r["trained_context_tokens"]) if r.get("trained_context_tokens") else None,
        runtimes=tuple(x for x in r["runtimes"].split(";") if x), engine_versions=r.get("engine_versions", ""),
        publisher=r["publisher"], trained_dtype=r["trained_dtype"],
        superseded_by=r.get("superseded_by", ""), source=r["source"], notes=r["notes"],
    )


def normalize_name(name: str) -> str:
    """Canonical form for fuzzy look-ups: lower case, no separators or vendor words."""
    n = name.strip().lower()
    n = re.sub(r"\b(nvidia|geforce|amd|instinct|tesla)\b", " ", n)
    return re.sub(r"[\s_\-/()]+", "", n)


class Catalog:
    """In-memory catalog with name resolution. Build it with ``get_catalog()``."""

    def __init__(self) -> None:
        self.models: list[ModelSpec] = [_model_from_row(r) for r in _rows("models.csv")]
        self.gpus: list[GpuSpec] = [_gpu_from_row(r) for r in _rows("gpus.csv")]
        self.heads: list[HeadSpec] = [_head_from_row(r) for r in _rows("heads.csv")]
        self.drafts: list[DraftPairing] = [DraftPairing(**r) for r in _rows("drafts.csv")]
        self.engine_support: list[EngineSupport] = [
            EngineSupport(**{**r, "breaks_with": tuple(t for t in r["breaks_with"].split(";") if t)})
            for r in _rows("engine_support.csv")
        ]

        self._model_index: dict[str, ModelSpec] = {}  # names without '/': repo name part and aliases
        self._repo_index: dict[str, ModelSpec] = {m.repo_id.lower(): m for m in self.models}
        for m in self.models:
            for key in (m.repo_id.split("/", 1)[1], *m.aliases):
                self._model_index.setdefault(normalize_name(key), m)
        self._gpu_index: dict[str, GpuSpec] = {}
        for g in self.gpus:
            for key in (g.key, g.name, *g.aliases):
                self._gpu_index.setdefault(normalize_name(key), g)

    # -- models ---------------------------------------------------------------
    def find_model(self, name: str) -> ModelSpec | None:
        """Return the catalog model named exactly ``name`` (see the module docstring) or None."""
        text = name.strip()
        if "/" in text:
            return self._repo_index.get(text.lower())
        return self._model_index.get(normalize_name(text)) if text else None

    def model(self, name: str, *, can_go_live: bool = False) -> ModelSpec:
        """Resolve a model name exactly; raise ``NotFoundError`` with close matches if unknown.

        Args:
            name: repo id or alias.
            can_go_live: the caller's verb has ``--live`` (the message may suggest it; others must not).
        """
        found = self.find_model(name)
        if found is not None:
            return found
        raise NotFoundError(self.not_found_message(name, can_go_live=can_go_live))

    def not_found_message(self, name: str, *, can_go_live: bool) -> str:
        """The one-line NotFound text for a model name: close matches, then what to do (no flag the verb lacks)."""
        hint = close_matches_hint(self.close_models(name))
        live = (" or pass its exact Hub repo id (org/name) with --live" if can_go_live else
                "; this command answers from the catalog only")
        return f"model '{name}' is not in the embedded catalog.{hint} Run `specpick models` for the list{live}."

    def resolve_repo_id(self, name: str, *, hub_allowed: bool, can_go_live: bool) -> str:
        """The canonical repo id for ``name``: the catalog's, else ``name`` itself when the Hub may be asked.

        One rule for every verb that takes a model name. A name outside the catalog is passed on only when the
        caller will read the Hub (``hub_allowed``) and it is shaped like a repo id (``org/name``).
        """
        found = self.find_model(name)
        if found is not None:
            return found.repo_id
        text = name.strip()
        if hub_allowed and text.count("/") == 1 and all(text.split("/")):
            return text
        raise NotFoundError(self.not_found_message(name, can_go_live=can_go_live))

    def close_models(self, name: str, n: int = 4) -> list[str]:
        """Catalog repo ids whose name or alias is close to ``name`` (for "did you mean")."""
        key = normalize_name(name.split("/", 1)[-1])
        keys = difflib.get_close_matches(key, list(self._model_index), n=n * 3, cutoff=0.6)
        out: list[str] = []
        for k in keys:
            repo = self._model_index[k].repo_id
            if repo not in out:
                out.append(repo)
        return out[:n]

    # -- GPUs -----------------------------------------------------------------
    def gpu(self, name: str) -> GpuSpec:
        """Resolve a GPU name as people write it; raise ``NotFoundError`` with close matches."""
        key = normalize_name(name)
        if key in self._gpu_index:
            return self._gpu_index[key]
        # Strip memory suffixes people add ("H100 80GB" is an alias; "L40S 48G" is not).
        trimmed = re.sub(r"(\d+)g(b)?$", "", key)
        if trimmed in self._gpu_index:
            return self._gpu_index[trimmed]
        close = difflib.get_close_matches(key, list(self._gpu_index), n=6, cutoff=0.5)
        keys = list(dict.fromkeys(self._gpu_index[k].key for k in close))[:4]
        raise NotFoundError(
            f"GPU '{name}' is not in the catalog.{close_matches_hint(keys)} Run `specpick gpus` for the list."
        )

    # -- heads, drafts, engines -----------------------------------------------
    def heads_for(self, verifier_repo_id: str) -> list[HeadSpec]:
        """Published heads trained for this verifier (case-insensitive repo id) or for a quantized build of the same
        weights (``zai-org/GLM-5.2-FP8`` for ``zai-org/GLM-5.2`` and back, by the name rule of ``quant_names``): the
        hidden states a head reads are the same model's. ``head.verifier_repo_id`` still says which one it was
        trained on (the planner flags a head trained on the other precision)."""

        v = verifier_repo_id.lower()
        # A row whose head is the verifier's own checkpoint (MTP layers in zai-org/GLM-4.6-FP8) is that build's only.
        return [h for h in self.heads if h.verifier_repo_id.lower() == v or (
            h.head_repo_id.lower() != h.verifier_repo_id.lower() and same_weights(h.verifier_repo_id, verifier_repo_id))]

    def head(self, head_repo_id: str) -> HeadSpec | None:
        h = head_repo_id.lower()
        return next((x for x in self.heads if x.head_repo_id.lower() == h), None)

    def drafts_for(self, verifier: ModelSpec) -> list[DraftPairing]:
        """Known same-family drafts for a verifier, smallest-first as listed."""
        fam = verifier.family.lower()
        return [d for d in self.drafts if d.verifier_family.lower() == fam and d.draft_repo_id != verifier.repo_id]

    def newest_release(self, engine: str) -> str | None:
        """The newest release the catalog tracks for ``engine`` (the latest ``min_version`` of its support rows): the
        release an answer assumes when the user names none."""
        versions = [s.min_version for s in self.engine_support if s.engine == engine and s.min_version]
        return max(versions, key=version_key) if versions else None

    def support(self, engine: str, method: str, version: str | None = None) -> EngineSupport | None:
        """The support row of ``method`` on ``engine`` at ``version``.

        Rows are kept per engine version (``min_version``: the first release a row applies to, empty = every
        release we track). Without a version: the newest row (today's build). With one: the newest row whose
        ``min_version`` is not after it; a version older than every row gets the oldest row (the caller says
        which release it needs).
        """
        rows = sorted((s for s in self.engine_support if s.engine == engine and s.method == method),
                      key=lambda s: version_key(s.min_version))
        if not rows:
            return None
        if version is None:
            return rows[-1]
        fitting = [s for s in rows if version_key(s.min_version) <= version_key(version)]
        return fitting[-1] if fitting else rows[0]

    def add_rows(self, models: list[ModelSpec], heads: list[HeadSpec]) -> None:
        """Append rows from outside the embedded tables (the Hub overlay), indexed like the embedded ones."""
        self.models.extend(models)
        self.heads.extend(heads)
        for m in models:
            # The same two indexes __init__ builds: exact repo ids (names with '/') and names without '/'.
            self._repo_index.setdefault(m.repo_id.lower(), m)
            for key in (m.repo_id.split("/", 1)[-1], *m.aliases):
                self._model_index.setdefault(normalize_name(key), m)


def get_catalog() -> Catalog:
    """The process's catalog (parsed once, about 10 ms), with the user's Hub overlay merged when present; kept on
    ``knowledge()``, so ``knowledge().reload()`` (``specpick catalog update``) makes the next call read both again."""
    return knowledge().shared("catalog", build_catalog)


def build_catalog() -> Catalog:
    """The embedded catalog with the user's Hub overlay merged (a fresh object each call)."""
    catalog = Catalog()
    # Most installs have no overlay file: only then is the module that validates and merges it worth importing.
    if overlay_present():
        from specpick.tools.catalog.overlay import merge_overlay

        merge_overlay(catalog)
    return catalog

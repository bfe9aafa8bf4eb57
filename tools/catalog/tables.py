"""The embedded catalog: models, GPUs, published heads, known drafts, engine support.

Loaded once from the package CSVs in ``tools/data/`` (each row keeps its
``source``). Look-ups accept the spellings people use: repo ids in any case,
short names (``Llama-3.1-70B-Instruct``), aliases (``llama-3.1-70b``), GPU
marketing names (``NVIDIA H100 80GB HBM3``, ``4090``). An unknown name raises
``NotFoundError`` listing close matches.
"""

from __future__ import annotations

import csv
import difflib
import re
from functools import lru_cache
from importlib import resources

from specpick.tools.errors import NotFoundError, close_matches_hint
from specpick.tools.catalog.specs import DraftPairing, EngineSupport, GpuSpec, HeadSpec, ModelSpec, version_key

_INT_FIELDS = {
    "hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size",
    "vocab_size", "num_experts", "experts_per_token", "moe_intermediate_size", "num_shared_experts",
    "first_dense_layers", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank", "qk_nope_head_dim", "v_head_dim",
    "mtp_layers", "max_position_embeddings", "sliding_window",
}
_FLOAT_FIELDS = {"params_total_b", "params_active_b", "sliding_layer_fraction", "vision_params_b"}
_BOOL_FIELDS = {"tie_word_embeddings", "attention_bias"}


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
        elif key == "aliases":
            data[key] = tuple(a for a in value.split(";") if a)
        else:
            data[key] = value
    data["source"] = f"{row['source']}; architecture: {row['arch_source']}"
    return ModelSpec(**data)


def normalize_name(name: str) -> str:
    """Canonical form for fuzzy look-ups: lower case, no separators or vendor words."""
    n = name.strip().lower()
    n = re.sub(r"\b(nvidia|geforce|amd|instinct|tesla)\b", " ", n)
    return re.sub(r"[\s_\-/()]+", "", n)


class Catalog:
    """In-memory catalog with name resolution. Build it with ``get_catalog()``."""

    def __init__(self) -> None:
        self.models: list[ModelSpec] = [_model_from_row(r) for r in _rows("models.csv")]
        self.gpus: list[GpuSpec] = [
            GpuSpec(
                key=r["key"], name=r["name"], aliases=tuple(a for a in r["aliases"].split(";") if a),
                memory_gb=float(r["memory_gb"]), bandwidth_gbps=float(r["bandwidth_gbps"]),
                bf16_tflops=float(r["bf16_tflops"]) if r["bf16_tflops"] else None,
                fp16_tflops=float(r["fp16_tflops"]) if r["fp16_tflops"] else None,
                fp8_tflops=float(r["fp8_tflops"]) if r["fp8_tflops"] else None,
                link_gbps=float(r["link_gbps"]) if r["link_gbps"] else None,
                interconnect=r["interconnect"], vendor=r["vendor"], source=r["source"], notes=r["notes"],
            )
            for r in _rows("gpus.csv")
        ]
        self.heads: list[HeadSpec] = [
            HeadSpec(
                head_repo_id=r["head_repo_id"], method=r["method"], method_detail=r["method_detail"],
                verifier_repo_id=r["verifier_repo_id"],
                head_params_b=float(r["head_params_b"]) if r["head_params_b"] else None,
                head_params_note=r["head_params_note"], runtimes=tuple(x for x in r["runtimes"].split(";") if x),
                publisher=r["publisher"], trained_dtype=r["trained_dtype"], source=r["source"], notes=r["notes"],
            )
            for r in _rows("heads.csv")
        ]
        self.drafts: list[DraftPairing] = [DraftPairing(**r) for r in _rows("drafts.csv")]
        self.engine_support: list[EngineSupport] = [
            EngineSupport(**{**r, "breaks_with": tuple(t for t in r["breaks_with"].split(";") if t)})
            for r in _rows("engine_support.csv")
        ]

        self._model_index: dict[str, ModelSpec] = {}
        for m in self.models:
            for key in (m.repo_id, m.repo_id.split("/", 1)[1], *m.aliases):
                self._model_index.setdefault(normalize_name(key), m)
        self._gpu_index: dict[str, GpuSpec] = {}
        for g in self.gpus:
            for key in (g.key, g.name, *g.aliases):
                self._gpu_index.setdefault(normalize_name(key), g)

    # -- models ---------------------------------------------------------------
    def find_model(self, name: str) -> ModelSpec | None:
        """Return the catalog model for ``name`` or None (no error)."""
        key = normalize_name(name)
        if key in self._model_index:
            return self._model_index[key]
        # "Llama-3.1-70B" should find "Llama-3.1-70B-Instruct" when only one model matches.
        hits = {m.repo_id: m for k, m in self._model_index.items() if k.startswith(key) and len(key) >= 6}
        return next(iter(hits.values())) if len(hits) == 1 else None

    def model(self, name: str) -> ModelSpec:
        """Resolve a model name; raise ``NotFoundError`` with close matches if unknown."""
        found = self.find_model(name)
        if found is not None:
            return found
        hint = close_matches_hint(self.close_models(name))
        raise NotFoundError(
            f"model '{name}' is not in the embedded catalog.{hint} "
            "Run `specpick models` for the list, or pass a Hub repo id with --live."
        )

    def close_models(self, name: str, n: int = 4) -> list[str]:
        key = normalize_name(name)
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
        """Published heads trained for exactly this verifier (case-insensitive repo id)."""
        v = verifier_repo_id.lower()
        return [h for h in self.heads if h.verifier_repo_id.lower() == v]

    def head(self, head_repo_id: str) -> HeadSpec | None:
        h = head_repo_id.lower()
        return next((x for x in self.heads if x.head_repo_id.lower() == h), None)

    def drafts_for(self, verifier: ModelSpec) -> list[DraftPairing]:
        """Known same-family drafts for a verifier, smallest-first as listed."""
        fam = verifier.family.lower()
        return [d for d in self.drafts if d.verifier_family.lower() == fam and d.draft_repo_id != verifier.repo_id]

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


@lru_cache(maxsize=1)
def get_catalog() -> Catalog:
    """The process-wide catalog (parsed once, about 10 ms)."""
    return Catalog()

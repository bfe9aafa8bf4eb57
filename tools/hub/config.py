"""A Hub model's facts from its ``config.json``, and its parameter count without weights.

``config_to_spec`` maps the config fields of the families people serve
(llama, qwen2, qwen3, qwen3_moe, mistral, mixtral, gemma2, gemma3 with
``text_config``, phi3, deepseek_v3 with MLA/MoE/MTP, gpt_oss) onto
``ModelSpec``. ``param_count`` reads exact per-dtype counts from the
safetensors headers (HTTP Range reads, never the weights), else estimates from
the config with ``params.count_params`` and says so.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import NotFoundError, RemoteDataError, UnavailableError
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.hub.bounds import MAX_TOTAL_PARAMS
from specpick.tools.hub.bounds import check_config
from specpick.tools.arch.params import count_params
from specpick.tools.hub import client as hub
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.hub.bounds import check_safetensors

Source = Literal["hub", "hub-cache", "catalog"]
TESTED_MODEL_TYPES = frozenset({
    "llama", "qwen2", "qwen3", "qwen3_moe", "mistral", "mixtral", "gemma2", "gemma3", "gemma3_text", "phi3",
    "deepseek_v3", "gpt_oss",
})
# transformers' per-class defaults for tie_word_embeddings when config.json omits it.
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text"}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float8_e4m3fn": "fp8"}
# Real Gemma-3 config.json files omit fields equal to Gemma3TextConfig's defaults
# (transformers models/gemma3/configuration_gemma3.py); fill them in the same way.
_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131_072, "sliding_window": 4096, "sliding_window_pattern": 6},
}


class ModelFacts(BaseModel):
    """A model's architecture facts and which source answered."""

    spec: ModelSpec
    source: Source
    fallback_reason: str = ""
    revision: str | None = None
    commit: str | None = None


class ParamCount(BaseModel):
    """Parameter count of a model: exact from safetensors headers, or an estimate, labelled."""

    repo_id: str
    total_b: float
    active_b: float | None = Field(None, description="MoE: active per token (config estimate); dense: = total")
    by_dtype: dict[str, int] = Field(default_factory=dict, description="exact counts per stored dtype")
    exact: bool
    method: Literal["safetensors-header", "config-estimate", "catalog"]
    source: Source
    fallback_reason: str = ""
    notes: list[str] = Field(default_factory=list)


def _get(cfg: dict[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


def _require_int(cfg: dict[str, Any], repo_id: str, *names: str) -> int:
    value = _get(cfg, *names)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise RemoteDataError(
            f"config.json of {repo_id} has no valid {names[0]} (model_type {cfg.get('model_type')!r}): "
            "not a decoder-only LLM config this tool can read"
        )
    return value


def _sliding(cfg: dict[str, Any], model_type: str) -> tuple[int | None, float]:
    window = cfg.get("sliding_window")
    if not isinstance(window, int) or cfg.get("use_sliding_window") is False:
        return None, 0.0
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        return window, sum(t == "sliding_attention" for t in layer_types) / len(layer_types)
    if model_type == "gemma2":
        return window, 0.5  # alternating local/global layers
    if model_type in ("gemma3", "gemma3_text"):
        pattern = cfg.get("sliding_window_pattern") or 6  # 5 local : 1 global (Gemma-3 report)
        return window, (pattern - 1) / pattern
    if model_type == "gpt_oss":
        return window, 0.5
    return window, 1.0  # Mistral-7B-v0.1, Phi-3-mini: every layer is windowed


def _vision_params_b(vision: dict[str, Any], text_hidden: int) -> float:
    """SigLIP-style vision tower + projector estimate (Gemma-3): attention, MLP, norms, patch/pos embeddings."""
    h, inter, layers = vision.get("hidden_size"), vision.get("intermediate_size"), vision.get("num_hidden_layers")
    if not all(isinstance(x, int) for x in (h, inter, layers)):
        return 0.0
    patch, image = vision.get("patch_size", 14), vision.get("image_size", 896)
    per_layer = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h
    embeddings = 3 * patch * patch * h + h + (image // patch) ** 2 * h + 2 * h
    return (layers * per_layer + embeddings + h * text_hidden + h) / 1e9


def _dtype(cfg: dict[str, Any], outer: dict[str, Any]) -> str:
    quant = outer.get("quantization_config") or cfg.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, dict) else ""
    if method in ("fp8", "mxfp4"):
        return method
    raw = str(_get(outer, "torch_dtype", "dtype", default=None) or _get(cfg, "torch_dtype", "dtype", default="bf16"))
    return _DTYPES.get(raw, raw)


def config_to_spec(config: dict[str, Any], repo_id: str, *, fact_source: Literal["hub", "hub-cache"] = "hub",
                   catalog_spec: ModelSpec | None = None) -> ModelSpec:
    """Build a ``ModelSpec`` from a ``config.json`` dict.

    Args:
        config: the parsed config.json (data from the Hub, never executed).
        repo_id: the repo it came from.
        fact_source: ``hub`` or ``hub-cache``.
        catalog_spec: the catalog row for this repo, if any: supplies tokenizer
            family, gating and the published parameter total.

    Raises:
        RemoteDataError: a required field (hidden_size, layers, heads, vocab_size...) is missing or invalid.
    """
    outer = config
    model_type = str(config.get("model_type", ""))
    cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    inner_type = str(cfg.get("model_type", model_type))
    if model_type == "gemma3" and cfg is not config:
        inner_type = "gemma3_text"
    cfg = {**_CLASS_DEFAULTS.get(inner_type, {}), **cfg}
    # Every field used below is bounded first: the file is anyone's, and 1e12 layers must not become a model.

    check_config(cfg, outer, f"config.json of {repo_id}")
    hidden = _require_int(cfg, repo_id, "hidden_size", "n_embd", "d_model")
    heads = _require_int(cfg, repo_id, "num_attention_heads", "n_head")
    layers = _require_int(cfg, repo_id, "num_hidden_layers", "n_layer")
    vocab = _require_int(cfg, repo_id, "vocab_size") if "vocab_size" in cfg else _require_int(outer, repo_id,
                                                                                             "vocab_size")
    kv_heads = _get(cfg, "num_key_value_heads", default=heads)
    rope, nope = int(cfg.get("qk_rope_head_dim") or 0), int(cfg.get("qk_nope_head_dim") or 0)
    head_dim = _get(cfg, "head_dim", default=None) or (rope + nope if nope else hidden // heads)
    experts = int(_get(cfg, "num_local_experts", "n_routed_experts", "num_experts", default=0) or 0)
    inter = int(_get(cfg, "intermediate_size", "ffn_dim", default=0) or 0)
    moe_inter = int(_get(cfg, "moe_intermediate_size", default=0) or 0)
    first_dense = int(_get(cfg, "first_k_dense_replace", default=0) or 0)
    if experts and not moe_inter:  # Mixtral, gpt-oss: intermediate_size is the expert width
        moe_inter = inter
    if experts and not first_dense and not cfg.get("mlp_only_layers"):
        inter = 0  # no dense FFN layer at all
    window, sliding_fraction = _sliding(cfg, inner_type)
    tied = cfg.get("tie_word_embeddings", outer.get("tie_word_embeddings"))
    if tied is None:
        tied = inner_type in _TIED_BY_DEFAULT or model_type in _TIED_BY_DEFAULT
    vision = outer.get("vision_config")
    notes = []
    if model_type not in TESTED_MODEL_TYPES:
        notes.append(f"model_type {model_type!r} is not one of the tested families; read as a Llama-style decoder")
    max_pos = int(_get(cfg, "max_position_embeddings", "n_positions", default=0) or 0)
    spec = ModelSpec(
        repo_id=repo_id, family=model_type or "unknown",
        params_total_b=catalog_spec.params_total_b if catalog_spec else None,
        params_active_b=catalog_spec.params_active_b if catalog_spec else None,
        hidden_size=hidden, num_layers=layers, num_attention_heads=heads, num_kv_heads=int(kv_heads),
        head_dim=int(head_dim), intermediate_size=inter, vocab_size=vocab, tie_word_embeddings=bool(tied),
        num_experts=experts, experts_per_token=int(_get(cfg, "num_experts_per_tok", "experts_per_token",
                                                        default=0) or 0) if experts else 0,
        moe_intermediate_size=moe_inter if experts else 0,
        num_shared_experts=int(_get(cfg, "n_shared_experts", default=0) or 0), first_dense_layers=first_dense,
        sliding_window=window, sliding_layer_fraction=round(sliding_fraction, 4),
        kv_lora_rank=int(cfg.get("kv_lora_rank") or 0), qk_rope_head_dim=rope,
        q_lora_rank=int(cfg.get("q_lora_rank") or 0), qk_nope_head_dim=nope, v_head_dim=int(cfg.get("v_head_dim") or 0),
        attention_bias=bool(cfg.get("attention_bias", inner_type == "qwen2")),
        vision_params_b=round(_vision_params_b(vision, hidden), 4) if isinstance(vision, dict) else 0.0,
        mtp_layers=int(_get(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers", default=0) or 0),
        tokenizer_family=catalog_spec.tokenizer_family if catalog_spec else f"unknown:{repo_id}",
        tokenizer_specials=catalog_spec.tokenizer_specials if catalog_spec else "",
        tokenizer_note="" if catalog_spec else "not in the catalog: compare the files with `specpick tokenizers`",
        max_position_embeddings=max_pos or 2048, dtype=_dtype(cfg, outer),
        gated=catalog_spec.gated if catalog_spec else "unknown",
        source=f"config.json of {repo_id} on the Hub", notes="; ".join(notes), fact_source=fact_source,
    )
    # Each field is in range, but their product can still be absurd (every field at its bound).

    total_b = count_params(spec).total_b
    if total_b * 1e9 > MAX_TOTAL_PARAMS:
        raise RemoteDataError(f"config.json of {repo_id} describes {total_b:.3g} B parameters, above the "
                              f"{MAX_TOTAL_PARAMS / 1e9:,.0f} B bound: not a real model config; pin another --revision")
    return spec


def fetch_model_spec(repo_id: str, revision: str | None = None, *, settings: Any = None) -> ModelFacts:
    """A model's facts from its Hub ``config.json`` (or cache), else from the catalog.

    Raises:
        InputError: invalid repo id or revision.
        HubAccessError: gated or private repo.
        NotFoundError: unknown repo (close catalog matches), revision, or no config.json.
        RemoteDataError: malformed, oversized or unreadable config.json.
        UnavailableError: offline/unreachable, nothing cached, and not in the catalog.
    """

    catalog_spec = get_catalog().find_model(repo_id)
    try:
        config, fetched = hub.fetch_json(repo_id, "config.json", revision=revision, settings=settings)
    except hub.EntryMissingError as exc:
        raise NotFoundError(f"{repo_id} has no config.json: is it a model repo (not a dataset or GGUF-only)?") \
            from exc
    except UnavailableError as exc:
        if catalog_spec is None:
            raise
        return ModelFacts(spec=catalog_spec, source="catalog", fallback_reason=exc.message, revision=revision)
    spec = config_to_spec(config, repo_id, fact_source=fetched.source, catalog_spec=catalog_spec)
    return ModelFacts(spec=spec, source=fetched.source, fallback_reason=fetched.fallback_reason,
                      revision=fetched.revision, commit=fetched.commit)


def safetensors_parameter_count(repo_id: str, *, revision: str | None = None,
                                settings: Any = None) -> dict[str, int]:
    """Exact parameter counts per dtype from the safetensors headers (HTTP Range reads, no weights).

    Returns:
        ``{"BF16": n, ...}`` summed over all shards.

    Raises:
        EntryMissingError: the repo has no safetensors files.
        UnavailableError: offline, or the Hub cannot be reached (these are API calls with no cache).
        HubAccessError, NotFoundError, InputError: as for ``fetch_file``.
    """

    settings = settings or hub.HubSettings()
    hub.validate_repo_id(repo_id)
    rev = hub.validate_revision(revision)
    if settings.is_offline():
        raise UnavailableError(f"offline: cannot read safetensors headers of {repo_id} (not cached by the client)")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import SafetensorsParsingError

    api = HfApi(endpoint=settings.resolved_endpoint(), token=settings.token_arg())
    try:
        meta = api.get_safetensors_metadata(repo_id, revision=rev)
    except SafetensorsParsingError as exc:
        raise RemoteDataError(f"safetensors header of {repo_id} is malformed: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - mapped
        raise hub.map_hub_error(exc, repo_id, rev, "model.safetensors") from exc
    # Counted from the validated headers, not meta.parameter_count: huggingface_hub multiplies whatever shape the
    # header states (negative, a string) and keeps any dtype name.

    return check_safetensors(meta.files_metadata, repo_id)


def param_count(repo_id: str, revision: str | None = None, *, settings: Any = None) -> ParamCount:
    """Parameters of a Hub model without downloading weights.

    Exact per-dtype counts from the safetensors headers when the Hub answers;
    otherwise an estimate from config.json (Hub or cache), otherwise the
    catalog's count. The result says which, and why it fell back.

    Raises:
        InputError, HubAccessError, NotFoundError, RemoteDataError: as ``fetch_model_spec``.
        UnavailableError: nothing reachable, cached, or in the catalog.
    """

    facts = fetch_model_spec(repo_id, revision, settings=settings)
    estimate = count_params(facts.spec)
    active = estimate.active_b if facts.spec.is_moe else None
    reason = facts.fallback_reason
    if facts.source == "hub":
        try:
            by_dtype = safetensors_parameter_count(repo_id, revision=revision, settings=settings)
        except (hub.EntryMissingError, UnavailableError, RemoteDataError) as exc:
            reason = f"no safetensors header read ({exc.message})"
        else:
            total = sum(by_dtype.values())
            notes = ["exact: every tensor stored in the safetensors files (quantization scales, MTP and vision "
                     "weights included)"]
            if active is not None:
                notes.append("active_b is a config estimate")
            return ParamCount(repo_id=repo_id, total_b=total / 1e9, active_b=active if active else total / 1e9,
                              by_dtype=by_dtype, exact=True, method="safetensors-header", source="hub", notes=notes)
    method: Literal["config-estimate", "catalog"] = "catalog" if facts.source == "catalog" else "config-estimate"
    notes = ["estimate from architecture fields (params.count_params), not from the weights"]
    return ParamCount(repo_id=repo_id, total_b=estimate.total_b, active_b=active if active else estimate.total_b,
                      exact=False, method=method, source=facts.source, fallback_reason=reason, notes=notes)

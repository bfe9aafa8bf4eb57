"""Parse and check an emitted engine configuration, independently of the emitter (``tools/checks/engine_config.py``).

The eval suite must catch the emitter being wrong, so this module re-reads the
engines' rules from ENGINES.md section (b) rather than calling the emitter; it reads a configuration with the
engine's own ``parse`` (tools/engines/, the inverse of ``emit``, property-tested to round-trip):

* vLLM ``--speculative-config`` JSON: parses, has ``method`` matching the strategy, ``model`` for model-based
  methods, ``num_speculative_tokens`` equal to N, ``draft_tensor_parallel_size`` 1 or the target TP (vllm#31345),
  no ``tensor_parallel_size`` inside, ``prompt_lookup_min <= prompt_lookup_max``;
* SGLang flags: ``--speculative-algorithm`` matching, steps/topk/num-draft-tokens all set or none, topk=1 =>
  num_draft_tokens = steps+1, num_draft_tokens <= steps*topk+1, agreeing with the recommendation's tree;
* TensorRT-LLM YAML: parses, ``speculative_config.decoding_type`` matching, ``max_draft_len`` equal to N;
* transformers kwargs: ``assistant_model`` for a draft model, ``prompt_lookup_num_tokens`` for n-gram.
"""

from __future__ import annotations

import re
from typing import Any

from specpick.tools.answer import EngineConfig
from specpick.tools.engines.lookup import engine as engine_spec, is_engine
from specpick.tools.methods import REGISTRY
from specpick.tools.vocab import SEPARATE_REPO_METHODS

# How each engine spells each method: the registry's engine_names (each cited there to the engine's own config
# class or flag). A method an engine has no spelling for is one it does not run.
VLLM_METHOD: dict[str, str] = {r.name: key for r in REGISTRY if (key := r.engine_key("vllm")) is not None}
# Run as another vLLM method with parallel_drafting (vLLM >= 0.16.0, PR #32887).
VLLM_PARALLEL_DRAFTING = frozenset(r.name for r in REGISTRY if r.parallel_draft and VLLM_METHOD.get(r.name, r.name)
                                   != r.name)
SGLANG_ALGO: dict[str, set[str]] = {r.name: set(r.engine_names("sglang")) for r in REGISTRY
                                    if r.engine_names("sglang")}
TRT_DECODING: dict[str, set[str]] = {r.name: set(r.engine_names("trtllm")) for r in REGISTRY
                                     if r.engine_names("trtllm")}
LLAMACPP_SPEC_TYPE: dict[str, set[str]] = {r.name: set(r.engine_names("llamacpp")) for r in REGISTRY
                                           if r.engine_names("llamacpp")}
# Methods llama-server runs from a draft GGUF of their own: draft models, and heads converted to GGUF.
LLAMACPP_NEEDS_DRAFT = frozenset(r.name for r in REGISTRY if r.loads == "draft_lm" or r.gguf_converted)
LLAMACPP_DRAFT_FLAGS = ("model-draft", "spec-draft-model", "spec-draft-hf", "md", "hfd")
LLAMACPP_REMOVED = ("draft-max", "draft-min", "draft", "draft-n")
# The vocabulary is shared; the rules below are re-read from the engines, not taken from the emitter.
NEEDS_MODEL = SEPARATE_REPO_METHODS


def parse_config(engine: str, fmt: str, config: str, launch_command: str = "") -> dict[str, Any] | None:
    """Parsed config for ``engine`` (None when it does not parse): the engine's own ``parse``, the inverse of its
    ``emit`` (tools/engines/), which keeps the option names as the engine spells them (vLLM's JSON keys, SGLang's
    and llama-server's flags without dashes, TensorRT-LLM's ``speculative_config`` keys, transformers' kwargs)."""
    if not is_engine(engine):
        return None
    # Built without validation: a graded answer's format or engine version may be anything.
    return engine_spec(engine).parse(EngineConfig.model_construct(
        engine=engine, engine_version="", format=fmt, config=config, launch_command=launch_command))


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip().strip("'\""))
    except ValueError:
        return None


def check_config(strategy: str, engine: str, fmt: str, config: str, launch_command: str, *,
                 n: int | None, tree: tuple[int, int, int] | None, draft_model: str | None,
                 target_tp: int) -> tuple[list[str], dict[str, Any] | None]:
    """Problems with an emitted config (empty list: consistent), and the parsed config.

    Args:
        strategy: the recommended strategy.
        engine: the recommended engine.
        fmt / config / launch_command: the EngineConfig fields.
        n: the recommendation's num_draft_tokens.
        tree: (depth, top_k, num_verify_tokens) of the recommendation, if any.
        draft_model: the recommendation's draft/head repo id.
        target_tp: the verifier's tensor-parallel size (GPUs / pipeline stages).
    """
    if strategy == "none":
        bad = []
        text = (config + " " + launch_command).lower()
        # vLLM/SGLang/TRT-LLM "speculative...", transformers kwargs, llama.cpp --spec-type / draft model flags
        if "speculative" in text or re.search(r"assistant_model|prompt_lookup_num_tokens|--spec-type|(^|\s)-md\s", text):
            bad.append("strategy is none but the config/launch command still enables speculation")
        return bad, None
    parsed = parse_config(engine, fmt, config, launch_command)
    if parsed is None:
        return [f"{engine} config ({fmt}) does not parse: {config[:120]!r}"], None
    problems: list[str] = []
    if engine == "vllm":
        problems += _vllm(strategy, parsed, n, draft_model, target_tp)
    elif engine == "sglang":
        problems += _sglang(strategy, parsed, tree, draft_model)
    elif engine == "trtllm":
        problems += _trtllm(strategy, parsed, n)
    elif engine == "llamacpp":
        problems += _llamacpp(strategy, parsed, n)
    elif engine == "transformers":
        problems += _transformers(strategy, parsed)
    return problems, parsed


def _vllm(strategy: str, cfg: dict[str, Any], n: int | None, draft: str | None, tp: int) -> list[str]:
    want = VLLM_METHOD.get(strategy)
    if want is None:
        return [f"vLLM does not run {strategy} (no SpeculativeMethod for it)"]
    out = []
    if cfg.get("method") != want:
        out.append(f"method is {cfg.get('method')!r}, expected {want!r} for {strategy}")
    if strategy in NEEDS_MODEL and not cfg.get("model"):
        out.append(f"{strategy} needs 'model' (the draft/head repo)")
    if strategy in NEEDS_MODEL and draft and cfg.get("model") and str(cfg["model"]).lower() != draft.lower():
        out.append(f"config model {cfg['model']!r} differs from the recommended {draft!r}")
    k = cfg.get("num_speculative_tokens")
    if not isinstance(k, int) or k < 1:
        out.append(f"num_speculative_tokens must be a positive integer, got {k!r}")
    elif n is not None and k != n:
        out.append(f"num_speculative_tokens {k} differs from the recommended N={n}")
    if strategy in VLLM_PARALLEL_DRAFTING and cfg.get("parallel_drafting") is not True:
        out.append(f"{strategy} runs in vLLM only with parallel_drafting: true (PR #32887)")
    if "tensor_parallel_size" in cfg:
        out.append("tensor_parallel_size inside speculative_config is rejected by vLLM (use draft_tensor_parallel_size)")
    dtp = cfg.get("draft_tensor_parallel_size")
    if dtp is not None and dtp not in (1, tp):
        out.append(f"draft_tensor_parallel_size {dtp} must be 1 or the target TP {tp} (vllm#31345)")
    if strategy == "ngram":
        lo, hi = cfg.get("prompt_lookup_min", 5), cfg.get("prompt_lookup_max", 5)
        if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
            out.append(f"prompt_lookup_min {lo} / max {hi} must satisfy 1 <= min <= max")
    return out


def _sglang(strategy: str, flags: dict[str, Any], tree: tuple[int, int, int] | None, draft: str | None) -> list[str]:
    want = SGLANG_ALGO.get(strategy)
    if want is None:
        return [f"SGLang has no --speculative-algorithm for {strategy}"]
    out = []
    algo = flags.get("speculative-algorithm")
    if algo not in want:
        out.append(f"--speculative-algorithm is {algo!r}, expected one of {sorted(want)} for {strategy}")
    if strategy in NEEDS_MODEL and not flags.get("speculative-draft-model-path"):
        out.append(f"{strategy} needs --speculative-draft-model-path")
    if strategy == "ngram":
        return out
    if strategy == "dflash":
        ndt = _int(flags.get("speculative-num-draft-tokens", 0))
        if not ndt or ndt < 2:
            out.append("DFLASH needs --speculative-num-draft-tokens (the block: N drafted + 1)")
        return out
    keys = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")
    given = [k for k in keys if k in flags]
    if given and len(given) != 3:
        out.append(f"set steps, topk and num-draft-tokens together or none (given: {given})")
        return out
    if not given:
        return out
    steps, topk, ndt = (_int(flags[k]) for k in keys)
    if None in (steps, topk, ndt) or min(steps, topk, ndt) < 1:  # type: ignore[type-var]
        return out + [f"steps/topk/num-draft-tokens must be positive integers: {[flags[k] for k in keys]}"]
    if topk == 1 and ndt != steps + 1:  # type: ignore[operator]
        out.append(f"topk=1 means num-draft-tokens = steps+1 = {steps + 1}, got {ndt}")  # type: ignore[operator]
    if ndt > steps * topk + 1:  # type: ignore[operator]
        out.append(f"num-draft-tokens {ndt} exceeds steps*topk+1 = {steps * topk + 1}")  # type: ignore[operator]
    if tree is not None and (steps, topk, ndt) != tree:
        out.append(f"flags (steps, topk, draft tokens) = {(steps, topk, ndt)} differ from the recommended tree {tree}")
    return out


def _trtllm(strategy: str, spec: dict[str, Any], n: int | None) -> list[str]:
    want = TRT_DECODING.get(strategy)
    if want is None:
        return [f"TensorRT-LLM has no decoding_type for {strategy}"]
    out = []
    if spec.get("decoding_type") not in want:
        out.append(f"decoding_type is {spec.get('decoding_type')!r}, expected one of {sorted(want)}")
    if strategy == "lookahead":
        for key in ("max_window_size", "max_ngram_size", "max_verification_set_size"):
            if key in spec and not (isinstance(spec[key], int) and spec[key] > 0):
                out.append(f"{key} must be a positive integer")
        return out
    mdl = spec.get("max_draft_len")
    if not isinstance(mdl, int) or mdl < 1:
        out.append(f"max_draft_len must be a positive integer, got {mdl!r}")
    elif n is not None and mdl != n and strategy != "medusa":
        out.append(f"max_draft_len {mdl} differs from the recommended N={n}")
    return out


def _llamacpp(strategy: str, flags: dict[str, Any], n: int | None) -> list[str]:
    want = LLAMACPP_SPEC_TYPE.get(strategy)
    if want is None:
        return [f"llama.cpp has no --spec-type for {strategy}"]
    out = []
    types = set(str(flags.get("spec-type", "")).split(","))
    if not types & want:
        out.append(f"--spec-type is {flags.get('spec-type')!r}, expected one of {sorted(want)}")
    removed = [f for f in LLAMACPP_REMOVED if f in flags]
    if removed:
        out.append(f"removed flags {removed}: current builds take --spec-draft-n-max / --spec-draft-n-min")
    if strategy in LLAMACPP_NEEDS_DRAFT and not any(f in flags for f in LLAMACPP_DRAFT_FLAGS):
        out.append(f"{strategy} needs a draft GGUF (-md/--model-draft or -hfd/--spec-draft-hf)")
    k = _int(flags.get("spec-draft-n-max", ""))
    if n is not None and k is not None and k != n:
        out.append(f"--spec-draft-n-max {k} differs from the recommended N={n}")
    return out


def _transformers(strategy: str, kwargs: dict[str, Any]) -> list[str]:
    if strategy == "draft_model":
        return [] if "assistant_model" in kwargs else ["draft model needs generate(assistant_model=...)"]
    if strategy == "ngram":
        return [] if "prompt_lookup_num_tokens" in kwargs else ["n-gram needs generate(prompt_lookup_num_tokens=N)"]
    return [f"transformers generate() does not run {strategy}"]

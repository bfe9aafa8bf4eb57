"""`specpick engine-config`: the engine's speculative-decoding configuration for one setting.

With ``--all-engines`` the same setting (method, N, tree, per-batch schedule, disable threshold) is
translated for every engine we track, or the reason an engine cannot run it is given.
"""

from __future__ import annotations

from specpick.tools.engines.lookup import engine as engine_spec, label as engine_label
from specpick.tools.checks.engine_config import EngineConfig, EngineConfigInput, build_engine_config
from specpick.tools.deploy.resolve import DeploymentQuery, query_from_input, resolve_deployment
from specpick.tools.deployment_input import DEFAULT_GPU
from specpick.tools.deployment import Deployment
from specpick.tools.errors import InputError
from specpick.tools.vocab import SEPARATE_REPO_METHODS
from specpick.tools.hub.gguf_ref import is_gguf_name
from specpick.tools.deploy.drafts import best_published_head
from specpick.tools.deploy.drafts import find_known_draft
from specpick.tools.deploy.requests import memory_fit
from specpick.tools.deploy.launch import served_checkpoint
from specpick.tools.methods import is_method
from specpick.tools.methods import method_record


def engine_config_tool(inp: EngineConfigInput) -> EngineConfig:
    """Registry entry: resolve the verifier by the one name rule, reject options the method ignores, then build.

    Raises:
        NotFoundError: a verifier name that is not exactly a catalog model (close matches listed).
        InputError: --draft-model with a method that loads no draft, or a TP size the verifier's heads refuse.
    """
    # MTP drafters also ship as repos of their own (Gemma 4 "-assistant"; vLLM: {"method":"mtp","model":...}).
    if inp.draft_model and inp.method not in SEPARATE_REPO_METHODS | {"mtp"}:
        raise InputError(f"--draft-model applies to methods that load a draft or head repo "
                         f"({', '.join(sorted(SEPARATE_REPO_METHODS | {'mtp'}))}), not {inp.method}; drop it")
    ignored = _ignored_options(inp)
    if ignored:
        raise InputError(f"{ignored} has no effect for {inp.method} on {engine_label(inp.engine)}; drop it "
                         "(or pick the engine/method that uses it)")
    dep = resolve_deployment(deployment_query(inp))
    _check_offload(inp, dep)

    gguf = inp.gguf_source or (inp.verifier if is_gguf_name(inp.verifier) else None)
    quant = inp.gguf_quant or dep.verifier.quantization_given
    placement, notes = _placement(inp, dep)
    # The repo the engine loads: a quantized build (zai-org/GLM-5.2-FP8) as named, not the base row it was costed on.
    served, fmt = served_checkpoint(dep)
    # The context a launch caps sequences at: the one the memory check sized (with --gpu), else the user's --context.
    context = dep.context_tokens if "gpu_layers" in placement or "n_cpu_moe" in placement or (
        inp.gpu is not None and engine_spec(inp.engine).sizes_placement) else inp.context_tokens
    cfg = build_engine_config(inp.model_copy(update={"verifier": served, "weight_format": fmt, "gguf_source": gguf,
                                                     "gguf_quant": quant, "context_tokens": context, **placement}))
    # The release the option names are for is a default like any other: listed the way every verb lists it.
    return cfg.model_copy(update={"notes": [*cfg.notes, *notes, *(f"default: {d}" for d in dep.defaults)]})


def _check_offload(inp: EngineConfigInput, dep: Deployment) -> None:
    """--n-cpu-moe keeps a MoE's routed experts in system RAM: on a dense model, or past its layer count, it says
    nothing llama-server can do (issue 39, cause 12: both were emitted as given)."""
    spec = dep.verifier.spec
    if inp.n_cpu_moe is None:
        return
    if not spec.is_moe:
        raise InputError(f"--n-cpu-moe keeps the routed experts of MoE layers in system RAM; {spec.repo_id} is dense: "
                         "offload whole layers with --gpu-layers instead")
    if inp.n_cpu_moe > spec.num_layers:
        raise InputError(f"--n-cpu-moe {inp.n_cpu_moe} is more than {spec.repo_id}'s {spec.num_layers} layers; give at "
                         f"most {spec.num_layers}")


def _placement(inp: EngineConfigInput, dep: Deployment) -> tuple[dict[str, int | None], list[str]]:
    """llama.cpp's -ngl / --n-cpu-moe from the deployment's memory check (``--gpu``), unless the user gave them."""
    if inp.gpu is None or not engine_spec(inp.engine).sizes_placement:
        return {}, ([f"--gpu {inp.gpu}: the {engine_label(inp.engine)} configuration does not depend on it (it "
                     "sizes llama.cpp's layer split only)"] if inp.gpu is not None else [])
    if inp.gpu_layers is not None or inp.n_cpu_moe is not None:
        return {}, ["-ngl / --n-cpu-moe as given (the memory check for --gpu is not applied)"]


    speculative = is_method(inp.method)  # strategy "none": the verifier alone
    listed = find_known_draft(dep.verifier.spec, inp.draft_model) if inp.draft_model else None
    head = best_published_head(dep.verifier.repo_id, inp.method, "llamacpp") if speculative else None
    fit = memory_fit(dep, inp.method, engine="llamacpp", draft=listed.spec if listed is not None else None,
                     head=head)
    notes = [f"memory: {fit.verdict_line()}"]
    if speculative and method_record(inp.method).loads == "draft_lm" and inp.draft_model and listed is None:
        notes.append(f"draft {inp.draft_model} is not in the catalog: its weights are not in the memory check")
    if fit.offload is not None and fit.offload.fits:
        return {"gpu_layers": fit.offload.gpu_layers, "n_cpu_moe": fit.offload.n_cpu_moe}, notes
    if not fit.fits:
        raise InputError(f"memory: {fit.verdict_line()}; give a smaller quantization, more GPUs or more "
                         "--host-memory-gib (`specpick vram --engine llamacpp` shows the budget)")
    return {}, notes


def deployment_query(inp: EngineConfigInput) -> DeploymentQuery:
    """The deployment `engine-config` emits for, in the resolver's terms (TP checked against the verifier's heads)."""
    # A GGUF build: the resolver answers for the model it was made from (the one name rule of every verb).
    sized = inp.gpu is not None and engine_spec(inp.engine).sizes_placement
    # without --gpu engine-config sizes nothing (1 token passes every limit check); with it the memory check places
    # llama.cpp's layers at the default context (stated). Its method is what to emit, not evidence for the resolver.
    return query_from_input(inp, gpus=inp.tensor_parallel, catalog_only=True, gpus_flag="--tensor-parallel",
                            workload=None, context_tokens=inp.context_tokens if sized else 1,
                            concurrency=inp.parallel_slots or 1, gpu=inp.gpu or DEFAULT_GPU, method=None,
                            announce=frozenset({"concurrency"}) if sized else frozenset())


def _ignored_options(inp: EngineConfigInput) -> str | None:
    """The first option the user set that the chosen emitter would not use (None: all used)."""
    given = inp.model_fields_set
    tree_used = (inp.engine == "sglang" and inp.method not in ("ngram", "none")) or \
        (inp.engine == "trtllm" and inp.method == "eagle3")
    rules = [
        ("tree_top_k", "--tree-top-k", tree_used or inp.tree_top_k == 1),
        ("num_verify_tokens", "--num-verify-tokens", tree_used),
        ("prompt_lookup_min", "--prompt-lookup-min", inp.method == "ngram"),
        ("prompt_lookup_max", "--prompt-lookup-max", inp.method == "ngram"),
        ("disable_by_batch_size", "--disable-by-batch-size", inp.engine == "vllm" and inp.method != "none"),
        ("draft_tensor_parallel", "--draft-tensor-parallel", inp.engine == "vllm" and inp.method != "none"),
    ]
    return next((flag for name, flag, used in rules if name in given and not used), None)


def _one(cfg: EngineConfig) -> list[str]:
    lines = [f"# {engine_label(cfg.engine)} (option names as of {cfg.engine_version})"]
    if cfg.config:
        lines += [cfg.config.rstrip(), ""]
    lines += [f"before: {c}" for c in cfg.setup_commands]
    lines.append(f"launch: {cfg.launch_command}")
    lines += [f"note: {n}" for n in cfg.notes]
    return lines


def render_text(cfg: EngineConfig) -> str:
    lines = _one(cfg)
    for t in cfg.translations:
        lines.append("")
        if t.config is not None:
            lines += _one(t.config)
        else:
            lines += [f"# {engine_label(t.engine)}", f"not available: {t.reason}"]
    return "\n".join(lines)

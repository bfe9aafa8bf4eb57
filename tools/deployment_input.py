"""The deployment input: one declaration of every option a verb that takes a deployment shares.

`recommend`, `speedup`, `vram`, `engine-config`, `train-plan`, `head-check` and `tune` (and the Claude and MCP tools
generated from ``skill/surfaces/registry.py``) declare their deployment fields with these types, so an option has
one name, one default and one help text on every surface (issue 33: `speedup --batch` beside `recommend
--concurrency`, `--context-tokens` beside `--context`, `--gpu` required in one verb and defaulted in another). Each
type carries its pydantic ``Field`` (default, description, CLI spelling): a verb writes ``gpu: Gpu`` and nothing else.
``tests/test_deployment_input.py`` fails when a verb declares one of these names another way.

The old spellings keep working: ``DEPRECATED_FLAGS`` on the command line (``skill/surfaces/cli_args.py`` adds them
hidden, with a one-line notice on stderr) and ``DEPRECATED_KEYS`` in JSON arguments (``rename_deprecated``).
The one mapper from an input model to the resolver's query is ``tools/deploy/resolve.query_from_input``.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

from pydantic import Field

from specpick.tools.validation import (
    HOST_BANDWIDTH_HELP, HOST_MEMORY_HELP, Concurrency, ContextTokens, EngineVersion, GpuCount, HostBandwidthGbps,
    HostMemoryGib, ModelName, OneLineText, Probability, Tau, Temperature,
)
from specpick.tools.vocab import Engine, Method, Quantization, SpecOverlap, VerifierChange, WORKLOAD_MEANING, Workload

# The GPU every verb answers for when --gpu is not given (listed in the answer's defaults).
DEFAULT_GPU = "H100-SXM"

# Old option spelling -> the one every verb takes now (a one-line deprecation notice when used).
DEPRECATED_FLAGS: dict[str, str] = {"--batch": "--concurrency", "--context-tokens": "--context"}
# Old JSON argument name -> the field it fills (Claude and MCP callers of `speedup`).
DEPRECATED_KEYS: dict[str, str] = {"batch": "concurrency"}


def _cli(**kw: object) -> dict[str, object]:
    return {"cli": kw}


def deprecation_notice(old: str, new: str) -> str:
    return f"specpick: {old} is deprecated; use {new} (the same option, one spelling for every verb)"


def rename_deprecated(data: Any) -> Any:
    """JSON arguments with an old name renamed to the field it fills (a notice on stderr); the rest unchanged.

    Raises nothing: both names given is left for the model to refuse (``extra="forbid"``).
    """
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for old, new in DEPRECATED_KEYS.items():
        if old in out and new not in out:
            out[new] = out.pop(old)
            print(deprecation_notice(repr(old), repr(new)), file=sys.stderr)
    return out


VERIFIER_HELP = ("verifier model: catalog name (llama-3.1-70b) or Hub repo id, a GGUF build "
                 "(owner/name-GGUF[:Q4_K_M] or a local .gguf path)")

Verifier = Annotated[ModelName, Field(description=VERIFIER_HELP)]
BaseModelName = Annotated[ModelName | None, Field(None, description=(
    "the published model your verifier was derived from (fine-tune, RL, merge, LoRA): its facts are used, your id "
    "is the one served"))]
Change = Annotated[VerifierChange, Field("none", description=(
    "how your verifier's weights differ from --base-model: none, full-finetune, rl, lora, merge"))]
Adapters = Annotated[Annotated[int, Field(ge=1, le=10_000)] | None, Field(None, description=(
    "LoRA adapters served (with --verifier-change lora)"))]
WORKLOAD_HELP = "what the model generates: " + "; ".join(f"{k} = {v}" for k, v in WORKLOAD_MEANING.items())
# Required where the acceptance prior needs it (recommend, speedup); optional where only the context follows from it.
WorkloadRequired = Annotated[Workload, Field(description=WORKLOAD_HELP)]
WorkloadOptional = Annotated[Workload | None, Field(None, description=WORKLOAD_HELP + " (default: none: context "
                                                                                      "4096)")]
Gpu = Annotated[OneLineText, Field(DEFAULT_GPU, description="GPU model, e.g. H100, A100-80GB, L40S, RTX 4090")]
Gpus = Annotated[GpuCount, Field(1, description=(
    "GPU count (tensor x pipeline parallel; the tensor-parallel size must divide the model's attention and KV "
    "heads)"))]
ENGINE_HELP = ("serving engine: its overheads, memory reservation and defaults apply (default: recommend weighs each "
               "engine per method; the other verbs assume vLLM's, stated)")
EngineOptional = Annotated[Engine | None, Field(None, description=ENGINE_HELP)]
EngineRelease = Annotated[EngineVersion | None, Field(None, description=(
    "engine release you run, e.g. 0.16.0 (default: the newest build we track); methods newer than it are ruled "
    "out"))]
Overlap = Annotated[SpecOverlap, Field("auto", description=(
    "overlap (async) scheduling of the speculative path: auto = the release's default (vLLM >= 0.14 with "
    "EAGLE/MTP); on = you run it (SGLang: SGLANG_ENABLE_SPEC_V2=1, chains only); off = you turned it off"))]
WeightFormat = Annotated[Quantization | None, Field(None, description="verifier weight format (default: as "
                                                                      "published)")]
Context = Annotated[ContextTokens | None, Field(None, description=(
    "tokens in the KV cache per sequence while decoding (at most the model's limit); default: typical for the "
    "workload (4096 without one), capped by the model's limit"), json_schema_extra=_cli(flags=["--context"],
                                                                                          deprecated=["--context-tokens"]))]
ConcurrencyOption = Annotated[Concurrency, Field(1, description="concurrent requests (batch) the deployment runs at",
                                                 json_schema_extra=_cli(flags=["--concurrency"],
                                                                        deprecated=["--batch"]))]
DpAttention = Annotated[bool, Field(False, description=(
    "data-parallel attention (SGLang/vLLM): MLA KV split across ranks by sequence instead of replicated on every "
    "rank (memory check)"))]
SamplingTemperature = Annotated[Temperature | None, Field(None, description=(
    "sampling temperature, 0-2 (sets --sampling if that is not given; default greedy, T=0)"))]
HostMemory = Annotated[HostMemoryGib | None, Field(None, description=HOST_MEMORY_HELP)]
HostBandwidth = Annotated[HostBandwidthGbps | None, Field(None, description=HOST_BANDWIDTH_HELP)]

# The user's evidence: what they measured, with the drafter and N it belongs to (tools/deploy/evidence.py checks N
# against the method; 100x is past any published speedup).
MeasuredDraftLength = Annotated[int, Field(ge=1, le=64)]
MeasuredSpeedupX = Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)]
Alpha = Annotated[Probability | None, Field(None, description=(
    "measured per-token acceptance in (0, 1), overrides the prior (EAGLE-1/2, Medusa and MTP chains: of the first "
    "drafted token; later ones decay)"))]
TauMeasured = Annotated[Tau | None, Field(None, description=(
    "measured mean accepted length (incl. bonus, 1-65), overrides the prior"))]
MeasuredN = Annotated[MeasuredDraftLength | None, Field(None, description=(
    "the draft length N your --tau/--alpha was measured at (default: the method's starting N, stated; speedup: "
    "the N asked)"))]
MeasuredMethod = Annotated[Method | None, Field(None, description=(
    "the method your --tau/--alpha (or speedup) was measured with: it applies to that drafter only"))]
MeasuredSpeedupOption = Annotated[MeasuredSpeedupX | None, Field(None, description=(
    "speedup you measured with that drafter at --measured-n and --concurrency: recalibrates its cost side"))]

# Field name -> its one declaration (the guard test reads it; the CLI and JSON schemas come from the verbs' models).
DEPLOYMENT_OPTIONS: dict[str, tuple[Any, ...]] = {
    "verifier": (Verifier,), "base_model": (BaseModelName,), "verifier_change": (Change,), "adapters": (Adapters,),
    "workload": (WorkloadRequired, WorkloadOptional), "gpu": (Gpu,), "gpus": (Gpus,),
    "engine_version": (EngineRelease,), "spec_overlap": (Overlap,), "quantization": (WeightFormat,),
    "context_tokens": (Context,), "concurrency": (ConcurrencyOption,), "dp_attention": (DpAttention,),
    "temperature": (SamplingTemperature,), "host_memory_gib": (HostMemory,), "host_bandwidth_gbps": (HostBandwidth,),
    "alpha": (Alpha,), "tau": (TauMeasured,), "measured_n": (MeasuredN,), "measured_method": (MeasuredMethod,),
    "measured_speedup": (MeasuredSpeedupOption,),
}

__all__ = ["Adapters", "Alpha", "BaseModelName", "Change", "ConcurrencyOption", "Context", "DEFAULT_GPU",
           "DEPLOYMENT_OPTIONS", "DEPRECATED_FLAGS", "DEPRECATED_KEYS", "DpAttention", "EngineOptional",
           "EngineRelease", "Gpu", "Gpus", "HostBandwidth", "HostMemory", "MeasuredDraftLength", "MeasuredMethod",
           "MeasuredN", "MeasuredSpeedupOption", "MeasuredSpeedupX", "Overlap", "SamplingTemperature", "TauMeasured",
           "Verifier", "WeightFormat", "WorkloadOptional", "WorkloadRequired", "deprecation_notice",
           "rename_deprecated"]

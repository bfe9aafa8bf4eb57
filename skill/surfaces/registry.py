"""One registry of tools: the CLI verbs, the Anthropic tool schemas and the MCP tools come from it.

Each entry has a binder: a function whose ``import`` statements fetch the pure function
``func(inp: InputModel) -> ResultModel``, its pydantic input model and its renderer. Listing the tools (for
``specpick --help``) calls no binder and imports nothing heavy; a tool's modules load only when it runs. The
imports are real statements (not strings), so ``tests/test_layers.py`` sees every dependency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from specpick.tools.errors import InputError, format_validation_error

if TYPE_CHECKING:  # pydantic loads with the first input model: `specpick --help` lists tools without it
    from pydantic import BaseModel


class ToolParts(NamedTuple):
    """What a binder returns: the pure function, its input model, and its text renderer (None: JSON dump)."""

    func: Callable[[Any], BaseModel]
    input_model: type[BaseModel]
    render: Callable[[Any], str] | None


@dataclass(frozen=True)
class ToolSpec:
    """A registered check.

    Attributes:
        name: tool name for Claude and MCP (snake_case).
        cli: CLI verb (``specpick <cli>``).
        summary: one line for ``specpick --help``.
        description: what the tool does and when to call it (goes to the model).
        bind: imports and returns the tool's parts (function, input model, renderer).
    """

    name: str
    cli: str
    summary: str
    description: str
    bind: Callable[[], ToolParts]

    def load_input_model(self) -> type[BaseModel]:
        return self.bind().input_model

    def load_func(self) -> Callable[[Any], BaseModel]:
        return self.bind().func

    def load_render(self) -> Callable[[Any], str] | None:
        return self.bind().render

    def validate(self, arguments: dict[str, Any], *, caller: str = "cli") -> BaseModel:
        """Build the input model, turning pydantic errors into one-line InputErrors.

        ``caller`` words the message for its reader: ``cli`` names flags (``--gpu``), ``tool`` names the
        JSON arguments a model or MCP client sent (``'gpu'``).
        """
        from pydantic import ValidationError

        from specpick.skill.surfaces.rules import check_rules

        model = self.load_input_model()
        try:
            validated = model.model_validate(arguments)
        except ValidationError as exc:
            subject = self.name if caller == "tool" else self.cli
            names = None
            if caller == "cli":  # name positionals by their metavar and options by their real flag
                from specpick.skill.surfaces.cli_args import cli_names

                names = cli_names(model)
            raise InputError(format_validation_error(exc, audience=caller, subject=subject, names=names)) from None
        check_rules(self.cli, arguments)  # contradictions between the given arguments, the same on every surface
        return validated

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input model as Claude and MCP clients get it (our CLI hints removed)."""
        from specpick.skill.surfaces.cli_args import strip_cli_metadata

        return strip_cli_metadata(self.load_input_model().model_json_schema())

    def tool_definition(self) -> dict[str, Any]:
        """The Anthropic Messages-API tool definition (name, description, input schema)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema()}

    def run(self, arguments: dict[str, Any], *, caller: str = "cli") -> BaseModel:
        return self.load_func()(self.validate(arguments, caller=caller))


# Binders: each imports its tool's modules when the tool runs (start-up stays free of pydantic models).
def _recommend() -> ToolParts:
    from specpick.skill.planner.plan import plan
    from specpick.skill.render import to_markdown
    from specpick.skill.schema import PlannerInputs

    return ToolParts(plan, PlannerInputs, to_markdown)


def _speedup() -> ToolParts:
    from specpick.tools.commands import speedup

    return ToolParts(speedup.estimate_speedup, speedup.SpeedupInput, speedup.render_text)


def _vram() -> ToolParts:
    from specpick.tools.commands import vram

    return ToolParts(vram.vram_fit, vram.VramInput, vram.render_text)


def _params() -> ToolParts:
    from specpick.tools.commands import params

    return ToolParts(params.params_tool, params.ParamsInput, params.render_text)


def _tokenizers() -> ToolParts:
    from specpick.tools.commands import tokenizers

    return ToolParts(tokenizers.tokenizers_tool, tokenizers.TokenizersInput, tokenizers.render_text)


def _head_check() -> ToolParts:
    from specpick.tools.commands import head_check

    return ToolParts(head_check.head_check_tool, head_check.HeadCheckInput, head_check.render_text)


def _engine_config() -> ToolParts:
    from specpick.tools.checks.engine_config import EngineConfigInput
    from specpick.tools.commands import engine_config

    return ToolParts(engine_config.engine_config_tool, EngineConfigInput, engine_config.render_text)


def _model_info() -> ToolParts:
    from specpick.tools.commands import lookup

    return ToolParts(lookup.model_info, lookup.ModelInfoInput, lookup.render_model_info)


def _list_models() -> ToolParts:
    from specpick.tools.commands import lookup

    return ToolParts(lookup.list_models, lookup.ListInput, lookup.render_models)


def _list_gpus() -> ToolParts:
    from specpick.tools.commands import lookup

    return ToolParts(lookup.list_gpus, lookup.ListInput, lookup.render_gpus)


def _list_heads() -> ToolParts:
    from specpick.tools.commands import lookup

    return ToolParts(lookup.list_heads, lookup.ListInput, lookup.render_heads)


def _train_plan() -> ToolParts:
    from specpick.tools.commands import train_plan

    return ToolParts(train_plan.train_plan_tool, train_plan.TrainPlanInput, train_plan.render_text)


def _calibrate() -> ToolParts:
    from specpick.tools.commands import calibrate

    return ToolParts(calibrate.calibrate_tool, calibrate.CalibrateInput, calibrate.render_text)


def _catalog() -> ToolParts:
    from specpick.tools.commands import catalog

    return ToolParts(catalog.catalog_tool, catalog.CatalogInput, catalog.render_text)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="recommend",
        cli="recommend",
        summary="recommend a speculative-decoding strategy, its parameters and expected speedup",
        description=(
            "Plan speculative decoding for a deployment: picks the strategy (draft model, EAGLE/EAGLE-3, Medusa, "
            "MTP, lookahead, n-gram, suffix or none), draft length and tree shape, expected speedup with its "
            "acceptance assumption, compatibility checks, fallback plan, measurement plan and the exact engine "
            "configuration. Deterministic; uses the embedded catalog (and the Hub with live=true)."
        ),
        bind=_recommend,
    ),
    ToolSpec(
        name="speedup",
        cli="speedup",
        summary="expected speedup of one method under a stated acceptance assumption",
        description=(
            "Estimate the speedup of one speculative method for a verifier on a GPU: closed form for chain drafts, "
            "tau/k for trees, costs from a roofline step-time model, acceptance from published priors unless "
            "alpha or tau is given. Returns speedup, tau, alpha, cost ratio, best draft length and the "
            "concurrency above which speculation stops paying."
        ),
        bind=_speedup,
    ),
    ToolSpec(
        name="vram_fit",
        cli="vram",
        summary="per-GPU memory for verifier + draft weights and KV cache; fits or not",
        description=(
            "Check whether the verifier plus a draft model or head fits on the GPUs: weights at a dtype or "
            "quantization, KV cache for both at context length x concurrency (GQA, sliding windows, MLA), the "
            "engine's memory reservation and tensor parallelism. Returns fits, headroom and the largest "
            "concurrency x context that fits."
        ),
        bind=_vram,
    ),
    ToolSpec(
        name="param_count",
        cli="params",
        summary="parameter count from architecture (dense, MoE total vs active, tied embeddings)",
        description="Count a model's parameters from its architecture: total, active per token (MoE), embedding.",
        bind=_params,
    ),
    ToolSpec(
        name="compare_tokenizers",
        cli="tokenizers",
        summary="are draft and verifier tokenizers identical, padded, specials-different or different?",
        description=(
            "Compare a draft model's tokenizer with the verifier's: identical, identical_except_padding (same "
            "tokens, config vocab_size padded differently), same_vocab_different_specials, or different (with "
            "how many ids agree). Uses the catalog offline; reads the Hub's tokenizer files when live."
        ),
        bind=_tokenizers,
    ),
    ToolSpec(
        name="head_check",
        cli="head-check",
        summary="does a speculative head (EAGLE/EAGLE-3/Medusa/MTP/MLPSpeculator) belong to this verifier?",
        description=(
            "Check that a speculative head was trained for this verifier: reads the head's config "
            "(speculators_config.verifier, EAGLE fields, hidden sizes, num_nextn_predict_layers) and compares it "
            "with the verifier's. Falls back to the catalog of published heads offline."
        ),
        bind=_head_check,
    ),
    ToolSpec(
        name="train_plan",
        cli="train-plan",
        summary="is your head still fit, and should you train your own speculator (data, GPU-hours, commands)?",
        description=(
            "Decide what to do about the speculator of the model you actually serve (fine-tuned, LoRA, quantized, "
            "long context, own template): fix-config, use-published, measure-first, finetune-published, train, "
            "finetune-mtp, draft-lora-per-domain, no-training-copy or adaptive. Rules in order: broken setup, "
            "serving mismatch, context, verifier change, quantization, no head, domain gap, drift, then an "
            "economics gate from the speedup cost model. Returns cited reasons, expected tau and speedup ranges, "
            "data size, GPU-hours and runnable SpecForge / speculators / Model Optimizer commands."
        ),
        bind=_train_plan,
    ),
    ToolSpec(
        name="engine_config",
        cli="engine-config",
        summary="exact runtime configuration for vLLM, SGLang, TensorRT-LLM, llama.cpp or transformers",
        description=(
            "Emit the exact speculative-decoding configuration for an engine: vLLM --speculative-config JSON, "
            "SGLang flags (k maps to steps/topk/draft-tokens), TensorRT-LLM YAML, llama-server flags or "
            "transformers generate kwargs, for the engine release given. all_engines=true spells the same "
            "setting (N, tree, per-batch schedule, disable threshold) for every engine."
        ),
        bind=_engine_config,
    ),
    ToolSpec(
        name="model_info",
        cli="model",
        summary="architecture facts of one model (catalog, or Hub with --live)",
        description="Look up a model's architecture, parameter count, tokenizer family and published heads.",
        bind=_model_info,
    ),
    ToolSpec(
        name="list_models",
        cli="models",
        summary="list catalog models",
        description="List the embedded catalog's models (optionally filtered by a substring).",
        bind=_list_models,
    ),
    ToolSpec(
        name="list_gpus",
        cli="gpus",
        summary="list catalog GPUs",
        description="List the catalog's GPUs with memory, bandwidth and TFLOPS (optionally filtered).",
        bind=_list_gpus,
    ),
    ToolSpec(
        name="list_heads",
        cli="heads",
        summary="list published speculative heads (EAGLE, EAGLE-3, Medusa, MTP, MLPSpeculator)",
        description="List published speculative heads and the verifier each was trained for (filter by verifier).",
        bind=_list_heads,
    ),
    ToolSpec(
        name="calibrate",
        cli="calibrate",
        summary="check the speedup model against published measurements (median error, bias)",
        description="Run the speedup model over published measurements; report median absolute % error and bias.",
        bind=_calibrate,
    ),
    ToolSpec(
        name="catalog",
        cli="catalog",
        summary="embedded catalog date and Hub overlay (status); refresh heads and models from the Hub (update)",
        description=(
            "status: the embedded catalog snapshot's date, where the user's Hub overlay lives, when it was "
            "fetched and which models and heads it adds. update: list speculative heads and verifiers on the "
            "Hugging Face Hub (by publisher and speculator search terms, bounded), read their config.json and "
            "safetensors headers, link each head to its verifier, and write the overlay every tool then uses."
        ),
        bind=_catalog,
    ),
)

BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
BY_CLI: dict[str, ToolSpec] = {t.cli: t for t in TOOLS}


def anthropic_tools() -> list[dict[str, Any]]:
    """Tool definitions for the Anthropic Messages API, schemas from the input models."""
    return [t.tool_definition() for t in TOOLS]

"""`specpick train-plan`: is your head still fit, and should you train your own speculator?

Field names are the CLI flags and the JSON keys the eval suite relies on (issue 24). The decision comes from the
ordered rules in ``tools/training/rules.py``; data, cost, recipe and economics are filled for the decisions that
train. Offline: facts come from the catalog (the base model's row for a derived verifier).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.training.derived import resolve_derived
from specpick.tools.training.rules import Decision, TrainQuantization
from specpick.tools.validation import (
    MAX_CONTEXT_TOKENS, Concurrency, DraftTokens, EngineVersion, GpuCount, ModelName, OneLineText, Tau, check_context,
    check_tensor_parallel,
)
from specpick.tools.engines.lookup import splits_layers
from specpick.tools.vocab import Engine, Method, VerifierChange, Workload
from specpick.tools.training import rules as r
from specpick.tools.errors import InputError
from specpick.tools.methods import method_record
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.training.card import read_card
from specpick.tools.vocab import BYTES_PER_PARAM
from specpick.tools.hub.gguf_ref import is_gguf_name
from specpick.tools.hub.gguf_ref import resolve_gguf_base
from specpick.tools.training.cost import estimate_cost
from specpick.tools.training.economics import economics
from specpick.tools.training.recipes import build_recipe
from specpick.tools.training.rules import HeadFacts
from specpick.tools.training.rules import TrainFacts
from specpick.tools.training.rules import decide
from specpick.tools.training.fitness import head_fitness

TRAINING_DECISIONS = ("train", "finetune-published", "finetune-mtp", "draft-lora-per-domain", "adaptive")
DEFAULT_TRAIN_GPU = "H100-SXM"  # assumption when --train-gpu is not given (stated in `assumptions`)


class TrainPlanInput(BaseModel):
    """Inputs of `specpick train-plan` (field names are the CLI flags)."""

    model_config = ConfigDict(extra="forbid")

    verifier: ModelName = Field(description="the model you serve: catalog name or repo id (a fine-tune's own id "
                                "with --base-model), a GGUF build (owner/name-GGUF[:Q4_K_M] or a local .gguf path)")
    base_model: ModelName | None = Field(None, description="the published model your verifier was derived from "
                                         "(its catalog row gives the architecture facts)")
    verifier_change: VerifierChange = Field("none", description="how the verifier's weights differ from the model "
                                            "the head was trained on")
    adapters: Annotated[int, Field(ge=1, le=10_000)] | None = Field(None, description="LoRA adapters served "
                                                                    "(with --verifier-change lora)")
    quantization: TrainQuantization | None = Field(None, description="weight format you serve the verifier in")
    rotated: bool = Field(False, description="the quantization rotates hidden states (QuaRot / SpinQuant style)")
    head: ModelName | None = Field(None, description="the published head or draft you use (none: no head yet)")
    method: Method | None = Field(None, description="speculative method (default: the head's, else eagle3; mtp "
                                  "for a verifier with MTP layers and no head)")
    engine: Engine | None = Field(None, description="serving engine (picks the training framework: SGLang -> "
                                  "SpecForge, vLLM -> speculators, TensorRT-LLM -> Model Optimizer)")
    engine_version: EngineVersion | None = Field(None, description="engine release you serve with")
    workload: Workload = Field("chat", description="what the model generates")
    context_p90: Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS)] | None = Field(
        None, description="90th percentile of tokens in context while decoding, in your traffic")
    thinking: Literal["on", "off", "mixed"] | None = Field(None, description="thinking mode you serve with")
    system_prompt: Literal["stock", "custom"] | None = Field(None, description="stock: the template/system prompt "
                                                             "the head was trained with; custom: your own")
    tau_measured: Tau | None = Field(None, description="mean accepted tokens per cycle (bonus included) you "
                                     "measured with the head on your traffic")
    tau_measured_n: DraftTokens | None = Field(None, description="draft length N that tau was measured at")
    first_position_acceptance: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = Field(
        None, description="measured acceptance of the first drafted token, 0-1")
    tau_reference: Tau | None = Field(None, description="tau of the same head on its reference setup (the base "
                                      "verifier, bf16, its benchmark) at the same N")
    prompts: Annotated[int, Field(ge=0, le=100_000_000)] | None = Field(None, description="own prompts available "
                                                                       "for training")
    drift: Literal["none", "weekly"] = Field("none", description="how fast your traffic's domain changes")
    train_gpu: OneLineText | None = Field(None, description="GPU you would train on (default H100)")
    train_gpus: GpuCount = Field(8, description="GPUs you would train on")
    gpu: OneLineText | None = Field(None, description="GPU you serve on, for the economics gate (default: "
                                    "--train-gpu)")
    gpus: GpuCount = Field(1, description="GPUs serving the verifier (tensor parallel)")
    concurrency: Concurrency = Field(1, description="concurrent sequences you serve at (economics gate)")
    live: bool = Field(False, description="read the verifier's model card (base_model, base_model_relation) and "
                       "config (quantization_config) from the Hub to fill --base-model, --verifier-change and "
                       "--quantization when you leave them out")
    serving_gpu_hours_month: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)] | None = Field(
        None, description="GPU-hours a month you spend serving this model (for the payback estimate)")


class ReasonOut(BaseModel):
    rule: str
    detail: str
    evidence: list[str] = Field(description="ids in tools/data/training_evidence.csv")


class Range(BaseModel):
    low: float
    high: float


class DataOut(BaseModel):
    samples: int
    regenerate: bool
    max_length: int
    epochs: int


class CostOut(BaseModel):
    gpu_hours_low: float
    gpu_hours_high: float
    gpu: str


class FitnessRow(BaseModel):
    check: str
    detail: str
    effect: str = Field(description="expected acceptance effect, with the figures it rests on")
    action: str
    evidence: list[str]


class RecipeOut(BaseModel):
    tool: str
    commands: list[str]
    notes: list[str] = Field(default_factory=list)


class TrainPlan(BaseModel):
    """What to do about the speculator, with the evidence, data, cost and commands."""

    verifier: str = Field(description="the id you serve (printed in every command)")
    facts_from: str = Field(description="catalog row the architecture facts come from")
    decision: Decision
    reasons: list[ReasonOut]
    head_fitness: list[FitnessRow] = Field(default_factory=list, description="how the deployment differs from what "
                                           "the head was trained on (verifier, precision, context, template, newer "
                                           "head), each with its cited effect and action")
    expected_tau: Range | None = None
    expected_speedup: Range | None = None
    data: DataOut | None = None
    cost: CostOut | None = None
    recipe: RecipeOut | None = None
    validate_steps: list[str] = Field(alias="validate", serialization_alias="validate")
    checklist: list[str] = Field(default_factory=list)
    speedup_now: float | None = Field(None, description="the cost model's speedup at your measured tau (what you "
                                      "get today), for comparison with expected_speedup")
    break_even_concurrency: int | None = None
    payback_months: Range | None = None
    thresholds: list[str] = Field(description="the design-choice thresholds the rules used")
    assumptions: list[str]

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


VALIDATE = [
    "measure on the chat endpoint with your production template, system prompt, thinking mode and sampling "
    "(F22-F25), >= 80 prompts per domain and per context bucket (80 requests per subset as in D6b; buckets <8K, "
    "8-32K, >32K as in F10, F17)",
    "compare against the published head and against no speculation at your concurrency: accept only if "
    "throughput improves, not tau alone (T3: a tau gain came with -3% throughput in one cell)",
    "pick the checkpoint by serving acceptance length, not training loss (D9: EAGLE-3 peaked at ~4.6 epochs)",
    "spot-check greedy outputs are identical with and without speculation; canary with a run-time guard (O6)",
    "re-measure after every verifier update or quantization change (F1, F8-F13)",
]


def _thresholds() -> list[str]:

    return [f"broken: tau <= {r.BROKEN_TAU_DESIGN} or first-position < {r.BROKEN_FIRST_POSITION_DESIGN:.0%} "
            "(D1, D3 vs F26, F8, F9)",
            f"serving mismatch: tau / reference < {r.MISMATCH_RATIO_DESIGN} (F22, F25)",
            f"unknown head length: {r.UNKNOWN_HEAD_CONTEXT_DESIGN} tokens (F17)",
            f"keep head after LoRA/fine-tune: tau / base >= {r.KEEP_HEAD_RATIO_DESIGN} "
            "(worst public adapter 0.912, F3)",
            f"retrain after quantization / domain gap: tau / reference < {r.RETRAIN_RATIO_DESIGN} (F10, T3)",
            "economics: train only if the cost model's central speedup at the low end of the expected tau is > 1x",
            f"few prompts: < {r.FEW_PROMPTS_DESIGN} (D1-D4); train on >= {r.TRAIN_SAMPLES} samples (D5, D6)"]


TRAINED_LOADS = ("head_repo", "verifier_layers", "drafter_repo")  # method registry `loads` values that are trained


def _check_serving(inp: TrainPlanInput, spec) -> None:  # type: ignore[no-untyped-def]
    """The serving facts `recommend` refuses, refused here too (issue 39, cause 12): a GPU count the heads do not
    split over (engines that shard by layer take any count), a p90 context past the model's limit."""
    if not splits_layers(inp.engine):
        check_tensor_parallel(inp.gpus, spec.num_attention_heads, spec.num_kv_heads, model=spec.repo_id)
    if inp.context_p90 is not None:
        check_context(inp.context_p90, spec.max_position_embeddings, model=spec.repo_id, flag="--context-p90")


def _check_method(method: str, spec) -> None:  # type: ignore[no-untyped-def]
    """train-plan plans speculators trained on this verifier; say where other methods belong."""

    rec = method_record(method)
    if rec.loads == "nothing":
        raise InputError(f"{method} drafts from the context and needs no training; `specpick recommend` or "
                         "`specpick speedup` size it (drop --method to plan a trained head)")
    if rec.loads not in TRAINED_LOADS:
        raise InputError(f"{method} uses a separate draft language model, not a head trained on this verifier: "
                         "`specpick recommend` picks one (drop --method to plan a trained head)")
    if rec.loads == "verifier_layers" and not spec.mtp_layers:
        raise InputError(f"{spec.repo_id} ships no MTP layers: --method mtp needs a model that has them "
                         "(drop --method to plan an EAGLE-3 head)")


def _from_card(inp: TrainPlanInput) -> tuple[TrainPlanInput, list[str]]:
    """Fill what the user left out from the verifier's model card and config (the user's flags win)."""

    if get_catalog().find_model(inp.verifier) is not None and inp.base_model is None:
        return inp, []  # a catalog model is its own base
    card = read_card(inp.verifier)
    update: dict[str, object] = {}
    if inp.base_model is None and card.base_model:
        update["base_model"] = card.base_model
    if inp.verifier_change == "none" and card.change and card.change != "none":
        update["verifier_change"] = card.change
    if inp.quantization is None and card.quantization:
        update["quantization"] = card.quantization
    return inp.model_copy(update=update), [f"--live: {n}" for n in card.notes]


def _train_quantization(gguf_quant: str | None) -> str | None:
    """A GGUF file type as the training rules' weight-format classes: by its bits per weight (tools/vocab.py)."""

    if gguf_quant is None or gguf_quant not in BYTES_PER_PARAM:
        return None
    bits = BYTES_PER_PARAM[gguf_quant] * 8
    return "bf16" if bits >= 15 else "int8" if bits >= 7.5 else "int4"


def _gguf_verifier(inp: TrainPlanInput) -> tuple[TrainPlanInput, list[str]]:
    """A GGUF repo id (:QUANT) or a local .gguf path: its base model and weight format, by the rule every verb uses
    (tools/hub/gguf_ref.py: the repo name or the file's header; the user's flags win)."""

    if inp.base_model is not None or not is_gguf_name(inp.verifier):
        return inp, []
    resolved = resolve_gguf_base(inp.verifier)
    assert resolved is not None  # is_gguf_name checked the shape

    base, ref = get_catalog().model(resolved[0]).repo_id, resolved[1]
    update: dict[str, object] = {"base_model": base}
    notes = [*ref.notes, f"{inp.verifier}: a GGUF build of {base}" + (f"; weights {ref.quantization}" if
                                                                       ref.quantization else "")]
    trained = _train_quantization(ref.quantization)
    if inp.quantization is None and trained is not None:
        update["quantization"] = trained
        notes.append(f"{ref.quantization} taken as {trained} for the training rules (by its bits per weight)")
    return inp.model_copy(update=update), notes


def train_plan_tool(inp: TrainPlanInput) -> TrainPlan:
    """Decide fix / keep / measure / fine-tune / train, and fill data, cost, recipe and economics.

    Raises:
        NotFoundError: the verifier (or --base-model), or a GPU, is not in the catalog.
        InputError: contradictory inputs (--adapters without lora, --tau-measured-n without --tau-measured).
    """

    if inp.tau_measured_n is not None and inp.tau_measured is None:
        raise InputError("--tau-measured-n is the N of a measured tau: add --tau-measured")
    if inp.tau_measured is not None and inp.tau_measured_n is not None and inp.tau_measured > inp.tau_measured_n + 1:
        raise InputError(f"--tau-measured {inp.tau_measured:g} at --tau-measured-n {inp.tau_measured_n} is above "
                         f"N + 1 = {inp.tau_measured_n + 1} (tau counts the bonus token): check the figures")
    if inp.rotated and inp.quantization in (None, "bf16", "fp16"):
        raise InputError("--rotated describes a quantization that rotates hidden states (QuaRot / SpinQuant): give "
                         "--quantization too, or drop --rotated")
    inp, card_notes = _gguf_verifier(inp)
    if inp.live:
        inp, live_notes = _from_card(inp)
        card_notes += live_notes
    derived = resolve_derived(inp.verifier, inp.base_model, inp.verifier_change, inp.adapters)
    cat = get_catalog()
    spec = derived.facts
    _check_serving(inp, spec)
    head_row = cat.head(inp.head) if inp.head else None
    # No method named: the head's; else the verifier's own MTP layers when it ships them; else EAGLE-3 (the most
    # mature trainer target in SpecForge, speculators and Model Optimizer).
    method = inp.method or (head_row.method if head_row else ("mtp" if spec.mtp_layers and not inp.head else "eagle3"))
    facts = TrainFacts(
        verifier=derived.repo_id, facts_model=spec.repo_id, verifier_change=inp.verifier_change,
        adapters=derived.adapters, quantization=inp.quantization, rotated=inp.rotated,
        head=HeadFacts(head_row.head_repo_id, head_row.method, head_row.verifier_repo_id,
                       head_row.trained_context_tokens, head_row.trained_dtype, head_row.superseded_by)
        if head_row else None,
        head_named=inp.head, available_heads=tuple(
            h.head_repo_id for h in cat.heads_for(spec.repo_id)
            if h.method == method and h.publisher != "test" and not h.superseded_by),
        method=method, native_mtp=spec.mtp_layers > 0, workload=inp.workload,
        context_p90=inp.context_p90, thinking=inp.thinking, system_prompt=inp.system_prompt,
        tau_measured=inp.tau_measured, tau_measured_n=inp.tau_measured_n,
        first_position_acceptance=inp.first_position_acceptance, tau_reference=inp.tau_reference,
        prompts=inp.prompts, drift=inp.drift)
    _check_method(method, spec)
    out = decide(facts)
    assumptions = [f"architecture facts from the catalog row {spec.repo_id}" + (
        f" (base of {derived.repo_id})" if derived.repo_id != spec.repo_id else ""), *card_notes]
    if inp.head and head_row is None:
        assumptions.append(f"head {inp.head} is not in the catalog: its trained length and precision are unknown")
    if head_row and head_row.verifier_repo_id.lower() != spec.repo_id.lower():
        assumptions.append(f"head {head_row.head_repo_id} was trained for {head_row.verifier_repo_id}, not "
                           f"{spec.repo_id}: treat it as a warm start at best")
    train_gpu = cat.gpu(inp.train_gpu or DEFAULT_TRAIN_GPU)
    if inp.train_gpu is None:
        assumptions.append(f"training GPU not given: {train_gpu.name} assumed")
    serve_gpu = cat.gpu(inp.gpu) if inp.gpu else train_gpu
    cost = recipe = data = None
    if out.data is not None and out.decision in TRAINING_DECISIONS:
        data = out.data
        own = inp.prompts or 0
        if data.samples > own:
            assumptions.append(f"data: your {own} own prompts plus public prompts (Perfect-Blend, Magpie, UltraChat) "
                               f"to reach {data.samples}, every response regenerated by your verifier (D5, G1)")
        c = estimate_cost(spec, train_gpu, samples=data.samples, epochs=data.epochs, regenerate=data.regenerate)
        cost = CostOut(gpu_hours_low=c.gpu_hours_low, gpu_hours_high=c.gpu_hours_high, gpu=c.gpu)
        assumptions += c.assumptions
        rec = build_recipe(verifier=derived.repo_id, family_id=spec.repo_id, engine=inp.engine,
                           method=out.train_method if out.train_method == "mtp" else method, data=data,
                           warm_start=out.warm_start, thinking=inp.thinking, gpus=inp.train_gpus)
        recipe = RecipeOut(tool=rec.tool, commands=rec.commands, notes=rec.notes)
    econ_method = "mtp" if out.train_method == "mtp" else method
    econ = economics(spec, serve_gpu, method=econ_method, tau=out.tau, tau_now=inp.tau_measured,
                     n=inp.tau_measured_n, concurrency=inp.concurrency, gpus=inp.gpus, workload=inp.workload,
                     engine=inp.engine, train_gpu_hours=(cost.gpu_hours_low, cost.gpu_hours_high) if cost else None,
                     serving_gpu_hours_month=inp.serving_gpu_hours_month, engine_version=inp.engine_version)
    reasons = [ReasonOut(rule=r.rule, detail=r.detail, evidence=r.evidence) for r in out.reasons]

    fitness = [FitnessRow(check=x.check, detail=x.detail, effect=x.effect, action=x.action, evidence=x.evidence)
               for x in head_fitness(head=inp.head, base=spec.repo_id, verifier=derived.repo_id,
                                     change=derived.change, adapters=derived.adapters,
                                     quantization=inp.quantization, rotated=inp.rotated,
                                     context_p90=inp.context_p90,
                                     trained_context=head_row.trained_context_tokens if head_row else None,
                                     thinking=inp.thinking, system_prompt=inp.system_prompt,
                                     superseded_by=head_row.superseded_by if head_row else "")]
    decision = out.decision
    if econ.pays is False:
        reasons.append(ReasonOut(rule="8 economics", evidence=["T3"], detail=(
            f"at the low end of the expected tau the cost model's central estimate is below 1x at concurrency "
            f"{inp.concurrency} on {serve_gpu.name} "
            f"(80% range {econ.speedup[0]:.2f}-{econ.speedup[1]:.2f}x; "  # type: ignore[index]
            "design choice: train only when the pessimistic end pays): measure no-speculation vs speculation at "
            "your load before paying for training")))
        if decision in TRAINING_DECISIONS:
            decision = "measure-first"
    elif econ.payback_months is not None:
        reasons.append(ReasonOut(rule="8 economics", evidence=["C7", "C8"], detail=(
            f"training repays its GPU-hours in {econ.payback_months[0]}-{econ.payback_months[1]} months of your "
            "serving volume")))
    assumptions += econ.notes
    return TrainPlan(
        verifier=derived.repo_id, facts_from=spec.repo_id, decision=decision, reasons=reasons,
        head_fitness=fitness,
        expected_tau=Range(low=out.tau[0], high=out.tau[1]) if out.tau else None,
        expected_speedup=Range(low=econ.speedup[0], high=econ.speedup[1]) if econ.speedup else None,
        data=DataOut(**vars(data)) if data else None, cost=cost, recipe=recipe,
        validate=VALIDATE, checklist=out.checklist, speedup_now=econ.speedup_now,
        break_even_concurrency=econ.break_even_concurrency,
        payback_months=Range(low=econ.payback_months[0], high=econ.payback_months[1]) if econ.payback_months
        else None, thresholds=_thresholds(), assumptions=assumptions)


def render_text(p: TrainPlan) -> str:
    lines = [f"decision: {p.decision}   verifier {p.verifier}" + (f" (facts from {p.facts_from})"
                                                                  if p.facts_from != p.verifier else "")]
    lines += [f"  [{r.rule}] {r.detail}  ({', '.join(r.evidence)})" for r in p.reasons]
    if p.head_fitness:
        lines.append("  head fitness:")
        lines += [f"    - {h.check}: {h.detail}; expected {h.effect}; action: {h.action} ({', '.join(h.evidence)})"
                  for h in p.head_fitness]
    if p.expected_tau:
        lines.append(f"  expected tau      {p.expected_tau.low:.2f}-{p.expected_tau.high:.2f} (80% interval)")
    if p.expected_speedup:
        lines.append(f"  expected speedup  {p.expected_speedup.low:.2f}-{p.expected_speedup.high:.2f}x"
                     + (f" (stops paying above concurrency ~{p.break_even_concurrency})"
                        if p.break_even_concurrency else ""))
    if p.speedup_now is not None:
        lines.append(f"  speedup today     {p.speedup_now:.2f}x at your measured tau (same cost model)")
    if p.data:
        lines.append(f"  data              {p.data.samples} samples, regenerate={p.data.regenerate}, max_length "
                     f"{p.data.max_length}, {p.data.epochs} epochs")
    if p.cost:
        lines.append(f"  cost              {p.cost.gpu_hours_low:g}-{p.cost.gpu_hours_high:g} GPU-hours on "
                     f"{p.cost.gpu}")
    if p.payback_months:
        lines.append(f"  payback           {p.payback_months.low:g}-{p.payback_months.high:g} months")
    if p.recipe:
        lines.append(f"  recipe ({p.recipe.tool}):")
        lines += [f"    $ {c}" for c in p.recipe.commands]
        lines += [f"    note: {n}" for n in p.recipe.notes]
    if p.checklist:
        lines.append("  checklist:")
        lines += [f"    - {c}" for c in p.checklist]
    lines.append("  validate before deploying:")
    lines += [f"    - {v}" for v in p.validate_steps]
    lines.append("  design thresholds: " + "; ".join(p.thresholds))
    lines.append("  assumptions:")
    lines += [f"    - {a}" for a in p.assumptions]
    return "\n".join(lines)

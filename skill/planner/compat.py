"""Section 3: the named compatibility checks for the chosen strategy.

Tokenizer identity (not just vocab size), vocab padding, head-to-verifier
match, VRAM fit with the draft included, runtime support, KV-cache rollback,
sampling, parallelism, and the known-broken combinations (from the flags).
"""

from __future__ import annotations

from specpick.tools.checks.method_fit import UNKNOWN_HEAD_NOTE
from specpick.skill.planner.candidates import Candidate
from specpick.skill.planner.context import PlanContext
from specpick.skill.schema import CompatCheck, Flag
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.catalog.specs import EngineSupport
from specpick.tools.methods import is_method, method_record
from specpick.tools.engines.lookup import engine, label as engine_label
from specpick.tools.vocab import MODEL_FREE_METHODS, TRAINED_HEAD_METHODS, TREE_HEAD_METHODS
from specpick.tools.training.fitness import derived_fitness

# Tags of engine_support.csv ``breaks_with`` that the inputs cannot tell (engine flags we do not ask for).
_UNASKED = ("overlap_schedule",)


def _tokenizer_checks(chosen: Candidate, ctx: PlanContext) -> list[CompatCheck]:
    s = chosen.strategy
    if chosen.tokenizer is not None:
        v = chosen.tokenizer
        tok = CompatCheck(name="tokenizer", verdict=v.check if v.verdict != "identical_except_padding" else "pass",
                          reason=f"{v.verdict}: {v.summary} (compared at {v.level} level, source {v.source})",
                          source="tools/checks/tokenizers.py; ENGINES.md issues 6-9")
        pad = CompatCheck(name="vocab_padding", verdict="warn" if v.verdict == "identical_except_padding" else "pass",
                          reason=("config vocab_size differs only by padding: pad the draft's embedding/LM head or "
                                  "use an engine build that pads; vLLM's check compares vocab_size only"
                                  if v.verdict == "identical_except_padding" else "same config vocab_size"),
                          source="vllm#7252, #5203, #10913; transformers#45307")
        return [tok, pad]
    if s in TRAINED_HEAD_METHODS:
        reason = ("the head reuses the verifier's embedding and tokenizer" if s != "eagle3" else
                  "EAGLE-3 heads predict over a reduced draft vocabulary mapped onto the verifier's (d2t/t2d "
                  "tables shipped with the head)")
        return [CompatCheck(name="tokenizer", verdict="pass", reason=reason, source="EAGLE / Medusa READMEs"),
                CompatCheck(name="vocab_padding", verdict="pass", reason="no separate vocabulary to pad")]
    if s in MODEL_FREE_METHODS:
        return [CompatCheck(name="tokenizer", verdict="pass", reason="drafts are the verifier's own tokens "
                            "(copied from the context)", source="method definition"),
                CompatCheck(name="vocab_padding", verdict="pass", reason="no second vocabulary")]
    return [CompatCheck(name="tokenizer", verdict="info", reason="no draft: nothing to compare")]


def _derived_head_check(chosen: Candidate, ctx: PlanContext) -> CompatCheck | None:
    """A head published for the base model on a fine-tuned / RL / merged / LoRA verifier: warn, never pass."""

    v = ctx.dep.verifier
    head = chosen.draft_repo or (chosen.head.head_repo_id if chosen.head else None)
    if v.change == "none" or head is None or chosen.needs_training:
        return None
    fit = derived_fitness(head, v.repo_id, v.served_repo_id, v.change, v.adapters)
    if fit is None:
        return None
    return CompatCheck(name="head_match", verdict="warn", reason=f"{fit.detail}: {fit.effect}; {fit.action}",
                       source="tools/data/training_evidence.csv " + ", ".join(fit.evidence))


def _head_check(chosen: Candidate, ctx: PlanContext) -> CompatCheck:
    s = chosen.strategy
    derived = _derived_head_check(chosen, ctx) if s in TRAINED_HEAD_METHODS else None
    if derived is not None:
        return derived
    built_in = is_method(s) and method_record(s).in_verifier_checkpoint
    if built_in and chosen.head is not None and chosen.draft_repo == chosen.head.head_repo_id:
        return CompatCheck(name="head_match", verdict="pass", reason=f"MTP drafter {chosen.head.head_repo_id} was "
                           f"published for {chosen.head.verifier_repo_id}", source=chosen.head.source or "heads.csv")
    if built_in:
        return CompatCheck(name="head_match", verdict="pass", reason=f"built-in MTP layers of {ctx.verifier.repo_id} "
                           f"(num_nextn_predict_layers={ctx.verifier.mtp_layers})", source="catalog (models.csv)")
    if s not in TREE_HEAD_METHODS:
        return CompatCheck(name="head_match", verdict="info", reason="no speculative head in this strategy")
    if chosen.needs_training:
        return CompatCheck(name="head_match", verdict="warn", reason="the head does not exist yet: train it on this "
                           "verifier (same checkpoint and dtype you will serve)", source="EAGLE / SpecForge docs")
    if chosen.head is not None:
        return CompatCheck(name="head_match", verdict="pass", reason=f"{chosen.head.head_repo_id} was trained for "
                           f"{chosen.head.verifier_repo_id}", source=chosen.head.source or "heads.csv")
    return CompatCheck(name="head_match", verdict="warn", reason=f"{chosen.draft_repo} is not in the catalog: "
                       "check its config's verifier and hidden size before serving", source="head check")


def _vram_check(chosen: Candidate, base_fit, ctx: PlanContext) -> CompatCheck:
    if not base_fit.fits:
        return CompatCheck(name="vram_fit", verdict="fail", reason=base_fit.verdict_line() + (
            f"; this answer is for the {ctx.concurrency} sequences that fit" if base_fit.max_concurrency_at_context
            else ""), source=f"tools/checks/vram.py ({base_fit.reservation})")
    fit = chosen.vram or base_fit
    if not fit.fits:
        return CompatCheck(name="vram_fit", verdict="fail", reason=fit.verdict_line(),
                           source=f"tools/checks/vram.py ({fit.reservation})")
    if fit.offload is not None:  # llama.cpp runs it with layers in system RAM: say so, and what it costs per token
        return CompatCheck(name="vram_fit", verdict="warn", reason=fit.verdict_line(),
                           source="tools/checks/offload.py, docs/references/LLAMACPP-PLACEMENT.md (weights beyond "
                                  f"the GPUs in system RAM; {fit.reservation})")
    tight = fit.headroom_gib < 0.1 * fit.usable_gib_per_gpu
    extra = f", {fit.draft_weights_gib:.1f} GiB/GPU of draft/head weights included" if fit.draft_weights_gib else ""
    extra += "".join(f"; {a}" for a in fit.assumptions if UNKNOWN_HEAD_NOTE in a)  # a head counted as 0 GiB: say so
    return CompatCheck(name="vram_fit", verdict="warn" if tight else "pass",
                       reason=f"fits on {fit.gpus}x {fit.gpu} with {fit.headroom_gib:.1f} GiB/GPU headroom at "
                              f"{ctx.context_tokens} tokens x {ctx.concurrency} sequences; up to "
                              f"{fit.max_concurrency_at_context} sequences at {ctx.context_tokens} tokens{extra}",
                       source=f"tools/checks/vram.py (weights + draft/head + KV; {fit.reservation})")


def deployment_features(ctx: PlanContext) -> set[str]:
    """The ``breaks_with`` tags this deployment has, as far as the inputs tell."""
    inp, v, out = ctx.inp, ctx.verifier, set()
    if inp.pipeline_parallel > 1:
        out.add("pipeline_parallel")
    if inp.lora:
        out.add("lora")
    if inp.workload in ("structured", "agentic"):  # JSON schemas and tool calls run through structured output
        out.add("structured_output")
    if ctx.sampling == "beam":
        out.add("beam_search")
    fmt = ctx.dep.verifier.quantization_given  # the user's --quantization, or the format a GGUF build declares
    if v.mtp_layers > 0 and fmt and fmt != v.dtype:
        out.add("quantized_mtp")  # the user quantizes the checkpoint, MTP layer included
    if v.sliding_window:
        out.add("hybrid_attention" if 0.0 < v.sliding_layer_fraction < 1.0 else "sliding_window")
    if ctx.dep.hardware.dp_attention:
        out.add("dp_attention")  # SGLang STANDALONE and NGRAM do not run with --enable-dp-attention (ENGINES.md)
    if inp.spec_overlap == "on":
        out.add("overlap_schedule")  # the user runs the engine's overlap scheduler with speculation
    if ctx.engine == "llamacpp" and ctx.dep.concurrency > 1:
        out.add("parallel_slots")  # llama-server -np: each slot drafts on its own (llama.cpp#27117)
    return out


def support_row(ctx: PlanContext, chosen: Candidate) -> EngineSupport | None:
    """The support row for the chosen method at the user's engine version (today's build if not given)."""
    version = ctx.inp.engine_version if ctx.engine_explicit else None
    return get_catalog().support(chosen.engine, chosen.strategy, version)


def breaks_with_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """A flag when the chosen method breaks with a feature of this deployment on this engine version."""
    row = support_row(ctx, chosen) if chosen.strategy != "none" else None
    hit = sorted(deployment_features(ctx) & set(row.breaks_with)) if row is not None else []
    if not hit or row is None:
        return []
    fix = f"; workaround: {row.workaround}" if row.workaround else ""
    return [Flag(id="engine_breaks_with", severity="warn",
                 message=f"{chosen.strategy} on {engine_label(chosen.engine)} ({row.engine_version}) breaks with "
                         f"{', '.join(hit)}, which this deployment uses{fix}",
                 source=f"engine_support.csv breaks_with ({row.source})")]


def _runtime_check(chosen: Candidate, ctx: PlanContext) -> CompatCheck:
    if chosen.strategy == "none":
        return CompatCheck(name="runtime_support", verdict="info", reason="speculation off")
    row = support_row(ctx, chosen)
    if row is None:
        return CompatCheck(name="runtime_support", verdict="fail", reason="no support record")
    verdict = {"yes": "pass", "partial": "warn"}.get(row.support, "fail")
    hit = sorted(deployment_features(ctx) & set(row.breaks_with))
    if hit:
        verdict = "fail" if {"pipeline_parallel", "lora", "beam_search"} & set(hit) else "warn"
    unasked = [t for t in row.breaks_with if t in _UNASKED]
    reason = (f"{engine_label(chosen.engine)} ({row.engine_version}): {row.config_name}"
              + (f"; {row.notes}" if row.notes else "")
              + (f"; breaks with {', '.join(hit)} here" + (f" ({row.workaround})" if row.workaround else "")
                 if hit else "")
              + (f"; also breaks with {', '.join(unasked)} if you enable it" if unasked else ""))
    return CompatCheck(name="runtime_support", verdict=verdict, reason=reason, source=row.source)


def _kv_check(chosen: Candidate, ctx: PlanContext) -> CompatCheck:
    if chosen.strategy == "none":
        return CompatCheck(name="kv_rollback", verdict="info", reason="speculation off")
    if chosen.engine == "transformers":
        if ctx.verifier.sliding_window:
            return CompatCheck(name="kv_rollback", verdict="fail", reason="assisted generation crops a dynamic "
                               "cache; sliding-window (hybrid) caches are not supported", source="transformers docs")
        return CompatCheck(name="kv_rollback", verdict="pass", reason="DynamicCache is cropped after rejections "
                           "(no static cache)", source="transformers generation docs")
    reason, source = engine(chosen.engine).kv_rollback
    return CompatCheck(name="kv_rollback", verdict="pass", reason=f"{engine_label(chosen.engine)} {reason}",
                       source=source)




def _parallelism_check(ctx: PlanContext, chosen: Candidate, problems: list[str]) -> CompatCheck:
    """How the GPUs split the verifier, in the chosen engine's own terms (llama.cpp splits layers, not heads)."""
    if chosen.engine == "llamacpp" and not problems:
        return CompatCheck(name="parallelism", verdict="pass", reason=(
            "one GPU" if ctx.gpus == 1 else f"{ctx.gpus} GPUs, whole layers on each (--split-mode layer, llama.cpp's "
            "default: only activations cross between GPUs, PCIe without NVLink suffices)"),
            source="docs/references/LLAMACPP-PLACEMENT.md (--split-mode)")
    return CompatCheck(name="parallelism", verdict="fail" if problems else "pass",
                       reason="; ".join(problems) or f"tensor parallel {ctx.gpus}; " + (
                           "a draft runs unsharded (TP 1) on one GPU" if ctx.gpus == 1 else
                           f"vLLM runs a draft at TP 1 or the target's {ctx.gpus}"),
                       source="vllm#14117, #4872, #31345")


def build_checks(ctx: PlanContext, chosen: Candidate, base_fit, flags: list[Flag]) -> list[CompatCheck]:
    """All named checks for the chosen strategy."""
    checks = _tokenizer_checks(chosen, ctx)
    checks += [_head_check(chosen, ctx), _vram_check(chosen, base_fit, ctx), _runtime_check(chosen, ctx),
               _kv_check(chosen, ctx)]
    sampling_verdict = {"greedy": "pass", "low-temp": "pass", "high-temp": "warn", "beam": "fail"}[ctx.sampling]
    checks.append(CompatCheck(name="sampling", verdict=sampling_verdict, reason=f"{ctx.sampling} "
                              f"(T={ctx.temperature:g})" + {"high-temp": ": acceptance drops",
                                                            "beam": ": no engine speculates under beam search"}
                              .get(ctx.sampling, ""), source="seed decision rules; ENGINES.md"))
    par = []
    if ctx.inp.pipeline_parallel > 1:
        par.append("pipeline parallel breaks speculation")
    if ctx.inp.lora:
        par.append("LoRA serving breaks speculation")
    checks.append(_parallelism_check(ctx, chosen, par))
    known = [f for f in flags if f.severity in ("warn", "fail")]
    checks.append(CompatCheck(name="known_issues", verdict="fail" if any(f.severity == "fail" for f in known) else
                              "warn" if known else "pass",
                              reason="; ".join(f.id for f in known) or "no known-broken combination matched",
                              source="ENGINES.md section (c)"))
    return checks

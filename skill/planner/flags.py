"""Planner step 4: the "always flag" warnings, each tied to the rule or issue it comes from.

Every flag has a stable id (``FlagId`` in ``skill/schema.py``) that the evals
check, a severity, a message saying what to do, and its source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specpick.skill.planner.candidates import Candidate
from specpick.skill.planner.context import PlanContext
from specpick.skill.planner.priced import priced_text
from specpick.skill.planner.triggers import (  # noqa: F401  (HIGH_CONCURRENCY, KNOWN_KV_DTYPES: re-exported)
    HIGH_CONCURRENCY, KNOWN_KV_DTYPES, beam, exotic_kv, hot, long_context, pipelined,
)
from specpick.skill.schema import Flag
from specpick.tools.model.acceptance_effects import QUANT4_BELOW_BYTES_PER_PARAM, QUANT4_FORMATS
from specpick.tools.deploy.flag_effects import bf16_head_on_quantized, head_trained_on, served_format
from specpick.tools.methods import method_record
from specpick.tools.vocab import EAGLE_METHODS, INPUT_GROUNDED_WORKLOADS, MODEL_BASED_METHODS, TRAINED_HEAD_METHODS
from specpick.tools.training.fitness import derived_fitness
from specpick.tools.training.fitness import head_fitness
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.engines.lookup import label as engine_label

if TYPE_CHECKING:  # the training package is imported where a head is checked, not when the planner loads
    from specpick.tools.training.fitness import Fitness

SEED = "seed decision rules (docs/DECISION-RULES.md)"


def _f(id_: str, severity: str, message: str, source: str) -> Flag:
    return Flag(id=id_, severity=severity, message=message, source=source)  # type: ignore[arg-type]


def blocker_flags(ctx: PlanContext) -> list[Flag]:
    """Deployment facts that rule speculation out whatever the method."""
    inp, out = ctx.inp, []
    if beam(ctx.sampling):
        out.append(_f("beam_search", "fail", "beam search and speculative decoding do not combine in vLLM, SGLang "
                      "or TensorRT-LLM (Medusa in TRT-LLM: no beam search); use greedy or sampling to speculate",
                      "ENGINES.md: vLLM compatibility matrix (SD x beam search), TRT-LLM Medusa limits"))
    if pipelined(inp.pipeline_parallel):
        out.append(_f("pipeline_parallel", "fail", f"pipeline parallel ({inp.pipeline_parallel} stages) with "
                      "speculation fails in vLLM and TensorRT-LLM; switch to tensor parallelism to speculate",
                      "vllm#14117, #49355, #52069; TensorRT-LLM#9009; vLLM docs (PP not composable)"))
    if exotic_kv(inp.kv_cache_dtype):
        out.append(_f("exotic_kv_quant", "fail", f"KV-cache dtype {inp.kv_cache_dtype!r} with speculation has "
                      "produced degenerate loops while health checks stay green; serve it without speculation, or "
                      "use auto/fp8 KV to speculate", "vllm#40831, #52475, #53180"))
    if ctx.dep.engine.name == "transformers" and ctx.concurrency > 1:
        out.append(_f("transformers_batch1", "fail", f"HF assisted generation runs batch size 1 only; at "
                      f"concurrency {ctx.concurrency} there is nothing to enable: move to vLLM or SGLang to speculate",
                      "transformers generate(): 'assisted generate is only supported for batch_size = 1'"))
    # LoRA serving is no blocker of its own: vLLM runs speculation with LoRA adapters since vllm#21068 (V0's shape
    # error, vllm#4872, is gone) and TensorRT-LLM since #12661. An engine release that still breaks with it says so
    # in engine_support.csv ``breaks_with`` (compat's runtime_support check and engine_breaks_with flag read it).
    return out


def deployment_flags(ctx: PlanContext, chosen: Candidate, candidates: list[Candidate],
                     break_even: int | None) -> list[Flag]:
    """Warnings about the chosen strategy in this deployment: load, method, serving path, verifier."""
    return (load_flags(ctx, chosen, break_even) + _method_flags(ctx, chosen) + _serving_flags(ctx, chosen)
            + _verifier_flags(ctx, chosen))


def load_flags(ctx: PlanContext, chosen: Candidate, break_even: int | None) -> list[Flag]:
    """Sampling temperature and concurrency against the break-even point."""
    s, out = chosen.strategy, []
    if hot(ctx.temperature) and not beam(ctx.sampling):
        out.append(_f("high_temperature", "warn", f"T={ctx.temperature:g}: stochastic sampling accepts fewer "
                      "draft tokens; keep N at 2-3 and match the draft's temperature to the verifier's",
                      f"{SEED}; EAGLE-2 paper (MT-Bench speedup 4.26x at T=0 vs 3.80x at T=1, Vicuna-13B)"))
    if s != "none" and break_even is None and ctx.concurrency >= HIGH_CONCURRENCY:
        out.append(_f("batch_saturation", "warn", f"at concurrency {ctx.concurrency} the verifier nears compute-bound: "
                      "gains shrink as the batch grows (the model still expects a gain here); keep N short and "
                      "measure throughput against a baseline at this load",
                      f"{SEED} (batch-heavy serving); EAGLE-3 paper Table 5 (SGLang H100: 1.81x at bs2 -> 1.38x "
                      "at bs64)"))
    if break_even is not None and s != "none":
        sev = "fail" if ctx.concurrency >= break_even else "warn" if ctx.concurrency * 2 >= break_even else "info"
        out.append(_f("batch_saturation", sev, f"speculation stops paying above concurrency ~{break_even}: the "
                      "verifier is compute-bound there and every rejected draft token is wasted work",
                      f"{SEED} (batch-heavy serving); sglang#4759, ArcticInference#185; TRT-LLM AUTO turns SD "
                      "off above concurrency 32"))
    return out


def engine_flags(chosen: Candidate) -> list[Flag]:
    """Facts of the engine itself, true whether or not speculation ends up on (a switched-off plan keeps them)."""
    if chosen.engine != "transformers":
        return []
    return [_f("transformers_batch1", "info", "HF assisted generation runs batch size 1 only: fine for one request "
               "at a time; serve with vLLM or SGLang to batch",
               "transformers generate(): 'assisted generate is only supported for batch_size = 1'")]


def _method_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """What the chosen method needs or risks (heads, Medusa data, quantized verifiers, n-gram)."""
    inp, s, out = ctx.inp, chosen.strategy, []
    if s in TRAINED_HEAD_METHODS:
        out.append(_f("eagle_needs_internals", "info", "the head reads the verifier's hidden states: it runs "
                      f"inside {_engines_running(s)}, not through plain transformers generate()",
                      f"{SEED} (always flag); engine_support.csv"))
    if s == "medusa":
        out.append(_f("medusa_data_cost", "warn", "Medusa heads need a supervised fine-tune on the verifier's own "
                      "outputs for your prompts; generating that data is often the largest cost"
                      + ("" if chosen.needs_training else " (already paid for the published heads used here)"),
                      f"{SEED} (always flag)"))
    served = ctx.dep.verifier  # the user's --quantization, or the format a GGUF build declares
    fmt, quantized = served_format(ctx.dep, chosen.head)
    # A head published for a quantized build (RedHatAI/GLM-5.2-speculator.dspark for zai-org/GLM-5.2-FP8) was trained
    # against that build's hidden states: no BF16 warning when the same format is served, the opposite one otherwise.
    trained_on = head_trained_on(chosen.head)
    if (chosen.head is not None and not method_record(s).in_verifier_checkpoint and trained_on is not None
            and not quantized and served.weight_format in ("bf16", "fp16")):
        out.append(_f("bf16_verifier_quantized_head", "info", f"the head was trained against "
                      f"{chosen.head.verifier_repo_id} ({trained_on} weights); you serve {served.served_repo_id} in "
                      f"{served.weight_format}: the same model, but not the hidden states it was trained on; measure "
                      "alpha before trusting the estimate", f"heads.csv verifier_repo_id ({chosen.head.source})"))
    if chosen.head is not None and bf16_head_on_quantized(ctx.dep, s, chosen.head) is not None:
        fit = _precision_fitness(chosen.head.head_repo_id, ctx, fmt)
        against = f"{chosen.head.verifier_repo_id} ({trained_on})" if trained_on else "the BF16 verifier"
        out.append(_f("quantized_verifier_bf16_head", "warn", f"the head was trained against {against}; "
                      f"with the verifier in {fmt} acceptance can collapse (acceptance 0 and '!!!' "
                      "output reported)" + (f". Expected effect: {fit.effect}. Action: {fit.action}" if fit else
                                            ": measure alpha before trusting the estimate")
                      + priced_text(ctx, chosen, "quantized_verifier_bf16_head"),
                      "vllm#9534; TensorRT-LLM#7842" + (
                          f"; tools/data/training_evidence.csv {', '.join(fit.evidence)}" if fit else "")))
    if s in EAGLE_METHODS | {"mtp"} and inp.workload in ("agentic", "rag", "chat") and \
            chosen.engine == "vllm":
        out.append(_f("prefix_cache_eagle", "info", "vLLM's EAGLE/MTP path drops the last prefix-cache block "
                      "(hit rate 92% -> 71% reported): watch prefix-cache hit rate on prefix-heavy traffic",
                      "vllm#38182, #53670 (PR #51769)"))
    if s == "ngram" and inp.workload not in INPUT_GROUNDED_WORKLOADS:
        out.append(_f("low_overlap_ngram", "warn", "n-gram drafting only pays when the output copies the input; "
                      "on free-form text it can be slower than no speculation (69.8 -> 61.8 tok/s reported)",
                      "vllm#8439"))
    if s == "ngram" and inp.workload in ("agentic", "structured"):
        out.append(_f("ngram_tool_calls", "warn", "n-gram with a short minimum match (prompt_lookup_min=2) has "
                      "corrupted tool calls on Qwen3.x; use prompt_lookup_min >= 8 and validate tool-call JSON",
                      "vllm#40875, #56077, #39273"))
    return out


def _serving_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """Draft length under load, the engine's serving path and workload-specific advice."""
    inp, s, out = ctx.inp, chosen.strategy, []
    # No large-draft warning here: N is the planner's own choice, and its tuning never lengthens N under load
    # (skill/planner/tuning.py under_load, from the same vllm#6494/#21278 evidence), so it would flag itself.
    if ctx.concurrency > 1 and s != "none":
        out.append(_f("concurrency_acceptance", "info", "acceptance measured at batch 1 need not hold at high "
                      "concurrency (one method's acceptance fell 0.66 -> 0.0018): measure at your concurrency",
                      "llama.cpp#27117"))
    out += engine_flags(chosen)
    if s == "suffix":
        out.append(_f("suffix_needs_plugin", "info", "vLLM suffix decoding needs `pip install arctic-inference`",
                      "vLLM config/speculative.py (suffix)"))
    if inp.workload == "structured" and s not in ("none",):
        out.append(_f("structured_high_acceptance", "info", "structured output (JSON, schemas) accepts drafts "
                      "well: a longer draft (N >= 7) pays while alpha stays above 0.9", f"{SEED}"))
    if s == "eagle3" and chosen.engine == "trtllm" and (ctx.verifier.is_mla or ctx.verifier.sliding_window):
        out.append(_f("mla_dynamic_tree", "warn", "TensorRT-LLM's dynamic draft tree does not support MLA or "
                      "sliding-window models: use a static tree or chain", "TensorRT-LLM speculative docs @04c8822"))
    return out


def _verifier_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """Facts of the verifier (MoE, long context, gated) and engine-version drift."""
    s, out = chosen.strategy, []
    if ctx.verifier.is_moe and s != "none":
        out.append(_f("moe_verification", "info", "MoE verification of N+1 tokens touches more experts than "
                      "one-token decode, so verify costs more than on a dense model of the same active size",
                      "EAGLE on Mixtral-8x7B: 1.5x vs ~3x on dense models (published-dev.csv EAGLE1-MIXTRAL)"))
    if long_context(ctx.context_tokens) and s != "none":
        out.append(_f("long_context", "info", "long contexts keep decode memory-bound (KV reads) at higher "
                      "batch, so gains hold to a higher concurrency", "MagicDec (published-dev.csv MAGICDEC)"))
    if s in MODEL_BASED_METHODS:
        out.append(_f("acceptance_drifts", "info", "published acceptance is not always reproduced by current "
                      "engine versions: pin the version and measure tau", "vllm#26191"))
    out += _derived_verifier_flags(ctx, chosen)
    out += _head_fitness_flags(ctx, chosen)
    if ctx.verifier.gated == "yes" or (chosen.draft is not None and chosen.draft.gated == "yes"):
        out.append(_f("gated_model", "info", "a model here is gated on the Hub: accept its licence and set "
                      "HF_TOKEN on the serving host", "catalog (gated column)"))
    return out


def _derived_verifier_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """Head fitness of a fine-tuned / RL / merged / LoRA verifier (--base-model, --verifier-change)."""

    v = ctx.dep.verifier
    if v.change == "none" or chosen.strategy not in TRAINED_HEAD_METHODS or chosen.needs_training:
        return []  # a head you will train is trained on the modified verifier itself
    head = chosen.draft_repo or (chosen.head.head_repo_id if chosen.head else f"a {chosen.strategy} head")
    fit = derived_fitness(head, v.repo_id, v.served_repo_id, v.change, v.adapters)
    if fit is None:
        return []
    return [_f("verifier_modified", "warn", f"{fit.detail}. Expected effect: {fit.effect}. Action: {fit.action}",
               "tools/data/training_evidence.csv " + ", ".join(fit.evidence))]


def _precision_fitness(head: str, ctx: PlanContext, fmt: str) -> Fitness | None:
    """train-plan's precision finding for a BF16 head on a quantized verifier (its cited effect and action)."""

    # The fitness table speaks of the 4-bit and 8-bit families; a GGUF type is costed by its bits per weight.
    family = "int4" if ctx.dep.verifier.bytes_per_param < QUANT4_BELOW_BYTES_PER_PARAM else "int8"
    named = fmt if fmt in (*QUANT4_FORMATS, "fp8", "int8") else family
    rows = head_fitness(head=head, base=ctx.verifier.repo_id, verifier=ctx.verifier.repo_id, change="none",
                        adapters=None, quantization=named, rotated=False, context_p90=None, trained_context=None,
                        thinking=None, system_prompt=None)
    return next((r for r in rows if r.check == "precision"), None)


# Head-fitness findings recommend raises beside the derived-verifier and quantized-verifier flags (which it words
# itself): the trained context length and a newer head, each with its cited effect and action.
_FITNESS_FLAG = {"context": "head_context_exceeded", "superseded": "head_superseded"}


def _head_fitness_flags(ctx: PlanContext, chosen: Candidate) -> list[Flag]:
    """The published head against this deployment: context past its trained length, a newer head published."""

    head = chosen.head
    if head is None or chosen.needs_training:
        return []
    # A head whose trained length is not published is compared with 8K, said so in the flag (train-plan's rule).
    rows = head_fitness(head=head.head_repo_id, base=ctx.verifier.repo_id, verifier=ctx.verifier.repo_id,
                        change="none", adapters=None, quantization=None, rotated=False,
                        context_p90=ctx.context_tokens,
                        trained_context=head.trained_context_tokens, thinking=None, system_prompt=None,
                        superseded_by=head.superseded_by)
    return [_f(_FITNESS_FLAG[r.check], "warn", f"{r.detail}. Expected effect: {r.effect}. Action: {r.action}"
               + priced_text(ctx, chosen, _FITNESS_FLAG[r.check]),
               "tools/data/training_evidence.csv " + ", ".join(r.evidence)) for r in rows if r.check in _FITNESS_FLAG]


def tokenizer_flags(chosen: Candidate) -> list[Flag]:
    """Flags from the draft's tokenizer verdict."""
    v = chosen.tokenizer
    if v is None:
        return []
    if v.verdict == "identical_except_padding" and chosen.engine == "transformers":
        return [_f("vocab_padding", "warn", f"{v.summary} Pad the draft's embedding and LM head to the verifier's "
                   "vocab_size", "vllm#7252, #5203, #10913"),
                _f("transformers_padded_vocab", "fail", "HF universal assisted decoding crashes when draft and "
                   "verifier differ only in vocab padding (Qwen2.5-7B + 0.5B): pad the draft's embedding/LM head "
                   "to the verifier's vocab_size first, or use prompt lookup", "transformers#45307")]
    if v.verdict == "identical_except_padding":
        return [_f("vocab_padding", "warn", f"{v.summary} Pad the draft's embedding and LM head to the verifier's "
                   "vocab_size, or on vLLM set use_heterogeneous_vocab (PR #38174: the printed vLLM config does where the "
                   "release has it); HF universal assisted decoding crashes on it (transformers#45307)",
                   "vllm#7252, #5203, #10913, PR #38174; transformers#45307")]
    if v.verdict in ("same_vocab_different_specials", "same_vocab_different_normalization"):
        return [_f("tokenizer_mismatch", "warn", f"{v.summary} Ordinary text tokens agree; check the chat "
                   "template's special tokens decode the same way", "llama.cpp#3812 (per-token vocab check)")]
    return []


def rejected_flags(candidates: list[Candidate], ctx: PlanContext) -> list[Flag]:
    """Flags explaining why an expected option was ruled out."""
    out = [f for c in candidates for f in c.flags]
    for c in candidates:
        if c.strategy != "draft_model":
            continue
        for why in c.rejected_drafts:
            if "tokenizer" in why.lower() or "different" in why.lower():
                out.append(_f("tokenizer_mismatch", "fail", f"{why}. Engines check only vocab_size, so a "
                              "same-size different tokenizer passes them and silently corrupts output",
                              "sglang#24051 (fix PR #23838); llama.cpp#3812; ENGINES.md issue 7"))
            elif "does not fit" in why:
                out.append(_f("no_room_for_draft", "warn", why + ": that draft is ruled out",
                              "sglang#6875 (draft memory not counted -> OOM); VRAM check"))
    inp = ctx.inp
    heads = [c for c in candidates if c.strategy in TRAINED_HEAD_METHODS]
    if heads and all(c.rejected_for == "engine" for c in heads):
        out.append(_f("eagle_needs_internals", "warn", f"EAGLE, Medusa and MTP read the verifier's hidden states; "
                      f"{ctx.home_engine} does not expose them, so those heads are out here: serve with "
                      f"{_engines_running(*{c.strategy for c in heads})} to use them",
                      f"{SEED} (always flag); engine_support.csv"))
    asked_medusa = inp.method == "medusa" or (ctx.head is not None and ctx.head.method == "medusa")
    medusa = next((c for c in candidates if c.strategy == "medusa"), None)
    if medusa is not None and (asked_medusa and medusa.rejected_for == "engine" or
                               medusa.feasible and medusa.engine == "trtllm"):
        out.append(_f("medusa_engine_support", "warn" if medusa.rejected_for else "info",
                      "Medusa runs in vLLM (vLLM-format heads) and in TensorRT-LLM's TRT-engine backend only (Vicuna, "
                      "greedy); SGLang has no Medusa", "ENGINES.md (b): SGLang algorithms; TRT-LLM Medusa row"))
    lookahead = next((c for c in candidates if c.strategy == "lookahead"), None)
    if lookahead is not None and not inp.can_finetune and (not inp.second_model or inp.method == "lookahead"):
        out.append(_f("lookahead_engine_support", "info", "lookahead decoding (the no-training, no-draft option) "
                      "runs only in TensorRT-LLM's TRT-engine backend (trtllm-build), not in vLLM, SGLang or "
                      "TRT-LLM's PyTorch backend", "ENGINES.md (b): TRT-LLM Lookahead row; vLLM/SGLang method lists"))
    draft = next((c for c in candidates if c.strategy == "draft_model"), None)
    if draft is not None and draft.rejected_for == "small_verifier":
        out.append(_f("small_verifier", "warn", draft.reason + "; a separate draft model is ruled out, prefer "
                      "n-gram drafting, a head, or none",
                      "vllm#15025 (135M draft for a 1.7B target: ~30% slower despite high acceptance)"))
    mtp = next((c for c in candidates if c.strategy == "mtp"), None)
    if ctx.inp.method == "mtp" and ctx.verifier.mtp_layers == 0 and (mtp is None or not mtp.feasible):
        out.append(_f("mtp_not_available", "fail", f"{ctx.verifier.repo_id} ships no MTP layers",
                      "models.csv (num_nextn_predict_layers)"))
    return out


def _engines_running(*methods: str) -> str:
    """The engines whose support row runs any of ``methods`` (engine_support.csv), in words."""

    names = sorted({engine_label(r.engine) for r in get_catalog().engine_support
                    if r.method in methods and r.support != "no" and r.engine != "transformers"})
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else (names[0] if names else "no engine")

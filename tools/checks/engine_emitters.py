"""One emitter per engine: vLLM JSON, SGLang flags, TensorRT-LLM YAML, llama.cpp flags, transformers kwargs.

Option names come from the engines' own files as read in late 2026 (ENGINES.md (b); for the 2026 methods
and llama.cpp: vLLM docs features/speculative_decoding/{dflash,parallel_draft_model,
dynamic_speculative_decoding}.md and PR #32887, SGLang docs/advanced_features/speculative_decoding.md
@067ad4d and adaptive_speculative_decoding.md @369fa46, TensorRT-LLM docs/source/features/
speculative-decoding.md @04c8822, llama.cpp tools/server/README.md @00dc805).

Every emitter builds data first (a dict, an argument list) and serialises it once: ``json.dumps`` for
JSON, ``yaml.safe_dump`` for YAML, ``shlex.quote`` on every shell word, ``repr`` for Python strings.
"""

from __future__ import annotations

import json
import shlex

import yaml

from specpick.tools.catalog.specs import version_key
from specpick.tools.engines.setting import EngineConfig, EngineConfigInput
from specpick.tools.engines.llamacpp import llamacpp, plain_argv as llamacpp_plain_argv
from specpick.tools.errors import InputError
from specpick.tools.methods import method_record
from specpick.tools.vocab import EAGLE_METHODS

# vLLM's per-batch-size schedule key arrived with PR #32374 (present by 0.24.0; UNVERIFIED for 0.23).
VLLM_SCHEDULE_MIN_VERSION = "0.24.0"
# vLLM's EAGLE head methods (how vLLM spells the EAGLE heads; P-EAGLE runs as one of them).
VLLM_EAGLE_KEYS: frozenset[str] = frozenset(k for m in EAGLE_METHODS if (k := method_record(m).engine_key("vllm")))
# vLLM refuses a draft_model whose vocab_size differs from the target's (verify_equal_vocab_size_if_draft_model)
# unless use_heterogeneous_vocab is set (token-level intersection, PR #38174 merged 2026-07-02; draft_model only,
# greedy draft sampling only: vllm/config/speculative.py @002e77c and docs/features/speculative_decoding). Seen in
# 0.25.1; UNVERIFIED for the releases between the merge and 0.25.1.
VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION = "0.25.1"
# TensorRT-LLM draft_len_schedule / max_concurrency: earliest API reference seen is 1.3.0rc29 (PR #10860).
TRTLLM_SCHEDULE_MIN_VERSION = "1.3.0rc29"
# SGLang adaptive steps (PR #21599): EMA of tau picks among pre-captured num_steps tiers; EAGLE-family (the
# registry's autoregressive heads), topk 1.
# Each engine's name for a method (vLLM "method", SGLang --speculative-algorithm, TensorRT-LLM decoding_type,
# llama.cpp --spec-type) is the registry's ``engine_key`` (tools/methods.py, cited there); the emitters below test
# those engine keys, not our method names. Engine support is checked before an emitter runs
# (engine_config._require_support), so every method reaching one has a key for it.


def shell_join(argv: list[str]) -> str:
    """The command line a shell turns back into exactly ``argv``."""
    return " ".join(shlex.quote(a) for a in argv)


def _at_least(inp: EngineConfigInput, minimum: str) -> bool:
    return inp.engine_version is None or version_key(inp.engine_version) >= version_key(minimum)


def _vllm_heterogeneous_vocab(inp: EngineConfigInput, cfg: dict[str, object]) -> str:
    """Set use_heterogeneous_vocab in ``cfg`` where the release has it; the note that says what to do."""
    if _at_least(inp, VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION):
        cfg["use_heterogeneous_vocab"] = True
        return ("use_heterogeneous_vocab: the draft's vocab_size differs from the verifier's, which vLLM refuses at "
                "launch without it (PR #38174); it supports greedy draft sampling only")
    return (f"vLLM {inp.engine_version} predates use_heterogeneous_vocab (PR #38174, seen in "
            f"{VLLM_HETEROGENEOUS_VOCAB_MIN_VERSION}) and refuses a draft whose vocab_size differs: pad the draft's "
            "embedding and LM head to the verifier's vocab_size first (vllm#5203)")


def vllm(inp: EngineConfigInput, version: str) -> EngineConfig:
    cfg: dict[str, object] = {}
    notes: list[str] = []
    rec = method_record(inp.method)
    key = rec.engine_key("vllm") or inp.method  # vLLM's own method key (its "method" field)
    if rec.tree_is_its_gain:
        notes.append("vLLM has no EAGLE-2 dynamic tree: the EAGLE-1 head runs as method 'eagle' (chain); "
                     "use SGLang for the dynamic tree")
    cfg["method"] = key
    if inp.draft_model and inp.draft_model != inp.verifier:  # a drafter inside the checkpoint is not named
        cfg["model"] = inp.draft_model
    cfg["num_speculative_tokens"] = inp.num_draft_tokens
    if key == "dspark":
        # DSpark's drafter samples its block (vLLM SpeculativeConfig.draft_sample_method, default "greedy"); the
        # DeepSeek-V4 and Kimi-K3 recipes (vllm-project/recipes@8959cf6) set "probabilistic".
        notes.append('DSpark options: draft_sample_method "greedy" (default) or "probabilistic" (the DeepSeek-V4 '
                     'and Kimi-K3 recipes), rejection_sample_method "standard" (default) or "block", '
                     'enable_adaptive_verification (dspark only); no "model" when the drafter ships in the '
                     'verifier checkpoint (DeepSeek-V4)')
    if rec.parallel_draft and key != inp.method:  # run as another vLLM method, drafting in parallel
        cfg["parallel_drafting"] = True  # vLLM >= 0.16.0, PR #32887
    if key == "draft_model":
        cfg["draft_tensor_parallel_size"] = inp.draft_tensor_parallel or inp.tensor_parallel
        if inp.heterogeneous_vocab:
            notes.append(_vllm_heterogeneous_vocab(inp, cfg))
    elif key in VLLM_EAGLE_KEYS and inp.tensor_parallel > 1:
        cfg["draft_tensor_parallel_size"] = inp.draft_tensor_parallel or 1
    if inp.tree_top_k > 1:
        # vLLM's only tree is a static speculative_token_tree (TREE_ATTN backend, experimental; PR #20401):
        # no top-k key, so the depth runs as a chain here.
        notes.append(f"vLLM has no top-k tree: the depth ({inp.num_draft_tokens}) runs as a chain; a static "
                     "speculative_token_tree needs --attention-backend TREE_ATTN (experimental)")
    if key == "ngram":
        cfg["prompt_lookup_min"] = inp.prompt_lookup_min
        cfg["prompt_lookup_max"] = inp.prompt_lookup_max
    if key == "suffix":
        cfg.update(suffix_decoding_max_tree_depth=24, suffix_decoding_max_spec_factor=1.0,
                   suffix_decoding_min_token_prob=0.1)
        notes.append("suffix decoding needs `pip install arctic-inference`; num_speculative_tokens is a maximum")
    ranges = inp.full_schedule()
    if ranges and _at_least(inp, VLLM_SCHEDULE_MIN_VERSION):
        cfg["num_speculative_tokens_per_batch_size"] = [list(r) for r in ranges]
        notes.append("num_speculative_tokens_per_batch_size (PR #32374) is keyed on all scheduled requests, "
                     "prefills included (issue #49548), and is turned off when data parallel > 1")
    elif ranges:
        if inp.disable_by_batch_size:
            cfg["disable_by_batch_size"] = inp.disable_by_batch_size
        notes.append(f"vLLM {inp.engine_version} predates the per-batch schedule "
                     f"(num_speculative_tokens_per_batch_size, >= {VLLM_SCHEDULE_MIN_VERSION}): "
                     + ("only disable_by_batch_size is emitted" if inp.disable_by_batch_size else "N is fixed"))
    if inp.adaptive:
        notes.append("vLLM has no online adaptive draft length (enable_adaptive_k is unmerged PR #47111); the "
                     "per-batch schedule is its adaptive mode")
    text = json.dumps(cfg, separators=(",", ":"))
    argv = ["vllm", "serve", inp.verifier, "--tensor-parallel-size", str(inp.tensor_parallel),
            "--speculative-config", text]
    return EngineConfig(engine="vllm", engine_version=version, format="cli-json", config=text,
                        launch_command=shell_join(argv), argv=argv, notes=notes)


def sglang_tree(method: str, depth: int, top_k: int, verify: int | None) -> tuple[int, int, int]:
    """SGLang's (num_steps, eagle_topk, num_draft_tokens) for a draft of ``depth`` steps.

    Chain drafting (top-k 1) verifies depth+1 tokens: SGLang itself adjusts
    num_draft_tokens to num_steps+1 when topk=1 (ENGINES.md: vLLM k maps to
    ``--speculative-num-steps k --speculative-eagle-topk 1 --speculative-num-draft-tokens k+1``).
    For trees the verify budget must satisfy steps*topk+1 >= num_draft_tokens
    (``bench_speculative.py`` skips other configs).
    """
    if top_k == 1:
        return depth, 1, depth + 1
    budget = verify if verify is not None else min(depth * top_k + 1, 64)
    if budget > depth * top_k + 1:
        raise InputError(
            f"SGLang needs num_draft_tokens <= steps*topk+1 = {depth * top_k + 1}; got {budget}. "
            "Lower --num-verify-tokens or raise the tree depth/top-k."
        )
    return depth, top_k, budget


def sglang(inp: EngineConfigInput, version: str) -> EngineConfig:
    rec = method_record(inp.method)
    algo = rec.engine_names("sglang")[0]
    flags = ["--speculative-algorithm", algo]
    # MTP layers ship inside the verifier; so does a drafter named as the verifier itself
    if inp.draft_model and rec.loads != "verifier_layers" and inp.draft_model != inp.verifier:
        flags += ["--speculative-draft-model-path", inp.draft_model]
    notes: list[str] = []
    if algo == "NGRAM":
        flags += ["--speculative-num-draft-tokens", str(inp.num_draft_tokens + 1),
                  "--speculative-ngram-min-match-window-size", str(inp.prompt_lookup_min),
                  "--speculative-ngram-max-match-window-size", str(max(inp.prompt_lookup_max, 12))]
        notes.append("SGLang NGRAM is CUDA-only and disables the overlap scheduler and mixed chunked prefill")
    elif algo == "DFLASH":
        # One block of N drafted tokens plus the anchor token (z-lab: -b16 drafts use 16).
        flags += ["--speculative-num-draft-tokens", str(inp.num_draft_tokens + 1)]
        notes.append("hybrid Qwen3.5 targets also need --mamba-scheduler-strategy extra_buffer")
    elif algo == "DSPARK":
        # DSpark takes its block size, not steps/top-k/draft tokens (SGLang PR #29538; LMSYS Ling-3.0-flash blog
        # review: "DSpark doesn't need speculative steps and draft-tokens").
        flags += ["--speculative-dspark-block-size", str(inp.num_draft_tokens)]
    else:
        steps, topk, draft_tokens = sglang_tree(inp.method, inp.num_draft_tokens, inp.tree_top_k,
                                                inp.num_verify_tokens)
        flags += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
                  "--speculative-num-draft-tokens", str(draft_tokens)]
        notes.append("set steps, topk and num-draft-tokens together (SGLang auto-picks all three only when "
                     "all are omitted)")
        if topk == 1:
            notes.append("topk=1 allows SGLANG_ENABLE_SPEC_V2=True (overlap scheduler)")
        if inp.adaptive and rec.autoregressive_head and topk == 1:
            flags.append("--speculative-adaptive")
            notes.append("--speculative-adaptive switches num_steps among tiers (default [1,3,7]) by an EMA of "
                         "acceptance (PR #21599)")
    if inp.adaptive and "--speculative-adaptive" not in flags:
        notes.append("SGLang adapts the draft length only for EAGLE-family methods with topk 1 (PR #21599)")
    if inp.full_schedule():
        notes.append("SGLang has no per-batch-size draft length and cannot switch speculation off by batch size: "
                     "cap --max-running-requests or serve high-concurrency traffic from a non-speculative pool")
    text = shell_join(flags)
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", inp.verifier, "--tp", str(inp.tensor_parallel),
            *flags]
    return EngineConfig(engine="sglang", engine_version=version, format="cli-flags", config=text,
                        launch_command=shell_join(argv), argv=argv, notes=notes)


def trtllm(inp: EngineConfigInput, version: str) -> EngineConfig:
    notes: list[str] = []
    decoding = method_record(inp.method).engine_names("trtllm")[0]
    if decoding in ("Eagle", "Medusa"):
        notes.append("this method needs TensorRT-LLM's legacy TRT-engine backend (trtllm-build); the PyTorch "
                     "backend takes EAGLE-3, MTP, NGram, DraftTarget, PARD and DFlash")
    spec: dict[str, object] = {"decoding_type": decoding, "max_draft_len": inp.num_draft_tokens}
    if inp.draft_model and inp.draft_model != inp.verifier:
        spec["speculative_model"] = inp.draft_model
    if decoding == "NGram":
        spec["max_matching_ngram_size"] = inp.prompt_lookup_max
    if decoding == "MTP":
        spec["num_nextn_predict_layers"] = 1
    if decoding == "DSpark":
        notes.append("DSparkDecodingConfig also takes block_size, markov_rank, markov_head_type, mask_token_id and "
                     "target_layer_ids (read from the drafter's config when omitted; API reference 1.3.0rc27)")
    if decoding in ("DFlash", "PARD"):
        notes.append("set mask_token_id" + (" and target_layer_ids" if decoding == "DFlash" else "")
                     + " from the drafter's config.json")
    if decoding == "Eagle3" and inp.tree_top_k > 1:
        total = inp.num_verify_tokens or min(inp.num_draft_tokens * inp.tree_top_k, 64)
        spec.update(use_dynamic_tree=True, dynamic_tree_max_topK=inp.tree_top_k, max_total_draft_tokens=total)
        notes.append("dynamic tree is not supported for sliding-window or MLA models (DeepSeek, gpt-oss)")
    if decoding == "Lookahead":
        spec = {"decoding_type": "Lookahead", "max_window_size": 4, "max_ngram_size": 3,
                "max_verification_set_size": 4}
    ranges = inp.full_schedule()
    if ranges and _at_least(inp, TRTLLM_SCHEDULE_MIN_VERSION):
        # Keys are upper bounds of batch-size ranges; above the largest key speculation is off.
        spec["draft_len_schedule"] = {end: k for _, end, k in ranges if k > 0}
        if inp.disable_by_batch_size:
            spec["max_concurrency"] = inp.disable_by_batch_size - 1
    elif ranges:
        notes.append(f"TensorRT-LLM {inp.engine_version} predates draft_len_schedule/max_concurrency "
                     f"(>= {TRTLLM_SCHEDULE_MIN_VERSION})")
    if inp.acceptance_threshold is not None:
        spec["acceptance_rate_threshold"] = inp.acceptance_threshold
        notes.append("acceptance_rate_threshold turns speculation off permanently once the rolling acceptance "
                     "drops below it (set acceptance_rate_window_size for the window)")
    text = yaml.safe_dump({"speculative_config": spec}, sort_keys=False)
    argv = ["trtllm-serve", inp.verifier, "--tp_size", str(inp.tensor_parallel), "--config", "config.yaml"]
    return EngineConfig(engine="trtllm", engine_version=version, format="yaml", config=text,
                        launch_command=shell_join(argv), argv=argv, notes=notes)


def transformers(inp: EngineConfigInput, version: str) -> EngineConfig:
    notes = ["assisted generation runs batch size 1 only ('assisted generate is only supported for batch_size = 1')"]
    if inp.tree_top_k > 1 or inp.full_schedule():
        notes.append("generate() drafts a chain at batch 1: no tree, no per-batch schedule")
    schedule = "heuristic" if inp.adaptive else "constant"
    if not method_record(inp.method).copy_based:  # assisted generation with a draft model
        text = (f"assistant_model=AutoModelForCausalLM.from_pretrained({inp.draft_model!r}), "
                f"num_assistant_tokens={inp.num_draft_tokens}, num_assistant_tokens_schedule={schedule!r}")
    else:  # ngram
        text = f"prompt_lookup_num_tokens={inp.num_draft_tokens}, max_matching_ngram_size={min(inp.prompt_lookup_max, 3)}"
    launch = f"model.generate(**inputs, {text})"
    return EngineConfig(engine="transformers", engine_version=version, format="python-kwargs", config=text,
                        launch_command=launch, notes=notes)


EMITTERS = {"vllm": vllm, "sglang": sglang, "trtllm": trtllm, "llamacpp": llamacpp, "transformers": transformers}


def plain_launch(inp: EngineConfigInput) -> tuple[list[str], str]:
    """(argv, launch command) of the engine with speculation off."""
    argv = {
        "vllm": ["vllm", "serve", inp.verifier, "--tensor-parallel-size", str(inp.tensor_parallel)],
        "sglang": ["python3", "-m", "sglang.launch_server", "--model-path", inp.verifier, "--tp",
                   str(inp.tensor_parallel)],
        "trtllm": ["trtllm-serve", inp.verifier, "--tp_size", str(inp.tensor_parallel)],
        "llamacpp": llamacpp_plain_argv(inp)[0],
        "transformers": [],
    }[inp.engine]
    return argv, (shell_join(argv) if argv else "model.generate(**inputs)")

"""Every verb answers for the same deployment: `recommend`, `speedup`, `vram` and `engine-config` agree.

The deployments are generated (dense and MoE verifiers, 1-8 GPUs, every engine, drafts and heads, DP attention,
default and long contexts) and each goes to every verb with the same inputs. The expectations are agreement
between verbs, never pinned numbers: the same context, draft length, tree, speedup (within 1%), memory verdict
and engine release; a deployment one verb refuses, the others refuse too. Generated rows keep to conditions where
the planner's seed adjustments of N do not fire (greedy, concurrency below 8, workloads without the code/structured
rule); those adjustments have their own tests (tests/test_planner.py).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs, Recommendation
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.commands.engine_config import engine_config_tool
from specpick.tools.commands.speedup import SpeedupAnswer, SpeedupInput, estimate_speedup
from specpick.tools.commands.vram import VramInput, vram_fit
from specpick.tools.errors import InputError


@dataclass(frozen=True)
class Setup:
    """A verifier on the hardware it is generated with, and the draft it is paired with (if any)."""

    verifier: str
    gpu: str
    gpus: int
    draft: str | None = None
    mla: bool = False


SETUPS = [
    Setup("llama-3.1-8b", "H100", 1, draft="llama-3.2-1b"),
    Setup("llama-3.1-70b", "H100", 4, draft="llama-3.2-1b"),
    Setup("Qwen/Qwen3-32B", "H100", 2, draft="Qwen/Qwen3-0.6B"),
    Setup("vicuna-7b", "A100-80GB", 1),
    Setup("deepseek-v3", "H200", 8, draft="jukofyork/DeepSeek-V3-DRAFT-0.6B-v3.0", mla=True),
    Setup("gpt-oss-120b", "H100", 1),
    Setup("mixtral-8x7b", "A100-80GB", 2),
    Setup("Qwen/Qwen3-30B-A3B", "H100", 1),
]
ENGINES = ("vllm", "sglang", "trtllm", "llamacpp", "transformers")
# Parallel drafters are left out: `recommend` takes them only with a drafter published for the engine (its
# evidence rule), while `speedup` answers what one would do; heads are asked with training allowed, the same
# what-if `speedup` answers.
METHODS = ("eagle3", "eagle", "mtp", "draft_model", "ngram", "suffix")
WORKLOADS = ("chat", "summarization", "rag", "qa")
LONG_CONTEXT = 32768


@dataclass(frozen=True)
class Case:
    setup: Setup
    engine: str
    method: str
    workload: str
    concurrency: int
    context_tokens: int | None
    dp_attention: bool

    @property
    def id(self) -> str:
        ctx = "default-ctx" if self.context_tokens is None else f"{self.context_tokens}"
        return (f"{self.setup.verifier.split('/')[-1]}-{self.setup.gpus}x{self.setup.gpu}-{self.engine}-"
                f"{self.method}-{self.workload}-c{self.concurrency}-{ctx}" + ("-dp" if self.dp_attention else ""))


def _cases() -> list[Case]:
    out = []
    for i, (setup, engine, method) in enumerate(itertools.product(SETUPS, ENGINES, METHODS)):
        if method == "draft_model" and setup.draft is None:
            continue
        limit = get_catalog().model(setup.verifier).max_position_embeddings
        long_ok = limit >= LONG_CONTEXT
        out.append(Case(
            setup, engine, method, WORKLOADS[i % len(WORKLOADS)],
            1 if engine == "transformers" else (1, 2, 4)[i % 3],
            LONG_CONTEXT if long_ok and i % 5 == 0 else (None if i % 2 else 4096 if limit >= 4096 else None),
            setup.mla and i % 2 == 0,
        ))
    return out


CASES = _cases()


def _recommend(c: Case) -> Recommendation:
    return plan(PlannerInputs(verifier=c.setup.verifier, gpu=c.setup.gpu, gpus=c.setup.gpus, method=c.method,
                              engine=c.engine, workload=c.workload, concurrency=c.concurrency,
                              context_tokens=c.context_tokens, dp_attention=c.dp_attention, can_finetune=True,
                              draft=c.setup.draft if c.method == "draft_model" else None))


def _speedup(c: Case, **fixed: object) -> SpeedupAnswer:
    kw = {k: v for k, v in dict(context_tokens=c.context_tokens,
                                draft=c.setup.draft if c.method == "draft_model" else None).items() if v is not None}
    return estimate_speedup(SpeedupInput(verifier=c.setup.verifier, gpu=c.setup.gpu, gpus=c.setup.gpus,
                                         method=c.method, engine=c.engine, workload=c.workload, concurrency=c.concurrency,
                                         dp_attention=c.dp_attention, **kw, **fixed))  # type: ignore[arg-type]


def _vram(c: Case, rec: Recommendation | None):
    head_b = None
    if rec is not None and c.method not in ("draft_model", "mtp") and rec.draft_model:
        head = get_catalog().head(rec.draft_model)
        head_b = head.head_params_b if head is not None else None
    kw = {k: v for k, v in dict(context_tokens=c.context_tokens, head_params_b=head_b,
                                draft=c.setup.draft if c.method == "draft_model" else None).items() if v is not None}
    return vram_fit(VramInput(verifier=c.setup.verifier, gpu=c.setup.gpu, gpus=c.setup.gpus, engine=c.engine,
                              workload=c.workload, concurrency=c.concurrency, dp_attention=c.dp_attention,
                              **kw))  # type: ignore[arg-type]


def _release(lines: list[str]) -> list[str]:
    return [line.removeprefix("default: ") for line in lines if line.removeprefix("default: ").startswith(
        "engine release =")]


def _outcome(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return fn(*args), None
    except InputError as e:
        return None, str(e)


def test_the_generated_deployments_cover_what_the_issue_asks():
    answered = [c for c in CASES if _outcome(_recommend, c)[0] is not None]
    assert len(answered) >= 40
    assert {c.engine for c in answered} == set(ENGINES)
    assert {c.setup.gpus for c in answered} >= {1, 2, 4, 8}
    moe = {s.verifier for s in SETUPS if get_catalog().model(s.verifier).is_moe}
    assert {c.setup.verifier for c in answered} & moe and {c.setup.verifier for c in answered} - moe
    assert any(c.dp_attention for c in answered) and any(c.context_tokens == LONG_CONTEXT for c in answered)
    assert any(c.method == "draft_model" for c in answered) and any(c.method in ("eagle3", "eagle") for c in answered)


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_every_verb_answers_for_the_same_deployment(c: Case):
    rec, rec_refusal = _outcome(_recommend, c)
    sp, sp_refusal = _outcome(_speedup, c)
    # One verb refuses a deployment (method the engine cannot run, no head, does not fit): so does the other.
    assert (rec is None) == (sp is None), (rec_refusal, sp_refusal)
    if rec is None:
        return
    fit = _vram(c, rec)
    # Context: the user's, or the one rule (typical for the workload, capped by the model's limit), in every verb.
    assert rec.inputs.context_tokens == sp.context_tokens == fit.context_tokens
    # Draft length and tree: the same rule picks them (no seed adjustment fires on these rows).
    assert rec.num_draft_tokens == sp.num_draft_tokens, (rec.rationale, sp.draft_length_rule)
    rec_tree = (rec.tree.depth, rec.tree.top_k, rec.tree.num_verify_tokens) if rec.tree and rec.tree.top_k > 1 else None
    sp_tree = (sp.tree.depth, sp.tree.top_k, sp.tree.num_verify_tokens) if sp.tree and sp.tree.top_k > 1 else None
    assert rec_tree == sp_tree
    assert rec.expected_speedup.value == pytest.approx(sp.speedup, rel=0.01)
    # Memory: both accepted it, so the deployment fits; `vram` on the same inputs says so, with the same headroom.
    assert fit.fits
    assert f"memory: {fit.verdict_line()} ({fit.reservation})" in sp.assumptions
    # The release behind the figure is stated, the same in every verb.
    cfg = engine_config_tool(EngineConfigInput(engine=c.engine, method=c.method, verifier=c.setup.verifier,
                                               draft_model=rec.draft_model, tensor_parallel=c.setup.gpus,
                                               num_draft_tokens=rec.num_draft_tokens or 1))
    assert _release(rec.defaults_used) == _release(sp.defaults_used) == _release(cfg.notes) != []


def _cli(*args: str) -> dict:  # type: ignore[type-arg]
    entry = "import sys; from specpick.skill.surfaces.entry import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", entry, *args, "--json"],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


CLI_CASES = [
    ("lmsys/vicuna-13b-v1.3", "chat", "A100-80GB", "1", "eagle", "vllm", []),
    ("Qwen/Qwen3-32B", "code", "H100-SXM", "2", "eagle3", "vllm", []),
    ("deepseek-ai/DeepSeek-R1", "chat", "H200", "8", "mtp", "sglang", ["--dp-attention", "--context-tokens", "16384"]),
    ("meta-llama/Llama-3.1-8B-Instruct", "qa", "H100-SXM", "1", "suffix", "vllm", []),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[f"{c[0].split('/')[-1]}-{c[4]}" for c in CLI_CASES])
def test_the_installed_cli_agrees_across_verbs(case):  # type: ignore[no-untyped-def]
    verifier, workload, gpu, gpus, method, engine, extra = case
    common = ["--verifier", verifier, "--workload", workload, "--gpu", gpu, "--gpus", gpus, "--engine", engine,
              *extra]
    rec = _cli("recommend", *common, "--method", method)
    sp = _cli("speedup", *common, "--method", method)
    mem = _cli("vram", *common)
    assert rec["inputs"]["context_tokens"] == sp["context_tokens"] == mem["context_tokens"]
    # A seed adjustment (code -> N=7, tests/test_planner.py) is the planner's own step on top of the shared rule:
    # without one the N agrees; with one, `speedup` at the planner's N gives the planner's figure.
    adjusted = any(line.startswith("Adjustment:") or "adjustment:" in line for line in rec["rationale"])
    assert adjusted or rec["num_draft_tokens"] == sp["num_draft_tokens"]
    at_n = _cli("speedup", *common, "--method", method, "--num-draft-tokens", str(rec["num_draft_tokens"]))
    assert rec["expected_speedup"]["value"] == pytest.approx(at_n["speedup"], rel=0.01)
    assert mem["fits"]
    assert _release(rec["defaults_used"]) == _release(sp["defaults_used"]) == _release(mem["defaults_used"]) != []


@pytest.mark.parametrize("verifier,gpu,gpus", [("deepseek-ai/DeepSeek-R1", "H200", 8), ("deepseek-v3", "H200", 8),
                                               ("llama-3.1-70b", "H100", 4), ("Qwen/Qwen3-32B", "H100", 2)])
def test_every_draft_the_listings_offer_is_one_the_answers_take(verifier: str, gpu: str, gpus: int):
    # `model` (drafts and heads.csv draft rows) lists them; `speedup --draft` estimates each and `recommend`
    # weighs them (the DeepSeek-R1 drafts were listed, then said not to exist).
    from specpick.tools.commands.lookup import ModelInfoInput, model_info

    info = model_info(ModelInfoInput(model=verifier))
    listed = [d.draft_repo_id for d in info.drafts if d.tokenizer_relation != "incompatible"] + [
        h.head_repo_id for h in info.heads if h.method == "draft_model"]
    assert listed
    rows = {h.head_repo_id: h.runtimes for h in get_catalog().heads}
    for draft in listed:
        # A draft published for one engine's format (GGUF: llama.cpp) is asked about on that engine.
        engine = (rows.get(draft) or ("vllm",))[0]
        sp = estimate_speedup(SpeedupInput(verifier=verifier, gpu=gpu, gpus=gpus, method="draft_model", draft=draft,
                                           workload="chat", engine=engine))
        assert sp.draft is not None and sp.draft.lower() == draft.lower()
        rec = plan(PlannerInputs(verifier=verifier, gpu=gpu, gpus=gpus, workload="chat", method="draft_model",
                                 draft=draft, engine=engine))
        assert rec.strategy == "draft_model" and rec.draft_model == sp.draft
        if engine != "vllm":  # on an engine that cannot load it, both verbs refuse it
            with pytest.raises(InputError, match=f"loads in {engine}"):
                estimate_speedup(SpeedupInput(verifier=verifier, gpu=gpu, gpus=gpus, method="draft_model",
                                              draft=draft, workload="chat", engine="vllm"))
            with pytest.raises(InputError, match=f"loads in {engine}"):
                plan(PlannerInputs(verifier=verifier, gpu=gpu, gpus=gpus, workload="chat", method="draft_model",
                                   draft=draft, engine="vllm"))


# --- GGUF builds: a repo id with its :QUANT tag, a local .gguf file, and the quant type as --quantization ----------
# Each is named the way a llama.cpp user names it; every verb must resolve it to the same base model and weight
# format as `recommend` (tools/deploy/resolve.py), and answer for the same deployment.
GGUF_CASES = [
    # (verifier as named, base model, weight format, GPU, method): the 27B Q8_0 exceeds a 12 GiB card (partial
    # offload); the 8B Q4_K_M fits a 24 GiB one.
    ("unsloth/Qwen3.8-27B-GGUF:Q8_0", "Qwen/Qwen3.8-27B", "q8_0", "RTX-3060", "mtp"),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", "meta-llama/Llama-3.1-8B-Instruct", "q4_k_m", "RTX-4090",
     "ngram"),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", "meta-llama/Llama-3.1-8B-Instruct", "q8_0", "RTX-3060",
     "draft_model"),
]


def _gguf_verbs(verifier: str, gpu: str, method: str, **extra: object):  # type: ignore[no-untyped-def]
    """recommend, speedup, vram and engine-config on one GGUF-named deployment (llama.cpp, chat)."""
    draft = "llama-3.2-1b" if method == "draft_model" else None
    rec = plan(PlannerInputs(verifier=verifier, gpu=gpu, engine="llamacpp", workload="chat", method=method,
                             draft=draft, **extra))  # type: ignore[arg-type]
    sp = estimate_speedup(SpeedupInput(verifier=verifier, gpu=gpu, engine="llamacpp", workload="chat", method=method,
                                       draft=draft, num_draft_tokens=rec.num_draft_tokens,
                                       **extra))  # type: ignore[arg-type]
    fit = vram_fit(VramInput(verifier=verifier, gpu=gpu, engine="llamacpp", workload="chat",
                             draft=draft, **extra))  # type: ignore[arg-type]
    return rec, sp, fit


def _weights_line(lines: list[str], base: str, fmt: str) -> bool:
    return any(f"a GGUF build of {base}; weights {fmt}" in line for line in lines)


@pytest.mark.parametrize("verifier,base,fmt,gpu,method", GGUF_CASES, ids=[c[0].split("/")[-1] for c in GGUF_CASES])
def test_a_gguf_repo_id_resolves_the_same_in_every_verb(verifier: str, base: str, fmt: str, gpu: str,
                                                         method: str) -> None:
    rec, sp, fit = _gguf_verbs(verifier, gpu, method)
    assert rec.strategy == method and sp.verifier == fit.verifier == base
    assert _weights_line(rec.expected_speedup.assumptions, base, fmt)
    assert _weights_line(sp.assumptions, base, fmt) and _weights_line(fit.assumptions, base, fmt)
    assert rec.inputs.context_tokens == sp.context_tokens == fit.context_tokens
    assert rec.expected_speedup.value == pytest.approx(sp.speedup, rel=0.01)
    assert f"memory: {fit.verdict_line()} ({fit.reservation})" in sp.assumptions
    # llama-server loads the GGUF as named (-hf repo:QUANT), with the layers the memory check placed.
    argv = rec.engine_config.argv
    assert argv[argv.index("-hf") + 1] == verifier
    cfg = engine_config_tool(EngineConfigInput(engine="llamacpp", method=method, verifier=verifier, gpu=gpu,
                                               context_tokens=fit.context_tokens,
                                               draft_model="llama-3.2-1b" if method == "draft_model" else None,
                                               num_draft_tokens=rec.num_draft_tokens or 1))
    assert cfg.argv[cfg.argv.index("-hf") + 1] == verifier
    assert _release(rec.defaults_used) == _release(sp.defaults_used) == _release(cfg.notes) != []


def test_the_quant_type_as_quantization_is_the_gguf_repo_tag() -> None:
    # `--verifier <base> --quantization Q8_0` and `--verifier <repo>-GGUF:Q8_0` are one deployment.
    tagged = _gguf_verbs("unsloth/Qwen3.8-27B-GGUF:Q8_0", "RTX-3060", "mtp")
    named = _gguf_verbs("Qwen/Qwen3.8-27B", "RTX-3060", "mtp", quantization="Q8_0")
    assert tagged[0].expected_speedup.value == pytest.approx(named[0].expected_speedup.value, rel=1e-6)
    assert tagged[1].speedup == pytest.approx(named[1].speedup, rel=1e-6)
    assert tagged[2].verdict_line() == named[2].verdict_line()
    assert tagged[2].weight_bytes_per_param == named[2].weight_bytes_per_param


@pytest.mark.requires_extra("measure")
def test_a_local_gguf_file_resolves_the_same_in_every_verb(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.support.gguf_file import write_tiny_gguf

    path = str(write_tiny_gguf(tmp_path / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"))
    rec, sp, fit = _gguf_verbs(path, "RTX-4090", "ngram")
    base = "meta-llama/Llama-3.1-8B-Instruct"
    # The file's header says Q4_K_M (general.file_type): the same format the repo tag gives.
    repo = _gguf_verbs("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", "RTX-4090", "ngram")
    for answer, other in zip((rec.expected_speedup.value, sp.speedup), (repo[0].expected_speedup.value,
                                                                         repo[1].speedup)):
        assert answer == pytest.approx(other, rel=1e-6)
    assert _weights_line(sp.assumptions, base, "q4_k_m") and _weights_line(fit.assumptions, base, "q4_k_m")
    assert rec.engine_config.argv[rec.engine_config.argv.index("-m") + 1] == path
    cfg = engine_config_tool(EngineConfigInput(engine="llamacpp", method="ngram", verifier=path, gpu="RTX-4090"))
    assert cfg.argv[cfg.argv.index("-m") + 1] == path


@pytest.mark.parametrize("bad", ["missing", "not-gguf"])
@pytest.mark.parametrize("verb", ["recommend", "speedup", "vram", "engine-config", "train-plan"])
def test_a_bad_gguf_path_is_one_line_in_every_verb(verb: str, bad: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from specpick.tools.errors import EXIT_INPUT

    missing = str(tmp_path / "nope-Q4_K_M.gguf")
    if bad == "not-gguf":  # a file that is there but is no GGUF (a half-finished download, a renamed file)
        (tmp_path / "nope-Q4_K_M.gguf").write_text("<html>not found</html>")
    args = {"recommend": ["--workload", "chat", "--engine", "llamacpp"],
            "speedup": ["--workload", "chat", "--engine", "llamacpp", "--method", "ngram", "--gpu", "RTX-3060"],
            "vram": ["--gpu", "RTX-3060"], "engine-config": ["--engine", "llamacpp", "--method", "ngram"],
            "train-plan": ["--method", "eagle3"]}[verb]
    entry = "import sys; from specpick.skill.surfaces.entry import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", entry, verb, "--verifier", missing, *args], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == EXIT_INPUT, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_head_check_and_tokenizers_take_a_gguf_build_as_its_original_model() -> None:
    from specpick.tools.commands.head_check import HeadCheckInput, head_check_tool
    from specpick.tools.commands.tokenizers import TokenizersInput, tokenizers_tool

    gguf = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"
    head = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    as_gguf = head_check_tool(HeadCheckInput(head=head, verifier=gguf, live=False))
    as_base = head_check_tool(HeadCheckInput(head=head, verifier="meta-llama/Llama-3.1-8B-Instruct", live=False))
    assert (as_gguf.belongs, as_gguf.verifier_repo_id) == (as_base.belongs, as_base.verifier_repo_id)
    assert any(f.check == "verifier id" and "GGUF build of" in f.detail for f in as_gguf.findings)
    verdict = tokenizers_tool(TokenizersInput(draft="bartowski/Llama-3.2-1B-Instruct-GGUF:Q8_0", verifier=gguf,
                                              offline=True))
    assert (verdict.draft.repo_id, verdict.verifier.repo_id) == ("meta-llama/Llama-3.2-1B-Instruct",
                                                                 "meta-llama/Llama-3.1-8B-Instruct")


def test_a_gguf_build_named_without_an_engine_is_answered_for_llama_cpp_by_every_verb() -> None:
    # The user loads the GGUF in llama.cpp; every verb takes that default the same way and lists it.
    from specpick.tools.deploy.resolve import GGUF_ENGINE_LINE

    gguf = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"
    rec = plan(PlannerInputs(verifier=gguf, gpu="RTX-4090", workload="chat", method="ngram"))
    sp = estimate_speedup(SpeedupInput(verifier=gguf, gpu="RTX-4090", workload="chat", method="ngram",
                                       num_draft_tokens=rec.num_draft_tokens))
    fit = vram_fit(VramInput(verifier=gguf, gpu="RTX-4090", workload="chat"))
    named = estimate_speedup(SpeedupInput(verifier=gguf, gpu="RTX-4090", workload="chat", method="ngram",
                                          num_draft_tokens=rec.num_draft_tokens, engine="llamacpp"))
    assert rec.engine == sp.engine == fit.engine == "llamacpp"
    assert GGUF_ENGINE_LINE in rec.defaults_used and GGUF_ENGINE_LINE in sp.defaults_used
    assert GGUF_ENGINE_LINE in fit.defaults_used
    assert sp.speedup == pytest.approx(named.speedup, rel=1e-9) == pytest.approx(rec.expected_speedup.value, rel=0.01)
    # A catalog name keeps the usual default (vLLM's overheads for speedup, the planner's choice for recommend).
    plain = estimate_speedup(SpeedupInput(verifier="llama-3.1-8b", gpu="RTX-4090", workload="chat", method="ngram"))
    assert plain.engine is None and GGUF_ENGINE_LINE not in plain.defaults_used


# --- Safetensors quantized builds: <base>-FP8 / -W4A16 named by any publisher, resolved by name offline ----------
# (tools/catalog/quant_names.py; the names are the publishers' own conventions, heads.csv and models.csv.)
QUANT_BUILD_CASES = [
    # (verifier as named, base model, weight format, GPU, GPUs, method)
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "meta-llama/Llama-3.1-8B-Instruct", "fp8", "H100", 1, "eagle3"),
    ("RedHatAI/Llama-3.1-8B-Instruct-quantized.w4a16", "meta-llama/Llama-3.1-8B-Instruct", "int4", "L4", 1, "ngram"),
    ("zai-org/GLM-5.2-FP8", "zai-org/GLM-5.2", "fp8", "B200", 8, "dspark"),
]


@pytest.mark.parametrize("verifier,base,fmt,gpu,gpus,method", QUANT_BUILD_CASES,
                         ids=[c[0].split("/")[-1] for c in QUANT_BUILD_CASES])
def test_a_quantized_build_resolves_the_same_in_every_verb(monkeypatch,  # type: ignore[no-untyped-def]
                                                           verifier: str, base: str, fmt: str, gpu: str, gpus: int,
                                                           method: str) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rec = plan(PlannerInputs(verifier=verifier, gpu=gpu, gpus=gpus, engine="vllm", workload="chat", method=method))
    sp = estimate_speedup(SpeedupInput(verifier=verifier, gpu=gpu, gpus=gpus, engine="vllm", workload="chat",
                                       method=method, num_draft_tokens=rec.num_draft_tokens))
    fit = vram_fit(VramInput(verifier=verifier, gpu=gpu, gpus=gpus, engine="vllm", workload="chat"))
    said = f"a {fmt} build"
    assert rec.strategy == method and sp.verifier == fit.verifier == base
    for lines in (rec.expected_speedup.assumptions, sp.assumptions, fit.assumptions):
        assert any(said in line and f"of {base}; base model and format taken from the repo name" in line
                   for line in lines)
    assert rec.expected_speedup.value == pytest.approx(sp.speedup, rel=0.01)
    # The base named with --quantization is the same deployment: same speedup, same weight bytes.
    named = estimate_speedup(SpeedupInput(verifier=base, gpu=gpu, gpus=gpus, engine="vllm", workload="chat",
                                          method=method, num_draft_tokens=rec.num_draft_tokens, quantization=fmt))
    named_fit = vram_fit(VramInput(verifier=base, gpu=gpu, gpus=gpus, engine="vllm", workload="chat",
                                   quantization=fmt))
    assert sp.speedup == pytest.approx(named.speedup, rel=1e-9)
    assert fit.weight_bytes_per_param == named_fit.weight_bytes_per_param
    assert fit.verdict_line() == named_fit.verdict_line()
    # The engine loads the build as named, in the answer and in engine-config.
    cfg = engine_config_tool(EngineConfigInput(engine="vllm", method=method, verifier=verifier, tensor_parallel=gpus,
                                               draft_model=rec.draft_model if method != "ngram" else None,
                                               num_draft_tokens=rec.num_draft_tokens or 1))
    assert rec.engine_config.argv[2] == cfg.argv[2] == verifier


def test_a_plain_configuration_names_the_release_the_defaults_name():
    # Speculation off (the 70B does not fit one H100): the configuration header and the defaults line must name the
    # same release (the newest tracked), not the support table's first row.
    from specpick.skill.render import to_markdown

    text = to_markdown(plan(PlannerInputs(verifier="meta-llama/Llama-3.1-70B-Instruct", workload="chat",
                                          gpu="H100-SXM", engine="vllm")))
    newest = get_catalog().newest_release("vllm")
    assert f"option names as of {newest} or newer" in text and f"vllm {newest} or newer" in text

"""Bad inputs, one table, three surfaces: the CLI, the Claude tool loop and MCP give the same one-line error.

Each row is (verb, arguments, exit code, a fragment of the message). The CLI argv is generated from the
arguments the way the CLI builds its options (field ``num_draft_tokens`` -> ``--num-draft-tokens``,
positional fields in order, ``False`` booleans as ``--no-x``), so one row is tried three times. Rows in
``CLI_ONLY`` exercise what only the command line has (argparse types, ``exit-codes``, ``ask``, ``chat``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp
import pytest

from specpick.skill.surfaces.cli import main
from specpick.skill.surfaces.mcp import build_server
from specpick.skill.surfaces.registry import BY_CLI
from specpick.skill.surfaces.tooluse import execute
from tests.support import hostile

NAN, INF = math.nan, math.inf
L8 = {"verifier": "llama-3.1-8b"}
L70 = {"verifier": "llama-3.1-70b"}
EAGLE3_8B = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


@dataclass(frozen=True)
class Bad:
    """One bad input: what is sent, the exit code the CLI must return, a fragment every surface must show."""

    verb: str
    args: dict[str, Any]
    code: int
    needle: str
    why: str = ""
    base: dict[str, Any] = field(default_factory=dict)

    def arguments(self) -> dict[str, Any]:
        return {**self.base, **self.args}

    def __str__(self) -> str:
        return f"{self.verb}:{self.why or ','.join(f'{k}={v!r}' for k, v in self.args.items())}"


def rec(why: str, code: int, needle: str, **args: Any) -> Bad:
    return Bad("recommend", args, code, needle, why, {**L8, "workload": "chat"})


def spd(why: str, code: int, needle: str, **args: Any) -> Bad:
    return Bad("speedup", args, code, needle, why, {**L8, "method": "eagle3", "gpu": "H100", "workload": "chat"})


def vrm(why: str, code: int, needle: str, **args: Any) -> Bad:
    return Bad("vram", args, code, needle, why, {**L8, "gpu": "H100"})


def cfg(why: str, code: int, needle: str, **args: Any) -> Bad:
    return Bad("engine-config", args, code, needle, why,
               {"engine": "vllm", "method": "eagle3", **L8, "draft_model": EAGLE3_8B})


CATALOG_ONLY = "answers from the catalog only"  # verbs without --live must not suggest it
WITH_LIVE = "with --live"
# A repo id outside the snapshot is looked up on the Hub; offline (these cases) the error says how to refresh.
REFRESH = "specpick catalog update"
FINITE = "finite number"

@pytest.fixture(autouse=True)
def _hub_lookup_off(monkeypatch):
    # A repo id outside the snapshot is looked up on the Hub; these cases run offline so none reaches a network.
    # huggingface_hub freezes HF_HUB_OFFLINE into its constants at first import: import it before setting the
    # variable, so the setting ends with each case and later tests see the client online.
    import huggingface_hub.constants  # noqa: F401

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


CASES: list[Bad] = [
    # 1. names: a prefix or typo is not the neighbouring model; one rule and an honest hint on every verb
    rec("repo prefix", 5, "(did you mean): Qwen/Qwen2.5-7B-Instruct", verifier="Qwen/Qwen2.5-7B-Inst"),
    rec("repo typo", 5, "(did you mean): meta-llama/Llama-3.1-70B-Instruct",
        verifier="meta-llama/Llama-3.1-70B-Instruc"),
    rec("alias prefix", 3, "not in the embedded catalog", verifier="llama-3.1-8"),
    rec("name too long", 2, "characters long; a Hub repo id (org/name) has at most 200", verifier="org/" + "m" * 300),
    rec("hint names the refresh", 5, REFRESH, verifier="Qwen/Qwen2.5-7B-Inst"),
    rec("draft prefix", 5, "(did you mean): Qwen/Qwen2.5-0.5B-Instruct", verifier="qwen2.5-7b",
        draft="Qwen/Qwen2.5-0.5B"),
    rec("empty verifier", 2, "is empty", verifier=""),
    # measured evidence (issue 26): what it was measured with must be a method, an N it can have, with acceptance
    rec("speedup without acceptance", 2, "needs the acceptance it was measured with", measured_speedup=1.2),
    rec("measured N of lookahead", 2, "has no draft length", tau=1.8, measured_method="lookahead", measured_n=3),
    rec("tau past N + 1", 2, "N + 1", tau=4.5, measured_method="eagle3", measured_n=2),
    rec("measurement file missing", 3, "no such file", from_measurement="/nonexistent/m.json"),
    rec("blank verifier", 2, "is empty", verifier="   "),
    rec("two slashes", 2, "not a model name", verifier="a/b/c"),
    rec("path traversal", 2, "not a model name", verifier="../../etc/passwd"),
    rec("newline in name", 2, "not a model name", verifier="llama\n-3.1-8b"),
    rec("empty head", 2, "is empty", head=""),
    rec("unknown GPU", 3, "GPU 'H1000'", gpu="H1000"),
    rec("empty GPU", 2, "is empty", gpu=""),
    vrm("empty GPU", 2, "is empty", gpu=" "),
    spd("repo prefix", 3, "Did you mean: Qwen/Qwen2.5-7B-Instruct", verifier="Qwen/Qwen2.5-7B-Inst"),
    spd("no --live hint", 3, CATALOG_ONLY, verifier="Qwen/Qwen2.5-7B-Inst"),
    spd("draft typo", 3, "Did you mean", method="draft_model", draft="llama-3.2-1"),
    spd("unknown GPU", 3, "GPU 'B300X'", gpu="B300X"),
    vrm("repo typo", 3, "Did you mean: meta-llama/Llama-3.1-70B-Instruct",
        verifier="meta-llama/Llama-3.1-70B-Instruc"),
    vrm("no --live hint", 3, CATALOG_ONLY, verifier="Qwen/Qwen2.5-7B-Inst"),
    vrm("draft prefix", 3, "not in the embedded catalog", draft="Qwen/Qwen2.5-0.5B"),
    Bad("params", {"model": "Qwen/Qwen2.5-7B-Inst"}, 5, REFRESH, "repo prefix"),
    Bad("params", {"model": "meta-llama/Llama-3.1-8B-Instruc"}, 5, "(did you mean): meta-llama/Llama-3.1-8B-Instruct",
        "repo typo"),
    Bad("params", {"model": ""}, 2, "is empty", "empty"),
    Bad("model", {"model": "llama-3.1-8"}, 3, "Did you mean: meta-llama/Llama-3.1-8B-Instruct", "alias prefix"),
    Bad("model", {"model": "Qwen/Qwen9-8B-Base"}, 5, REFRESH, "not in catalog"),
    Bad("tokenizers", {"draft": "Qwen/Qwen2.5-0.5B", "verifier": "qwen2.5-7b"}, 3,
        "Did you mean: Qwen/Qwen2.5-0.5B-Instruct", "draft prefix"),
    Bad("tokenizers", {"draft": "llama-3.2-1b", "verifier": "meta-llama/Llama-3.1-8B-Instr"}, 3, WITH_LIVE,
        "verifier prefix"),
    Bad("head-check", {"head": EAGLE3_8B, "verifier": "meta-llama/Llama-3.1-8B-Instruc", "live": False}, 3,
        "Did you mean: meta-llama/Llama-3.1-8B-Instruct", "verifier typo offline"),
    cfg("verifier prefix", 3, CATALOG_ONLY, verifier="Qwen/Qwen2.5-7B-Inst"),
    cfg("verifier typo", 3, "Did you mean: meta-llama/Llama-3.1-8B-Instruct", verifier="meta-llama/Llama-3.1-8B-Instruc"),
    # 2. parallelism and context against the model's own limits
    rec("TP 3 vs 64 heads", 2, "Valid tensor-parallel sizes: 1, 2, 4, 8, 16, 32, 64", **L70, gpus=3),
    rec("TP 6", 2, "tensor parallelism cannot shard", gpus=6),
    rec("TP 12 (3 per PP stage x 4)", 2, "Valid tensor-parallel sizes", **L70, gpus=12, pipeline_parallel=4),
    rec("TP 5 for Qwen2.5-7B (28 heads)", 2, "28 attention heads do not split over 5 GPUs", verifier="qwen2.5-7b",
        gpus=5),
    rec("context past the limit", 2, "limit of 131072 tokens", context_tokens=10_000_000),
    rec("context past Vicuna's 2048", 2, "limit of 2048", verifier="vicuna-7b", context_tokens=4096),
    rec("context past 32k", 2, "max_position_embeddings", verifier="qwen2.5-7b", context_tokens=40_000),
    rec("context 0", 2, "greater than or equal to 1", context_tokens=0),
    rec("context absurd", 2, "less than or equal to 10000000", context_tokens=20_000_000),
    spd("TP 3", 2, "Valid tensor-parallel sizes", **L70, gpus=3),
    spd("TP 7", 2, "tensor parallelism cannot shard", gpus=7),
    spd("context past the limit", 2, "limit of 131072", context_tokens=1_000_000),
    spd("context negative", 2, "greater than or equal to 1", context_tokens=-5),
    vrm("TP 3", 2, "Valid tensor-parallel sizes: 1, 2, 4, 8", **L70, gpus=3),
    vrm("TP 7 vs 4 KV heads", 2, "cannot replicate 4 KV heads", verifier="qwen2.5-7b", gpus=7),
    vrm("TP 4 vs 10 KV heads", 2, "10 KV heads do not split over 4 GPUs", verifier="phi-4", gpus=4),
    vrm("context past the limit", 2, "limit of 131072", context_tokens=10_000_000),
    vrm("draft TP not 1 or TP", 2, "draft tensor parallel size 3 is invalid", gpus=4, draft="llama-3.2-1b",
        draft_tp=3),
    cfg("TP 3", 2, "Valid tensor-parallel sizes", **L70, tensor_parallel=3),
    # 3. an explicit request the deployment rules out is exit 2 with the reason, never a quiet "none"
    rec("method under beam", 2, "--method eagle3 cannot run here: beam search", method="eagle3", sampling="beam"),
    rec("method under pipeline parallel", 2, "cannot run here: pipeline parallel", method="ngram", pipeline_parallel=2,
        gpus=2),
    rec("method under PP", 2, "cannot run here", method="eagle3", gpus=2, pipeline_parallel=2),
    rec("draft_model without second model", 2, "needs a second model", method="draft_model", second_model=False),
    rec("draft vs no second model", 2, "contradicts --no-second-model", draft="llama-3.2-1b", second_model=False),
    rec("draft is the verifier", 2, "verifier itself", draft="llama-3.1-8b"),
    rec("alpha and tau", 2, "not both", alpha=0.7, tau=3.0),
    rec("sampling vs temperature", 2, "contradicts --temperature", sampling="greedy", temperature=1.0),
    rec("PP does not divide", 2, "does not divide --gpus", gpus=4, pipeline_parallel=3),
    rec("draft and head", 2, "not both", draft="llama-3.2-1b", head=EAGLE3_8B),
    # 4. impossible shapes and sizes
    spd("verify < depth+1", 2, "between 7 (one path + root) and 5461", tree_depth=6, tree_top_k=4,
        num_verify_tokens=2),
    spd("verify > full tree", 2, "and 7 (the full tree)", tree_depth=2, tree_top_k=2, num_verify_tokens=100),
    spd("chain verify mismatch", 2, "between 4", tree_depth=3, tree_top_k=1, num_verify_tokens=8),
    spd("draft absurd", 2, "less than or equal to 2000", method="draft_model", draft_params_b=1_000_000),
    spd("draft >= verifier", 2, "not smaller than the verifier", **L70, gpus=8, method="draft_model",
        draft_params_b=100),
    spd("named draft larger", 2, "not smaller", verifier="llama-3.2-1b", method="draft_model", draft="llama-3.1-8b"),
    spd("tau past N+1", 2, "impossible", tau=9.0, num_draft_tokens=3),
    spd("depth disagrees", 2, "disagree", method="eagle", tree_depth=4, num_draft_tokens=5),
    spd("tree on ngram", 2, "tree options", method="ngram", tree_top_k=4),
    spd("draft on eagle", 2, "only apply to method draft_model", method="eagle", draft="llama-3.2-1b"),
    spd("top-k 0", 2, "greater than or equal to 1", tree_top_k=0),
    spd("verify 1", 2, "greater than or equal to 2", num_verify_tokens=1),
    spd("N 0", 2, "greater than or equal to 1", num_draft_tokens=0),
    spd("N 65", 2, "less than or equal to 64", num_draft_tokens=65),
    spd("batch 0", 2, "greater than or equal to 1", concurrency=0),
    spd("batch absurd", 2, "less than or equal to 100000", concurrency=10_000_000),
    spd("engine version text", 2, "is not a release number", engine_version="latest"),
    spd("overlap on an engine without the mode", 2, "--spec-overlap applies to vllm and sglang", engine="trtllm",
        spec_overlap="on"),
    spd("overlap value", 2, "'auto', 'on'", spec_overlap="yes"),
    spd("version for the papers' harness", 2, "harness paper has none", harness="paper", engine_version="0.19.0"),
    spd("version without its engine", 2, "needs --engine", engine_version="0.19.0"),
    spd("method newer than the release", 2, "vllm 0.10.0 does not run method eagle2", method="eagle2", engine="vllm",
        engine_version="0.10.0"),
    vrm("draft params >= verifier", 2, "not smaller than the verifier", draft_params_b=9.0),
    vrm("draft model larger", 2, "not smaller than the verifier", draft="llama-3.1-70b"),
    vrm("draft params absurd", 2, "less than or equal to 2000", draft_params_b=1e9),
    vrm("draft and draft params", 2, "not both", draft="llama-3.2-1b", draft_params_b=1.0),
    vrm("KV dtype", 2, "unknown KV cache dtype", kv_cache_dtype="int3"),
    vrm("concurrency 0", 2, "greater than or equal to 1", concurrency=0),
    # 5. every float finite and in range, the same on every surface
    rec("temperature nan", 2, FINITE, temperature=NAN),
    rec("temperature inf", 2, FINITE, temperature=INF),
    rec("temperature negative", 2, "greater than or equal to 0", temperature=-1.0),
    rec("temperature past 2", 2, "less than or equal to 2", temperature=3.0),
    rec("alpha nan", 2, FINITE, alpha=NAN),
    rec("alpha 0", 2, "greater than 0", alpha=0.0),
    rec("alpha 1", 2, "less than 1", alpha=1.0),
    rec("alpha -inf", 2, FINITE, alpha=-INF),
    rec("tau nan", 2, FINITE, tau=NAN),
    rec("tau below 1", 2, "greater than or equal to 1", tau=0.5),
    rec("tau absurd", 2, "less than or equal to 65", tau=1000.0),
    rec("gpus 0", 2, "greater than or equal to 1", gpus=0),
    rec("gpus absurd", 2, "less than or equal to 1024", gpus=5000),
    rec("concurrency 0", 2, "greater than or equal to 1", concurrency=0),
    rec("concurrency absurd", 2, "less than or equal to 100000", concurrency=1_000_000),
    rec("pipeline 0", 2, "greater than or equal to 1", pipeline_parallel=0),
    rec("unknown workload", 2, "poetry", workload="poetry"),
    spd("alpha nan", 2, FINITE, alpha=NAN),
    spd("alpha inf", 2, FINITE, alpha=INF),
    spd("alpha 1.5", 2, "less than 1", alpha=1.5),
    spd("tau inf", 2, FINITE, tau=INF),
    spd("tau 0.5", 2, "greater than or equal to 1", tau=0.5),
    spd("temperature nan", 2, FINITE, temperature=NAN),
    spd("temperature 7", 2, "less than or equal to 2", temperature=7.0),
    spd("draft params nan", 2, FINITE, method="draft_model", draft_params_b=NAN),
    spd("draft params inf", 2, FINITE, method="draft_model", draft_params_b=INF),
    spd("draft params -1", 2, "greater than 0", method="draft_model", draft_params_b=-1.0),
    spd("draft params 0", 2, "greater than 0", method="draft_model", draft_params_b=0.0),
    vrm("draft params nan", 2, FINITE, draft_params_b=NAN),
    vrm("draft params -inf", 2, FINITE, draft_params_b=-INF),
    vrm("head params inf", 2, FINITE, head_params_b=INF),
    vrm("head params 0", 2, "greater than 0", head_params_b=0.0),
    vrm("reserve nan", 2, FINITE, reserve_fraction=NAN),
    vrm("reserve 0", 2, "greater than or equal to 0.1", reserve_fraction=0.0),
    vrm("reserve 2", 2, "less than or equal to 1", reserve_fraction=2.0),
    vrm("gpus 0", 2, "greater than or equal to 1", gpus=0),
    Bad("calibrate", {"max_median_ape_pct": NAN}, 2, FINITE, "limit nan"),
    Bad("calibrate", {"max_median_ape_pct": INF}, 2, FINITE, "limit inf"),
    Bad("calibrate", {"max_median_ape_pct": -5.0}, 2, "greater than 0", "limit -5 (was exit 8)"),
    Bad("calibrate", {"max_median_ape_pct": 0.0}, 2, "greater than 0", "limit 0"),
    # 6. options accepted and ignored: now rejected with a message
    Bad("params", {"model": "llama-3.1-8b", "revision": "main"}, 2, "needs --live", "revision offline"),
    Bad("model", {"model": "llama-3.1-8b", "revision": "main"}, 2, "needs --live", "revision offline"),
    Bad("tokenizers", {"draft": "llama-3.2-1b", "verifier": "llama-3.1-8b", "revision": "main"}, 2, "needs --live",
        "revision offline"),
    Bad("head-check", {"head": EAGLE3_8B, "verifier": "llama-3.1-8b", "live": False, "revision": "main"}, 2,
        "needs --live", "revision offline"),
    Bad("head-check", {"head": EAGLE3_8B, "verifier": "llama-3.1-8b", "live": False, "num_draft_tokens": 0}, 2,
        "greater than or equal to 1", "N 0"),
    Bad("head-check", {"head": "", "verifier": "llama-3.1-8b", "live": False}, 2, "is empty", "empty head"),
    cfg("none with a draft", 2, "--draft-model applies to methods that load", method="none"),
    cfg("ngram with a draft", 2, "not ngram", method="ngram"),
    cfg("draft_model without one", 2, "needs --draft-model", method="draft_model", draft_model=None),
    cfg("multi-line draft", 2, "invalid repo id", draft_model="acme/x\nspeculative_model: evil"),
    cfg("N 0", 2, "at least 1", num_draft_tokens=0),
    cfg("N absurd", 2, "implausibly large", num_draft_tokens=100),
    cfg("lookup min > max", 2, "must not exceed", method="ngram", draft_model=None, prompt_lookup_min=5,
        prompt_lookup_max=2),
    cfg("draft TP", 2, "1 or the target TP", tensor_parallel=2, draft_tensor_parallel=3),
    cfg("tree on vLLM", 2, "--tree-top-k has no effect for eagle3 on vLLM", tree_top_k=4),
    cfg("verify budget on vLLM", 2, "--num-verify-tokens has no effect", num_verify_tokens=8),
    cfg("lookup window on EAGLE", 2, "--prompt-lookup-max has no effect", prompt_lookup_max=4),
    cfg("batch switch on SGLang", 2, "--disable-by-batch-size has no effect", engine="sglang",
        disable_by_batch_size=32),
    cfg("verify budget negative", 2, "greater than or equal to 2", engine="sglang", num_verify_tokens=-1),
    cfg("verify budget absurd", 2, "less than or equal to 1024", engine="sglang", num_verify_tokens=10**18),
    cfg("disable batch 0", 2, "greater than or equal to 1", disable_by_batch_size=0),
    rec("empty KV dtype", 2, "should match pattern", kv_cache_dtype=""),
    rec("KV dtype free text", 2, "should match pattern", kv_cache_dtype="a/b/c"),
    rec("engine version text", 2, "is not a release number", engine_version="nightly"),
    rec("overlap value", 2, "'auto', 'on'", spec_overlap="maybe"),
    rec("overlap without its engine", 2, "--spec-overlap on needs --engine", spec_overlap="on"),
    rec("overlap on an engine without the mode", 2, "--spec-overlap applies to vllm and sglang", engine="trtllm",
        spec_overlap="off"),
    rec("version without its engine", 2, "needs --engine", engine_version="0.19.0"),
]


# Generated from the registry's input models (tests/support/hostile.py): hostile model names on every name field,
# each declared bound crossed, every closed set given a bogus word, and issue 28's contradictions.
GENERATED: list[Bad] = [Bad(verb, args, code, needle, why) for verb, args, code, needle, why in hostile.generated()]
CASES += GENERATED


def _argv(case: Bad) -> list[str]:
    """The command line a user would type for this case (what ``cli_args`` generates from the input model)."""
    model = BY_CLI[case.verb].load_input_model()
    positional: list[str] = []
    options: list[str] = []
    for name, value in case.arguments().items():
        if value is None:
            continue
        extra = model.model_fields[name].json_schema_extra
        meta = extra.get("cli", {}) if isinstance(extra, dict) else {}
        flag = (meta.get("flags") or [f"--{name.replace('_', '-')}"])[0]
        if meta.get("positional"):
            positional.append(str(value))
        elif value is True:
            options.append(flag)
        elif value is False:
            options.append((meta.get("negative") or [f"--no-{name.replace('_', '-')}"])[0])
        else:
            options.append(f"{flag}={value}")  # "--alpha=-inf": a value starting with '-' is not an option
    return [case.verb, *positional, *options]


def _one_line_error(err: str) -> str:
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("case", CASES, ids=str)
def test_cli(case: Bad, capsys) -> None:
    try:
        code = main(_argv(case))
    except SystemExit as stop:  # argparse usage errors (choices) exit through our parser's error()
        code = stop.code
    captured = capsys.readouterr()
    err = _one_line_error(captured.err)
    assert code == case.code, err
    assert case.needle in err
    assert captured.out == ""


@pytest.mark.parametrize("case", CASES, ids=str)
def test_claude_tool_loop(case: Bad) -> None:
    outcome = execute(BY_CLI[case.verb].name, case.arguments())
    assert outcome.is_error, outcome.content[:200]
    assert case.needle in outcome.content
    assert "\n" not in outcome.content and "internal error" not in outcome.content


@pytest.fixture(scope="module")
def mcp_results() -> dict[str, tuple[bool, str]]:
    """Every case through one in-process MCP session (the real ``mcp`` client and server)."""

    async def go() -> dict[str, tuple[bool, str]]:
        out = {}
        async with mcp.Client(build_server()) as client:
            for case in CASES:
                # JSON has no NaN/Infinity (the MCP client would serialise them as null): a client that means
                # them sends the strings, which pydantic would parse as floats if the validators allowed them.
                args = {k: _json_float(v) for k, v in case.arguments().items()}
                result = await client.call_tool(BY_CLI[case.verb].name, args)
                out[str(case)] = (result.is_error, " ".join(c.text for c in result.content if hasattr(c, "text")))
        return out

    return anyio.run(go)


def _json_float(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


@pytest.mark.parametrize("case", CASES, ids=str)
def test_mcp(case: Bad, mcp_results) -> None:
    is_error, text = mcp_results[str(case)]
    assert is_error, text[:200]
    assert case.needle in text
    assert "internal error" not in text


# --- what only the command line has ---------------------------------------------------------------------------------
CLI_ONLY: list[tuple[list[str], int, str]] = [
    (["exit-codes", "--bogus"], 2, "exit-codes takes no arguments"),
    (["exit-codes", "3"], 2, "exit-codes takes no arguments"),
    (["ask", ""], 2, "the question is empty"),
    (["ask", "   "], 2, "the question is empty"),
    (["bogus-verb"], 2, "unknown command 'bogus-verb'"),
    (["recomend"], 2, "Did you mean: recommend"),
    (["recommend"], 2, "required"),
    (["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat", "--gpus", "two"], 2, "invalid int value"),
    (["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat", "--temperature", "hot"], 2,
     "invalid float value"),
    (["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat", "--colour", "red"], 2, "unrecognized"),
    (["speedup", "--verifier", "llama-3.1-8b", "--method", "eagle9", "--gpu", "H100", "--workload", "chat"], 2,
     "invalid choice"),
    (["vram", "--verifier", "llama-3.1-8b", "--gpu", "H100", "--context", "4k"], 2, "invalid int value"),
    (["params"], 2, "required"),
    (["head-check", EAGLE3_8B], 2, "required"),
    (["calibrate", "--max-median-ape-pct", "lots"], 2, "invalid float value"),
]


# Issue 28: bytes that are not text, control characters, names far past any limit, extras after a flag that takes
# none, and options that only apply to another mode. Each is one line, exit 2, before any request.
LONG_PATH = "p" * 100_000
EP = "http://127.0.0.1:9"
_MODEL_IDS = [("", "--model is empty"), (" ", "--model is empty"), ("\x1b[2J", "is not a model id"),
              ("\udcff\udcfe", "is not a model id"), ("two words", "is not a model id"), ("x" * 300, "is not a model id"),
              ("claude\n", "is not a model id"), ("claude\x00", "is not a model id"), ("../../etc", "is not a model id"),
              ("\u202eevil", "is not a model id")]
_ENDPOINTS = ["http://127.0.0.1:9\x01", "http://127.0.0.1:9/\x1b[31m", "http://127.0.0.1:9/\x7f", "http://[::1",
              "http://127.0.0.1:9/ a", "http://127.0.0.1:9/\n/v1", "http://h\udcff:9", "x" * 3000]
CLI_ONLY += [(["ask", "q", "--model", m], 2, needle) for m, needle in _MODEL_IDS]
CLI_ONLY += [(["chat", "q", "--model", m], 2, needle) for m, needle in _MODEL_IDS[:4]]
CLI_ONLY += [(["ask", q], 2, "not UTF-8 text") for q in ("\udcff\udcfe", "which \udce9 strategy?", "nul\x00 byte")]
CLI_ONLY += [(["measure", "--endpoint", e, "--workload", "chat"], 2, "is not a URL") for e in _ENDPOINTS]
CLI_ONLY += [(["measure", "--baseline-endpoint", e, "--endpoint", EP, "--workload", "chat"], 2, "is not a URL")
             for e in _ENDPOINTS[:3]]
CLI_ONLY += [
    (["measure", "--endpoint", EP, "--prompts", LONG_PATH], 2, "the file name is too long"),
    (["measure", "--endpoint", EP, "--expect", LONG_PATH, "--workload", "chat"], 2, "the file name is too long"),
    (["measure", "--endpoint", EP, "--plot-dir", LONG_PATH, "--workload", "chat"], 2, "the file name is too long"),
    (["measure", "--local", LONG_PATH, "--workload", "chat"], 2, "the file name is too long"),
    (["eval", "--runner", "planner", "--cases-dir", LONG_PATH, "--quiet"], 2, "the file name is too long"),
    (["eval", "--runner", "planner", "--json", LONG_PATH + "/r.json", "--quiet"], 2, "the file name is too long"),
    (["eval", "--runner", "planner", "--known-failures", LONG_PATH, "--quiet"], 2, "File name too long"),
    (["--version", "extra"], 2, "--version takes no arguments"),
    (["--version", "--json"], 2, "--version takes no arguments"),
    (["eval", "--runner", "planner", "--mode", "compare"], 2, "--mode compare is for --runner agent"),
    (["eval", "--runner", "planner", "--mode", "without-skill"], 2, "--mode without-skill is for --runner agent"),
    (["eval", "--mode", "with-skill"], 2, "--mode with-skill is for --runner agent"),
    (["bo\x1bgus"], 2, "unknown command 'bo\\x1bgus'"),
    (["exit-codes", "\x1b[2J"], 2, "exit-codes takes no arguments"),
    (["ask", "q", "--tool-choice", "always"], 2, "invalid choice"),
    (["ask", "q", "--max-tokens", "0"], 2, "must be positive"),
    (["ask", "q", "--max-tokens", "lots"], 2, "expected a number"),
]


@pytest.mark.parametrize("argv, code, needle", CLI_ONLY, ids=[" ".join(a)[:60] or "(empty)" for a, _, _ in CLI_ONLY])
def test_cli_only(argv: list[str], code: int, needle: str, capsys, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # `ask ""` must fail before any key or call
    try:
        got = main(argv)
    except SystemExit as stop:  # argparse usage errors exit through our parser's error()
        got = stop.code
    err = capsys.readouterr().err
    assert got == code, err
    assert needle in err
    assert "Traceback" not in err and "\x1b" not in err and err.count("\n") == 1 and len(err) < 1000, err[:300]


@pytest.mark.parametrize("argv", [["chat", "--no-llm", "--transcript"], ["chat", "--transcript"]])
def test_chat_transcript_without_a_conversation_is_refused_and_writes_nothing(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    path = tmp_path / "t.json"
    code = main([*argv, str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "--transcript records a Claude conversation" in _one_line_error(err)
    assert not path.exists()


def test_ask_with_an_empty_question_makes_no_call(monkeypatch, capsys):
    # A key is set: the check must still come first (no request is attempted at an unreachable base URL).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert main(["ask", ""]) == 2
    assert "the question is empty" in capsys.readouterr().err


# --- the fixes seen from the good side ------------------------------------------------------------------------------
def test_exact_names_still_resolve_in_every_spelling_people_use():
    from specpick.tools.catalog.tables import get_catalog

    cat = get_catalog()
    for name in ("meta-llama/Llama-3.1-70B-Instruct", "META-LLAMA/llama-3.1-70b-instruct", "Llama-3.1-70B-Instruct",
                 "llama-3.1-70b", "llama3.1-70b", " llama-3.1-70b "):
        assert cat.model(name).repo_id == "meta-llama/Llama-3.1-70B-Instruct", name
    assert cat.find_model("Qwen/Qwen2.5-7B-Inst") is None and cat.find_model("meta-llama/Llama-3.1-70B-Instruc") is None


def test_a_repo_id_outside_the_snapshot_is_looked_up_on_the_hub_unless_offline(fakehub, hub_settings, monkeypatch,
                                                                                 tmp_path, capsys):
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    argv = ["recommend", "--verifier", "meta-llama/Llama-3.1-70B-Instruc", "--workload", "chat"]
    assert main([*argv, "--offline"]) == 5  # lookup disabled: not one request
    assert not fakehub.log
    assert main(argv) == 3  # looked up without --live; the Hub says it does not exist
    assert any("Llama-3.1-70B-Instruc" in req.path for req in fakehub.log)
    assert main(["recommend", "--verifier", "llama-3.1-70b", "--workload", "chat"]) == 0
    assert not [r for r in fakehub.log if "Llama-3.1-70B-Instruct/" in r.path]  # a catalog model: no request
    assert "Traceback" not in capsys.readouterr().err


def test_valid_tp_sizes_follow_the_engines_rule():
    from specpick.tools.validation import tp_problem, valid_tp_sizes

    assert valid_tp_sizes(64, 8) == [1, 2, 4, 8, 16, 32, 64]  # Llama-3.1-70B: KV heads replicated past 8
    # Qwen2.5-7B: 7 and 14 split the 28 heads but neither splits nor replicates the 4 KV heads; 28 replicates them
    assert valid_tp_sizes(28, 4) == [1, 2, 4, 28]
    assert valid_tp_sizes(128, 8, limit=16) == [1, 2, 4, 8, 16]
    assert tp_problem(3, 64, 8) and tp_problem(24, 128, 8) and not tp_problem(16, 128, 8)


def test_vram_never_reports_a_context_past_the_model_limit():
    r = BY_CLI["vram"].run({"verifier": "llama-3.1-8b", "gpu": "H200", "gpus": 8})
    assert r.max_context_at_concurrency == 131072
    assert any("max_position_embeddings" in a for a in r.assumptions)


def test_default_context_past_a_short_model_limit_plans_at_the_limit():
    # Agentic work's typical context (4096, tools/model/workload_context.py) is past Vicuna's 2048 positions.
    rec_ = BY_CLI["recommend"].run({"verifier": "vicuna-7b", "workload": "agentic"})
    assert rec_.inputs.context_tokens == 2048
    assert any(d.startswith("context tokens = 2048") for d in rec_.defaults_used)


def test_default_context_under_the_limit_is_the_workloads_typical_one_in_every_verb():
    # Chat's typical context (512) is within Vicuna's limit: recommend, speedup and vram plan at the same length.
    from specpick.tools.model.workload_context import typical_context_tokens

    rec_ = BY_CLI["recommend"].run({"verifier": "vicuna-7b", "workload": "chat"})
    spd = BY_CLI["speedup"].run({"verifier": "vicuna-7b", "workload": "chat", "gpu": "H100-SXM", "method": "eagle"})
    mem = BY_CLI["vram"].run({"verifier": "vicuna-7b", "workload": "chat", "gpu": "H100-SXM"})
    assert rec_.inputs.context_tokens == spd.context_tokens == mem.context_tokens == typical_context_tokens("chat")


def test_defaults_used_lists_no_engine_the_planner_did_not_default_to():
    # Lookahead ran only on TensorRT-LLM's TensorRT engine backend, removed in 2026 (engine_support.csv trtllm
    # rows): no current engine runs it, so asking for it names the method instead of defaulting an engine.
    from specpick.tools.errors import InputError

    with pytest.raises(InputError, match="no engine we track runs lookahead"):
        BY_CLI["recommend"].run({"verifier": "llama-3.1-8b", "workload": "chat", "method": "lookahead"})
    r = BY_CLI["recommend"].run({"verifier": "llama-3.1-8b", "workload": "chat", "method": "lookahead",
                                 "engine": "trtllm", "engine_version": "1.3.0rc19"})
    assert r.engine == "trtllm"
    assert not any(d.startswith("engine =") for d in r.defaults_used), r.defaults_used
    # The release behind the answer is listed when the user gave none: the engine at its newest tracked release.
    r = BY_CLI["recommend"].run({"verifier": "llama-3.1-8b", "workload": "code", "method": "ngram", "engine": "trtllm"})
    assert not any(d.startswith("engine =") for d in r.defaults_used), r.defaults_used
    release = [d for d in r.defaults_used if d.startswith("engine release =")]
    assert len(release) == 1 and "trtllm" in release[0], r.defaults_used


def test_auto_raised_tp_is_a_size_the_heads_accept():
    # The planner no longer raises TP itself: it answers for the user's GPUs and says what would fit
    # (tests/test_planner.py). The larger TP it offers must still be a size the verifier's heads accept.
    from specpick.tools.errors import InputError

    # Qwen2.5-72B (64 heads, 8 KV) at bf16 does not fit one L4: 8 is the fewest that fit and a valid size.
    r = BY_CLI["recommend"].run({"verifier": "qwen2.5-72b", "workload": "chat", "gpu": "L4"})
    flag = next(f for f in r.flags if f.id == "verifier_does_not_fit")
    assert r.inputs.gpus == 1 and "would fit: 8x L4 (tensor parallel 8;" in flag.message, flag.message
    # Llama-4-Scout (40 heads, 8 KV) needs more than 8 L4s; 16 would hold its weights but 40 heads do not split
    # over 16 or 32 (valid: 1, 2, 4, 8, 40), so the offer is 40.
    scout = BY_CLI["recommend"].run({"verifier": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "workload": "chat",
                                     "gpu": "L4"})
    flag = next(f for f in scout.flags if f.id == "verifier_does_not_fit")
    assert scout.inputs.gpus == 1 and "would fit: 40x L4 (tensor parallel 40;" in flag.message, flag.message
    # Vicuna-33B (52 heads, 52 KV) on T4: 2 and 4 are too few, 8 does not split 52 heads; 13 does. speedup says so.
    with pytest.raises(InputError) as err:
        BY_CLI["speedup"].run({"verifier": "lmsys/vicuna-33b-v1.3", "workload": "chat", "gpu": "T4",
                               "method": "ngram"})
    assert "would fit: 13x T4 (tensor parallel 13;" in str(err.value), str(err.value)


def test_head_check_reports_what_the_draft_length_was_checked_against():
    r = BY_CLI["head-check"].run({"head": EAGLE3_8B, "verifier": "llama-3.1-8b", "live": False,
                                  "num_draft_tokens": 5})
    lengths = [f for f in r.findings if f.check == "draft length"]
    assert len(lengths) == 1 and "N=5" in lengths[0].detail


def test_count_of_bad_inputs_tried():
    # Reported in the hardening issue: rows x surfaces, plus the CLI-only rows.
    tried = 3 * len(CASES) + len(CLI_ONLY) + 2 + 1
    print(f"\nbad inputs tried: {len(CASES)} rows x 3 surfaces ({len(GENERATED)} rows generated from the input "
          f"models) + {len(CLI_ONLY) + 3} CLI-only = {tried}")
    assert tried >= 800


@pytest.mark.parametrize("case", [c for c in CASES if c.needle == CATALOG_ONLY], ids=str)
def test_not_found_on_a_verb_without_live_never_suggests_live(case: Bad, capsys) -> None:
    assert "live" not in BY_CLI[case.verb].load_input_model().model_fields
    main(_argv(case))
    assert "--live" not in capsys.readouterr().err

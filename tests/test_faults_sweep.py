"""Issue 28's fault sweep: hostile engines, Hub files, Messages-API replies, file systems and MCP lines, from tables.

Every row writes down what must happen (the exception or exit code and a fragment of the one-line message) and is
run through the real client against a real stand-in on 127.0.0.1 where there is one (the engine of
tests/test_faults.py, tests/support/fakehub.py, tests/support/fakeclaude.py), or through the pure function that is
the one place doing the job (the stream sanitizer, the MCP line check). ``test_fault_counts`` prints the totals.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.errors import EXIT_BAD_REMOTE_DATA, EXIT_INPUT, EXIT_SERVICE, RemoteDataError
from specpick.tools.hub.bounds import ARCH_INT_BOUNDS, HEAD_INT_BOUNDS
from specpick.tools.measure.run import MeasureInput, run_measure
from specpick.tools.sanitize import StreamSanitizer
from tests.support.fakeclaude import TEST_API_KEY, Error, text_turn, tool_use_turn
from tests.test_faults import GOOD, LLAMA, EngineScript, serve_engine, vllm_page

VLLM = "vllm:spec_decode_"
# --- 1. numbers read from engines: one validator (tools/measure/metrics.check_engine_number) -----------------------
BAD_COUNTS = [("nan", "NaN", "= nan"), ("+inf", "+Inf", "= inf"), ("-inf", "-Inf", "= -inf"), ("negative", -5, "= -5"),
              ("1e300", 1e300, "= 1e+300"), ("past 2^53", 2.0**60, "= 1.15292e+18")]
COUNTER_SLOTS = [("drafts", 0, "num_drafts_total"), ("draft-tokens", 1, "num_draft_tokens_total"),
                 ("accepted", 2, "num_accepted_tokens_total")]


def _page_with(slot: int, value: object) -> str:
    counts: list[object] = [10, 40, 20]
    counts[slot] = value
    return vllm_page(*counts)


ENGINE_FAULTS: list[tuple[str, EngineScript, str]] = [
    (f"{name}-{why}", EngineScript([_page_with(slot, value)]), f"{metric} {needle}")
    for name, slot, metric in COUNTER_SLOTS for why, value, needle in BAD_COUNTS
]
ENGINE_FAULTS += [
    (f"per-pos-{why}", EngineScript([vllm_page(10, 40, 20, 'vllm:spec_decode_num_accepted_tokens_per_pos_total'
                                               f'{{model_name="m",position="0"}} {value}\n')]),
     f"per_pos_total {needle}")
    for why, value, needle in BAD_COUNTS
]
SGLANG = 'sglang:spec_accept_length{{model_name="m"}} {length}\nsglang:spec_accept_rate{{model_name="m"}} {rate}\n'
ENGINE_FAULTS += [
    ("sglang-nan-gauges", EngineScript([SGLANG.format(length="NaN", rate="NaN")]), "nothing was measured"),
    ("sglang-inf-gauges", EngineScript([SGLANG.format(length="+Inf", rate="-Inf")]), "nothing was measured"),
    ("sglang-rate-2.5", EngineScript([SGLANG.format(length=2, rate=2.5)]), "sglang:spec_accept_rate = 2.5"),
    ("sglang-rate-negative", EngineScript([SGLANG.format(length=2, rate=-0.1)]), "sglang:spec_accept_rate = -0.1"),
    ("sglang-length-negative", EngineScript([SGLANG.format(length=-1, rate=0.5)]), "sglang:spec_accept_length = -1"),
    ("sglang-length-1e300", EngineScript([SGLANG.format(length=1e300, rate=0.5)]), "sglang:spec_accept_length = 1e+300"),
]
BAD_USAGE = [("negative", -1), ("fraction", 2.5), ("string", "3"), ("list", [3]), ("bool", True), ("1e300", 1e300),
             ("past max_tokens", 10**9), ("null", None), ("object", {"n": 3}), ("nan-string", "NaN")]
ENGINE_FAULTS += [
    (f"usage-{why}", EngineScript([GOOD], usage={"completion_tokens": value, "prompt_tokens": 5}),
     "usage.completion_tokens = ") for why, value in BAD_USAGE
]
ENGINE_FAULTS += [
    (f"prompt-usage-{why}", EngineScript([GOOD], usage={"completion_tokens": 3, "prompt_tokens": value}),
     "usage.prompt_tokens = ") for why, value in BAD_USAGE if value is not None
]
ENGINE_FAULTS += [
    # Accepted draft tokens are output tokens: counters that accepted 20 while the request reports 0 (or 3) generated.
    ("zero-output-accepted-drafts", EngineScript([GOOD, GOOD, GOOD, vllm_page(10, 40, 20)],
                                                 usage={"completion_tokens": 0, "prompt_tokens": 5}),
     "completion tokens in all"),
    ("fewer-output-than-accepted", EngineScript([GOOD, GOOD, GOOD, vllm_page(10, 40, 20)],
                                                usage={"completion_tokens": 3, "prompt_tokens": 5}),
     "completion tokens in all"),
]


@pytest.mark.parametrize(("script", "fragment"), [pytest.param(s, f, id=i) for i, s, f in ENGINE_FAULTS])
def test_engine_numbers_go_through_one_validator(script: EngineScript, fragment: str, tmp_path: Path) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    for url in serve_engine(script):
        with pytest.raises(RemoteDataError) as info:
            run_measure(MeasureInput(endpoint=url, prompts=prompts, max_tokens=8, warmup=0))
    assert fragment in info.value.message, info.value.message


SECRET = "sk-ant-api03-" + "Qx7vB2nK9mT4pL1cR8yH5wZ3" * 2
POST_ERRORS = [(status, f"upstream said: key {SECRET} refused") for status in (400, 401, 403, 404, 422, 429, 500, 502,
                                                                                503)]


@pytest.mark.parametrize(("status", "text"), POST_ERRORS, ids=[str(s) for s, _ in POST_ERRORS])
def test_engine_http_errors_are_exit_7_without_the_reflected_key(status, text, tmp_path, capsys) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    for url in serve_engine(EngineScript([GOOD], post_error=(status, text))):
        code = main(["measure", "--endpoint", url, "--prompts", str(prompts), "--warmup", "0"])
    err = capsys.readouterr().err
    assert code == EXIT_SERVICE and f"HTTP {status}" in err and err.count("\n") == 1
    assert SECRET[:16] not in err and "[redacted]" in err


def test_endpoint_password_never_reaches_the_json_report(tmp_path, capsys) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    page = vllm_page(2, 8, 4)
    for url in serve_engine(EngineScript([GOOD, GOOD, GOOD, page, page], usage={"completion_tokens": 8})):
        authed = url.replace("http://", "http://user:hunter2-PASSWORD@")
        code = main(["measure", "--endpoint", authed, "--prompts", str(prompts), "--warmup", "0", "--max-tokens", "8",
                     "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "hunter2-PASSWORD" not in out
    assert json.loads(out)["endpoint"].startswith("http://user:[redacted]@127.0.0.1:")


HOSTILE_IDS = ["m\x1b[2J\x1b[H", "m\x1b]0;pwned\x07", "m\x9b31m", "m\x00\x08\x08"]


@pytest.mark.parametrize("served", HOSTILE_IDS, ids=["csi-clear", "osc-title", "c1-csi", "nul-backspace"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_served_model_id_with_escapes_is_printed_inert(served, as_json, tmp_path, capsys) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    page = vllm_page(2, 8, 4)  # no model_name label: the counters are the server's
    page = page.replace(',model_name="m"', "")
    script = EngineScript([GOOD.replace(',model_name="m"', ""), GOOD.replace(',model_name="m"', ""),
                           GOOD.replace(',model_name="m"', ""), page, page], usage={"completion_tokens": 8},
                          served=served, text=("\x1b[31mred", " \x1b]8;;http://x\x07link"))
    for url in serve_engine(script):
        code = main(["measure", "--endpoint", url, "--prompts", str(prompts), "--warmup", "0", "--max-tokens", "8",
                     *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 0 and not any(c in out + err for c in "\x1b\x9b\x07\x00\x08"), repr(out[:300])


# --- 2. config.json from the Hub: one validator (tools/hub/bounds.check_hub_config) -------------------------------
def _int_faults() -> list[tuple[str, dict, str]]:
    out = []
    for field, (low, high) in {**ARCH_INT_BOUNDS, **HEAD_INT_BOUNDS}.items():
        for why, value, rule in (("below", low - 1, "is outside"), ("above", high + 1, "is outside"),
                                 ("string", "8", "is not an integer"), ("float", 1.5, "is not an integer"),
                                 ("list", [1], "is not an integer"), ("bool", True, "is not an integer")):
            out.append((f"{field}-{why}", {**LLAMA, field: value}, f"{field} = {value!r} {rule}"[:60]))
    for nested in ("text_config", "transformer_layer_config", "eagle_config"):
        for field, value in (("hidden_size", -4096), ("num_hidden_layers", 10**9), ("vocab_size", "big")):
            out.append((f"{nested}.{field}", {**LLAMA, nested: {field: value}}, f"{nested}.{field} = {value!r}"))
    return out


HOSTILE_VERIFIERS = ["../../etc/passwd", "/etc/passwd", "~/models/llama", "a\nb", "x" * 300, 123, ["org/name"],
                     "org/..", "a/b/c", "org/name; rm -rf /", "\x1b[31morg/name"]
CONFIG_FAULTS = _int_faults() + [
    (f"verifier-{field.split('.')[-1]}-{i}", cfg, "not a Hub repo id")
    for i, value in enumerate(HOSTILE_VERIFIERS)
    for field, cfg in (("base_model_name_or_path", {"medusa_num_heads": 4, "base_model_name_or_path": value}),
                       ("speculators_config.verifier.name_or_path",
                        {"speculators_model_type": "eagle3", "speculators_config": {"verifier": {"name_or_path": value}}}))
]


@pytest.mark.parametrize(("config", "fragment"), [pytest.param(c, f, id=i) for i, c, f in CONFIG_FAULTS])
def test_every_hub_config_passes_one_validator(fakehub, hub_settings, config, fragment) -> None:
    from specpick.tools.hub.client import fetch_json

    repo = "org/hostile-" + str(abs(hash(json.dumps(config, sort_keys=True))) % 10**12)
    fakehub.add_repo(repo, {"config.json": config})
    with pytest.raises(RemoteDataError) as info:
        fetch_json(repo, "config.json", settings=hub_settings)
    assert fragment in info.value.message and f"config.json in {repo}" in info.value.message, info.value.message


@pytest.mark.parametrize("argv", [
    ["head-check", "org/hostile-head", "llama-3.1-8b", "--live"],
    ["recommend", "--verifier", "llama-3.1-8b", "--workload", "chat", "--head", "org/hostile-head", "--live"],
], ids=["head-check", "recommend-head"])
@pytest.mark.parametrize("config", [
    {"speculators_model_type": "eagle3", "hidden_size": -4096,
     "speculators_config": {"verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}}},
    {"speculators_model_type": "eagle3", "num_hidden_layers": 10**9,
     "speculators_config": {"verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}}},
    {"speculators_model_type": "eagle3", "speculators_config": {"verifier": {"name_or_path": "../../etc/passwd"}}},
], ids=["negative-hidden", "1e9-layers", "verifier-traversal"])
def test_hostile_head_config_is_refused_by_the_verbs(fakehub, hub_settings, monkeypatch, capsys, argv, config) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", hub_settings.cache_dir)
    fakehub.add_repo("org/hostile-head", {"config.json": config})
    fakehub.add_repo("meta-llama/Llama-3.1-8B-Instruct", {"config.json": LLAMA})
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == EXIT_BAD_REMOTE_DATA and err.startswith("error: config.json in org/hostile-head") and out == ""
    assert "/etc/passwd" not in out


# --- 3. catalog update cannot write its overlay: the refresh is kept and the user told where -----------------------
def _update(monkeypatch, home: str | Path, fakehub, hub_settings, capsys) -> tuple[int, str, str]:
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", hub_settings.cache_dir)
    code = main(["catalog", "update", "--limit-per-query", "2", "--max-repos", "2"])
    out, err = capsys.readouterr()
    return code, out, err


def _layouts(tmp: Path) -> dict[str, Path]:
    afile = tmp / "afile"
    afile.write_text("x")
    as_dir = tmp / "dir-home"
    (as_dir / "specpick" / "catalog-overlay.json").mkdir(parents=True)
    return {"proc": Path("/proc/nope"), "home-is-a-file": afile, "overlay-is-a-folder": as_dir,
            "name-too-long": tmp / ("h" * 300), "under-a-file": afile / "sub"}


@pytest.mark.parametrize(("layout", "reason"), [
    ("proc", "cannot write the catalog overlay to /proc/nope/specpick/catalog-overlay.json"),
    ("home-is-a-file", "a part of the path is a file, not a folder"),
    ("overlay-is-a-folder", "it is a folder, not a file"),
    ("name-too-long", "the file name is too long"),
    ("under-a-file", "a part of the path is a file, not a folder"),
])
def test_unwritable_overlay_keeps_the_refresh(layout, reason, tmp_path, monkeypatch, fakehub, hub_settings,
                                              capsys) -> None:
    fakehub.add_repo("Qwen/Qwen3-8B", {"config.json": LLAMA}, pipeline_tag="text-generation")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the kept refresh goes (tempfile.gettempdir)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code, out, err = _update(monkeypatch, _layouts(tmp_path)[layout], fakehub, hub_settings, capsys)
    assert code == EXIT_INPUT and err.count("\n") == 1 and reason in err, err
    assert "the refresh was saved to " in err, err
    kept = err.split("the refresh was saved to ")[1].split(":")[0]
    data = json.loads(Path(kept).read_text())
    assert data["endpoint"] == fakehub.url and data["queries"] > 0 and "Traceback" not in err


@pytest.mark.parametrize("code_", [errno.EROFS, errno.ENOSPC, errno.EACCES, errno.EDQUOT, errno.EPERM, errno.EFBIG])
def test_injected_write_errors_keep_the_refresh(code_, tmp_path, monkeypatch, fakehub, hub_settings, capsys) -> None:
    from specpick.tools.catalog import overlay as ov

    def refuse(overlay, path=None):
        raise OSError(code_, os.strerror(code_), str(ov.overlay_path()))

    monkeypatch.setattr(ov, "write_overlay", refuse)
    code, out, err = _update(monkeypatch, tmp_path / "home", fakehub, hub_settings, capsys)
    assert code == EXIT_INPUT and "cannot write the catalog overlay" in err and "the refresh was saved to" in err
    assert f"errno {errno.errorcode[code_]}" in err


def test_no_writable_place_at_all_prints_the_refresh(tmp_path, monkeypatch, fakehub, hub_settings, capsys) -> None:
    import tempfile

    def nowhere(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", "/tmp")

    monkeypatch.setattr(tempfile, "mkstemp", nowhere)
    code, out, err = _update(monkeypatch, "/proc/nope", fakehub, hub_settings, capsys)
    assert code == EXIT_INPUT and "the refresh was printed on stdout" in err
    assert json.loads(out)["endpoint"] == fakehub.url


def test_overlay_model_without_parameters_is_not_merged(tmp_path, monkeypatch) -> None:
    from specpick.tools.catalog import overlay as ov
    from specpick.tools.catalog.tables import Catalog

    model = next(m for m in Catalog().models if m.params_total_b).model_dump(mode="json")
    rows = [{**model, "repo_id": "org/zero", "params_total_b": 0.0}, {**model, "repo_id": "org/none",
                                                                         "params_total_b": None},
            {**model, "repo_id": "org/fine"}]
    state = ov.Overlay(fetched_at="2026-12-01", endpoint="e", snapshot="s", models=rows)
    assert [m.repo_id for m in state.models] == ["org/fine"]
    assert {(s.repo_id, s.reason) for s in state.skipped} == {("org/zero", "no-parameters"), ("org/none",
                                                                                             "no-parameters")}


# --- 4. ask/chat: model text through the one sanitizer, split over deltas ------------------------------------------
STREAM_SECRETS = [
    ("anthropic-shape", "sk-ant-api03-" + "Zq9xW2vB7nK4mT1pL8cR5yH3" * 2, "sk-ant-api03"),
    ("hf-token", "hf_" + "aBcD3fGh1JkLmN0pQrStUvWx", "hf_aBcD"),
    ("bearer", "Authorization: Bearer abc.def-ghi_jkl", "abc.def"),
    ("password-label", "password = hunter2hunter2", "hunter2"),
    ("url-password", "http://admin:s3cr3t-pw@db.internal:5432/x", "s3cr3t-pw"),
    ("env-literal", TEST_API_KEY, TEST_API_KEY),
]
CHUNK_SIZES = [1, 2, 3, 4, 5, 7, 8, 13]


@pytest.mark.parametrize("size", CHUNK_SIZES)
@pytest.mark.parametrize(("secret", "leak"), [pytest.param(s, k, id=i) for i, s, k in STREAM_SECRETS])
def test_secret_split_over_deltas_is_redacted(secret, leak, size, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_API_KEY)
    text = f"Here it is: {secret} and more words after it."
    sanitizer = StreamSanitizer()
    shown = "".join(sanitizer.feed(text[i:i + size]) for i in range(0, len(text), size)) + sanitizer.flush()
    assert leak not in shown and "[redacted]" in shown and shown.endswith("more words after it.")


ESCAPES = [("csi-colour", "\x1b[31m"), ("csi-clear", "\x1b[2J\x1b[H"), ("osc-title", "\x1b]0;pwned\x07"),
           ("osc-link", "\x1b]8;;http://evil\x1b\\"), ("dcs", "\x1bP1$r\x1b\\"), ("c1-csi", "\x9b31m"),
           ("bell", "\x07"), ("nul", "\x00"), ("backspace", "\x08\x08\x08"), ("carriage-return", "\rOVERWRITE")]


@pytest.mark.parametrize("size", [1, 3, 8, 64])
@pytest.mark.parametrize("escape", [pytest.param(e, id=i) for i, e in ESCAPES])
def test_terminal_escapes_never_pass_the_stream(escape, size) -> None:
    text = f"safe {escape}text{escape} end"
    sanitizer = StreamSanitizer()
    shown = "".join(sanitizer.feed(text[i:i + size]) for i in range(0, len(text), size)) + sanitizer.flush()
    assert not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in shown), repr(shown)
    assert shown.startswith("safe ") and shown.endswith(" end")


@pytest.mark.parametrize(("text", "leak"), [pytest.param(f"The key is {s} ok.", k, id=i) for i, s, k in STREAM_SECRETS]
                         + [pytest.param(f"x{e}y", e, id=i) for i, e in ESCAPES[:6]])
def test_ask_streams_model_text_sanitized(claude_env, text, leak, capsys) -> None:
    claude_env.push(text_turn(text), text_turn(text))  # no submission: one repair, then the error
    code = main(["ask", "which strategy?"])
    out, err = capsys.readouterr()
    assert code == EXIT_SERVICE and leak not in err and leak not in out
    *streamed, last = err.rstrip("\n").split("\n")
    assert last.startswith("error: Claude ended without calling submit_recommendation"), err  # on a line of its own


def test_tool_input_that_is_not_an_object_is_refused_and_the_next_request_is_valid(claude_env, capsys) -> None:
    from tests.support.fakeclaude import sample_recommendation

    bad = tool_use_turn("param_count", {"model": "llama-3.1-8b"})
    bad["content"][0]["input"] = ["llama-3.1-8b"]  # what a weak model behind a compatible server sent
    claude_env.push(bad, tool_use_turn("submit_recommendation", sample_recommendation()))
    code = main(["ask", "which strategy?", "--json"])
    out, err = capsys.readouterr()
    replayed = claude_env.message_requests[1].body["messages"][1]["content"]
    assert code == 0 and json.loads(out)["strategy"]
    assert replayed[0]["input"] == {}  # the API takes objects only
    result = claude_env.message_requests[1].body["messages"][2]["content"][0]
    assert result["is_error"] and "takes a JSON object of arguments, got list" in result["content"]


def test_tool_input_streamed_as_a_string_is_a_clear_error(claude_env, capsys) -> None:
    # vLLM's /v1/messages streamed `"` as the start of a tool input (a 135M model's forced call): the SDK raises
    # ValueError while accumulating it. Before the fix that escaped as an internal error with a traceback.
    bad = tool_use_turn("param_count", {"model": "llama-3.1-8b"})
    bad["content"][0]["input"] = "llama-3.1-8b"
    claude_env.push(bad)
    code = main(["ask", "which strategy?", "--json"])
    err = capsys.readouterr().err
    assert code == EXIT_SERVICE and "tool call whose input is not a JSON object" in err and err.count("\n") == 1


CONTEXT_ERRORS = [
    ("max-tokens", "max_completion_tokens=8192 cannot be greater than max_model_len=2048. Please request fewer "
                   "output tokens.", "pass a smaller --max-tokens"),
    ("prompt", "This model's maximum context length is 2048 tokens. However, your prompt contains 17000 input "
               "tokens, which exceeds this limit even without any output tokens.", "longer context"),
]


@pytest.mark.parametrize(("detail", "fragment"), [pytest.param(d, f, id=i) for i, d, f in CONTEXT_ERRORS])
def test_a_context_too_small_names_the_fix(claude_env, no_sleep, detail, fragment, capsys) -> None:
    claude_env.push(Error(400, "BadRequestError", detail))
    code = main(["ask", "which strategy?", "--json"])
    err = capsys.readouterr().err
    assert code == EXIT_SERVICE and fragment in err and err.count("\n") == 1


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    from specpick.skill.surfaces import api_call

    waits: list[float] = []
    monkeypatch.setattr(api_call, "sleep", waits.append)
    return waits


def test_max_tokens_reaches_the_request(claude_env, capsys) -> None:
    claude_env.push(text_turn("no"), text_turn("no"))
    main(["ask", "which strategy?", "--max-tokens", "1500", "--tool-choice", "any"])
    bodies = [r.body for r in claude_env.message_requests]
    assert all(b["max_tokens"] == 1500 and b["tool_choice"] == {"type": "any"} for b in bodies)


@pytest.mark.parametrize("argv, key", [(["chat", "--no-llm"], ""), (["chat"], "sk-test-never-sent")],
                         ids=["interview", "claude"])
def test_chat_with_invalid_utf8_on_stdin_is_one_line(argv, key) -> None:
    # A pipe's non-UTF-8 bytes (read with surrogateescape in a C locale, or strictly in UTF-8 mode): refused by the
    # one line reader before a catalog look-up or an API request (the base URL below answers nothing).
    env = {**os.environ, "ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
           "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-m", "specpick.skill.surfaces.cli", *argv],
                          input=b"\xff\xfe llama on h100\n", capture_output=True, timeout=120, env=env)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == EXIT_INPUT and "not UTF-8" in err and "Traceback" not in err, err[-500:]
    assert err.rstrip("\n").split("\n")[-1].startswith("error: ")


# --- 5. MCP lines: truncated and oddly typed messages get a JSON-RPC error ------------------------------------------
INIT_LINE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
MCP_LINES = [(f"truncated-at-{n}", INIT_LINE[:n].encode(), -32700) for n in range(5, len(INIT_LINE), 9)]
MCP_LINES += [(f"id-{why}", json.dumps({"jsonrpc": "2.0", "id": value, "method": "ping"}).encode(), -32600)
              for why, value in (("float", 0.5), ("negative-float", -2.5), ("big-float", 1e300), ("list", [1]),
                                 ("true", True), ("false", False), ("object", {}), ("null", None))]
MCP_LINES += [(f"method-{why}", json.dumps({"jsonrpc": "2.0", "id": 3, "method": value}).encode(), -32600)
              for why, value in (("null", None), ("number", 7), ("list", ["ping"]), ("object", {"a": 1}))]
MCP_LINES += [("utf16", INIT_LINE.encode("utf-16"), -32700), ("latin1-garbage", b"\xe9\xe8\xff", -32700),
              ("nan", b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', -32700),  # JSON has no NaN: a parse error
              ("string-line", b'"ping"', -32600), ("null-line", b"null", -32600)]


@pytest.mark.parametrize(("raw", "code"), [pytest.param(r, c, id=i) for i, r, c in MCP_LINES])
def test_mcp_line_fault_gets_its_error(raw: bytes, code: int) -> None:
    from specpick.skill.surfaces.mcp import check_line

    text, error = check_line(raw)
    assert text is None and error is not None and error[0] == code, error


# --- 6. concurrent measure setups share one folder safely -----------------------------------------------------------
def test_concurrent_setups_build_the_venv_once(tmp_path) -> None:
    script = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        import tests.support.vllm_server as v
        def fake_build(venv):
            (venv / "bin").mkdir(parents=True)
            (venv / "bin" / "python").write_text("")
            with open(Path(sys.argv[1]) / "builds.log", "a") as log:
                log.write("built\\n")
            time.sleep(1.0)  # the other process arrives while this build is under way
            (venv / ".specpick-ready").write_text(v.VLLM_CPU_VERSION + "\\n")
        v._build_venv = fake_build
        print(v.ensure_vllm_venv())
    """)
    env = {**os.environ, "SPECPICK_MEASURE_HOME": str(tmp_path), "PYTHONPATH": os.getcwd()}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e.decode()[-500:] for _, e in outs]
    assert (tmp_path / "builds.log").read_text().count("built") == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("vllm-venv.")] == []  # no temp folder left
    assert (tmp_path / "vllm-venv" / ".specpick-ready").is_file()


def test_fault_counts() -> None:
    from tests.test_faults import CONFIG_FAULTS as FIRST_CONFIG
    from tests.test_faults import ENGINE_FAULTS as FIRST_ENGINE
    from tests.test_faults import REFLECTIONS, SAFETENSORS_FAULTS, WIRE_FAULTS, YAML_FAULTS

    counts = {
        "engine numbers and replies (measure)": len(ENGINE_FAULTS) + len(POST_ERRORS) + 1 + 2 * len(HOSTILE_IDS)
        + len(FIRST_ENGINE) + 3,
        "Hub files (--live reads)": len(CONFIG_FAULTS) + 6 + len(FIRST_CONFIG) + len(SAFETENSORS_FAULTS) + 2,
        "catalog update write path": 5 + 6 + 1 + 1,
        "ask/chat (stream, replies, stdin)": len(STREAM_SECRETS) * len(CHUNK_SIZES) + len(ESCAPES) * 4
        + len(STREAM_SECRETS) + 6 + 2 + len(CONTEXT_ERRORS) + 1 + 2 + len(REFLECTIONS) + 4,
        "MCP wire": len(MCP_LINES) + 2 * len(WIRE_FAULTS),
        "eval files": len(YAML_FAULTS) + 3,
        "concurrency": 1,
    }
    print("\nfaults tried: " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f"; total {sum(counts.values())}")
    assert sum(counts.values()) >= 350

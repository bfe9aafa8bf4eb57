"""Faults injected from outside: impossible engine counters, hostile Hub files, bad eval files, hung APIs, garbage
on the MCP wire, and keys reflected back in error text.

Every fault goes through the real client against a real local stand-in on 127.0.0.1 (an OpenAI-compatible engine
defined here, the Hub stand-in tests/support/fakehub.py, the Messages-API stand-in tests/support/fakeclaude.py) and
must end as a one-line error with its documented exit code, never a traceback or a figure.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.errors import (
    EXIT_BAD_REMOTE_DATA,
    EXIT_INPUT,
    EXIT_SERVICE,
    EXIT_UNAVAILABLE,
    RemoteDataError,
    redact,
)
from specpick.tools.measure.run import MeasureInput, run_measure
from tests.support.fakeclaude import TEST_API_KEY, Error, Hang

# --- an OpenAI-compatible engine whose /metrics and usage figures the test chooses -----------------------------


@dataclass
class EngineScript:
    """What the stand-in engine serves: one /metrics page per GET (the last repeats) and a usage chunk."""

    metrics: list[str]
    usage: dict[str, object] = field(default_factory=lambda: {"prompt_tokens": 5, "completion_tokens": 3})
    per_request: dict[str, object] | None = None
    seen: list[str] = field(default_factory=list)  # "GET /metrics", "POST /v1/chat/completions", ...
    post_error: tuple[int, str] | None = None  # answer every POST with this status and error message
    served: str = "m"  # the model id /v1/models lists
    text: tuple[str, ...] = ("a", " b", " c")  # the streamed completion


def vllm_page(drafts: float, draft_tokens: float, accepted: float, extra: str = "") -> str:
    labels = '{engine="0",model_name="m"}'
    return (
        "# TYPE vllm:spec_decode_num_drafts counter\n"
        f"vllm:spec_decode_num_drafts_total{labels} {drafts}\n"
        f"vllm:spec_decode_num_draft_tokens_total{labels} {draft_tokens}\n"
        f"vllm:spec_decode_num_accepted_tokens_total{labels} {accepted}\n" + extra
    )


def serve_engine(script: EngineScript) -> Iterator[str]:
    pages = list(script.metrics)

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            script.seen.append(f"GET {self.path}")
            if self.path == "/v1/models":
                self._send(json.dumps({"object": "list", "data": [{"id": script.served}]}).encode())
            elif self.path == "/metrics":
                page = pages.pop(0) if len(pages) > 1 else pages[0]
                self._send(page.encode(), "text/plain")
            else:
                self.send_error(404)

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            script.seen.append(f"POST {self.path}")
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if script.post_error is not None:
                body = json.dumps({"error": {"message": script.post_error[1]}}).encode()
                self.send_response(script.post_error[0])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            final: dict[str, object] = {"choices": [], "usage": script.usage}
            if script.per_request is not None:
                final["metrics"] = {"speculative_decoding": script.per_request}
            chunks = [{"choices": [{"delta": {"content": w}}]} for w in script.text] + [final]
            body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send(body.encode(), "text/event-stream")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll: shutdown() waits for the serving loop to look (0.5 s by default, per stand-in, per test).
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


GOOD = vllm_page(0, 0, 0)
ENGINE_FAULTS = [
    # (id, script, fragment the one-line error must contain)
    ("accepted>drafted", EngineScript([GOOD, GOOD, GOOD, vllm_page(10, 40, 100)]),
     "num_accepted_tokens_total = 100 > vllm:spec_decode_num_draft_tokens_total = 40"),
    ("negative-counter", EngineScript([GOOD, vllm_page(-5, 10, 2)]), "num_drafts_total = -5"),
    ("nan-counter", EngineScript([GOOD, vllm_page(10, 40, "NaN")]), "num_accepted_tokens_total = nan"),
    ("inf-counter", EngineScript([GOOD, vllm_page("+Inf", 40, 2)]), "num_drafts_total = inf"),
    ("draft-tokens<drafts", EngineScript([GOOD, GOOD, GOOD, vllm_page(50, 10, 5)]),
     "num_draft_tokens_total = 10 < vllm:spec_decode_num_drafts_total = 50"),
    ("per-pos>drafts", EngineScript([GOOD, GOOD, GOOD, vllm_page(
        10, 40, 20, 'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",position="0"} 99\n')]),
     "per_pos_total[0] = 99 > vllm:spec_decode_num_drafts_total = 10"),
    ("per-pos-huge-position", EngineScript([vllm_page(
        1, 1, 1, 'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",position="99999999999"} 1\n')]),
     "position 99999999999"),
    ("negative-usage", EngineScript([GOOD], usage={"completion_tokens": -40}), "usage.completion_tokens = -40"),
    ("usage>max-tokens", EngineScript([GOOD], usage={"completion_tokens": 10**9}), "usage.completion_tokens"),
    ("fractional-usage", EngineScript([GOOD], usage={"completion_tokens": 2.5}), "usage.completion_tokens = 2.5"),
    ("string-usage", EngineScript([GOOD], usage={"completion_tokens": "3"}), "usage.completion_tokens = '3'"),
    ("negative-prompt-usage", EngineScript([GOOD], usage={"completion_tokens": 3, "prompt_tokens": -1}),
     "usage.prompt_tokens = -1"),
    ("per-request-accepted>drafted", EngineScript([GOOD], per_request={
        "num_spec_steps": 2, "num_draft_tokens": 4, "num_accepted_draft_tokens": 9, "acceptance_histogram": []}),
     "speculative_decoding.num_accepted_draft_tokens = 9 > speculative_decoding.num_draft_tokens = 4"),
    ("sglang-rate>1", EngineScript(['sglang:spec_accept_length{model_name="m"} 2.0\n'
                                    'sglang:spec_accept_rate{model_name="m"} 2.5\n']),
     "sglang:spec_accept_rate = 2.5"),
    ("sglang-length-huge", EngineScript(['sglang:spec_accept_length{model_name="m"} 1e9\n']),
     "sglang:spec_accept_length = 1e+09"),
]


@pytest.mark.parametrize(("script", "fragment"), [pytest.param(s, f, id=i) for i, s, f in ENGINE_FAULTS])
def test_impossible_engine_figures_are_bad_remote_data(script: EngineScript, fragment: str, tmp_path: Path) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    for url in serve_engine(script):
        with pytest.raises(RemoteDataError) as info:
            run_measure(MeasureInput(endpoint=url, prompts=prompts, max_tokens=8, warmup=0))
        assert fragment in info.value.message


def test_impossible_counters_exit_6_on_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    for url in serve_engine(EngineScript([GOOD, GOOD, GOOD, vllm_page(10, 40, 100)])):
        code = main(["measure", "--endpoint", url, "--prompts", str(prompts), "--max-tokens", "8", "--warmup", "0"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_REMOTE_DATA
    assert err.startswith("error: ") and err.count("\n") == 1 and "num_accepted_tokens_total" in err


def test_plot_dir_without_matplotlib_fails_before_any_request(tmp_path, monkeypatch, capsys) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without the measure extra looks like
    script = EngineScript([GOOD])
    for url in serve_engine(script):
        code = main(["measure", "--endpoint", url, "--prompts", str(prompts), "--plot-dir", str(tmp_path / "plots")])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and "--plot-dir needs matplotlib" in err and err.count("\n") == 1
    assert script.seen == [], "nothing may be sent before every option is checked"


@pytest.mark.parametrize(("flags", "fragment"), [
    (["--plot-dir", "{file}"], "--plot-dir {file} is a file; give a folder"),
    (["--plot-dir", "{file}/sub"], "is a file, not a folder"),
    (["--save-samples", "{tmp}/no/such/dir/s.jsonl"], "does not exist; create it first"),
    (["--save-samples", "{tmp}"], "is a folder; give a file name"),
])
def test_unwritable_outputs_fail_before_the_model_loads(tmp_path, capsys, flags, fragment) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    fill = {"file": str(afile), "tmp": str(tmp_path)}
    argv = ["measure", "--local", str(tmp_path / "no-model-here"), "--workload", "chat"]
    code = main(argv + [f.format(**fill) for f in flags])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and fragment.format(**fill) in err, err


def test_save_samples_needs_local(tmp_path, capsys) -> None:
    code = main(["measure", "--endpoint", "http://127.0.0.1:9", "--workload", "chat",
                 "--save-samples", str(tmp_path / "s.jsonl")])
    assert code == EXIT_INPUT and "--save-samples is for --local" in capsys.readouterr().err


def test_sane_counters_still_measure(tmp_path: Path) -> None:
    """The checks refuse impossible figures only: a plausible engine still gives alpha and tau."""
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    # 2 drafts of 4 tokens, 4 accepted: 2 cycles give at most 2 x (4 + 1) tokens, and the request reports 8.
    page = vllm_page(2, 8, 4)
    for url in serve_engine(EngineScript([GOOD, GOOD, GOOD, page, page], usage={"completion_tokens": 8})):
        report = run_measure(MeasureInput(endpoint=url, prompts=prompts, max_tokens=8, warmup=0))
    acc = report.results[0].acceptance
    assert acc is not None and (acc.alpha, acc.tau) == (0.5, 3.0)


# --- ask: keys reflected in error text, a hung API, unbounded retries --------------------------------------------

ANTHROPIC_SHAPED = "sk-ant-api03-" + "Zq9xW2vB7nK4mT1pL8cR5yH3" * 3
HF_SHAPED = "hf_" + "aBcD3fGh1JkLmN0pQrStUvWx"
REFLECTIONS = [
    # (id, what a misbehaving proxy echoes into error.message)
    ("env-key-literal", f"bad request: header x-api-key={TEST_API_KEY} is malformed"),
    ("sk-ant-shape", f"upstream said: invalid key {ANTHROPIC_SHAPED}"),
    ("bearer-header", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJlMTIzNDU2"),
    ("hf-token", f"cannot forward: HF token {HF_SHAPED} rejected"),
    ("base64-secret", "proxy secret in header: Q2xhdWRlS2V5OnNrLWFudC1hcGkwMy1hYmNkZWYxMjM0NTY3ODkw"),
]


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry back-offs recorded, never slept."""
    from specpick.skill.surfaces import api_call

    waits: list[float] = []
    monkeypatch.setattr(api_call, "sleep", waits.append)
    return waits


@pytest.mark.parametrize("reflected", [pytest.param(t, id=i) for i, t in REFLECTIONS])
def test_ask_never_prints_a_key_the_server_reflects(claude_env, no_sleep, capsys, tmp_path, reflected: str) -> None:
    claude_env.push(Error(400, "invalid_request_error", reflected))
    transcript = tmp_path / "t.json"
    code = main(["ask", "which strategy?", "--json", "--transcript", str(transcript)])
    out, err = capsys.readouterr()
    assert code == EXIT_SERVICE and out == ""
    assert err.startswith("error: the Claude API answered 400") and err.count("\n") == 1
    assert "[redacted]" in err
    written = transcript.read_text(encoding="utf-8")
    for secret in (TEST_API_KEY, ANTHROPIC_SHAPED, HF_SHAPED, "eyJhbGciOiJIUzI1NiJ9", "Q2xhdWRlS2V5"):
        assert secret not in err and secret not in written


def test_measure_never_prints_a_key_the_engine_reflects(tmp_path, monkeypatch, capsys) -> None:
    """An engine (or a proxy in front of it) that echoes the Authorization header into its error text."""
    monkeypatch.setenv("HF_TOKEN", HF_SHAPED)
    prompts = tmp_path / "p.txt"
    prompts.write_text("Say hello.\n")
    # The secret sits where the 300-character cut falls: redaction must come before the cut.
    message = "x" * 280 + f" got Authorization: Bearer {ANTHROPIC_SHAPED} and token {HF_SHAPED}"
    for url in serve_engine(EngineScript([GOOD], post_error=(400, message))):
        code = main(["measure", "--endpoint", url, "--prompts", str(prompts), "--warmup", "0"])
    err = capsys.readouterr().err
    assert code == EXIT_SERVICE and "answered HTTP 400" in err
    assert ANTHROPIC_SHAPED[:12] not in err and HF_SHAPED not in err


def test_argparse_errors_do_not_echo_a_key(monkeypatch, capsys) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_API_KEY)
    with pytest.raises(SystemExit):
        main(["ask", "q", "--max-retries", ANTHROPIC_SHAPED])
    err = capsys.readouterr().err
    assert "--max-retries" in err and ANTHROPIC_SHAPED[:12] not in err


def test_redaction_keeps_names_commits_and_ids() -> None:
    """What redaction must leave alone, or errors stop saying what to fix."""
    kept = ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B revision 0123456789abcdef0123456789abcdef01234567 "
            "tool toolu_01XFDUDYJgAACzvnptvVoYEL /work/tests/support/fakehub.py max_tokens: 8192 token budget")
    assert redact(kept) == kept


def test_ask_timeout_is_a_deadline_for_a_hung_api(claude_env, no_sleep, capsys) -> None:
    """`ask --timeout 1 --max-retries 10` against an API that never answers ends in about 1 s, exit 5."""
    claude_env.push(*[Hang()] * 11)
    started = time.monotonic()
    code = main(["ask", "which strategy?", "--json", "--timeout", "1", "--max-retries", "10"])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == EXIT_UNAVAILABLE and "did not answer in time" in err
    assert 1.0 <= elapsed < 2.5, elapsed
    assert len(claude_env.message_requests) == 1


def test_retries_stop_at_the_deadline_not_the_retry_count(fake_claude, claude_client) -> None:
    """Back-offs count against the timeout: of 10 retries allowed, those that would outlive it are not made."""
    from specpick.skill.surfaces.agent import Conversation, Limits

    now = [0.0]
    fake_claude.push(*[Error(529, "overloaded_error", "Overloaded")] * 11)
    conv = Conversation(claude_client(max_retries=10), model="claude-test-model", system="s",
                        limits=Limits(timeout_s=5), clock=lambda: now[0],
                        sleep=lambda s: now.__setitem__(0, now[0] + s))
    res = conv.run("which strategy?")
    assert res.error is not None and res.error.exit_code == EXIT_SERVICE and "overloaded" in res.error.message
    # Back-offs 0.5, 1, 2 s (each up to 25% shorter) fit in 5 s; the next (3-4 s) would pass the deadline.
    assert len(fake_claude.message_requests) in (3, 4) and now[0] < 5


@pytest.mark.parametrize("value", ["100000", "-1", "11", "lots"])
def test_ask_max_retries_is_bounded(value: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_API_KEY)
    with pytest.raises(SystemExit) as info:
        main(["ask", "q", "--max-retries", value])
    err = capsys.readouterr().err
    assert info.value.code == EXIT_INPUT and "--max-retries" in err and err.count("\n") == 1


# --- Hub: hostile config.json and safetensors headers through the real huggingface_hub client --------------------

LLAMA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
DEEP = b'{"model_type": "llama", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
CONFIG_FAULTS = [
    # (id, config.json content, fragment naming the field)
    ("nested-100000-deep", DEEP, "nested more than 64 levels deep"),
    ("layers-1e12", {**LLAMA, "num_hidden_layers": 10**12}, "num_hidden_layers = 1000000000000 is outside 1..2,048"),
    ("layers-float", {**LLAMA, "num_hidden_layers": 1e12}, "num_hidden_layers = 1000000000000.0 is not an integer"),
    ("hidden-negative", {**LLAMA, "hidden_size": -4096}, "hidden_size = -4096 is outside"),
    ("vocab-huge", {**LLAMA, "vocab_size": 10**10}, "vocab_size = 10000000000 is outside"),
    ("kv-heads-string", {**LLAMA, "num_key_value_heads": "8"}, "num_key_value_heads = '8' is not an integer"),
    ("kv>heads", {**LLAMA, "num_key_value_heads": 64}, "more than num_attention_heads (32)"),
    ("experts-per-token>experts", {**LLAMA, "num_local_experts": 8, "num_experts_per_tok": 9},
     "num_experts_per_tok = 9 is more than the 8 experts"),
    ("rope-dim-list", {**LLAMA, "qk_rope_head_dim": [64]}, "qk_rope_head_dim = [64] is not an integer"),
    ("vision-patch-zero", {**LLAMA, "vision_config": {"hidden_size": 1152, "intermediate_size": 4304,
                                                      "num_hidden_layers": 27, "patch_size": 0}},
     "vision_config.patch_size = 0 is outside"),
    ("dtype-object", {**LLAMA, "torch_dtype": {"evil": 1}}, "torch_dtype = {'evil': 1} is not a dtype name"),
    ("layer-types-huge", {**LLAMA, "sliding_window": 4096, "layer_types": ["full_attention"] * 5000},
     "layer_types"),
    ("every-field-at-its-bound", {**LLAMA, "hidden_size": 131_072, "num_hidden_layers": 2_048,
                                  "intermediate_size": 1_048_576, "num_attention_heads": 1_024,
                                  "num_key_value_heads": 1_024}, "B parameters, above the 100,000 B bound"),
    ("not-json", b'{"model_type": "llama", "hidden_size": 40', "is not valid JSON"),
    ("not-utf8", b'{"model_type": "\xff\xfe"}', "is not UTF-8"),
]


@pytest.mark.parametrize(("content", "fragment"), [pytest.param(c, f, id=i) for i, c, f in CONFIG_FAULTS])
def test_hostile_config_is_bad_remote_data_naming_the_field(fakehub, hub_settings, content, fragment) -> None:
    from specpick.tools.hub.config import fetch_model_spec, param_count

    fakehub.add_repo("org/hostile", {"config.json": content})
    for call in (fetch_model_spec, param_count):
        with pytest.raises(RemoteDataError) as info:
            call("org/hostile", settings=hub_settings)
        assert fragment in info.value.message and "org/hostile" in info.value.message


def test_hostile_config_exits_6_from_recommend(fakehub, hub_settings, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", hub_settings.cache_dir)
    fakehub.add_repo("org/hostile", {"config.json": {**LLAMA, "num_hidden_layers": 10**12}})
    code = main(["recommend", "--verifier", "org/hostile", "--workload", "chat", "--gpu", "H100-80GB",
                 "--live"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_REMOTE_DATA and err.startswith("error: ") and err.count("\n") == 1
    assert "num_hidden_layers" in err


def _header(tensors: dict[str, object]) -> bytes:
    """A safetensors file whose header says exactly ``tensors`` (no validation: that is the point)."""
    raw = json.dumps(tensors).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + b"\0" * 64


SAFETENSORS_FAULTS = [
    ("negative-shape", {"w": {"dtype": "BF16", "shape": [-4, 4], "data_offsets": [0, 32]}}, "shape = [-4, 4]"),
    ("absurd-shape", {"w": {"dtype": "BF16", "shape": [2**50], "data_offsets": [0, 2]}}, "shape = [1125899906842624]"),
    ("string-shape", {"w": {"dtype": "BF16", "shape": "abc", "data_offsets": [0, 2]}}, "shape = 'abc'"),
    ("unknown-dtype", {"w": {"dtype": "Q3_K", "shape": [4], "data_offsets": [0, 8]}}, "dtype = 'Q3_K'"),
    ("offsets-lie", {"w": {"dtype": "BF16", "shape": [10**6, 10**6], "data_offsets": [0, 2]}},
     "not the 2e+12 bytes a BF16 tensor"),
    ("negative-offsets", {"w": {"dtype": "BF16", "shape": [4], "data_offsets": [-8, 0]}}, "data_offsets"),
]


@pytest.mark.parametrize(("tensors", "fragment"), [pytest.param(t, f, id=i) for i, t, f in SAFETENSORS_FAULTS])
def test_hostile_safetensors_header_is_never_exact(fakehub, hub_settings, tensors, fragment) -> None:
    """The header is refused naming the field; param_count then gives the labelled config estimate, not 'exact'."""
    from specpick.tools.hub.config import param_count, safetensors_parameter_count

    fakehub.add_repo("org/badst", {"config.json": LLAMA, "model.safetensors": _header(tensors)})
    with pytest.raises(RemoteDataError) as info:
        safetensors_parameter_count("org/badst", settings=hub_settings)
    assert fragment in info.value.message and "model.safetensors in org/badst" in info.value.message
    result = param_count("org/badst", settings=hub_settings)
    assert not result.exact and result.method == "config-estimate" and fragment in result.fallback_reason
    assert 7.0 < result.total_b < 8.5  # the Llama-3.1-8B architecture, estimated from config.json


def test_valid_safetensors_header_is_still_exact(fakehub, hub_settings) -> None:
    from specpick.tools.hub.config import param_count

    tensors = {"a": {"dtype": "BF16", "shape": [10, 10], "data_offsets": [0, 200]},
               "b": {"dtype": "F4", "shape": [4, 4], "data_offsets": [200, 208]}}
    fakehub.add_repo("org/okst", {"config.json": LLAMA, "model.safetensors": _header(tensors)})
    result = param_count("org/okst", settings=hub_settings)
    assert result.exact and result.by_dtype == {"BF16": 100, "F4": 16}


def test_deep_tokenizer_json_is_bad_remote_data() -> None:
    from specpick.tools.hub.tokenizer_files import parse_tokenizer_json

    with pytest.raises(RemoteDataError, match="tokenizer.json is nested more than 64 levels deep"):
        parse_tokenizer_json(b'{"model": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


# --- eval: hostile case files and output paths ------------------------------------------------------------------

GOOD_CASE_FILE = (Path(__file__).resolve().parent.parent / "evals" / "cases" / "hardware.yaml").read_text()
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
YAML_FAULTS = [
    # (id, file content, fragment of the one-line error)
    ("malformed", "category: hardware\ncases:\n  - id: x\n    inputs: {verifier: [unclosed\n", "bad.yaml:5: not valid case YAML"),
    ("python-object", "category: hardware\ncases: !!python/object/apply:os.system ['touch PWNED']\n",
     "bad.yaml:2: not valid case YAML"),
    ("alias-bomb", BOMB, "bad.yaml:2: YAML aliases (*a) are not allowed"),
    ("deep", "category: hardware\ncases: " + "[" * 200 + "]" * 200 + "\n", "bad.yaml:2: nested more than 32 levels deep"),
    ("tab-indent", "category: hardware\ncases:\n\t- id: x\n", "bad.yaml:3: not valid case YAML"),
    ("not-utf8", b"category: \xff\xfe\n", "not UTF-8 text"),
    ("eleven-mb", "category: hardware\ncases: []\n" + "# padding\n" * 1_100_000, "above the 1,000,000-byte bound"),
]


@pytest.mark.parametrize(("content", "fragment"), [pytest.param(c, f, id=i) for i, c, f in YAML_FAULTS])
def test_hostile_case_file_is_exit_2_with_file_and_line(tmp_path, monkeypatch, capsys, content, fragment) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "bad.yaml").write_bytes(content if isinstance(content, bytes) else content.encode())
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    code = main(["eval", "--runner", "planner", "--cases-dir", str(cases), "--quiet"])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and err.startswith("error: ") and err.count("\n") == 1, err
    assert fragment in err
    assert time.monotonic() - started < 5
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(("target", "fragment"), [
    ("missing-dir/report.json", "does not exist"),
    (".", "is a directory"),
])
def test_unwritable_json_path_fails_before_the_run(tmp_path, monkeypatch, capsys, target, fragment) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "hardware.yaml").write_text(GOOD_CASE_FILE)
    monkeypatch.chdir(tmp_path)
    code = main(["eval", "--runner", "planner", "--cases-dir", str(cases), "--json", target])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and fragment in err
    assert err.startswith("error: --json") and err.count("\n") == 1, "no case ran (no progress lines)"


def test_repeat_is_bounded(capsys) -> None:
    assert main(["eval", "--runner", "planner", "--repeat", "1000000", "--quiet"]) == EXIT_INPUT
    assert "--repeat must be between 1 and 100" in capsys.readouterr().err


# --- MCP over stdio: garbage on the wire gets the JSON-RPC error, and the server keeps serving ---------------------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
WIRE_FAULTS = [
    # (id, raw line, expected code, expected id in the reply)
    ("malformed-json", b'{"jsonrpc": "2.0", "id": 2, "method": ', -32700, None),
    ("not-json-rpc", b'{"hello": "world"}', -32600, None),
    ("batch", b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]', -32600, None),
    ("empty-batch", b"[]", -32600, None),
    ("id-null", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None),
    ("id-object", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None),
    ("deep-nesting", b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": ' + b"[" * 100_000
     + b"]" * 100_000 + b"}", -32600, None),
    ("binary-garbage", bytes(range(256)).replace(b"\n", b""), -32700, None),
    ("scalar", b"42", -32600, None),
    ("wrong-version", b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', -32600, 5),
    ("method-not-string", b'{"jsonrpc": "2.0", "id": 6, "method": 12}', -32600, 6),
    # too large to parse: the id is read from the envelope, so the client's wait for id 8 ends
    ("oversized-line", b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "pad": "' + b"x" * (5 * 2**20) + b'"}',
     -32600, 8),
    ("oversized-argument", b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "recommend", '
     b'"arguments": {"verifier": "' + b"x" * (5 * 2**20) + b'", "workload": "chat"}}}', -32600, 11),
    # MCP types an id as string | number; the SDK answers str | int only: a fraction is refused under null
    # (JSON-RPC 2.0 section 5), an integral number answered as the integer (issue 39, cause 13)
    ("fractional-id", b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, None),
    ("nan-id", b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', -32700, None),
    ("overflowing-id", b'{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}', -32600, None),
    ("bool-id", b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
]


def test_mcp_stdio_answers_every_bad_line_and_keeps_serving() -> None:
    import queue
    import subprocess

    lines = [json.dumps(INIT).encode()] + [raw for _, raw, _, _ in WIRE_FAULTS]
    lines.append(b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), os.getcwd()]))}
    proc = subprocess.Popen([sys.executable, "-m", "specpick.skill.surfaces.cli", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [out.put(line) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    replies: list[dict] = []
    try:
        proc.stdin.write(b"\n".join(lines) + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        # stdin stays open until the last ping is answered: end of input ends the session, in-flight or not.
        deadline = time.monotonic() + 120
        while not any(r.get("id") == 99 for r in replies):
            replies.append(json.loads(out.get(timeout=max(0.1, deadline - time.monotonic()))))
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=60)
        stderr = proc.stderr.read()  # type: ignore[union-attr]
    assert proc.returncode == 0, stderr.decode()[-2000:]
    errors = [r for r in replies if "error" in r]
    assert [(e["error"]["code"], e["id"]) for e in errors] == [(code, rid) for _, _, code, rid in WIRE_FAULTS]
    assert all(e["jsonrpc"] == "2.0" and e["error"]["message"] for e in errors)
    by_id = {r["id"]: r for r in replies if "result" in r}
    assert by_id[1]["result"]["serverInfo"]["name"] == "spec-decode-picker"
    assert by_id[99]["result"] == {}, "the server kept serving after every bad line"
    assert b"Traceback" not in stderr


@pytest.mark.parametrize(("raw", "code", "rid"), [pytest.param(r, c, i, id=n) for n, r, c, i in WIRE_FAULTS])
def test_mcp_line_check(raw: bytes, code: int, rid: object) -> None:
    from specpick.skill.surfaces.mcp import check_line

    text, error = check_line(raw)
    assert text is None and error is not None and (error[0], error[2]) == (code, rid)


@pytest.mark.parametrize(("raw_id", "answered_as"), [("2.0", 2), ("1e3", 1000), ("-7.0", -7)])
def test_an_integral_numeric_id_is_answered_under_that_number(raw_id: str, answered_as: int) -> None:
    from specpick.skill.surfaces.mcp import check_line

    text, error = check_line(f'{{"jsonrpc": "2.0", "id": {raw_id}, "method": "ping"}}'.encode())
    assert error is None and json.loads(text)["id"] == answered_as and isinstance(json.loads(text)["id"], int)


def test_mcp_line_check_passes_valid_messages_unchanged() -> None:
    from specpick.skill.surfaces.mcp import check_line

    for message in (INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": "a", "result": {}}):
        raw = json.dumps(message)
        assert check_line(raw.encode()) == (raw, None)

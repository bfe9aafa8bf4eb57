"""Issue 39 (hardening, round 3): each cause reproduced through the surface a user meets, fixed in one place.

Causes 1, 5, 10 (files): ``tools/userfiles.py``; 2, 9 (impossible figures): ``tools/measured_checks.py`` through
``tools/tune/results.py`` and ``tools/deploy/measured_file.py``; 3, 4 (paths checked before work):
``tools/tune/results.check_paths``; 6 (SIGTERM): ``tools/tune/launch.running``. Every case: a documented exit code
and one line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from specpick.skill.surfaces.cli import main
from specpick.tools.errors import EXIT_INPUT, EXIT_NOT_FOUND, InputError
from specpick.tools.userfiles import loads_user_json, read_user_text

DEEP = "[" * 100_000 + "]" * 100_000


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    return code, err


def _one_line(err: str) -> bool:
    return err.startswith("error:") and err.count("\n") == 1 and "Traceback" not in err


# --- causes 1, 5, 10: the one reader of user files ---------------------------------------------------------------

@pytest.mark.parametrize(("text", "needle"), [
    (DEEP, "nested more than 64 levels"),
    ('{"prompt": "a", "x": NaN}', "NaN is not a JSON number"),
    ('{"prompt": 1e400}', "too large for a float"),
    ('{"prompt": "\\ud800"}', "lone surrogate"),
    ('{"prompt": ' + "9" * 5000 + "}", "not valid JSON"),
])
def test_a_json_line_that_no_tool_writes_is_one_line(text: str, needle: str) -> None:
    with pytest.raises(InputError) as err:
        loads_user_json(text, "p.jsonl:3")
    assert needle in str(err.value) and str(err.value).startswith("p.jsonl:3") and "\n" not in str(err.value)


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "prompts.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputError, match="not a regular file"):
        read_user_text(fifo, "--prompts", 1024)
    assert time.monotonic() - started < 5  # refused, not waited on


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "prompts.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_user_text(link, "--prompts", 1024)


@pytest.mark.parametrize("content", [DEEP + "\n", '{"prompt": "\\ud800"}\n', '{"prompt": "a", "n": NaN}\n'])
def test_measure_samples_and_prompts_refuse_such_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        content: str) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(content)
    code, err = _run(["measure", "--estimate-ngram", "--samples", str(samples)], capsys)
    assert code == EXIT_INPUT and _one_line(err) and "s.jsonl:1" in err


# --- causes 2, 9: impossible figures read back from a file -------------------------------------------------------

def _measure_report(tau: object = 2.5, speedup: object = 1.6, concurrency: object = 1, per_position=None) -> dict:
    return {"mode": "endpoint", "results": [{
        "concurrency": concurrency, "speedup": speedup,
        "acceptance": {"source": "vllm-counters", "tau": tau, "alpha": 0.5,
                       "per_position": per_position if per_position is not None else [0.7, 0.5, 0.3],
                       "num_drafts": 100, "num_draft_tokens": 300}}]}


@pytest.mark.parametrize(("report", "needle"), [
    (_measure_report(tau=-5), "tau -5.00 is outside"),
    (_measure_report(tau=51), "tau 51.00 is outside [1, N + 1 = 4]"),
    (_measure_report(speedup=1e308), "speedup 1e+308x is outside"),
    (_measure_report(speedup=-3), "speedup -3x is outside"),
    (_measure_report(concurrency=10**30), "concurrency"),
    (_measure_report(concurrency="eight"), "wrong type"),
    (_measure_report(per_position=[0.5, 0.9, 0.3]), "rises along the draft"),
])
def test_from_measurement_refuses_impossible_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     report: dict, needle: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(report))
    code, err = _run(["recommend", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--workload", "chat",
                      "--from-measurement", str(path), "--measured-method", "eagle3"], capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err, err


def test_from_measurement_refuses_nan_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_measure_report()).replace("1.6", "NaN"))
    code, err = _run(["recommend", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--workload", "chat",
                      "--from-measurement", str(path), "--measured-method", "eagle3"], capsys)
    assert code == EXIT_INPUT and _one_line(err) and "NaN" in err


# --- causes 3, 4, 5: tune's paths checked before any server starts ---------------------------------------------

@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "write a poem"}\n')
    return path


def _tune(prompts: Path, *extra: str) -> list[str]:
    # --serve-executable cannot run: a check that came after starting a server would fail with another message
    return ["tune", "--serve-model", "HuggingFaceTB/SmolLM2-135M-Instruct", "--serve-executable",
            "/nonexistent/python", "--prompts", str(prompts), "--draft-lengths", "2", "--concurrency", "1", *extra]


@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_tune_never_appends_to_a_file_that_is_not_its_results(tmp_path: Path, prompts: Path, fresh: list[str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    before = prompts.read_bytes()
    code, err = _run(_tune(prompts, "--results", str(prompts), *fresh), capsys)
    assert code == EXIT_INPUT and _one_line(err) and "not a tune results file" in err
    assert prompts.read_bytes() == before


@pytest.mark.parametrize(("extra", "needle"), [
    (["--plot-dir", ""], "must not be empty"),
    (["--results", ""], "must not be empty"),
    (["--plot-dir", "{prompts}"], "is a file, not a folder"),
    (["--results", "{tmp}/no/such/folder/r.jsonl"], "does not exist"),
])
def test_tune_checks_its_paths_before_starting_anything(tmp_path: Path, prompts: Path, extra: list[str], needle: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    extra = [e.format(tmp=tmp_path, prompts=prompts) for e in extra]
    code, err = _run(_tune(prompts, *extra), capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err, err
    assert "cannot start" not in err  # refused before the engine was launched


def test_tune_refuses_a_fifo_for_prompts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    code, err = _run(_tune(fifo, "--results", str(tmp_path / "r.jsonl")), capsys)
    assert code in (EXIT_INPUT, EXIT_NOT_FOUND) and _one_line(err) and "regular file" in err


# --- cause 6: SIGTERM ends the servers tune started ------------------------------------------------------------

FAKE_ENGINE = textwrap.dedent("""\
    #!{python}
    # Stands in for `python -m vllm.entrypoints.openai.api_server ... --port P`: answers /health, records its pid.
    import http.server, os, sys
    port = int(sys.argv[sys.argv.index("--port") + 1])
    with open(os.environ["FAKE_PID_FILE"], "a") as fh:
        fh.write(f"{{os.getpid()}}\\n")

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *a):
            pass

    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
    """)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")


def test_sigterm_to_tune_stops_the_servers_it_started(tmp_path: Path, prompts: Path) -> None:
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_ENGINE.format(python=sys.executable))
    fake.chmod(0o755)
    pids = tmp_path / "pids"
    argv = _tune(prompts, "--results", str(tmp_path / "r.jsonl"), "--startup-timeout-s", "60")
    argv[argv.index("/nonexistent/python")] = str(fake)
    code = "import sys; from specpick.skill.surfaces.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], env={**os.environ, "FAKE_PID_FILE": str(pids)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(pids.read_text().split() if pids.exists() else []) < 2:
            time.sleep(0.2)  # both the speculative and the baseline server have started
        started = [int(p) for p in pids.read_text().split()]
        assert len(started) == 2 and all(_alive(p) for p in started)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in started):
        time.sleep(0.2)
    assert not any(_alive(p) for p in started), "an engine server tune started outlived SIGTERM"
    assert "Traceback" not in proc.stderr.read().decode()


# --- cause 11: GGUF repo ids -----------------------------------------------------------------------------------

@pytest.mark.parametrize("verb", [["recommend", "--workload", "chat"], ["speedup", "--method", "ngram", "--workload",
                                                                           "chat"], ["vram"]])
@pytest.mark.parametrize(("verifier", "needle"), [
    ("bartowski/Qwen2.5-7B-Instruct-GGUF:" + "Q" * 5000, "characters long"),
    ("bärtowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "ASCII letters"),
    ("bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M;rm", "ASCII letters"),
])
def test_a_gguf_id_no_hub_could_hold_is_refused_up_front(capsys: pytest.CaptureFixture[str], verb: list[str],
                                                        verifier: str, needle: str) -> None:
    code, err = _run([verb[0], "--verifier", verifier, *verb[1:]], capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err and "internal error" not in err


# --- cause 12: train-plan refuses the serving facts recommend refuses -------------------------------------------

@pytest.mark.parametrize(("extra", "needle"), [
    (["--gpus", "3"], "32 attention heads do not split over 3 GPUs"),
    (["--context-p90", "900000"], "past meta-llama/Llama-3.1-8B-Instruct's limit of 131072"),
])
def test_train_plan_refuses_what_recommend_refuses(capsys: pytest.CaptureFixture[str], extra: list[str],
                                                   needle: str) -> None:
    code, err = _run(["train-plan", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", *extra], capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err
    code_rec, err_rec = _run(["recommend", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--workload", "chat",
                              *(["--gpus", "3"] if "--gpus" in extra else ["--context", "900000"])], capsys)
    assert code_rec == EXIT_INPUT  # the same deployment, the same refusal


def test_train_plan_takes_any_gpu_count_on_an_engine_that_splits_layers(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(["train-plan", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--gpus", "3", "--engine",
                      "llamacpp"], capsys)
    assert code == 0, err


# --- cause 12: a quantized build's name against --quantization --------------------------------------------------

@pytest.mark.parametrize(("verifier", "quantization"), [
    ("Qwen/Qwen3-8B-AWQ", "bf16"),
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "int4"),
    ("bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "fp8"),
])
def test_a_build_named_for_one_format_is_not_planned_in_another(capsys: pytest.CaptureFixture[str], verifier: str,
                                                                quantization: str) -> None:
    code, err = _run(["recommend", "--verifier", verifier, "--quantization", quantization, "--workload", "chat"],
                     capsys)
    assert code == EXIT_INPUT and _one_line(err) and f"--quantization {quantization} contradicts" in err


@pytest.mark.parametrize(("verifier", "quantization"), [
    ("Qwen/Qwen3-8B-AWQ", "int4"),                 # the same format said twice
    ("unsloth/Qwen3.8-27B-GGUF", "q3_k_m"),        # a GGUF repo without a tag: --quantization picks the file
])
def test_a_format_the_name_agrees_with_or_leaves_open_is_taken(capsys: pytest.CaptureFixture[str], verifier: str,
                                                               quantization: str) -> None:
    code, err = _run(["recommend", "--verifier", verifier, "--quantization", quantization, "--workload", "chat"],
                     capsys)
    assert code == 0, err


@pytest.mark.parametrize(("extra", "needle"), [
    (["--tau-measured", "9", "--tau-measured-n", "3"], "above N + 1 = 4"),
    (["--rotated"], "--rotated describes a quantization"),
])
def test_train_plan_refuses_impossible_measurements_and_settings(capsys: pytest.CaptureFixture[str],
                                                                 extra: list[str], needle: str) -> None:
    code, err = _run(["train-plan", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", *extra], capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err


def test_train_plan_does_not_call_an_unknown_head_trained_for_the_verifier(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["train-plan", "--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--head",
                 "someone/unknown-eagle3-head", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    plan = json.loads(captured.out)
    assert plan["decision"] == "measure-first" and "trained for this verifier" not in captured.out
    assert any("not in the catalog" in r["detail"] for r in plan["reasons"])


# --- cause 12: llama.cpp engine-config ----------------------------------------------------------------------------

@pytest.mark.parametrize(("extra", "needle"), [
    (["--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--n-cpu-moe", "10"], "is dense"),
    (["--verifier", "Qwen/Qwen3-30B-A3B", "--n-cpu-moe", "500"], "more than Qwen/Qwen3-30B-A3B's"),
    (["--verifier", "meta-llama/Llama-3.1-8B-Instruct", "--gguf-quant", "Q9_Z"], "--gguf-quant"),
])
def test_llamacpp_engine_config_refuses_what_llama_server_cannot_do(capsys: pytest.CaptureFixture[str],
                                                                    extra: list[str], needle: str) -> None:
    code, err = _run(["engine-config", "--engine", "llamacpp", "--method", "ngram", *extra], capsys)
    assert code == EXIT_INPUT and _one_line(err) and needle in err


def test_a_known_gguf_type_is_written_into_the_conversion(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["engine-config", "--engine", "llamacpp", "--method", "ngram", "--verifier",
                 "meta-llama/Llama-3.1-8B-Instruct", "--gguf-quant", "Q4_K_M"])
    out = capsys.readouterr().out
    assert code == 0 and "llama-quantize" in out and "Q4_K_M" in out.upper()

"""The no-key interview: choices, defaults, re-asking, end of input, and the real command over a pipe and a pty."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from specpick.skill.surfaces import interview
from specpick.skill.surfaces.interview import QUESTIONS, equivalent_command, make_read_line, run_interview
from specpick.skill.schema import SECTION_HEADINGS, PlannerInputs
from specpick.tools.errors import EXIT_INPUT, InputError

FIELDS = [q.field for q in QUESTIONS]


class Script:
    """Plays the user: answers prompts from a list; None = end of input."""

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.written: list[str] = []

    def read(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return self.answers.pop(0) if self.answers else None

    def write(self, text: str) -> None:
        self.written.append(text)


def answers_for(**typed: str) -> list[str]:
    """One line per question in order: the typed answer, or Enter (default). Temperature is asked only for temps."""
    out = []
    for field in FIELDS:
        if field == "temperature" and not typed.get("sampling", "").startswith(("low", "high")):
            continue
        out.append(typed.get(field, ""))
    return out


def test_enter_takes_defaults_and_only_typed_answers_are_returned():
    script = Script(answers_for(verifier="Llama-3.1-70B-Instruct", workload="code"))
    got = run_interview(script.read, script.write)
    assert got == {"verifier": "meta-llama/Llama-3.1-70B-Instruct", "workload": "code"}
    PlannerInputs.model_validate(got)  # the planner accepts it; the rest are its defaults


def test_prompts_show_numbered_choices_and_the_default():
    script = Script(answers_for(verifier="Llama-3.1-70B-Instruct", workload="2"))
    got = run_interview(script.read, script.write)
    assert got["workload"] == "code"  # chosen by number
    workload_prompt = next(p for p in script.prompts if p.lstrip().startswith("Workload"))
    assert "1) chat" in workload_prompt and "2) code" in workload_prompt and "(required)" in workload_prompt
    sampling_prompt = next(p for p in script.prompts if p.lstrip().startswith("Sampling"))
    assert "[greedy]" in sampling_prompt
    bool_prompt = next(p for p in script.prompts if "second (draft) model" in p)
    assert "[Y/n]" in bool_prompt


def test_every_answer_kind_is_parsed():
    typed = dict(verifier="llama-3.1-8b-instruct", workload="math", sampling="high", temperature="0.9",
                 gpu="A100-80GB", gpus="2", can_finetune="y", second_model="no", latency="throughput",
                 concurrency="64", engine="sglang", context_tokens="8192", quantization="fp8")
    got = run_interview(Script(answers_for(**typed)).read, lambda _t: None)
    assert got["sampling"] == "high-temp" and got["temperature"] == 0.9
    assert got["gpus"] == 2 and got["can_finetune"] is True and got["second_model"] is False
    assert got["engine"] == "sglang" and got["quantization"] == "fp8" and got["concurrency"] == 64
    inputs = PlannerInputs.model_validate(got)
    assert inputs.gpu == got["gpu"]


@pytest.mark.parametrize(
    ("field", "bad", "reason"),
    [
        ("workload", "poetry", "is not one of"),
        ("gpus", "two", "is not a whole number"),
        ("gpus", "0", "is outside 1-64"),
        ("can_finetune", "maybe", "answer y or n"),
        ("verifier", "Llama-9-999B", "not in the embedded catalog"),
        ("gpu", "Voodoo3", "is not in the catalog"),
    ],
)
def test_bad_answers_are_asked_again_with_the_reason(field, bad, reason):
    good = {"verifier": "Llama-3.1-70B-Instruct", "workload": "code", "gpus": "4", "can_finetune": "n",
            "gpu": "H100"}
    lines = answers_for(**good)
    index = FIELDS.index(field) - (1 if FIELDS.index(field) > FIELDS.index("temperature") else 0)
    lines.insert(index, bad)
    script = Script(lines)
    got = run_interview(script.read, script.write)
    assert any(reason in w for w in script.written), script.written
    assert field in got  # the retry was accepted


def test_attempts_are_bounded():
    script = Script(["Llama-3.1-70B-Instruct", "poetry", "prose", "verse"])
    with pytest.raises(InputError) as exc:
        run_interview(script.read, script.write)
    assert exc.value.exit_code == EXIT_INPUT
    assert "no usable answer for 'workload' after 3 attempts" in exc.value.message


def test_required_field_is_not_skipped_by_enter():
    script = Script(["", *answers_for(verifier="Llama-3.1-70B-Instruct", workload="chat")])
    got = run_interview(script.read, script.write)
    assert got["verifier"] == "meta-llama/Llama-3.1-70B-Instruct"
    assert any("verifier is required" in w for w in script.written)


def test_question_mark_lists_the_catalog():
    script = Script(["?", *answers_for(verifier="Llama-3.1-70B-Instruct", workload="chat")])
    run_interview(script.read, script.write)
    assert any("meta-llama/Llama-3.1-70B-Instruct" in w for w in script.written)


def test_end_of_input_is_a_clean_usage_error():
    with pytest.raises(InputError) as exc:
        run_interview(Script(["Llama-3.1-70B-Instruct"]).read, lambda _t: None)
    assert exc.value.exit_code == EXIT_INPUT and "at 'workload'" in exc.value.message


def test_read_line_on_a_pipe_and_at_eof():
    out = io.StringIO()
    read = make_read_line(io.StringIO("first\r\nsecond\n"), out)
    assert [read("a> "), read("b> "), read("c> ")] == ["first", "second", None]
    assert out.getvalue() == "a> b> c> \n"


def test_equivalent_command_round_trips_through_the_cli_parser():
    from specpick.skill.surfaces.cli import tool_parser
    from specpick.skill.surfaces.registry import BY_CLI
    import shlex

    answers = {"verifier": "meta-llama/Llama-3.1-70B-Instruct", "workload": "code", "gpus": 4,
               "second_model": False, "temperature": 0.9, "context_tokens": 8192}
    argv = shlex.split(equivalent_command(answers))
    assert argv[:2] == ["specpick", "recommend"] and argv[-1] == "--json"
    parsed = vars(tool_parser(BY_CLI["recommend"]).parse_args(argv[2:]))
    parsed.pop("json")
    assert parsed == answers


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    env["PYTHONPATH"] = os.getcwd()
    return env


CHAT = [sys.executable, "-m", "specpick.skill.surfaces.cli", "chat"]


def test_chat_without_a_key_runs_the_interview_over_a_pipe():
    lines = "\n".join(answers_for(verifier="Llama-3.1-70B-Instruct", workload="code", gpus="4")) + "\n"
    proc = subprocess.run(CHAT, input=lines, capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "deterministic planner (no LLM: ANTHROPIC_API_KEY is not set)" in proc.stdout
    for heading in SECTION_HEADINGS:
        assert f"## {heading}" in proc.stdout
    assert "specpick recommend --verifier meta-llama/Llama-3.1-70B-Instruct --workload code --gpus 4" in proc.stdout


def test_chat_no_llm_at_end_of_input_exits_2():
    env = _env()
    env["ANTHROPIC_API_KEY"] = "test-key-unused-for-no-llm"
    proc = subprocess.run([*CHAT, "--no-llm"], input="Llama-3.1-70B-Instruct\n", capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == EXIT_INPUT
    assert "(no LLM: --no-llm was given)" in proc.stdout
    assert proc.stderr.startswith("error: input ended before the interview finished")
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal (POSIX)")
def test_chat_interview_on_a_pseudo_terminal():
    import pty  # noqa: F401 - POSIX only; openpty is what we use

    master, slave = os.openpty()
    proc = subprocess.Popen(CHAT, stdin=slave, stdout=slave, stderr=subprocess.PIPE, env=_env(), close_fds=True)
    os.close(slave)
    # A terminal delivers typed lines; the program reads them with input().
    os.write(master, ("\n".join(answers_for(verifier="Llama-3.1-8B-Instruct", workload="chat")) + "\n").encode())
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=120)
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert code == 0, err
    text = b"".join(chunks).decode(errors="replace")
    assert "## 1. Recommendation" in text and "## 5. Measurement plan" in text
    assert "Workload" in text  # prompts were shown on the terminal


def test_interview_uses_planner_defaults():
    # Defaults shown are PlannerInputs' own, so the interview and the planner cannot drift.
    defaults = {q.field: q.default for q in QUESTIONS if not q.required}
    assert defaults["gpu"] == PlannerInputs.model_fields["gpu"].default
    assert defaults["engine"] == PlannerInputs.model_fields["engine"].default  # none: recommend weighs each engine
    assert defaults["concurrency"] == 1
    assert interview.MAX_ATTEMPTS == 3

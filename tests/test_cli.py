"""The ``specpick`` command line as a user meets it: every verb's --help, one bad input per verb, the registry.

Each bad input goes through ``main()`` (the console script's entry point) and must end as one ``error: ...``
line on stderr with the documented exit code, never a traceback.
"""

from __future__ import annotations

import inspect
import re

import pytest
from pydantic import BaseModel

from specpick.skill.surfaces.cli import COMMANDS, main
from specpick.skill.surfaces.registry import TOOLS
from specpick.tools.errors import EXIT_CODES, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_THRESHOLD

REGISTRY_VERBS = [t.cli for t in TOOLS]
ALL_VERBS = [*REGISTRY_VERBS, *COMMANDS]

# verb -> (argv after the verb, expected exit code, a phrase the message must contain)
BAD_INPUT: dict[str, tuple[list[str], int, str]] = {
    "recommend": (["--verifier", "meta-llama/Llama-3.1-70B-Instruct", "--workload", "poetry"], EXIT_INPUT,
                  "invalid choice: 'poetry'"),
    "speedup": (["--verifier", "meta-llama/Llama-3.1-70B-Instruct", "--workload", "code", "--method", "eagle3",
                 "--gpu", "H900-XYZ"], EXIT_NOT_FOUND, "H900-XYZ"),
    "vram": (["--verifier", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100-SXM", "--gpus", "0"], EXIT_INPUT,
             "gpus"),
    "params": (["../../etc/passwd"], EXIT_INPUT, "MODEL: is not a model name or Hub repo id"),  # positional: metavar
    "tokenizers": (["meta-llama/Llama-3.2-1B-Instruct"], EXIT_INPUT, "VERIFIER"),
    "head-check": (["yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"], EXIT_INPUT, "VERIFIER"),
    "train-plan": (["--verifier", "my-org/llama-ft", "--verifier-change", "full-finetune"], EXIT_NOT_FOUND,
                   "--base-model"),
    "engine-config": (["--engine", "tensorflow"], EXIT_INPUT, "invalid choice: 'tensorflow'"),
    "model": (["no-such-model-xyz"], EXIT_NOT_FOUND, "specpick models"),
    "models": (["--bogus"], EXIT_INPUT, "unrecognized arguments: --bogus"),
    "gpus": (["--bogus"], EXIT_INPUT, "unrecognized arguments: --bogus"),
    "heads": (["--filter"], EXIT_INPUT, "expected one argument"),
    "calibrate": (["--max-median-ape-pct", "fifteen"], EXIT_INPUT, "fifteen"),
    "catalog": (["refresh"], EXIT_INPUT, "ACTION: Input should be 'status' or 'update'"),
    "chat": (["--bogus"], EXIT_INPUT, "unrecognized arguments: --bogus"),
    "ask": (["which method for Llama-3.1-70B?"], EXIT_INPUT, "ANTHROPIC_API_KEY is not set"),
    "mcp": (["--bogus"], EXIT_INPUT, "unrecognized arguments: --bogus"),
    "eval": (["--runner", "planner", "--case", "no-such-case"], EXIT_INPUT, "no-such-case"),
    "measure": ([], EXIT_INPUT, "give exactly one of --endpoint"),
    "tune": (["--prompts", "p.jsonl", "--serve-model", "./m", "--serve-args=--a 'unclosed"], EXIT_INPUT,
             "--serve-args"),
}


@pytest.fixture
def no_keys_offline(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No API key, no Hub: a bad input must be refused before anything reaches out."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def run_cli(argv: list[str]) -> int:
    """``main()`` as the console script runs it: argparse usage errors leave through SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_bad_input_table_covers_every_verb() -> None:
    assert sorted(BAD_INPUT) == sorted(ALL_VERBS)


@pytest.mark.parametrize("verb", ALL_VERBS)
def test_bad_input_is_one_error_line_with_its_exit_code(verb: str, capsys, no_keys_offline) -> None:
    argv, code, phrase = BAD_INPUT[verb]
    assert run_cli([verb, *argv]) == code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and phrase in lines[0], lines[0]
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize(("argv", "phrase"), [
    (["update", "--max-repos", "0"], "--max-repos: Input should be greater than or equal to 1 (got 0)"),
    (["update", "--time-budget-s", "0"], "--time-budget-s: Input should be greater than 0"),
    (["update", "--limit-per-query", "501"], "--limit-per-query: Input should be less than or equal to 500"),
    (["status", "--max-repos", "5"], "--max-repos: for `catalog update` only"),
])
def test_catalog_bounds_are_checked_before_any_request(argv, phrase, capsys, no_keys_offline) -> None:
    # Offline on purpose: a bound that slipped through would reach for the Hub and fail differently.
    assert run_cli(["catalog", *argv]) == EXIT_INPUT
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [err.strip()] and phrase in err, err
    assert out == ""


@pytest.mark.parametrize("verb", ALL_VERBS)
def test_every_verb_has_help(verb: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: specpick {verb}")


def test_top_level_help_lists_every_verb(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb in [*ALL_VERBS, "exit-codes"]:
        assert re.search(rf"^  {re.escape(verb)}\s", out, re.M), verb


def test_unknown_verb_suggests_close_matches(capsys) -> None:
    assert main(["tokenizer", "a/b", "c/d"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: unknown command 'tokenizer'") and "tokenizers" in err


def test_exit_codes_verb_prints_the_table(capsys) -> None:
    assert main(["exit-codes"]) == 0
    out = capsys.readouterr().out
    printed = {int(line.split()[0]) for line in out.splitlines()}
    assert printed == set(EXIT_CODES)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_registry_entry_resolves(tool) -> None:
    model = tool.load_input_model()
    assert inspect.isclass(model) and issubclass(model, BaseModel)
    func = tool.load_func()
    params = list(inspect.signature(func).parameters.values())
    assert len(params) == 1, f"{tool.name} takes one input model"
    render = tool.load_render()
    assert render is None or callable(render)
    # The schema Claude and MCP clients get must build without our CLI hints in it.
    assert "cli" not in str(tool.input_schema())


def test_registry_names_and_verbs_are_unique() -> None:
    names = [t.name for t in TOOLS]
    verbs = [t.cli for t in TOOLS]
    assert len(set(names)) == len(names) and len(set(verbs)) == len(verbs)
    assert not set(verbs) & set(COMMANDS)


@pytest.mark.parametrize("verb", list(COMMANDS))
def test_command_modules_have_add_arguments_and_run(verb: str) -> None:
    module = COMMANDS[verb][0]()
    assert callable(module.add_arguments) and callable(module.run)


# ----------------------------------------------------------------------------------------------- tokenizers --strict
@pytest.mark.parametrize(("draft", "verifier", "strict", "code"), [
    ("meta-llama/Llama-2-7b-chat-hf", "mistralai/Mixtral-8x7B-Instruct-v0.1", True, EXIT_THRESHOLD),
    ("meta-llama/Llama-2-7b-chat-hf", "mistralai/Mixtral-8x7B-Instruct-v0.1", False, 0),
    ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", True, 0),
    # A warn verdict (padding) is usable: --strict fails only on a failed check.
    ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct", True, 0),
])
def test_tokenizers_strict_fails_only_on_a_failed_check(draft, verifier, strict, code, capsys) -> None:
    argv = ["tokenizers", draft, verifier] + (["--strict"] if strict else [])
    assert main(argv) == code
    out, err = capsys.readouterr()
    if code == EXIT_THRESHOLD:
        assert out == ""
        assert err.startswith("error: tokenizer check failed (--strict): different:") and err.count("\n") == 1
    else:
        assert out.split()[0] in ("DIFFERENT", "IDENTICAL", "IDENTICAL_EXCEPT_PADDING") and err == ""


def test_tokenizers_help_documents_strict(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["tokenizers", "--help"])
    assert "exit 8" in " ".join(capsys.readouterr().out.split())


# ----------------------------------------------------------------------------------------------- head-check text
def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def test_head_check_text_has_balanced_parentheses_for_every_published_head(capsys) -> None:
    from specpick.tools.catalog.tables import get_catalog

    cat = get_catalog()
    heads = [h for h in cat.heads if cat.find_model(h.verifier_repo_id) is not None]
    assert len(heads) >= 10
    for head in heads:
        # Offline, catalog only: each head against its own verifier (pass) and against another one (warn/fail).
        for verifier in (head.verifier_repo_id, "meta-llama/Llama-3.1-70B-Instruct"):
            code = main(["head-check", head.head_repo_id, verifier, "--no-live"])
            out, err = capsys.readouterr()
            assert code == 0, err
            for line in out.splitlines():
                assert _balanced(line), line


# ----------------------------------------------------------------------------------------------- SKILL.md names
def test_skill_md_gives_both_names_of_every_tool() -> None:
    """A harness reading SKILL.md must map each Claude/MCP tool name to its CLI verb (one table row each)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "SKILL.md").read_text(encoding="utf-8")
    for tool in TOOLS:
        row = re.search(rf"^\| `{re.escape(tool.name)}` \| `specpick {re.escape(tool.cli)}[ `].*\|$", text, re.M)
        assert row, f"SKILL.md has no row '| `{tool.name}` | `specpick {tool.cli} ...` |'"

"""Prompt and sample files for `specpick measure`: formats, built-in samples, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.tools.errors import InputError, NotFoundError, PickerError
from specpick.tools.measure.prompts import builtin_prompts, load_prompts, load_samples
from specpick.tools.vocab import WORKLOADS


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_prompt_and_messages(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.jsonl",
        json.dumps({"prompt": "Summarize: a b c"})
        + "\n\n"
        + json.dumps({"messages": [{"role": "system", "content": "be short"}, {"role": "user", "content": "hi"}]})
        + "\n",
    )
    items = load_prompts(path)
    assert [i.origin for i in items] == [f"{path}:1", f"{path}:3"]
    assert items[0].as_messages() == [{"role": "user", "content": "Summarize: a b c"}]
    assert items[1].as_messages()[0] == {"role": "system", "content": "be short"}
    assert items[1].as_text() == "be short\nhi"


def test_text_one_prompt_per_line(tmp_path: Path) -> None:
    items = load_prompts(write(tmp_path, "p.txt", "first prompt\n\n  second prompt  \n"))
    assert [i.prompt for i in items] == ["first prompt", "second prompt"]


def test_text_blocks_separated_by_dashes(tmp_path: Path) -> None:
    items = load_prompts(write(tmp_path, "p.txt", "line one\nline two\n---\n\nblock two\n---\n"))
    assert [i.prompt for i in items] == ["line one\nline two", "block two"]
    assert items[1].origin.endswith(":4")


@pytest.mark.parametrize("workload", WORKLOADS)
def test_builtin_sample_for_every_workload(workload: str) -> None:
    items = builtin_prompts(workload)
    assert len(items) >= 4
    assert all(i.as_messages()[-1]["content"].strip() for i in items)


def test_samples_need_output_and_accept_aliases(tmp_path: Path) -> None:
    path = write(tmp_path, "s.jsonl", json.dumps({"prompt": "p", "completion": "out"}) + "\n")
    assert load_samples(path)[0].output == "out"


@pytest.mark.parametrize(
    ("name", "content", "error", "fragment"),
    [
        ("bad.jsonl", '{"prompt": "ok"}\n{"prompt": "x",\n', InputError, "bad.jsonl:2: not valid JSON"),
        ("list.jsonl", '["a"]\n', InputError, "list.jsonl:1: expected a JSON object"),
        ("both.jsonl", '{"prompt": "a", "messages": []}\n', InputError, "both.jsonl:1: give exactly one"),
        ("none.jsonl", '{"text": "a"}\n', InputError, "none.jsonl:1: give exactly one"),
        ("empty_prompt.jsonl", '{"prompt": "  "}\n', InputError, "non-empty string"),
        ("role.jsonl", '{"messages": [{"role": "bot", "content": "x"}]}\n', InputError, "messages[0] needs a role"),
        ("blank.jsonl", "\n\n", InputError, "holds no prompts"),
        ("blank.txt", "\n---\n", InputError, "holds no prompts"),
        ("latin1.txt", "caf\xe9".encode("latin-1"), InputError, "not UTF-8"),
    ],
)
def test_bad_prompt_files(tmp_path: Path, name: str, content: str | bytes, error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        load_prompts(write(tmp_path, name, content))
    assert fragment in info.value.message
    assert "\n" not in info.value.message


def test_missing_prompts_file(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        load_prompts(tmp_path / "nope.jsonl")


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not a file"):
        load_prompts(tmp_path)


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("s.jsonl", '{"prompt": "p"}\n', "s.jsonl:1: a sample needs the model's answer"),
        ("s.jsonl", '{"prompt": "p", "output": 3}\n', "'output' must be a string"),
        ("s.txt", "p\n", "samples must be JSONL"),
    ],
)
def test_bad_samples(tmp_path: Path, name: str, content: str, fragment: str) -> None:
    with pytest.raises(PickerError) as info:
        load_samples(write(tmp_path, name, content))
    assert fragment in info.value.message


def test_unknown_workload() -> None:
    with pytest.raises(InputError, match="unknown workload 'poetry'"):
        builtin_prompts("poetry")

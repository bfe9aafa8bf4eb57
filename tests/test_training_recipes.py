"""Every option a train-plan recipe emits exists in the framework's CLI (docs/references/TRAINING-CLIS.md).

The vendored lists were extracted from each framework's argparse / config schema at the commit they name; the
recipes must also set epochs, max length and (SpecForge) the chat template explicitly, because the frameworks'
defaults (1 epoch / 2048 tokens / llama3 template in SpecForge, 1 epoch / 2048 in ModelOpt, 20 epochs in
speculators) are wrong for most users.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from specpick.tools.training.recipes import build_recipe
from specpick.tools.training.rules import DataPlan

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "references" / "TRAINING-CLIS.md"

# command word(s) -> section of the vendored file
SECTIONS = {
    "scripts/train.py": "speculators scripts/train.py",
    "scripts/prepare_data.py": "speculators scripts/prepare_data.py",
    "scripts/launch_vllm.py": "speculators scripts/launch_vllm.py",
    "./scripts/response_regeneration/run_all.sh": "speculators scripts/response_regeneration/run_all.sh",
    "specforge train": "specforge train",
    "specforge export": "specforge export",
    "scripts/regenerate_train_data.py": "SpecForge scripts/regenerate_train_data.py",
    "sglang.launch_server": "sglang.launch_server",
    "./launch_train.sh": "ModelOpt launch_train.sh",
    "scripts/server_generate.py": "ModelOpt scripts/server_generate.py",
    "scripts/export_hf_checkpoint.py": "ModelOpt scripts/export_hf_checkpoint.py",
    "vllm serve": "vllm serve",
}


def _vendored() -> dict[str, dict[str, set[str]]]:
    out: dict[str, dict[str, set[str]]] = {}
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = {}
        elif current and re.match(r"^(options|keys|passthrough|templates):", line):
            kind, _, rest = line.partition(":")
            out[current][kind] = set(rest.split())
    return out


def _section(tokens: list[str]) -> tuple[str, list[str]]:
    """The vendored section of a command and its arguments (the tokens after the script or sub-command)."""
    for i in range(len(tokens)):
        for word, section in SECTIONS.items():
            parts = word.split()
            if tokens[i:i + len(parts)] == parts:
                return section, tokens[i + len(parts):]
    raise AssertionError(f"no vendored section for command: {' '.join(tokens[:4])}")


DATA = DataPlan(samples=500_000, regenerate=True, max_length=16384, epochs=3)
CASES = [
    ("vllm", "eagle3", "meta-llama/Llama-3.1-8B-Instruct", None),
    ("vllm", "mtp", "Qwen/Qwen3-Next-80B-A3B-Instruct", None),
    ("vllm", "dflash", "Qwen/Qwen3-8B", None),
    ("sglang", "eagle3", "meta-llama/Llama-3.1-8B-Instruct", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"),
    ("sglang", "eagle3", "Qwen/Qwen3-8B", None),
    ("sglang", "eagle3", "some-org/unknown-family-7b", None),
    ("trtllm", "eagle3", "meta-llama/Llama-3.3-70B-Instruct", "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B"),
]


@pytest.mark.parametrize(("engine", "method", "family", "warm"), CASES)
def test_every_emitted_option_is_in_the_vendored_cli(engine: str, method: str, family: str, warm: str | None) -> None:
    vendored = _vendored()
    recipe = build_recipe(verifier="my-org/served-model", family_id=family, engine=engine, method=method, data=DATA,
                          warm_start=warm, thinking="off", gpus=8)
    assert recipe.commands
    for command in recipe.commands:
        name, args = _section(shlex.split(command))
        section = vendored[name]
        allowed = section.get("options", set()) | section.get("passthrough", set())
        for tok in args:
            flag = tok.split("=", 1)[0]
            if flag.startswith("-") and flag != "--":
                assert flag in allowed, f"{flag} is not a {name} option (command: {command})"
            elif re.match(r"^[a-z_]+(\.[a-z_]+)*=", tok):
                key = tok.split("=", 1)[0]
                assert key in section.get("keys", set()), f"{key} is not a {name} key (command: {command})"
        if "data.chat_template=" in command:
            template = command.split("data.chat_template=")[1].split()[0]
            assert template in section["templates"], f"SpecForge has no template {template}"


@pytest.mark.parametrize(("engine", "method", "family", "warm"), CASES)
def test_recipes_set_epochs_and_length_explicitly_and_print_the_users_id(engine, method, family, warm) -> None:
    recipe = build_recipe(verifier="my-org/served-model", family_id=family, engine=engine, method=method, data=DATA,
                          warm_start=warm, thinking="off", gpus=8)
    text = "\n".join(recipe.commands)
    train = next(c for c in recipe.commands if "train" in c.split()[0] or "torchrun" in c or "specforge train" in c)
    assert any(s in train for s in ("--epochs 3", "training.num_epochs=3", "training.num_train_epochs=3"))
    lengths = ("--total-seq-len 16384", "data.max_length=16384", "training.training_seq_len=16384")
    assert any(s in train for s in lengths)
    assert "my-org/served-model" in train
    assert family not in text  # the base model's id never replaces the served one
    if recipe.tool == "specforge":
        assert "data.chat_template=" in train  # SpecForge's default (llama3) is wrong for other families
    if warm:
        assert warm in text or any(warm in n for n in recipe.notes)

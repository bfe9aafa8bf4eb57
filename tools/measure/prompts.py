"""Prompt and sample loading for ``specpick measure``: JSONL, plain text, or a built-in sample per workload.

Formats:
* **JSONL** (``.jsonl``): one JSON object per line with ``prompt`` (a string) or
  ``messages`` (a list of ``{"role", "content"}``), and, for
  ``--estimate-ngram``, the model's answer under ``output`` (``completion``
  and ``response`` are accepted too). Blank lines are skipped.
* **Text** (any other suffix): prompts separated by lines holding only ``---``;
  a file with no such line holds one prompt per non-empty line.

Every problem is reported with the file and line number, as one line.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from specpick.tools.errors import InputError
from specpick.tools.userfiles import loads_user_json, read_user_text
from specpick.tools.vocab import WORKLOADS

# Bounds: a prompt file is a representative sample, not a data set; these
# keep a wrong path (a model file, a log) from being read into memory.
MAX_FILE_BYTES = 64 * 2**20
MAX_ITEMS = 10_000
_OUTPUT_KEYS = ("output", "completion", "response")
_ROLES = ("system", "user", "assistant", "tool", "developer")
# A class name is printed in tables and used as a key: keep it short and plain.
_CLASS_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str


class PromptItem(BaseModel):
    """One prompt; ``output`` is the model's answer when the file carries one (samples for the n-gram estimate)."""

    prompt: str | None = None
    messages: list[Message] | None = None
    output: str | None = None
    origin: str = Field(description="file:line or builtin:workload#i, for messages about this item")
    prompt_class: str | None = Field(None, description="the traffic class the user gave it (JSONL key 'class'), "
                                     "so results can be split per class; None: classified from its output")

    def as_messages(self) -> list[dict[str, str]]:
        """Chat form: a text prompt becomes one user message."""
        if self.messages is not None:
            return [m.model_dump() for m in self.messages]
        return [{"role": "user", "content": self.prompt or ""}]

    def as_text(self) -> str:
        """Plain-text form, for completions APIs and tokenizers without a chat template."""
        if self.prompt is not None:
            return self.prompt
        return "\n".join(m.content for m in self.messages or [])


def _read_text(path: Path) -> str:
    return read_user_text(path, "prompts file", MAX_FILE_BYTES)


def _item_from_json(obj: object, origin: str, need_output: bool) -> PromptItem:
    if not isinstance(obj, dict):
        raise InputError(f"{origin}: expected a JSON object with 'prompt' or 'messages', got {type(obj).__name__}")
    prompt, messages = obj.get("prompt"), obj.get("messages")
    if (prompt is None) == (messages is None):
        raise InputError(f"{origin}: give exactly one of 'prompt' (a string) or 'messages' (a list)")
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise InputError(f"{origin}: 'prompt' must be a non-empty string")
    parsed: list[Message] | None = None
    if messages is not None:
        if not isinstance(messages, list) or not messages:
            raise InputError(f"{origin}: 'messages' must be a non-empty list of {{role, content}} objects")
        parsed = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in _ROLES or not isinstance(m.get("content"), str):
                raise InputError(f"{origin}: messages[{i}] needs a role ({', '.join(_ROLES)}) and a string content")
            parsed.append(Message(role=m["role"], content=m["content"]))
    output = next((obj[k] for k in _OUTPUT_KEYS if k in obj), None)
    if output is not None and not isinstance(output, str):
        raise InputError(f"{origin}: 'output' must be a string")
    if need_output and not output:
        raise InputError(f"{origin}: a sample needs the model's answer under 'output' (or 'completion'/'response')")
    prompt_class = obj.get("class")
    if prompt_class is not None and (not isinstance(prompt_class, str) or not _CLASS_NAME.fullmatch(prompt_class)):
        raise InputError(f"{origin}: 'class' must be a short name (letters, digits, '-', '_'; up to 32), "
                         f"e.g. \"copy\" or \"free\"")
    return PromptItem(prompt=prompt, messages=parsed, output=output, origin=origin, prompt_class=prompt_class)


def parse_jsonl(text: str, source: str, need_output: bool = False) -> list[PromptItem]:
    """Parse JSONL text into prompt items; ``source`` names the file in error messages."""
    items: list[PromptItem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        origin = f"{source}:{lineno}"
        obj = loads_user_json(line, origin)
        items.append(_item_from_json(obj, origin, need_output))
        if len(items) > MAX_ITEMS:
            raise InputError(f"{source} has more than {MAX_ITEMS} items; measure a representative sample")
    if not items:
        raise InputError(f"{source} holds no prompts")
    return items


def parse_text(text: str, source: str) -> list[PromptItem]:
    """Parse a text file: ``---`` lines separate prompts, else one prompt per non-empty line."""
    lines = text.splitlines()
    items: list[PromptItem] = []
    if any(line.strip() == "---" for line in lines):
        block: list[str] = []
        start = 1
        for lineno, line in enumerate([*lines, "---"], start=1):
            if line.strip() == "---":
                body = "\n".join(block).strip()
                if body:
                    items.append(PromptItem(prompt=body, origin=f"{source}:{start}"))
                block, start = [], lineno + 1
            else:
                block.append(line)
    else:
        items = [PromptItem(prompt=ln.strip(), origin=f"{source}:{i}") for i, ln in enumerate(lines, 1) if ln.strip()]
    if not items:
        raise InputError(f"{source} holds no prompts")
    if len(items) > MAX_ITEMS:
        raise InputError(f"{source} has more than {MAX_ITEMS} prompts; measure a representative sample")
    return items


def load_prompts(path: Path) -> list[PromptItem]:
    """Load prompts from a ``.jsonl`` or text file."""
    text = _read_text(path)
    if path.suffix.lower() == ".jsonl":
        return parse_jsonl(text, str(path))
    return parse_text(text, str(path))


def load_samples(path: Path) -> list[PromptItem]:
    """Load prompt + output pairs (JSONL only) for the n-gram estimate."""
    if path.suffix.lower() != ".jsonl":
        raise InputError(f'{path}: samples must be JSONL, one {{"prompt": ..., "output": ...}} object per line')
    return parse_jsonl(_read_text(path), str(path), need_output=True)


def builtin_prompts(workload: str) -> list[PromptItem]:
    """The built-in sample for a workload (package data ``tools/data/prompts/<workload>.jsonl``)."""
    if workload not in WORKLOADS:
        raise InputError(f"unknown workload {workload!r}: choose one of {', '.join(WORKLOADS)}")
    resource = resources.files("specpick.tools").joinpath("data", "prompts", f"{workload}.jsonl")
    return parse_jsonl(resource.read_text(encoding="utf-8"), f"builtin:{workload}")

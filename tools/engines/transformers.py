"""HF transformers: ``generate()`` keyword arguments for assisted generation and prompt lookup, batch 1."""

from __future__ import annotations

import re
from typing import Any

from specpick.tools.answer import EngineConfig, MetricRef
from specpick.tools.engines.base import EngineSpec
from specpick.tools.engines.setting import EngineConfigInput
from specpick.tools.methods import method_record

METRICS = (
    MetricRef(engine="transformers", name="len(generated) / forward passes of the target",
              meaning="tau, counted by wrapping the target model's forward; no built-in metric"),
)


def parse_kwargs(config: str) -> dict[str, str]:
    """``key=value`` pairs of a Python kwargs string (values as source text)."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"\b([A-Za-z_]\w*)\s*=\s*([^,\n]+(?:\([^)]*\))?)",
                                                                 config)}


class TransformersEngine(EngineSpec):
    def emit(self, inp: EngineConfigInput, version: str) -> EngineConfig:
        notes = ["assisted generation runs batch size 1 only ('assisted generate is only supported for "
                 "batch_size = 1')"]
        if inp.tree_top_k > 1 or inp.full_schedule():
            notes.append("generate() drafts a chain at batch 1: no tree, no per-batch schedule")
        schedule = "heuristic" if inp.adaptive else "constant"
        if not method_record(inp.method).copy_based:  # assisted generation with a draft model
            text = (f"assistant_model=AutoModelForCausalLM.from_pretrained({inp.draft_model!r}), "
                    f"num_assistant_tokens={inp.num_draft_tokens}, num_assistant_tokens_schedule={schedule!r}")
        else:  # ngram
            text = (f"prompt_lookup_num_tokens={inp.num_draft_tokens}, "
                    f"max_matching_ngram_size={min(inp.prompt_lookup_max, 3)}")
        launch = f"model.generate(**inputs, {text})"
        return EngineConfig(engine=self.name, engine_version=version, format=self.format, config=text,
                            launch_command=launch, notes=notes)

    def parse(self, config: EngineConfig) -> dict[str, Any] | None:
        kwargs: dict[str, Any] = parse_kwargs(config.config)
        if not kwargs:
            return None
        out = dict(kwargs)
        n = kwargs.get("num_assistant_tokens") or kwargs.get("prompt_lookup_num_tokens")
        out["key"] = "assistant_model" if "assistant_model" in kwargs else (
            "prompt_lookup_num_tokens" if "prompt_lookup_num_tokens" in kwargs else None)
        out["num_draft_tokens"] = int(n) if n and n.isdigit() else None
        m = re.search(r"from_pretrained\('([^']*)'\)", kwargs.get("assistant_model", ""))
        out["draft_model"] = m.group(1) if m else None
        return out

    def plain_launch(self, inp: EngineConfigInput) -> tuple[list[str], str]:
        return [], "model.generate(**inputs)"

    def reserve(self, gpus: int, memory_gib: float, fixed_gib: float) -> tuple[float, str]:
        return memory_gib, "transformers: no memory reservation (the cache grows as it is used)"

    def measure_commands(self, verifier: str, strategy: str, concurrency: int, levels: list[int]) -> list[str]:
        return ["specpick measure --local {v} --prompts prompts.jsonl   # in-process, batch 1".format(v=verifier)]


ENGINE = TransformersEngine(
    name="transformers", label="HF transformers", format="python-kwargs", harness="transformers", metrics=METRICS,
    metrics_port=0, read_step="Count target forwards per generated token in your own loop.", single_user=True,
    under_load="assisted generation runs batch 1 only: serve concurrent users without the assistant model",
)

"""Runnable training commands for SpecForge, vllm-project/speculators and NVIDIA Model Optimizer.

Option names and defaults were read from each framework's source at these commits (the names are vendored in
``docs/references/TRAINING-CLIS.md``; ``tests/test_training_recipes.py`` checks every emitted option):
- SpecForge @ a6b6b02: ``specforge/cli.py`` (``specforge train -c CONFIG [overrides]``, ``specforge export --to
  --checkpoint --draft-config --output-dir``); ``specforge/config/schema.py`` defaults ``training.num_epochs: 1``,
  ``data.max_length: 2048``, ``data.chat_template: "llama3"`` (so all three are set explicitly);
  ``scripts/regenerate_train_data.py`` (``--model --reasoning --max-tokens --concurrency --server-address
  --input-file-path --output-file-path``); template names from ``specforge/data/template.py``.
- speculators @ c05b95b: ``scripts/train.py`` flags from ``src/speculators/train/config/schema.py`` field names
  (``--epochs`` default 20, ``--total-seq-len`` default 8192, ``--from-pretrained``, ``--speculator-type`` default
  eagle3); ``scripts/prepare_data.py`` (``--model --data --output --seq-length`` default 8192; the chat template is
  the ``--model`` tokenizer's); ``scripts/response_regeneration/run_all.sh`` (``--model --dp-size --tp-size
  --max-model-len``, other flags pass to ``script.py``: ``--dataset --max-tokens --outfile``);
  ``scripts/launch_vllm.py``.
- Model-Optimizer @ a2fbac7: ``examples/speculative_decoding/launch_train.sh --config YAML key=value...``;
  ``modelopt_recipes/general/speculative_decoding/eagle3.yaml`` defaults ``training.num_train_epochs: 1``,
  ``training.training_seq_len: 2048``; ``scripts/server_generate.py`` (``--data_path --output_path --model --url
  --max_tokens``); ``scripts/export_hf_checkpoint.py`` (``--model_path --export_path``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from specpick.tools.methods import methods_where
from specpick.tools.training.rules import DataPlan

Tool = str  # "specforge" | "speculators" | "modelopt"
# speculators --speculator-type choices we emit (schema.py): the registry's speculators_type.
SPECULATORS_TYPES: frozenset[str] = methods_where(speculators_type=True)

# (substring of the verifier's catalog repo id, lower case) -> (SpecForge example config, draft config, template)
_SPECFORGE_FAMILIES: tuple[tuple[str, str, str, str], ...] = (
    ("llama-3.3-70b", "examples/configs/llama3.3-70b-eagle3-online.yaml", "configs/llama3-70B-ealge3.json", "llama3"),
    ("llama-3.1-70b", "examples/configs/llama3.3-70b-eagle3-online.yaml", "configs/llama3-70B-ealge3.json", "llama3"),
    ("llama-3", "examples/configs/llama3.1-8b-eagle3-online.yaml", "configs/llama3-8B-eagle3.json", "llama3"),
    ("llama-4-scout", "examples/configs/llama4-scout-17b-16e-eagle3-online.yaml",
     "configs/llama4-scout-17B-16E-eagle3.json", "llama4"),
    ("qwen3-8b", "examples/configs/qwen3-8b-eagle3-disaggregated.yaml", "configs/qwen3-8b-eagle3.json", "qwen3"),
    ("qwen3-4b", "examples/configs/qwen3-4b-eagle3-online.yaml", "configs/qwen3-4b-eagle3.json", "qwen3"),
    ("qwen3-32b", "examples/configs/qwen3-32b-eagle3-online.yaml", "configs/qwen3-32b-eagle3.json", "qwen3"),
    ("qwen3-30b-a3b", "examples/configs/qwen3-30b-a3b-eagle3-online.yaml", "configs/qwen3-30B-A3B-eagle3.json",
     "qwen3"),
    ("qwen2.5-7b", "examples/configs/qwen2.5-7b-eagle3-offline.yaml", "configs/qwen2.5-7b-eagle3.json", "qwen"),
    ("gpt-oss-120b", "examples/configs/gpt-oss-120b-eagle3-online.yaml", "configs/gpt-oss-120B-eagle3.json", "gpt-oss"),
    ("gpt-oss-20b", "examples/configs/gpt-oss-20b-eagle3-online.yaml", "configs/gpt-oss-20B-eagle3.json", "gpt-oss"),
    ("phi-4", "examples/configs/phi4-eagle3-online.yaml", "configs/phi4-eagle3.json", "phi4"),
)
# SpecForge registers qwen3-thinking and qwen3-instruct separately (specforge/data/template.py l.195, l.208).
_QWEN3_TEMPLATE = {"on": "qwen3-thinking", "mixed": "qwen3-thinking", "off": "qwen3-instruct", None: "qwen3-instruct"}


@dataclass(frozen=True)
class Recipe:
    tool: Tool
    commands: list[str]
    notes: list[str]


def tool_for(engine: str | None, method: str) -> Tool:
    """SGLang targets train with SpecForge, TensorRT-LLM with Model Optimizer, vLLM (and MTP) with speculators."""
    if method == "mtp" or engine in (None, "vllm", "llamacpp", "transformers"):
        return "speculators"
    return "specforge" if engine == "sglang" else "modelopt"


def _q(s: str) -> str:
    return shlex.quote(s)


def _specforge(verifier: str, family_id: str, data: DataPlan, warm_start: str | None, thinking: str | None,
               gpus: int, method: str) -> Recipe:
    fid = family_id.lower()
    row = next((r for r in _SPECFORGE_FAMILIES if r[0] in fid), None)
    notes = []
    if row is None:
        row = ("", "examples/configs/llama3.1-8b-eagle3-online.yaml", "configs/llama3-8B-eagle3.json", "llama3")
        notes.append(f"no SpecForge example config for {family_id}: copy the closest one and set "
                     "model.draft_model_config and data.chat_template to a template registered in "
                     "specforge/data/template.py for your model (the llama3 default is wrong for other families)")
    _, config, draft_config, template = row
    if template == "qwen3":
        template = _QWEN3_TEMPLATE[thinking]  # type: ignore[index]
    reasoning = "disable" if thinking == "off" else "save" if thinking in ("on", "mixed") else None
    # --concurrency 128: the value SpecForge's data_preparation.md example uses
    regen = ["python", "scripts/regenerate_train_data.py", "--model", verifier, "--concurrency", "128",
             "--max-tokens", str(data.max_length), "--server-address", "localhost:30000",
             "--input-file-path", "./cache/dataset/prompts.jsonl", "--output-file-path", "./cache/dataset/regen.jsonl"]
    if reasoning:
        regen += ["--reasoning", reasoning]
    train = ["specforge", "train", "-c", config, f"model.target_model_path={verifier}",
             f"model.draft_model_config={draft_config}", "data.train_data_path=./cache/dataset/regen.jsonl",
             f"data.max_length={data.max_length}", f"data.chat_template={template}",
             f"training.num_epochs={data.epochs}", "output_dir=./outputs/head"]
    if warm_start:
        train.append(f"model.draft_checkpoint_path={warm_start}")
        notes.append(f"warm start: download {warm_start} first (hf download {warm_start} --local-dir ./warm) and "
                     "point model.draft_checkpoint_path at the folder if your SpecForge release reads local weights "
                     "only (docs/basic_usage/training.md: 'draft weights only')")
    commands = [
        f"python -m sglang.launch_server --model-path {_q(verifier)} --port 30000 --tp {gpus}",
        " ".join(_q(x) for x in regen) if data.regenerate else "",
        " ".join(_q(x) for x in train),
        "specforge export --to sglang --checkpoint ./outputs/head/<run>-latest --draft-config "
        f"{draft_config} --output-dir ./exports/head",
    ]
    if method != "eagle3":
        notes.append(f"the config above trains EAGLE-3; for {method} start from a SpecForge example config of that "
                     "strategy (examples/configs/*-dflash-*.yaml, *-peagle-*.yaml: training.strategy) with the same "
                     "overrides")
    notes.append("SpecForge defaults are num_epochs 1, max_length 2048, chat_template llama3 (schema.py): all three "
                 "are set above")
    return Recipe("specforge", [c for c in commands if c], notes)


def _speculators(verifier: str, data: DataPlan, warm_start: str | None, method: str, gpus: int) -> Recipe:
    regen = ["./scripts/response_regeneration/run_all.sh", "--model", verifier, "--dataset", "magpie",
             "--dp-size", str(gpus), "--max-model-len", str(data.max_length), "--max-tokens", str(data.max_length),
             "--outfile", "./regen.jsonl"]
    prep = ["python", "scripts/prepare_data.py", "--model", verifier, "--data", "./regen.jsonl", "--data",
            "./own_prompts_regenerated.jsonl", "--output", "./output", "--seq-length", str(data.max_length)]
    train = ["torchrun", "--standalone", f"--nproc_per_node={gpus}", "scripts/train.py",
             "--verifier-name-or-path", verifier, "--data-path", "./output", "--save-path", "./ckpt",
             "--epochs", str(data.epochs), "--total-seq-len", str(data.max_length),
             "--vllm-endpoint", "http://localhost:8000/v1", "--on-missing", "generate", "--on-generate", "delete"]
    # speculators trains eagle3, dflash, dspark, peagle and mtp (--speculator-type, docs/cli/train.md); EAGLE-1/2 and
    # Medusa heads are not trainable there, so their users get an EAGLE-3 head (loads under every engine's eagle3).
    kind = method if method in SPECULATORS_TYPES else "eagle3"
    train += ["--speculator-type", kind]
    if kind == "eagle3":
        train += ["--draft-vocab-size", "32000"]  # the tutorial's reduced draft vocabulary (train.md)
    if warm_start:
        train += ["--from-pretrained", warm_start]
    commands = [" ".join(_q(x) for x in regen) if data.regenerate else "",
                " ".join(_q(x) for x in prep),
                f"python scripts/launch_vllm.py {_q(verifier)} -- --data-parallel-size {gpus} --port 8000",
                " ".join(_q(x) for x in train),
                # N=3: the chain length `specpick speedup` assumes without one; `specpick tune` finds yours
                "vllm serve " + _q(verifier) + " --speculative-config "
                + _q('{"model": "./ckpt/checkpoint_best", "num_speculative_tokens": 3}')]
    notes = ["run_all.sh serves one verifier copy per GPU (--dp-size): for a verifier larger than one GPU, use "
             "--tp-size N --dp-size GPUs/N",
             "speculators takes the chat template from the --model tokenizer (prepare_data.py): pass your served "
             "verifier id so the template is the one you serve; --epochs defaults to 20 and is set above",
             "checkpoint_best is the lowest validation loss; pick the checkpoint by serving acceptance length "
             "instead (D9: EAGLE-3 peaked at ~4.6 epochs while loss kept falling)"]
    if kind != method:
        notes.append(f"speculators does not train {method} heads: this trains an EAGLE-3 head instead (serve it "
                     "with the engine's eagle3 method)")
    if method == "mtp":
        notes.append("MTP: stitch the trained layer back into the verifier with scripts/stitch_mtp.py")
    return Recipe("speculators", [c for c in commands if c], notes)


def _modelopt(verifier: str, data: DataPlan, warm_start: str | None, gpus: int) -> Recipe:
    gen = ["python", "scripts/server_generate.py", "--data_path", "input_conversations/train.jsonl",
           "--output_path", "synthetic/train.jsonl", "--model", verifier, "--url", "http://localhost:8000/v1",
           "--max_tokens", str(data.max_length)]
    train = ["./launch_train.sh", "--config", "../../modelopt_recipes/general/speculative_decoding/eagle3.yaml",
             f"model.model_name_or_path={verifier}", "data.data_path=synthetic/train.jsonl",
             "training.output_dir=ckpts/head", f"training.num_train_epochs={data.epochs}",
             f"training.training_seq_len={data.max_length}"]
    commands = [f"vllm serve {_q(verifier)} --tensor-parallel-size {gpus} --port 8000" if data.regenerate else "",
                " ".join(_q(x) for x in gen) if data.regenerate else "",
                " ".join(_q(x) for x in train),
                "python scripts/export_hf_checkpoint.py --model_path ckpts/head --export_path export/head"]
    notes = ["ModelOpt recipe defaults are num_train_epochs 1 and training_seq_len 2048 (eagle3.yaml): both set "
             "above; data.chat_template left unset uses the verifier tokenizer's template (hf_training_args.py)",
             "for a quantized target, synthesize data with the quantized model served (README: Data Synthesis)"]
    if warm_start:
        notes.append(f"warm start: ModelOpt has no one-flag warm start in launch_train.sh; start from {warm_start} "
                     "by loading it as the draft (see main.py) or use speculators --from-pretrained")
    return Recipe("modelopt", [c for c in commands if c], notes)


def build_recipe(*, verifier: str, family_id: str, engine: str | None, method: str, data: DataPlan,
                 warm_start: str | None, thinking: str | None, gpus: int) -> Recipe:
    """Commands for the framework that serves the user's engine, the user's repo id in every command."""
    tool = tool_for(engine, method)
    if tool == "specforge":
        return _specforge(verifier, family_id, data, warm_start, thinking, gpus, method)
    if tool == "modelopt":
        return _modelopt(verifier, data, warm_start, gpus)
    return _speculators(verifier, data, warm_start, method, gpus)

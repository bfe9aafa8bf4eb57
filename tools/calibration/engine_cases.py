"""Engine-measured speculative-decoding results: loading and calibration cases (a held-out set).

``tools/data/engine_measurements.csv`` holds speedups measured in serving engines
(vLLM, SGLang, TensorRT-LLM) from issue threads, PRs, engine docs and engine
blogs, with the columns of ``published_measurements.csv`` plus ``engine`` and
``engine_version``. Every row names its source and carries a provenance tag
([primary] / [secondary]). Rows are identified as ``{source_id}/{n}``, the n-th row
of that source in file order (``tools/catalog/row_ids.py``); no source id is shared with the published file.

These rows are *not* part of the dev set: ``specpick calibrate`` reports them
separately (``--engines``), and the acceptance priors do not read them. Cells
are written in a small fixed vocabulary so no per-row code is needed:

* hardware ``"<count>x <GPU>"`` (H100 = H100 SXM);
* config ``"chain N"`` or ``"tree steps=S topk=K draft_tokens=T"`` (SGLang's three
  flags; topk 1 is a chain of S), optionally ``"; weights fp8|fp16|bf16|nvfp4"``;
* batch ``"QPS n"`` when the source gives a request rate instead of a concurrency.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from specpick.tools.calibration.cases import CalibCase
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.model.prior_rules import TREE_DEFAULTS
from specpick.tools.catalog.published import MIXED5, PublishedRow, map_workload, read_cells, row_from_cells
from specpick.tools.catalog.row_ids import source_ordinal_ids
from specpick.tools.catalog.specs import ModelSpec
from specpick.tools.model.estimate import TreeShape
from specpick.tools.vocab import BYTES_PER_PARAM

ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm")
# NVFP4: 4-bit E2M1 values plus one FP8 scale per 16 values = 4.5 bits per weight (NVIDIA Blackwell NVFP4 format).
NVFP4_BYTES_PER_PARAM = 4.5 / 8
WEIGHT_BYTES: dict[str, float] = {**BYTES_PER_PARAM, "nvfp4": NVFP4_BYTES_PER_PARAM}
# Verifier name as written in the CSV (lower case, prefix match, longest first) -> catalog model.
VERIFIERS: tuple[tuple[str, str, str], ...] = (
    ("llama-3.1-8b", "llama-3.1-8b", ""), ("llama-3.1-70b", "llama-3.1-70b", ""),
    ("llama-3.1-405b", "llama-3.1-405b", ""), ("llama-3.3-70b", "llama-3.3-70b", ""),
    ("llama-2-7b", "llama-2-7b", ""), ("deepseek-r1", "deepseek-r1", ""),
    ("deepseek-v3.2", "deepseek-v3", "DeepSeek-V3.2: DeepSeek-V3 geometry (its sparse attention is not modelled)"),
    ("deepseek-v3", "deepseek-v3", ""), ("qwen3-30b-a3b", "qwen3-30b-a3b", ""), ("qwen3-8b", "qwen3-8b", ""),
)
DRAFTS: tuple[tuple[str, str], ...] = (("llama-3.2-1b", "llama-3.2-1b"), ("llama-3.2-3b", "llama-3.2-3b"))
GPUS: dict[str, str] = {"H100": "H100-SXM", "H100-NVL": "H100-NVL", "H200": "H200", "B200": "B200", "A100": "A100-80GB"}
# SGLang picks 3/1/4 (steps/topk/draft tokens) for most models when the flags are omitted (ENGINES.md, SGLang).
SGLANG_DEFAULT_CHAIN = 3
DEFAULT_WORKLOAD = "chat"


class EngineRow(PublishedRow):
    """A published row plus the engine that measured it."""

    engine: str
    engine_version: str
    qps: float | None = None


def engine_rows_from_text(text: str) -> tuple[EngineRow, ...]:
    """Parse the text of an engine-measurements CSV (a function of the text alone, so tests can feed an edited
    copy and check which ids move)."""
    cells = read_cells(text)
    ids = source_ordinal_ids(r["source_id"] for r in cells)
    out = []
    for row_id, r in zip(ids, cells, strict=True):
        base = row_from_cells(row_id, r)
        m = re.match(r"\s*QPS\s+([0-9.]+)", r["batch_size"])
        out.append(EngineRow(**base.model_dump(), engine=r["engine"].strip().lower(),
                             engine_version=r["engine_version"], qps=float(m.group(1)) if m else None))
    return tuple(out)


@lru_cache(maxsize=1)
def load_engine_rows() -> tuple[EngineRow, ...]:
    """All engine-measured rows, parsed (cached)."""
    text = resources.files("specpick.tools").joinpath("data", "engine_measurements.csv").read_text("utf-8")
    return engine_rows_from_text(text)


def is_moe(row: EngineRow) -> bool:
    """Whether the row's verifier is a mixture of experts (catalog fact); False when it is unknown."""
    spec, _ = _verifier(row)
    return bool(spec and spec.is_moe)


def _verifier(row: PublishedRow) -> tuple[ModelSpec | None, str]:
    name = row.verifier_model.lower()
    for prefix, key, note in VERIFIERS:
        if name.startswith(prefix):
            return get_catalog().model(key), note
    return None, f"verifier '{row.verifier_model}' has no architecture on record"


def skip_reason(row: EngineRow) -> str | None:
    """Why an engine row cannot test the model (None: usable)."""
    if row.engine not in ENGINES:
        return f"engine '{row.engine}' is not one of {', '.join(ENGINES)}"
    if row.method is None:
        return "method not modelled"
    if row.speedup_is_range or row.speedup is None:
        return "speedup cell is a range or bound"
    if row.qps is not None and row.qps > 1:
        return "load given as a request rate above 1 QPS; concurrency not stated"
    return None


def draft_shape(row: EngineRow) -> tuple[int, TreeShape | None, int | None, list[str]]:
    """(N or depth, tree, medusa heads, notes) from the config cell."""
    cfg, method = row.config, row.method or ""
    m = re.search(r"steps=(\d+)\s+topk=(\d+)\s+draft_tokens=(\d+)", cfg)
    if m:
        steps, top_k, tokens = (int(g) for g in m.groups())
        if top_k == 1 or method == "mtp":
            return steps, None, None, []
        return steps, TreeShape(depth=steps, top_k=top_k, num_verify_tokens=tokens), None, []
    m = re.search(r"chain (\d+)", cfg)
    if m:
        return int(m.group(1)), None, None, []
    if method == "medusa":
        depth, top_k, tokens, note = TREE_DEFAULTS["medusa"]
        return depth, TreeShape(depth=depth, top_k=top_k, num_verify_tokens=tokens), None, [f"Medusa tree not stated: {note}"]
    return SGLANG_DEFAULT_CHAIN, None, None, [f"draft shape not stated: chain of {SGLANG_DEFAULT_CHAIN} (SGLang's default "
                                              "3/1/4 when the flags are omitted)"]


def _hardware(row: EngineRow) -> tuple[str, int] | None:
    m = re.match(r"\s*(\d+)x\s+(H100-NVL|H100|H200|B200|A100)", row.hardware)
    return (GPUS[m.group(2)], int(m.group(1))) if m else None


def build_case(row: EngineRow) -> CalibCase | str:
    """A calibration case for an engine row, or the reason it is skipped."""
    reason = skip_reason(row)
    if reason:
        return reason
    verifier, vnote = _verifier(row)
    if verifier is None:
        return vnote
    notes = [vnote] if vnote else []
    hw = _hardware(row)
    if hw is None:
        return f"hardware '{row.hardware}' has no GPU count"
    gpu = get_catalog().gpu(hw[0])
    if "not stated" in row.hardware or "assumed" in row.hardware:
        notes.append(f"hardware: {row.hardware}")
    w = re.search(r"weights (\w+)", row.config)
    bpp = WEIGHT_BYTES[w.group(1)] if w and w.group(1) in WEIGHT_BYTES else BYTES_PER_PARAM.get(verifier.dtype, 2.0)
    draft = None
    if row.method == "draft_model":
        name = row.draft_or_head.lower()
        key = next((k for p, k in DRAFTS if name.startswith(p)), None)
        if key is None:
            return "draft model not identifiable"
        draft = get_catalog().model(key)
    n, tree, heads, snotes = draft_shape(row)
    notes.extend(snotes)
    batch = row.batch
    if row.qps is not None:
        batch = 1
        notes.append("load 1 QPS: modelled as batch 1 (low load; concurrency not stated)")
    elif batch is None:
        batch = 1
        notes.append("batch not stated: 1 assumed")
    temperature = row.temperature
    if temperature is None:
        temperature = 0.0
        notes.append("temperature not stated: greedy assumed")
    workload = map_workload(row.task)
    if workload is None or workload == MIXED5:
        workload = DEFAULT_WORKLOAD
        notes.append(f"benchmark '{row.task}': {DEFAULT_WORKLOAD} assumed")
    return CalibCase(
        row=row, verifier=verifier, draft=draft, gpu=gpu, gpus=hw[1], harness=row.engine, bpp=bpp,
        num_draft_tokens=n, tree=tree, lookahead=None, medusa_heads=heads, workloads=(workload,),
        temperature=temperature, batch=batch, tau=row.tau, alpha=row.alpha, notes=notes,
    )


"""Engine-measured speculative-decoding results: usability and calibration cases (rows: ``engine_rows.py``).

``tools/data/engine_measurements.csv`` holds speedups and acceptance figures measured in serving
engines (vLLM, SGLang, TensorRT-LLM; llama.cpp and transformers rows are kept and counted) from issue
threads, PRs, engine docs and engine blogs, with the columns of ``published_measurements.csv`` plus
``engine`` and ``engine_version``. Every row names its source and carries a provenance tag
([primary] / [secondary]). Rows are identified as ``{source_id}/{n}``, the n-th row of that source in
file order (``tools/catalog/row_ids.py``); new rows are appended, so earlier ids never move.

These rows are *not* part of the dev set: ``specpick calibrate --engines`` reports them separately.
Each row is used for what it can test (``row_use``):

* ``cost_model``: a point speedup and the row's own tau/alpha from the same run (tests the cycle cost alone, and end
  to end; acceptance from another run, ``OTHER_RUN_TAG``, makes the row ``end_to_end``);
* ``end_to_end``: a point speedup without acceptance (tests priors + cost model);
* ``acceptance_only``: tau/alpha without a speedup (tests the acceptance priors only);
* ``skipped``: with a counted reason (engine or method outside the vocabulary, model or GPU not in the
  catalog, range/approximate speedup, load not stated as a concurrency).

Cells are written in a small fixed vocabulary so no per-row code is needed: hardware ``"<count>x <GPU>"``
(H100 = H100 SXM); config ``"chain N"`` or ``"tree steps=S topk=K draft_tokens=T"`` (SGLang's three
flags; topk 1 is a chain of S), optionally ``"; weights fp8|fp16|bf16|nvfp4"``; batch ``"QPS n"`` when
the source gives a request rate instead of a concurrency.
"""

from __future__ import annotations

import re
from typing import Literal

from specpick.tools.calibration.cases import CalibCase
from specpick.tools.calibration.engine_rows import EngineRow
from specpick.tools.calibration.engine_specs import (NOT_MODELLED_YET, engine_workload, resolve_engine_draft,
                                                     resolve_engine_gpu, resolve_engine_verifier,
                                                     weights_bytes_per_param)
from specpick.tools.catalog.parallel_drafts import is_pard_repo, pard_draft_spec
from specpick.tools.catalog.published import WORKLOAD_MIXES, map_workload
from specpick.tools.model.estimate import TreeShape
from specpick.tools.model.overhead import ENGINE_TO_HARNESS
from specpick.tools.model.overlap import VLLM_ASYNC_SPEC_SINCE, spec_overlap
from specpick.tools.model.prior_rules import TREE_DEFAULTS
from specpick.tools.vocab import ENGINES, SpecOverlap

Use = Literal["cost_model", "end_to_end", "acceptance_only", "skipped"]
# SGLang picks 3/1/4 (steps/topk/draft tokens) for most models when the flags are omitted (ENGINES.md, SGLang).
SGLANG_DEFAULT_CHAIN = 3
DEFAULT_WORKLOAD = "chat"
# Batch cells that describe a load without a concurrency: the model needs one, so such rows are skipped.
_NO_CONCURRENCY = re.compile(r"request-rate|offline|range over|high qps", re.IGNORECASE)


def is_moe(row: EngineRow) -> bool:
    """Whether the row's verifier is a mixture of experts (catalog fact); False when it is unknown."""
    spec, _ = resolve_engine_verifier(row.verifier_model)
    return bool(spec and spec.is_moe)


def skip_reason(row: EngineRow) -> str | None:
    """Why an engine row cannot test the model, from its cells alone (None: go on to the catalog)."""
    if row.engine not in ENGINES:
        return f"engine '{row.engine}' is not in tools/vocab.Engine"
    if row.method is None:
        raw = row.method_raw.strip()
        return f"method not modelled yet: {raw}" if raw.lower() in NOT_MODELLED_YET else f"method not modelled: {raw}"
    if row.speedup_is_range:
        return "speedup cell is a range or bound (or approximate): kept, not used for error figures"
    if row.qps is not None and row.qps > 1:
        return "load given as a request rate above 1 QPS; concurrency not stated"
    if row.batch is None and row.qps is None and _NO_CONCURRENCY.search(row.batch_raw):
        return "concurrency not stated (request-rate sweep, offline run or range of loads)"
    if "per rank" in row.batch_raw or "disaggregation" in row.hardware.lower():
        return "prefill/decode-disaggregated or per-rank batch deployment: not modelled"
    if row.temperature_raw.strip().startswith(">"):
        return "temperature given only as '> 0'"
    return None


def draft_shape(row: EngineRow) -> tuple[int, TreeShape | None, list[str]]:
    """(N or depth, tree, notes) from the config cell."""
    cfg, method = row.config, row.method or ""
    m = re.search(r"steps[= ](\d+)\s+topk[= ](\d+)\s+draft_tokens[= ](\d+)", cfg)
    if m:
        steps, top_k, tokens = (int(g) for g in m.groups())
        if top_k == 1 or method == "mtp":
            return steps, None, []
        return steps, TreeShape(depth=steps, top_k=top_k, num_verify_tokens=tokens), []
    m = re.search(r"steps[= ](\d+)\s+topk[= ]1\b", cfg)
    if m:  # SGLang's flags with top-k 1 and the draft-token count left out: a chain of the steps
        return int(m.group(1)), None, []
    m = (re.search(r"chain (\d+)", cfg) or re.search(r"\bv=(\d+)", cfg) or re.search(r"\bK=(\d+)", cfg)
         or re.search(r"num_speculative_tokens[= ](\d+)", cfg))
    if m:  # "k=3 v=5" is TensorRT-LLM's n-gram (match size, max draft length): the draft length is v
        return int(m.group(1)), None, []
    m = re.search(r"(?:--draft(?:-max)?|n_draft|--spec-draft-n-max)[= ](\d+)", cfg)
    if m:  # llama.cpp's draft flags give the most tokens a cycle may draft; it stops earlier below --draft-p-min
        return int(m.group(1)), None, [f"llama.cpp draft maximum {m.group(1)} taken as N (drafting stops early "
                                       "when the draft's confidence falls below p-min)"]
    m = re.search(r"num_steps (\d+)", cfg)
    if m:
        return int(m.group(1)), None, [f"{m.group(1)} steps, top-k not stated: a chain assumed"]
    if method == "medusa":
        depth, top_k, tokens, note = TREE_DEFAULTS["medusa"]
        return depth, TreeShape(depth=depth, top_k=top_k, num_verify_tokens=tokens), [f"Medusa tree not stated: {note}"]
    if row.engine == "sglang":
        return SGLANG_DEFAULT_CHAIN, None, [f"draft shape not stated: chain of {SGLANG_DEFAULT_CHAIN} (SGLang's default "
                                            "3/1/4 when the flags are omitted)"]
    return SGLANG_DEFAULT_CHAIN, None, [f"draft length not stated: {SGLANG_DEFAULT_CHAIN} assumed (an assumption: "
                                        f"{row.engine} has no default; SGLang's is 3)"]


# A release number in the version cell ("v0.19.0 ROCm", "0.22.1rc1.dev43"), or a build dated 2026 ("main (May 2026,
# MRV2)", "nightly ... (mid 2026)"): vLLM turned async scheduling on by default with EAGLE/MTP in 0.14.0, January
# 2026 (tools/model/overlap.py). SGLang's overlap is opt-in: only rows that name spec v2 had it.
_RELEASE = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:rc\d+)?)")
_SPEC_V2 = re.compile(r"spec[ _]v2", re.IGNORECASE)
BEFORE_ASYNC_SPEC = "0.13.0"  # a build named only by a 2025 date: a release before async scheduling with speculation


def row_overlap(row: EngineRow) -> tuple[bool, str | None]:
    """(overlap, note) for an engine row, read from its engine_version cell by the engines' documented defaults."""
    version_cell = row.engine_version
    setting: SpecOverlap
    if row.engine == "sglang":
        setting = "on" if _SPEC_V2.search(version_cell) else "off"
        version = None
    elif row.engine == "vllm":
        m = _RELEASE.search(version_cell)
        version = m.group(1) if m else (VLLM_ASYNC_SPEC_SINCE if "2026" in version_cell else BEFORE_ASYNC_SPEC)
        setting = "auto"
    else:
        return False, None
    decision = spec_overlap(row.engine, version, row.method or "", setting=setting)
    return decision.overlap, (f"overlap from engine_version '{version_cell}': on" if decision.overlap else None)


def resolve_case(row: EngineRow) -> CalibCase | str:
    """A calibration case for an engine row whether or not it states a speedup, or the reason it is skipped."""
    reason = skip_reason(row)
    if reason:
        return reason
    verifier, vnote = resolve_engine_verifier(row.verifier_model)
    if verifier is None:
        return vnote
    notes = [vnote] if vnote else []
    hw = resolve_engine_gpu(row.hardware)
    if isinstance(hw, str):
        return hw
    gpu, count = hw
    if "not stated" in row.hardware or "assumed" in row.hardware:
        notes.append(f"hardware: {row.hardware}")
    bpp, wnote = weights_bytes_per_param(row.verifier_model, row.config, verifier)
    notes += [wnote] if wnote else []
    draft = None
    if row.method == "draft_model":
        draft = resolve_engine_draft(row.draft_or_head)
        if draft is None:
            return f"not in catalog: draft '{row.draft_or_head}'"
    elif row.method == "pard":  # a PARD draft is sized from its base model (amd/PARD-<base>)
        name = row.draft_or_head.split()[0] if row.draft_or_head.strip() else ""
        draft = pard_draft_spec(name) if is_pard_repo(name) else None
        if draft is None:
            return f"not in catalog: PARD draft '{row.draft_or_head}'"
    n, tree, snotes = draft_shape(row)
    notes.extend(snotes)
    batch = row.batch
    if row.qps is not None:
        batch = 1
        notes.append(f"load {row.qps:g} QPS: modelled as batch 1 (low load; concurrency not stated)")
    elif batch is None:
        batch = 1
        notes.append("batch not stated: 1 assumed")
    temperature = row.temperature
    if temperature is None:
        temperature = 0.0
        notes.append("temperature not stated: greedy assumed")
    workload = map_workload(row.task) or engine_workload(row.task)
    if workload is None or workload in WORKLOAD_MIXES:
        workload = DEFAULT_WORKLOAD
        notes.append(f"benchmark '{row.task}': {DEFAULT_WORKLOAD} assumed")
    overlap, onote = row_overlap(row)
    notes += [onote] if onote else []
    return CalibCase(
        row=row, verifier=verifier, draft=draft, gpu=gpu, gpus=count, harness=ENGINE_TO_HARNESS[row.engine], bpp=bpp,
        num_draft_tokens=n, tree=tree, lookahead=None, medusa_heads=None, workloads=(workload,),
        temperature=temperature, batch=batch, tau=row.tau, alpha=row.alpha, notes=notes, spec_overlap=overlap,
    )


def own_acceptance(row: EngineRow) -> bool:
    """The row states tau/alpha measured on its speedup's own run (so it can test the cycle cost alone)."""
    return (row.tau is not None or row.alpha is not None) and (row.speedup is None or row.acceptance_from_speedup_run)


LLAMACPP_REASON = ("llama.cpp row: tests the llama.cpp cost model only (its own fit, section and gate; "
                   "tools/model/overhead_llamacpp.py)")


def row_use(row: EngineRow, *, llamacpp: bool = False) -> tuple[Use, CalibCase | str]:
    """What the row can test, and its case (or the skip reason). The serving engines' figures (``llamacpp=False``)
    skip every llama.cpp row; the llama.cpp section and fit (``llamacpp=True``) take only llama.cpp rows."""
    if row.llamacpp != llamacpp:
        return "skipped", LLAMACPP_REASON if row.llamacpp else "not a llama.cpp row"
    if (reason := row.excluded_reason) is not None:
        return "skipped", f"held out of the gates: {reason}"
    case = resolve_case(row)
    if isinstance(case, str):
        return "skipped", case
    if row.speedup is None:
        return (("acceptance_only", case) if own_acceptance(row)
                else ("skipped", "neither a speedup nor an acceptance figure"))
    if not own_acceptance(row):  # the priors supply acceptance, as for a row that states none
        return "end_to_end", case.model_copy(update={"tau": None, "alpha": None})
    return "cost_model", case


def build_case(row: EngineRow) -> CalibCase | str:
    """A calibration case for a row with a point speedup, or the reason it cannot test a speedup."""
    use, case = row_use(row)
    if use == "acceptance_only":
        return "no speedup (acceptance only)"
    return case

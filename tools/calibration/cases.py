"""Turn each published row into a calibration case (or a counted reason to skip it).

A case carries everything ``estimate_for_specs`` needs: specs, hardware,
harness, draft shape, workload(s), temperature, batch, and the row's own
acceptance figure when it states one. Rows are skipped only for stated reasons
(no speedup, range cells, different baselines, duplicates, unmodelled methods,
unknown architecture), and every skip is counted in the report.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field

from specpick.tools.calibration.specs import harness_for, resolve_draft, resolve_hardware, resolve_verifier
from specpick.tools.model.prior_rules import CHAIN_DEFAULTS, TREE_DEFAULTS, tree_for
from specpick.tools.catalog.authorship import by_authors
from specpick.tools.catalog.published import (
    AGGREGATE, TASK_COLUMN, UNMODELLED, WORKLOAD_MIXES, PublishedRow, config_int, copied_from,
)
from specpick.tools.catalog.specs import GpuSpec, ModelSpec
from specpick.tools.model.constants import DEFAULT_CONSTANTS, ModelConstants
from specpick.tools.deploy.requests import estimate_request
from specpick.tools.deploy.resolve import context_rule
from specpick.tools.deployment import Deployment, Drafter, EngineChoice, Evidence, Hardware, ServedModel
from specpick.tools.model.estimate import TreeShape, estimate_for_specs
from specpick.tools.model.llamacpp_pmin import row_p_min, stops_below_p_min
from specpick.tools.vocab import COPY_HEAVY_WORKLOADS, BYTES_PER_PARAM, EAGLE_METHODS, Runner

DEFAULT_BATCH = 1  # rows whose batch is not stated: the papers' harnesses run batch 1


class CalibCase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    row: PublishedRow
    verifier: ModelSpec
    draft: ModelSpec | None
    gpu: GpuSpec
    gpus: int
    harness: str
    bpp: float
    num_draft_tokens: int
    tree: TreeShape | None
    lookahead: tuple[int, int, int] | None
    medusa_heads: int | None
    workloads: tuple[str, ...]
    temperature: float
    batch: int
    tau: float | None
    alpha: float | None
    notes: list[str]
    spec_overlap: bool = False  # engine rows: async / overlap scheduling of the speculative path (engine_cases.py)

    @property
    def runner(self) -> Runner:
        """Whose run the row is: its method's own authors' or a third party's (``tools/catalog/authorship.py``)."""
        return "authors" if by_authors(self.row.source_id, self.row.method or "", self.row.variant) else "third_party"

    @property
    def own_acceptance(self) -> bool:
        """The row states its own tau or alpha, so it can test the cycle cost alone."""
        return self.tau is not None or self.alpha is not None


def skip_reason(row: PublishedRow) -> str | None:
    """Why a row cannot test the speedup model (None: usable)."""
    if row.method is None:
        return UNMODELLED.get(row.method_raw.strip().lower(), "method not modelled")
    if row.speedup_is_range:
        return "speedup cell is a range or bound"
    if row.speedup is None:
        return "no speedup reported (acceptance-only row)"
    if row.source_id == "EAGLE-GPTFAST" or "not vanilla" in row.notes.lower():
        return "baseline differs (relative to gpt-fast, not plain decoding)"
    if "max feasible" in row.batch_raw.lower():
        return "baseline differs (throughput at each method's own largest batch)"
    if row.workload == AGGREGATE:
        return "aggregate of rows already in the set (a mean of its benchmarks)"
    if row.provenance == TASK_COLUMN:
        return "a task column of a table graded by its overall column (feeds same-setup workload ratios)"
    if copied_from(row):
        return "duplicate: a measurement already in the set under another row (catalog.published.SAME_MEASUREMENT)"
    if row.workload is None:
        return "workload not modelled"
    if row.workload in COPY_HEAVY_WORKLOADS:
        return "copy-heavy workload: its own reported group (calibrate's copy-heavy coverage), never a gated set"
    return None


def _shape(row: PublishedRow) -> tuple[int, TreeShape | None, tuple[int, int, int] | None, int | None, list[str]]:
    """(N or depth, tree, lookahead config, medusa heads, notes) from the row config or the source defaults."""
    cfg, method, notes = row.config, row.method or "", []
    if method == "lookahead":
        w, n = config_int(cfg, r"\bW"), config_int(cfg, r"\bN")
        return (n or 5) - 1, None, ((w, n, w) if w and n else None), None, notes
    chain = re.search(r"chain length (\d+)", cfg)
    if chain:
        return int(chain.group(1)), None, None, None, notes
    if method in EAGLE_METHODS:
        depth, top_k, tokens, note = tree_for(method, cfg)
        return depth, TreeShape(depth=depth, top_k=top_k, num_verify_tokens=tokens), None, None, [note]
    if method == "medusa":
        m = re.search(r"(\d+) heads", cfg) or re.search(r"(\d+) (?:Clover|clover) heads", row.draft_or_head)
        heads = int(m.group(1)) if m else None
        size = re.search(r"tree size (\d+)|up to (\d+) nodes", cfg)
        depth, top_k, tokens, note = TREE_DEFAULTS["medusa"]
        if size:
            tokens = int(size.group(1) or size.group(2))
            note = f"tree of {tokens} tokens (row config)"
        if heads:
            depth = min(depth, heads)
        return depth, TreeShape(depth=depth, top_k=top_k, num_verify_tokens=tokens), None, heads, [note]
    if method == "mtp":
        m = re.search(r"use (\d+) heads", cfg)
        return (int(m.group(1)) - 1 if m else config_int(cfg, "draft token") or 1), None, None, None, notes
    if method == "suffix":
        return 8, None, None, None, ["REST: verify budget and retrieval cost per tools/model/cyclecost.py constants"]
    n = config_int(cfg, "gamma", r"\bK", "num_pred_tokens")
    if n is None:
        n, note = CHAIN_DEFAULTS.get(method, (5, "assumption"))
        notes.append(f"N={n}: {note}")
    return n, None, None, None, notes


def build_case(row: PublishedRow) -> CalibCase | str:
    """A calibration case for ``row``, or the reason it is skipped."""
    reason = skip_reason(row)
    if reason:
        return reason
    verifier, vnote = resolve_verifier(row)
    if verifier is None:
        return vnote
    notes = [vnote] if vnote else []
    bpp = BYTES_PER_PARAM.get(verifier.dtype, 2.0)
    gpu, gpus, hnote = resolve_hardware(row, verifier, bpp)
    if hnote:
        notes.append(hnote)
    draft = None
    if row.method == "draft_model":
        draft, dnote = resolve_draft(row, verifier)
        if draft is None:
            return dnote
        if dnote:
            notes.append(dnote)
    n, tree, lookahead, heads, snotes = _shape(row)
    notes.extend(snotes)
    batch = row.batch
    if batch is None:
        batch = DEFAULT_BATCH
        notes.append("batch not stated: 1 assumed")
    temperature = row.temperature
    if temperature is None:
        temperature = 0.0
        notes.append("temperature not stated: greedy assumed")
    workloads: tuple[str, ...] = (row.workload,)
    if row.workload in WORKLOAD_MIXES:
        workloads, what = WORKLOAD_MIXES[row.workload]
        notes.append(what)
    return CalibCase(
        row=row, verifier=verifier, draft=draft, gpu=gpu, gpus=gpus, harness=harness_for(row), bpp=bpp,
        num_draft_tokens=n, tree=tree, lookahead=lookahead, medusa_heads=heads,
        workloads=workloads,  # type: ignore[arg-type]
        temperature=temperature, batch=batch, tau=row.tau, alpha=row.alpha, notes=notes,
    )


class Prediction(BaseModel):
    """The model's speedup for one case with its stated interval (``low``/``high`` of the estimate)."""

    speedup: float
    low: float
    high: float
    tau: float = Field(description="mean accepted tokens per cycle the prediction used (incl. the bonus token)")


def case_deployment(case: CalibCase, workload: str) -> Deployment:
    """A published or engine row's setup as a ``Deployment``: its verifier, hardware, harness, batch, sampling and
    own acceptance, at the context the one rule gives its workload (``tools/deploy/resolve.context_rule``)."""
    context, _ = context_rule(None, workload, case.verifier.max_position_embeddings)
    evidence = Evidence(alpha=case.alpha if case.tau is None else None, tau=case.tau) if case.own_acceptance \
        else None
    # Rows do not state their draft's weight format: the verifier's is assumed, as the fit always has.
    drafter = Drafter(repo_id=case.draft.repo_id, kind="draft", spec=case.draft, weight_format=case.verifier.dtype,
                      bytes_per_param=case.bpp) if case.draft is not None else None
    return Deployment(
        verifier=ServedModel(case.verifier, case.verifier.dtype, case.bpp), hardware=Hardware(case.gpu, case.gpus),
        drafter=drafter,
        engine=EngineChoice(None, None, case.harness, harness=case.harness), workload=workload,
        context_tokens=context, concurrency=case.batch, temperature=case.temperature, evidence=evidence,
    )


def case_p_min(case: CalibCase) -> float | None:
    """llama.cpp draft-model rows: the p-min their build ran (tools/model/llamacpp_pmin.py); else None."""
    if case.harness != "llamacpp" or not stops_below_p_min(case.row.method or ""):
        return None
    return row_p_min(getattr(case.row, "config", ""), getattr(case.row, "engine_version", ""))[0]


def predict(case: CalibCase, *, own: bool, exclude: frozenset[str] = frozenset(),
            constants: ModelConstants = DEFAULT_CONSTANTS) -> Prediction:
    """The model's speedup and interval for one case: the row's own acceptance (``own``) or the priors without
    ``exclude``. Several workloads (a headline mean) average the point and both ends alike.

    ``constants`` lets the global fit score a candidate set of constants without touching the defaults.
    """
    results = []
    for w in case.workloads:
        # The case as a deployment (the same builder `recommend` and `speedup` use), then the row's own facts the
        # speed model takes: variant, the sources left out, lookahead/Medusa shape, who ran it, its overlap.
        req = replace(
            estimate_request(case_deployment(case, w), case.row.method or "", engine=None, draft=case.draft,
                             num_draft_tokens=case.num_draft_tokens, tree=case.tree, measured=own, sweep=False),
            variant=case.row.variant, exclude_sources=exclude, lookahead=case.lookahead,
            medusa_heads=case.medusa_heads, spec_overlap=case.spec_overlap, runner=case.runner,
            draft_p_min=case_p_min(case),
        )
        results.append(estimate_for_specs(req, constants=constants))
    return Prediction(speedup=statistics.fmean(r.speedup for r in results),
                      low=statistics.fmean(r.low for r in results), high=statistics.fmean(r.high for r in results),
                      tau=statistics.fmean(r.tau for r in results))


def predict_speedup(case: CalibCase, *, own: bool, exclude: frozenset[str] = frozenset(),
                    constants: ModelConstants = DEFAULT_CONSTANTS) -> float:
    """The point speedup of ``predict`` (the fit scores only the point)."""
    return predict(case, own=own, exclude=exclude, constants=constants).speedup

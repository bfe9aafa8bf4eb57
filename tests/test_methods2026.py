"""The 2026 parallel drafters (DFlash, P-EAGLE, PARD), the per-version support matrix and its breaks_with."""

from __future__ import annotations

import pytest

from specpick.skill.planner.candidates import evaluate_candidates
from specpick.skill.planner.compat import breaks_with_flags, deployment_features
from specpick.skill.planner.context import build_context
from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.parallel_drafts import is_pard_repo, pard_draft_spec
from specpick.tools.catalog.specs import version_key
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.model.cost_inputs import DraftSetup, Hardware, Precision, Runtime
from specpick.tools.model.cyclecost import cycle_cost
from specpick.tools.model.constants import get_overhead
from specpick.tools.model.priors import PriorQuery, Shape, acceptance_prior
from specpick.tools.vocab import BREAK_TAGS, METHODS, PARALLEL_DRAFT_METHODS


def _prior(method, workload, temperature, shape, **situation):
    """``acceptance_prior`` for a workload and temperature, with the rest of the query by keyword."""
    return acceptance_prior(method, shape, PriorQuery(workload=workload, temperature=temperature, **situation))


def test_versions_order_releases_and_prereleases():
    keys = ["", "0.13.0", "0.16.0", "0.19", "1.3.0rc29", "1.4.0rc1", "1.4.0", "1.10.0"]
    assert sorted(keys, key=version_key) == keys


def test_support_rows_are_chosen_per_engine_version():
    cat = get_catalog()
    assert cat.support("vllm", "draft_model", "0.13.0").support == "no"  # V1 had no proposer (issue #31883)
    assert cat.support("vllm", "draft_model", "0.16.0").runs_at("0.16.0")
    dflash = cat.support("vllm", "dflash", "0.16.0")
    assert dflash.min_version == "0.19.0" and not dflash.runs_at("0.16.0") and dflash.runs_at("0.19.1")
    assert cat.support("vllm", "mtp").min_version == "0.11.0"  # today's row: the generic 'mtp' method


def test_support_matrix_is_complete_and_uses_the_closed_sets():
    cat = get_catalog()
    for engine in ("vllm", "sglang", "trtllm", "llamacpp", "transformers"):
        for method in METHODS:
            assert cat.support(engine, method) is not None, (engine, method)
    for row in cat.engine_support:
        assert set(row.breaks_with) <= set(BREAK_TAGS) and row.source
        assert not row.min_version or version_key(row.min_version) > (0,)


@pytest.mark.parametrize("method", sorted(PARALLEL_DRAFT_METHODS))
def test_parallel_drafters_run_one_draft_forward_whatever_n(method):
    cat = get_catalog()
    verifier, gpu = cat.model("Qwen/Qwen3-8B"), cat.gpu("H100")
    draft = pard_draft_spec("amd/PARD-Qwen3-0.6B") if method == "pard" else None
    at = dict(precision=Precision(2.0), hw=Hardware(gpu, 1), runtime=Runtime(get_overhead("vllm")), batch=1,
              context_tokens=512)
    costs = [cycle_cost(DraftSetup(method=method, num_draft_tokens=n, draft=draft), verifier, **at) for n in (3, 15)]
    assert all(c.draft_steps == 1 and c.forwards == 2 for c in costs)
    # memory-bound at batch 1: drafting 15 positions costs about what drafting 3 does
    assert costs[1].draft_ms < 1.2 * costs[0].draft_ms
    chain = [cycle_cost(DraftSetup(method="eagle3", num_draft_tokens=n), verifier, **at) for n in (3, 15)]
    assert chain[1].draft_ms > 4 * chain[0].draft_ms  # one head forward per drafted token


@pytest.mark.parametrize(("method", "workload", "source"), [
    ("dflash", "math", "MODELOPT-DFLASH"), ("dflash", "chat", "VLLM-PR32206"),
    ("peagle", "code", "HF-PEAGLE-120B"), ("pard", "code", "VLLM-PR18541"),
])
def test_priors_come_from_the_published_2026_rows(method, workload, source):
    # These drafters were measured in serving engines: an engine estimate rests on those rows.
    prior = _prior(method, workload, 0.0, Shape(num_draft_tokens=7), harness_class="engine")
    assert source in prior.summary and 1.0 < prior.tau < 8.0


def test_pard_drafts_take_their_base_models_architecture():
    assert is_pard_repo("amd/PARD-Llama-3.2-1B") and not is_pard_repo("meta-llama/Llama-3.2-1B-Instruct")
    spec = pard_draft_spec("amd/PARD-Llama-3.2-1B")
    base = get_catalog().find_model("Llama-3.2-1B")
    assert spec.repo_id == "amd/PARD-Llama-3.2-1B" and spec.hidden_size == base.hidden_size
    assert pard_draft_spec("amd/PARD-NoSuchBase-9B") is None


def _cands(**kw):
    return {c.strategy: c for c in evaluate_candidates(build_context(PlannerInputs(**kw)))}


def test_dflash_is_a_candidate_only_where_the_release_runs_it():
    new = _cands(verifier="Qwen/Qwen3-8B", workload="math", engine="vllm", engine_version="0.19.0")
    assert new["dflash"].feasible and new["dflash"].head is not None
    old = _cands(verifier="Qwen/Qwen3-8B", workload="math", engine="vllm", engine_version="0.16.0")
    assert not old["dflash"].feasible and "needs 0.19.0" in old["dflash"].reason
    # no published DFlash drafter for Llama-3.1-70B: ruled out, even with a training budget
    big = _cands(verifier="llama-3.1-70b", workload="chat", gpus=4, can_finetune=True)
    assert not big["dflash"].feasible and big["dflash"].rejected_for == "no_draft"


def test_pard_with_a_given_draft_drafts_in_parallel():
    rec = plan(PlannerInputs(verifier="llama-3.1-8b", workload="code", method="pard", engine="vllm",
                             draft="amd/PARD-Llama-3.2-1B"))
    assert rec.strategy == "pard" and rec.draft_model == "amd/PARD-Llama-3.2-1B"
    assert any("one forward" in r for r in rec.rationale)
    by = {t.engine: t for t in rec.engine_config.translations}
    assert by["trtllm"].runs and not by["sglang"].runs  # TRT-LLM PARDDecodingConfig; SGLang has no PARD


def test_breaks_with_reads_the_deployment():
    ctx = build_context(PlannerInputs(verifier="llama-3.1-8b", workload="structured", method="ngram"))
    assert deployment_features(ctx) == {"structured_output"}
    ngram = evaluate_candidates(ctx)[0]
    flags = breaks_with_flags(ctx, ngram)
    assert [f.id for f in flags] == ["engine_breaks_with"] and "prompt_lookup_min >= 8" in flags[0].message
    chat = build_context(PlannerInputs(verifier="llama-3.1-8b", workload="chat", method="ngram"))
    assert breaks_with_flags(chat, evaluate_candidates(chat)[0]) == []
    slots = build_context(PlannerInputs(verifier="Qwen/Qwen3-8B", workload="code", engine="llamacpp",
                                        concurrency=4))
    assert "parallel_slots" in deployment_features(slots)


def test_engine_version_needs_an_engine():
    from specpick.tools.errors import InputError

    with pytest.raises(InputError, match="needs --engine"):
        build_context(PlannerInputs(verifier="llama-3.1-8b", workload="chat", engine_version="0.16.0"))


def test_self_quantized_mtp_is_flagged():
    # DeepSeek-V3 ships FP8; serving it as int4 quantizes the MTP layer too (vllm#43455, llm-compressor#1843)
    cat = get_catalog()
    mtp_model = next(m for m in cat.models if m.mtp_layers > 0 and m.dtype == "fp8")
    ctx = build_context(PlannerInputs(verifier=mtp_model.repo_id, workload="chat", gpus=8, gpu="H200",
                                      quantization="int4", method="mtp"))
    assert "quantized_mtp" in deployment_features(ctx)
    same = build_context(PlannerInputs(verifier=mtp_model.repo_id, workload="chat", gpus=8, gpu="H200", method="mtp"))
    assert "quantized_mtp" not in deployment_features(same)
    cand = next(c for c in evaluate_candidates(ctx) if c.strategy == "mtp")
    assert [f.id for f in breaks_with_flags(ctx, cand)] == ["engine_breaks_with"]

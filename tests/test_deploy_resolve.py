"""The one resolver (tools/deploy/resolve.py) and the builders that derive the model's and memory check's inputs."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from specpick.tools.catalog.specs import version_key
from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
from specpick.tools.commands.vram import VramInput, vram_fit
from specpick.tools.deploy.requests import estimate_request, memory_fit
from specpick.tools.deploy.resolve import DeploymentQuery, resolve_deployment
from specpick.tools.errors import InputError
from specpick.tools.model.workload_context import DEFAULT_CONTEXT_TOKENS
from specpick.tools.vocab import BYTES_PER_PARAM

DATA = Path(__file__).resolve().parent.parent / "tools" / "data"


def _newest_min_version(engine: str) -> str:
    with (DATA / "engine_support.csv").open(encoding="utf-8") as f:
        versions = [r["min_version"] for r in csv.DictReader(f) if r["engine"] == engine and r["min_version"]]
    return max(versions, key=version_key)


def test_the_deployment_is_frozen():
    dep = resolve_deployment(DeploymentQuery(verifier="llama-3.1-8b", workload="chat"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        dep.context_tokens = 1  # type: ignore[misc]


@pytest.mark.parametrize("verifier,workload,expected", [
    ("llama-3.1-8b", "chat", DEFAULT_CONTEXT_TOKENS["chat"]),
    ("llama-3.1-8b", "agentic", DEFAULT_CONTEXT_TOKENS["agentic"]),
    # Vicuna v1.3 has 2048 positions (its config.json), under agentic's typical 4096.
    ("vicuna-7b", "agentic", 2048),
    ("vicuna-7b", "chat", DEFAULT_CONTEXT_TOKENS["chat"]),
])
def test_context_default_is_the_workloads_typical_one_capped_by_the_models_limit(verifier, workload, expected):
    dep = resolve_deployment(DeploymentQuery(verifier=verifier, workload=workload))
    assert dep.context_tokens == expected
    assert any(d.startswith(f"context tokens = {expected}") for d in dep.defaults)


def test_a_given_context_is_used_and_not_listed_as_a_default():
    dep = resolve_deployment(DeploymentQuery(verifier="llama-3.1-8b", workload="chat", context_tokens=9000,
                                             given=frozenset({"context_tokens"})))
    assert dep.context_tokens == 9000 and not any(d.startswith("context tokens") for d in dep.defaults)


def test_the_engine_release_default_is_the_newest_tracked_and_listed():
    newest = _newest_min_version("vllm")
    dep = resolve_deployment(DeploymentQuery(verifier="llama-3.1-8b", workload="chat", engine="vllm"))
    assert dep.engine.release is None and newest in dep.engine.release_text
    assert any(d.startswith("engine release =") and newest in d for d in dep.defaults)
    given = resolve_deployment(DeploymentQuery(verifier="llama-3.1-8b", workload="chat", engine="vllm",
                                               engine_version="0.12.0"))
    assert given.engine.release == "0.12.0" and not any(d.startswith("engine release") for d in given.defaults)


@pytest.mark.parametrize("query,message", [
    (dict(alpha=0.7, tau=3.0), "not both"),
    (dict(gpus=4, pipeline_parallel=3), "does not divide"),
    (dict(engine_version="0.16.0"), "needs --engine"),
    (dict(draft="llama-3.2-1b", head="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), "not both"),
    (dict(draft="llama-3.1-8b"), "verifier itself"),
])
def test_contradictions_are_refused_once_for_every_verb(query, message):
    with pytest.raises(InputError, match=message):
        resolve_deployment(DeploymentQuery(verifier="llama-3.1-8b", workload="chat", **query))


def test_a_draft_keeps_its_own_precision_in_the_speed_model_and_the_memory_check():
    # The verifier served in int4 does not make its bf16 draft int4 (the 1B draft costed at int4 for speed,
    # bf16 for memory).
    dep = resolve_deployment(DeploymentQuery(verifier="llama-3.1-70b", workload="chat", gpus=4, quantization="int4",
                                             draft="llama-3.2-1b"))
    req = estimate_request(dep, "draft_model", engine="vllm", draft=dep.draft_spec)
    fit = memory_fit(dep, "draft_model", engine="vllm", draft=dep.draft_spec)
    assert req.weight_bytes_per_param == BYTES_PER_PARAM["int4"]
    assert req.draft_bytes_per_param == BYTES_PER_PARAM[dep.draft_spec.dtype] == dep.drafter.bytes_per_param
    assert any("weights at int4" in a for a in fit.assumptions)


def test_vram_and_speedup_size_a_draft_given_by_its_size_the_same_way():
    # The pair: `vram --draft-params-b 0.6` fitted while `speedup` on the same inputs did not.
    common = dict(verifier="meta-llama/Llama-3.1-8B-Instruct", gpu="H100-SXM", engine="sglang", context_tokens=8192,
                  draft_params_b=0.6)
    verdicts = set()
    for concurrency in (8, 32):
        fit = vram_fit(VramInput(**common, concurrency=concurrency))
        verdicts.add(fit.fits)
        try:
            sp = estimate_speedup(SpeedupInput(**common, method="draft_model", workload="chat", batch=concurrency))
        except InputError as err:
            assert not fit.fits and f"{fit.headroom_gib:+.1f} GiB per GPU" in str(err)
        else:
            assert fit.fits and f"memory: {fit.verdict_line()} ({fit.reservation})" in sp.assumptions
    assert verdicts == {True, False}  # both verdicts are exercised


def test_dp_attention_reaches_every_verbs_memory_check():
    # MLA keeps the whole latent cache on every rank without DP attention; with it each rank holds its sequences'.
    common = dict(verifier="deepseek-ai/DeepSeek-R1", gpu="H200", gpus=8, engine="sglang", context_tokens=16384)
    replicated = vram_fit(VramInput(**common, concurrency=128))
    split = vram_fit(VramInput(**common, concurrency=128, dp_attention=True))
    assert not replicated.fits and split.fits
    with pytest.raises(InputError, match="does not fit"):
        estimate_speedup(SpeedupInput(**common, method="mtp", workload="chat", batch=128))
    sp = estimate_speedup(SpeedupInput(**common, method="mtp", workload="chat", batch=128, dp_attention=True))
    assert f"memory: {split.verdict_line()} ({split.reservation})" in sp.assumptions


def test_dp_attention_is_a_deployment_feature_the_engine_rows_can_break_with():
    # engine_support.csv: SGLang NGRAM lists dp_attention in breaks_with (ENGINES.md: no --enable-dp-attention).
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    base = dict(verifier="deepseek-ai/DeepSeek-R1", workload="rag", gpu="H200", gpus=8, engine="sglang", method="ngram")
    with_dp = plan(PlannerInputs(**base, dp_attention=True))
    without = plan(PlannerInputs(**base))
    assert any(f.id == "engine_breaks_with" and "dp_attention" in f.message for f in with_dp.flags)
    assert not any(f.id == "engine_breaks_with" and "dp_attention" in f.message for f in without.flags)

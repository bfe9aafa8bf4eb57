"""One fact, one answer: `speedup`, `vram` and `recommend` agree for the same deployment.

Each row is one deployment given to all three verbs with the same inputs (verifier, GPUs, method, engine,
workload, concurrency, context, draft). The speedup, the draft length N, the tree shape and the memory
verdict must be identical: they come from the same functions (``tools/checks/method_fit``,
``tools/model/draftshape``), and these tests catch a verb that drifts off them. Rows are chosen where no
seed adjustment of the planner applies (greedy chat-like work, concurrency < 8); adjustments have their own
tests in tests/test_planner.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.skill.surfaces.registry import BY_CLI
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.checks.method_fit import published_head
from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
from specpick.tools.commands.vram import VramInput, vram_fit
from specpick.tools.errors import InputError


@dataclass(frozen=True)
class Deployment:
    id: str
    verifier: str
    gpu: str
    gpus: int
    method: str
    engine: str
    workload: str = "chat"
    concurrency: int = 1
    context_tokens: int = 2048
    draft: str | None = None
    quantization: str | None = None


DEPLOYMENTS = [
    Deployment("dense-8b-eagle3-vllm-1gpu", "llama-3.1-8b", "H100", 1, "eagle3", "vllm"),
    Deployment("dense-8b-eagle3-sglang-tree", "llama-3.1-8b", "H100", 1, "eagle3", "sglang", concurrency=2),
    Deployment("dense-8b-eagle3-sglang-chain-load", "llama-3.1-8b", "A100-80GB", 1, "eagle3", "sglang",
               concurrency=6, context_tokens=4096),
    Deployment("dense-70b-draft-vllm-4gpu", "llama-3.1-70b", "H100", 4, "draft_model", "vllm", concurrency=4,
               context_tokens=4096, draft="llama-3.2-1b"),
    Deployment("dense-70b-ngram-vllm-2gpu-rag", "llama-3.1-70b", "H100", 2, "ngram", "vllm", workload="rag",
               concurrency=2, context_tokens=8192),
    Deployment("dense-70b-eagle3-trtllm-4gpu", "llama-3.3-70b", "H100", 4, "eagle3", "trtllm", concurrency=2),
    Deployment("moe-deepseek-v3-mtp-sglang-8gpu", "deepseek-v3", "H200", 8, "mtp", "sglang", concurrency=4,
               context_tokens=4096),
    Deployment("moe-gpt-oss-120b-eagle3-vllm-1gpu", "gpt-oss-120b", "H100", 1, "eagle3", "vllm", concurrency=2),
    Deployment("moe-mixtral-ngram-trtllm-2gpu", "mixtral-8x7b", "A100-80GB", 2, "ngram", "trtllm", workload="qa",
               concurrency=4),
    Deployment("dense-vicuna-eagle2-sglang-tree", "vicuna-7b", "A100-80GB", 1, "eagle2", "sglang"),
    Deployment("dense-qwen-7b-draft-vllm-l40s", "qwen2.5-7b", "L40S", 1, "draft_model", "vllm",
               workload="summarization", concurrency=4, context_tokens=4096, draft="qwen2.5-0.5b"),
    Deployment("dense-70b-fp8-ngram-vllm-8gpu", "llama-3.1-70b", "H100", 8, "ngram", "vllm", concurrency=4,
               quantization="fp8"),
]


def _recommend(d: Deployment):
    return plan(PlannerInputs(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, method=d.method, engine=d.engine,
                              workload=d.workload, concurrency=d.concurrency, context_tokens=d.context_tokens,
                              draft=d.draft, quantization=d.quantization, can_finetune=False))


def _speedup(d: Deployment):
    return estimate_speedup(SpeedupInput(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, method=d.method,
                                         engine=d.engine, workload=d.workload, concurrency=d.concurrency,
                                         context_tokens=d.context_tokens, draft=d.draft,
                                         quantization=d.quantization))


def _vram(d: Deployment):
    cat = get_catalog()
    head = published_head(cat.model(d.verifier), d.method, d.engine)
    head_b = head.head_params_b if head is not None and d.method != "mtp" else None
    return vram_fit(VramInput(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, engine=d.engine,
                              draft=d.draft if d.method == "draft_model" else None, head_params_b=head_b,
                              context_tokens=d.context_tokens, concurrency=d.concurrency,
                              quantization=d.quantization))


def _shape(n: int | None, tree) -> tuple[int | None, int, int | None]:
    """(depth, top_k, verify tokens); a missing tree is a chain of n (n + 1 tokens verified)."""
    if tree is None:
        return n, 1, (n + 1 if n else None)
    return tree.depth, tree.top_k, tree.num_verify_tokens


@pytest.mark.parametrize("d", DEPLOYMENTS, ids=[d.id for d in DEPLOYMENTS])
def test_speedup_vram_and_recommend_tell_the_same_story(d: Deployment):
    rec, sp, fit = _recommend(d), _speedup(d), _vram(d)
    assert rec.strategy == d.method and rec.engine == d.engine
    # Same speed estimate (the planner prints two decimals), same draft length and tree.
    assert rec.expected_speedup.value == round(sp.speedup, 2)
    assert rec.expected_speedup.break_even_concurrency == sp.break_even_concurrency
    assert rec.num_draft_tokens == sp.num_draft_tokens
    if rec.tree is not None or sp.tree is not None:
        assert _shape(rec.num_draft_tokens, rec.tree) == _shape(sp.num_draft_tokens, sp.tree)
    # Same memory verdict: `vram` fits, `speedup` states the same verdict line, `recommend` the same headroom.
    assert fit.fits
    assert f"memory: {fit.verdict_line()} ({fit.reservation})" in sp.assumptions
    vram_check = next(c for c in rec.compatibility if c.name == "vram_fit")
    assert vram_check.verdict in ("pass", "warn")
    assert f"with {fit.headroom_gib:.1f} GiB/GPU headroom at {d.context_tokens} tokens x {d.concurrency}" \
        in vram_check.reason
    # The batch sweep stops where memory does, in both verbs.
    assert sp.max_batch == fit.max_concurrency_at_context
    assert sp.batch_sweep[-1].batch == fit.max_concurrency_at_context


def test_a_deployment_that_does_not_fit_gets_the_same_verdict_from_every_verb():
    d = Deployment("llama2-70b-bf16-one-h200", "llama-2-70b", "H200", 1, "draft_model", "vllm", draft="llama-2-7b",
                   context_tokens=512)
    fit = vram_fit(VramInput(verifier=d.verifier, gpu=d.gpu, gpus=1, engine="vllm", draft="llama-2-7b",
                             context_tokens=512))
    assert not fit.fits and not fit.verifier_alone_fits
    with pytest.raises(InputError) as err:
        _speedup(d)
    assert fit.verdict_line() in str(err.value) and "would fit: fp8 weights on the same 1x H200" in str(err.value)
    assert BY_CLI["speedup"].name == "speedup"  # the CLI verb is this function (exit 2 for InputError)
    rec = plan(PlannerInputs(verifier=d.verifier, gpu=d.gpu, gpus=1, workload="chat", context_tokens=512))
    flag = next(f for f in rec.flags if f.id == "verifier_does_not_fit")
    assert rec.strategy == "none" and flag.severity == "fail" and "fp8 weights on the same 1x H200" in flag.message
    assert next(c for c in rec.compatibility if c.name == "vram_fit").verdict == "fail"


def test_head_sharding_and_format_follow_the_verifier():
    # DeepSeek-V3's checkpoint is fp8; a 14B head given to `vram` is sharded over TP 8 in fp8, not bf16 whole.
    fit = vram_fit(VramInput(verifier="deepseek-v3", gpu="H200", gpus=8, head_params_b=14))
    assert fit.draft_weights_gib == pytest.approx(14e9 * 1 / 2**30 / 8, abs=0.01)
    bf16 = vram_fit(VramInput(verifier="deepseek-v3", gpu="H200", gpus=8, head_params_b=14, draft_quantization="bf16",
                              draft_tp=1))
    assert bf16.draft_weights_gib == pytest.approx(14e9 * 2 / 2**30, abs=0.01)


def test_mla_latent_cache_is_replicated_per_rank_unless_dp_attention():
    one = vram_fit(VramInput(verifier="deepseek-v3", gpu="H200", gpus=8, concurrency=64))
    dp = vram_fit(VramInput(verifier="deepseek-v3", gpu="H200", gpus=8, concurrency=64, dp_attention=True))
    assert one.kv_gib == pytest.approx(one.kv_verifier_gib_per_seq * 64, rel=1e-3)
    assert dp.kv_gib == pytest.approx(one.kv_gib / 8, rel=1e-2)


@pytest.mark.parametrize(("engine", "phrase"), [
    ("vllm", "vLLM gpu_memory_utilization 0.9"),
    ("sglang", "SGLang mem_fraction_static 0.85 (its default at TP=4"),
    ("trtllm", "TensorRT-LLM free_gpu_memory_fraction 0.9 of the memory left after weights"),
    ("transformers", "transformers: no memory reservation"),
])
def test_memory_reservation_is_the_engines_own(engine, phrase):
    fit = vram_fit(VramInput(verifier="llama-3.1-70b", gpu="H100", gpus=4, engine=engine))
    assert phrase in fit.reservation
    assert not any("gpu_memory_utilization" in a for a in fit.assumptions) or engine == "vllm"


def test_fp8_kv_cache_gives_the_same_memory_cap_in_speedup_and_vram():
    d = Deployment("70b-fp8-kv", "llama-3.1-70b", "H100", 2, "ngram", "vllm", concurrency=6, context_tokens=8192)
    sp = estimate_speedup(SpeedupInput(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, method=d.method, engine=d.engine,
                                       workload="chat", concurrency=d.concurrency, context_tokens=d.context_tokens,
                                       kv_cache_dtype="fp8"))
    fit = vram_fit(VramInput(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, engine=d.engine, kv_cache_dtype="fp8",
                             context_tokens=d.context_tokens, concurrency=d.concurrency))
    rec = plan(PlannerInputs(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, method=d.method, engine=d.engine,
                             workload="chat", concurrency=d.concurrency, context_tokens=d.context_tokens,
                             kv_cache_dtype="fp8"))
    assert sp.max_batch == fit.max_concurrency_at_context
    assert f"up to {fit.max_concurrency_at_context} sequences at 8192 tokens" in next(
        c.reason for c in rec.compatibility if c.name == "vram_fit")
    # fp8 KV holds twice the sequences of the default bf16 cache (7 vs 3 here): the dtype reached the check.
    bf16 = vram_fit(VramInput(verifier=d.verifier, gpu=d.gpu, gpus=d.gpus, engine=d.engine,
                              context_tokens=d.context_tokens, concurrency=1))
    assert fit.max_concurrency_at_context > bf16.max_concurrency_at_context

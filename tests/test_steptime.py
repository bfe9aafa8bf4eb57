"""Roofline step time: bytes, FLOPs, bounds, MoE expert reads, tensor parallel, draft heads."""

from __future__ import annotations

from itertools import pairwise

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.model.constants import DEFAULT_CONSTANTS, get_overhead
from specpick.tools.arch.params import count_params
from specpick.tools.model.cost_inputs import Hardware, Precision, Runtime, StepLoad
from specpick.tools.model.steptime import experts_touched, head_step_time, step_time

CAT = get_catalog()
VLLM = get_overhead("vllm")
BANDWIDTH_EFFICIENCY = DEFAULT_CONSTANTS.bandwidth_efficiency
ROUTING_REUSE = DEFAULT_CONSTANTS.routing_reuse


def _step(model: str, gpu: str = "H100", *, gpus: int = 1, batch: int = 1, tokens: int = 1, ctx: int = 512,
          harness: str = "vllm", bpp: float = 2.0):
    return step_time(CAT.model(model), Hardware(CAT.gpu(gpu), gpus), StepLoad(batch, tokens, ctx), Precision(bpp),
                     Runtime(get_overhead(harness)))


def test_dense_decode_is_memory_bound_and_reads_the_weights_once():
    s = _step("llama-3.1-8b")
    weights = count_params(CAT.model("llama-3.1-8b")).decode_read_b * 1e9 * 2
    assert s.bound == "memory"
    assert s.weight_bytes == pytest.approx(weights)
    gpu = CAT.gpu("H100")
    expected_ms = (s.weight_bytes + s.kv_bytes) / (gpu.bandwidth_gbps * 1e9 * BANDWIDTH_EFFICIENCY) * 1e3
    assert s.memory_ms == pytest.approx(expected_ms)
    assert s.total_ms > s.memory_ms  # launch gaps and per-forward cost come on top
    assert s.launch_overhead_ms == pytest.approx(VLLM.gpu_gap_per_layer_ms * 32)


def test_verifying_more_tokens_costs_little_until_compute_takes_over():
    one, five, many = _step("llama-3.1-8b"), _step("llama-3.1-8b", tokens=5), _step("llama-3.1-8b", tokens=512)
    assert five.total_ms / one.total_ms < 1.02  # memory-bound limit: r ~ 1
    assert five.weight_bytes == one.weight_bytes  # dense weights are read once per step
    assert many.bound == "compute" and many.total_ms > 2 * one.total_ms
    assert many.flops == pytest.approx(512 * one.flops, rel=0.01)


def test_kv_bytes_grow_with_batch_and_context():
    a, b, c = _step("llama-3.1-8b"), _step("llama-3.1-8b", batch=8), _step("llama-3.1-8b", ctx=4096)
    assert b.kv_bytes == pytest.approx(8 * a.kv_bytes)
    assert c.kv_bytes == pytest.approx(8 * a.kv_bytes)


@pytest.mark.parametrize("experts, k, tokens, expected", [
    (8, 2, 1, 2.0),  # one token reads its top-k
    (8, 2, 26, 8 * (1 - 0.75 ** 26)),  # an EAGLE-1 tree on Mixtral touches nearly all 8
    (128, 8, 4, 128 * (1 - (1 - 8 / 128) ** 4)),  # Qwen3-30B-A3B, 4 independent tokens: ~29 of 128
])
def test_expected_unique_experts(experts, k, tokens, expected):
    assert experts_touched(experts, k, tokens) == pytest.approx(expected)


@pytest.mark.parametrize("experts, k", [(8, 2), (128, 8), (256, 8)])  # Mixtral, Qwen3-30B-A3B, DeepSeek-V3
@pytest.mark.parametrize("tokens", [2, 5, 16, 64])
def test_one_sequence_touches_fewer_experts_than_as_many_independent_sequences(experts, k, tokens):
    one_seq = experts_touched(experts, k, tokens, tokens_per_seq=tokens, reuse=ROUTING_REUSE)
    independent = experts_touched(experts, k, tokens)
    assert k < one_seq < independent
    assert one_seq == pytest.approx(experts * (1 - (1 - k / experts) * (1 - (1 - ROUTING_REUSE) * k / experts)
                                               ** (tokens - 1)))


@pytest.mark.parametrize("experts, k", [(8, 2), (128, 8), (256, 8)])
@pytest.mark.parametrize("batch", [1, 4, 64])
def test_locality_changes_nothing_for_one_token_per_sequence(experts, k, batch):
    # plain decode (T = 1): identical to independent routing at any batch
    assert experts_touched(experts, k, batch, tokens_per_seq=1, reuse=ROUTING_REUSE) == pytest.approx(
        experts * (1 - (1 - k / experts) ** batch))


def test_experts_touched_is_monotone_and_bounded():
    e, k = 128, 8
    by_tokens = [experts_touched(e, k, t, tokens_per_seq=t, reuse=ROUTING_REUSE) for t in range(1, 65)]
    assert by_tokens[0] == pytest.approx(k) and all(a < b for a, b in pairwise(by_tokens))
    assert by_tokens[-1] < e
    by_reuse = [experts_touched(e, k, 5, tokens_per_seq=5, reuse=r) for r in (0.0, 0.1, 0.3, 0.6, 1.0)]
    assert all(a > b for a, b in pairwise(by_reuse))
    assert by_reuse[0] == pytest.approx(experts_touched(e, k, 5)) and by_reuse[-1] == pytest.approx(k)
    by_batch = [experts_touched(e, k, 5 * b, tokens_per_seq=5, reuse=ROUTING_REUSE) for b in (1, 2, 8, 64, 512)]
    assert all(a < b for a, b in pairwise(by_batch)) and by_batch[-1] == pytest.approx(e, rel=1e-3)


def test_locality_closed_form_matches_simulation_of_chains_and_trees():
    # each token after the first copies its parent's expert set with probability rho, else draws afresh
    import random

    rng, e, k, rho, trials = random.Random(7), 8, 2, 0.3, 20000
    for parents in ([None, 0, 1, 2, 3], [None, 0, 0, 1, 1, 2, 2]):  # a chain of 5, a binary tree of 7
        total = 0
        for _ in range(trials):
            sets: list[frozenset[int]] = []
            for p in parents:
                copy = p is not None and rng.random() < rho
                sets.append(sets[p] if copy else frozenset(rng.sample(range(e), k)))  # type: ignore[index]
            total += len(frozenset().union(*sets))
        want = experts_touched(e, k, len(parents), tokens_per_seq=len(parents), reuse=rho)
        assert total / trials == pytest.approx(want, rel=0.01)


def test_expert_reuse_must_be_a_probability():
    with pytest.raises(InputError):
        experts_touched(8, 2, 4, tokens_per_seq=4, reuse=1.5)


def test_moe_verification_reads_more_experts_but_large_batches_saturate():
    one = _step("qwen3-30b-a3b")
    four = _step("qwen3-30b-a3b", tokens=4)
    assert one.experts_touched_per_layer == pytest.approx(8.0)
    assert four.weight_bytes > 2 * one.weight_bytes  # verify reads ~3.4x the expert bytes at batch 1
    big, bigger = _step("qwen3-30b-a3b", batch=256), _step("qwen3-30b-a3b", batch=256, tokens=4)
    assert bigger.weight_bytes / big.weight_bytes < 1.01  # all 128 experts already read


def test_one_sequence_verifying_reads_less_than_independent_sequences_and_says_why():
    verify = _step("qwen3-30b-a3b", tokens=5)  # one sequence, N+1 = 5 tokens
    spread = _step("qwen3-30b-a3b", batch=5)  # five sequences, one token each
    assert verify.experts_touched_per_layer < spread.experts_touched_per_layer
    assert verify.weight_bytes < spread.weight_bytes
    assert spread.experts_touched_per_layer == pytest.approx(experts_touched(128, 8, 5))  # independent
    assert any("2401.04088" in a and str(ROUTING_REUSE) in a for a in verify.assumptions)
    assert _step("llama-3.1-8b", tokens=5).assumptions == []  # dense: no routing assumption
    # many sequences: locality inside each one hardly matters, every expert is read anyway
    many = _step("qwen3-30b-a3b", batch=256, tokens=5)
    assert many.experts_touched_per_layer == pytest.approx(128, rel=1e-3)


def test_tensor_parallel_splits_bytes_and_adds_all_reduces_pcie_slower_than_nvlink():
    one = _step("llama-3.1-70b", "H100", gpus=4)
    assert one.allreduce_ms > 0
    assert one.weight_bytes == pytest.approx(_step("llama-3.1-70b", "H100", gpus=2).weight_bytes / 2)
    nvlink = _step("llama-3.1-8b", "H100", gpus=2, batch=64)
    pcie = _step("llama-3.1-8b", "L40S", gpus=2, batch=64)  # L40S: no NVLink (link_gbps 0)
    assert pcie.allreduce_ms > nvlink.allreduce_ms


def test_eager_harness_is_host_bound_for_small_models_and_splits_layers():
    s = _step("llama-3.2-1b", harness="paper")
    assert s.bound == "host"
    assert s.host_ms == pytest.approx(get_overhead("paper").host_per_layer_ms * 16)
    split = _step("llama-3.1-70b", "A100-80GB", gpus=2, harness="paper")
    assert split.allreduce_ms == 0.0  # HF device_map='auto' runs layers one GPU after another


def test_eagle_head_bytes_match_published_head_sizes():
    v13 = CAT.model("vicuna-13b")
    s = head_step_time("eagle", v13, Hardware(CAT.gpu("A100-80GB"), 1), StepLoad(1, 1, 0), Precision(2.0), Runtime(VLLM))
    head_b = 0.37  # catalog heads.csv: yuhuili/EAGLE-Vicuna-13B-v1.3 (excludes the shared LM head)
    lm_head_b = v13.hidden_size * v13.vocab_size / 1e9
    assert s.weight_bytes / 2e9 == pytest.approx(head_b + lm_head_b, rel=0.05)
    l8 = CAT.model("llama-3.1-8b")
    e3 = head_step_time("eagle3", l8, Hardware(CAT.gpu("H100"), 1), StepLoad(1, 1, 0), Precision(2.0), Runtime(VLLM))
    assert e3.weight_bytes / 2e9 == pytest.approx(0.42, rel=0.12)  # heads.csv: ~0.42B incl. 32k draft head


def test_medusa_heads_and_mtp_module():
    v7 = CAT.model("vicuna-7b")
    s = head_step_time("medusa", v7, Hardware(CAT.gpu("A100-80GB"), 1), StepLoad(1, 1, 512), Precision(2.0),
                       Runtime(VLLM))
    h, v = v7.hidden_size, v7.vocab_size
    assert s.weight_bytes == pytest.approx(5 * (h * h + h * v) * 2)
    assert s.kv_bytes == 0
    ds = CAT.model("deepseek-v3")
    m = head_step_time("mtp", ds, Hardware(CAT.gpu("H200"), 8), StepLoad(1, 1, 512), Precision(1.0), Runtime(VLLM))
    assert m.experts_touched_per_layer == pytest.approx(8.0)


@pytest.mark.parametrize("kwargs", [
    {"batch": 0}, {"tokens_per_seq": 0}, {"gpus": 0}, {"context_tokens": -1}, {"weight_bytes_per_param": -2.0},
])
def test_bad_inputs_raise_input_error(kwargs):
    args = dict(gpus=1, batch=1, tokens_per_seq=1, context_tokens=512, weight_bytes_per_param=2.0)
    args.update(kwargs)
    with pytest.raises(InputError):
        step_time(CAT.model("llama-3.1-8b"), Hardware(CAT.gpu("H100"), args["gpus"]),
                  StepLoad(args["batch"], args["tokens_per_seq"], args["context_tokens"]),
                  Precision(args["weight_bytes_per_param"]), Runtime(VLLM))


def test_unknown_harness_is_an_input_error():
    with pytest.raises(InputError, match="unknown harness"):
        get_overhead("tgi")


@pytest.mark.parametrize("method", ["eagle3", "draft_model", "ngram"])
def test_memory_only_hardware_facts_leave_the_cycle_cost_alone(method):
    """The speed model and the memory check read one Hardware; DP attention and the reservation override are
    memory facts (how the KV is split, how much of each GPU the engine takes) and must not move a cycle's cost."""
    from specpick.tools.model.constants import get_overhead
    from specpick.tools.model.cost_inputs import DraftSetup, Runtime
    from specpick.tools.model.cyclecost import cycle_cost

    draft = DraftSetup(method=method, num_draft_tokens=4,
                       draft=CAT.model("llama-3.2-1b") if method == "draft_model" else None)
    plain, memory = (Hardware(CAT.gpu("H100"), 2), Hardware(CAT.gpu("H100"), 2, dp_attention=True,
                                                             reserve_fraction=0.8))
    costs = [cycle_cost(draft, CAT.model("llama-3.1-70b"), Precision(2.0), hw, Runtime(get_overhead("sglang")),
                        batch=16, context_tokens=4096) for hw in (plain, memory)]
    assert costs[0] == costs[1]

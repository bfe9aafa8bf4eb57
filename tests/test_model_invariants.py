"""Invariants of the speedup model, checked over generated inputs (hypothesis), not pinned outputs.

* tau is at least 1 and at most what the draft shape can verify (chain: N + 1; tree: depth + 1 and the budget);
* the speedup verb's best draft length equals the N it returns when N was not given;
* for a dense verifier at fixed acceptance, speedup never rises with concurrency.
"""

from __future__ import annotations

from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup
from specpick.tools.model.estimate import EstimateRequest, TreeShape, estimate_for_specs

CAT = get_catalog()
DENSE = ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen2.5-7B-Instruct"]
ALL = DENSE + ["deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-30B-A3B"]
ENGINES = ["vllm", "sglang", "trtllm"]
WORKLOADS = ["chat", "code", "math", "summarization", "rag"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _gpus(verifier: str) -> int:
    return {"meta-llama/Llama-3.1-70B-Instruct": 4, "deepseek-ai/DeepSeek-V3": 8}.get(verifier, 1)


@SETTINGS
@given(verifier=st.sampled_from(ALL), method=st.sampled_from(["eagle3", "eagle", "mtp", "ngram", "medusa"]),
       n=st.integers(1, 8), workload=st.sampled_from(WORKLOADS), engine=st.sampled_from(ENGINES),
       temperature=st.sampled_from([0.0, 0.7, 1.0]))
def test_tau_is_between_one_and_what_a_chain_can_verify(verifier, method, n, workload, engine, temperature):
    spec = CAT.model(verifier)
    if method == "mtp" and not spec.mtp_layers:
        method = "eagle3"
    r = estimate_for_specs(EstimateRequest(
        verifier=spec, gpu=CAT.gpu("H100-SXM"), gpus=_gpus(verifier), method=method, num_draft_tokens=n,
        workload=workload, temperature=temperature, harness=engine, engine=engine, sweep=False))
    assert 1.0 <= r.tau_low <= r.tau <= r.tau_high <= n + 1 + 1e-9
    assert r.low <= r.speedup <= r.high


@SETTINGS
@given(depth=st.integers(1, 9), top_k=st.integers(2, 8), budget=st.integers(2, 64),
       tau=st.floats(1.0, 9.5), method=st.sampled_from(["eagle3", "eagle2", "medusa"]))
def test_tree_tau_never_exceeds_depth_plus_one_or_the_verify_budget(depth, top_k, budget, tau, method):
    budget = min(budget, 1 + sum(top_k ** d for d in range(1, depth + 1)))
    tree = TreeShape(depth=depth, top_k=top_k, num_verify_tokens=max(budget, 2))
    spec = CAT.model("meta-llama/Llama-3.1-8B-Instruct")
    for acc in ({"tau": min(tau, depth + 1.0)}, {}):
        r = estimate_for_specs(EstimateRequest(verifier=spec, gpu=CAT.gpu("H100-SXM"), method=method,
                                               num_draft_tokens=depth, tree=tree, sweep=False, harness="sglang",
                                               **acc))
        assert 1.0 <= r.tau <= min(depth + 1, max(tree.num_verify_tokens, 2)) + 1e-9


@SETTINGS
@given(verifier=st.sampled_from(DENSE), method=st.sampled_from(["eagle3", "eagle", "draft_model", "ngram"]),
       workload=st.sampled_from(WORKLOADS), engine=st.sampled_from(ENGINES))
def test_best_n_is_the_returned_n_when_n_is_not_given(verifier, method, workload, engine):
    assume(CAT.support(engine, method).support != "no")  # TensorRT-LLM's EAGLE-1 path left with its TRT backend
    r = estimate_speedup(SpeedupInput(verifier=verifier, method=method, gpu="H100-SXM", gpus=_gpus(verifier),
                                      workload=workload, engine=engine))
    assert r.best_num_draft_tokens == r.num_draft_tokens


@SETTINGS
@given(verifier=st.sampled_from(DENSE), method=st.sampled_from(["eagle3", "eagle", "draft_model", "ngram"]),
       alpha=st.floats(0.3, 0.9), n=st.integers(1, 6), engine=st.sampled_from(ENGINES))
def test_dense_speedup_never_rises_with_concurrency_at_fixed_acceptance(verifier, method, alpha, n, engine):
    spec = CAT.model(verifier)
    draft = CAT.model("meta-llama/Llama-3.2-1B-Instruct") if method == "draft_model" else None
    if method == "draft_model" and spec.tokenizer_family != draft.tokenizer_family:
        draft = CAT.model("Qwen/Qwen2.5-0.5B-Instruct")
    r = estimate_for_specs(EstimateRequest(verifier=spec, gpu=CAT.gpu("H100-SXM"), gpus=_gpus(verifier),
                                           method=method, draft=draft, num_draft_tokens=n, alpha=alpha,
                                           harness=engine, engine=engine, context_tokens=1024))
    speeds = [p.speedup for p in r.batch_sweep]
    for a, b in zip(speeds, speeds[1:]):
        assert b <= a + 1e-9, [round(s, 3) for s in speeds]

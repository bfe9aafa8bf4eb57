"""llama.cpp's model-free drafters (ngram-simple, ngram-map-k/-k4v, ngram-mod, ngram-cache) draft only on a match.

What the source does (ggml-org/llama.cpp common/speculative.cpp @6c8a04576e2cfa04261019fe8cbdc90c5cfc90fb,
``common_speculative_gen_ngram_cache`` and the ngram-map / ngram-mod states): each step looks the last n tokens up
in the history (ngram-simple/-map: ``ngram_size_n = 12`` key, up to ``ngram_size_m = 48`` continuation tokens,
common/common.h at the same commit; ngram-mod: ``n_match = 24``, 48-64 tokens, common/common.h
@001d906a6d86e2490e394361e7cc6f478b100088) and returns an empty draft when nothing matches ("empty if draft is
found" in the function's own comment means: no draft without a match); the server then runs a plain decode step.
So a llama.cpp n-gram run is a mix of plain steps and drafting cycles, not a draft of N every step.

The model (the copy-heavy finding, tools/model/copy_heavy.py and docs/pending-data/COPY-HEAVY.md): a share s of
steps drafts, with the acceptance the n-gram prior gives per *drafting* step (vLLM's mean acceptance length counts
drafting steps only, vllm#24344); the others are plain steps (cost 1, one token). Per step: tau = 1 + s (tau_d - 1),
cost = (1 - s) + s x cost_d, and their ratio is the throughput. s is the only measured drafting share we hold:
vllm#24344's prompt lookup (min 2, max 5) on Llama-3.1-8B drafted on 36.2% of steps on InstructCoder and 54.7% on
Blazedit (engine rows VLLM-24344/1-2: num_drafts / steps from the printed counts). Blazedit's (whole-file edits)
is taken for the copy-heavy workloads, InstructCoder's for every other workload (an assumption: no llama.cpp source
states its share, and prose or reasoning matches less often than code edits, so this is an upper bound there). The
host lookup and the draft length's spread are not modelled: the row's N (3 where unstated) stands for the
matched continuation.
"""

from __future__ import annotations

from specpick.tools.vocab import COPY_HEAVY_WORKLOADS

# vllm#24344 (engine rows VLLM-24344/1-2, notes): drafted on 30249 of 83576 steps (InstructCoder) and 993 of 1814
# (Blazedit).
DRAFT_SHARE_INSTRUCTCODER = 30249 / 83576
DRAFT_SHARE_BLAZEDIT = 993 / 1814


def draft_share(workload: str) -> float:
    """The share of steps a llama.cpp n-gram drafter drafts on (module docstring)."""
    return DRAFT_SHARE_BLAZEDIT if workload in COPY_HEAVY_WORKLOADS else DRAFT_SHARE_INSTRUCTCODER


def per_step(tau_drafting: float, cost_drafting: float, share: float) -> tuple[float, float]:
    """(tau per step, cost per step) when only ``share`` of steps draft and the rest are plain steps."""
    return 1.0 + share * (tau_drafting - 1.0), (1.0 - share) + share * cost_drafting

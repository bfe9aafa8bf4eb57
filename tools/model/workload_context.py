"""Typical tokens already in the KV cache while decoding, per workload: one home for the assumption."""

from __future__ import annotations

# Assumption: prompt plus half the answer; MT-Bench-style chat is short, summarization/RAG carry long documents,
# agents long histories.
DEFAULT_CONTEXT_TOKENS: dict[str, int] = {
    "chat": 512, "code": 512, "math": 512, "translation": 256, "summarization": 1536, "rag": 2048, "qa": 512,
    "doc-qa": 2048, "structured": 1024, "creative": 768, "agentic": 4096,
    # Copy-heavy work carries the text it rewrites: Blazedit's 5k-character edits need a sequence over 3k tokens
    # (vllm-project/vllm#23605: "needs model which can support >3k seq len for the 5k char variant"), so prompt plus
    # half the answer is about 2k; a document edit is assumed the same size. Agent loops re-send their history every
    # turn: one reported real agent workload ran at 83-101K tokens (Neroued/ninfer#234); 16K is an assumption for a
    # short session.
    "code-edit": 2048, "doc-edit": 2048, "agent-loop": 16384,
}
UNKNOWN_WORKLOAD_CONTEXT_TOKENS = 1024  # assumption: a workload outside the table


def typical_context_tokens(workload: str) -> int:
    """The tokens assumed in the KV cache while decoding ``workload`` when the user gives no context length."""
    return DEFAULT_CONTEXT_TOKENS.get(workload, UNKNOWN_WORKLOAD_CONTEXT_TOKENS)


__all__ = ["DEFAULT_CONTEXT_TOKENS", "UNKNOWN_WORKLOAD_CONTEXT_TOKENS", "typical_context_tokens"]

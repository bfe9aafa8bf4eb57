"""recommend flags a published head that the deployment has outgrown: context past its trained length, a newer head."""

from __future__ import annotations

import pytest

from specpick.skill.planner.plan import plan
from specpick.skill.schema import PlannerInputs
from specpick.tools.catalog.tables import get_catalog

KIMI = "moonshotai/Kimi-K2-Thinking"


def _trained_tokens(verifier: str) -> int:
    head = next(h for h in get_catalog().heads if h.verifier_repo_id == verifier and h.trained_context_tokens)
    return int(head.trained_context_tokens)


def _flags(**kw: object) -> dict[str, str]:
    rec = plan(PlannerInputs(**kw))
    return {f.id: f.message for f in rec.flags}


def test_context_past_the_heads_trained_length_is_flagged_with_effect_and_action() -> None:
    trained = _trained_tokens(KIMI)  # heads.csv: the head card's training length
    flags = _flags(verifier=KIMI, workload="chat", gpu="H200", gpus=8, method="eagle3", context_tokens=4 * trained)
    msg = flags["head_context_exceeded"]
    assert f"trained at {trained}" in msg and "Expected effect" in msg and "Action" in msg and "F17" in msg


def test_context_within_the_trained_length_is_not_flagged() -> None:
    trained = _trained_tokens(KIMI)
    flags = _flags(verifier=KIMI, workload="chat", gpu="H200", gpus=8, method="eagle3", context_tokens=trained // 2)
    assert "head_context_exceeded" not in flags


@pytest.mark.parametrize("context", [32768])
def test_unknown_trained_length_says_what_it_assumed(context: int) -> None:
    flags = _flags(verifier="meta-llama/Llama-3.1-8B-Instruct", workload="rag", method="eagle3",
                   context_tokens=context)
    assert "trained length unknown (8K assumed)" in flags["head_context_exceeded"]

"""Every draft a listing shows is accepted by the verbs that take one (issue 38: `heads` listed
alamios/DeepSeek-R1-DRAFT-Qwen2.5-0.5B for DeepSeek-R1-Distill-Qwen-32B and `speedup --draft` refused it, exit 3).

The listing is heads.csv's draft_model rows (what `specpick heads` prints) plus drafts.csv's pairings; the answer
side is the one resolver every verb uses (`tools/deploy/drafts.known_drafts` behind `speedup --draft`,
`recommend --draft-model`, `vram --draft`). A row the model cannot size must be fixed in the data, not skipped here.
"""

from __future__ import annotations

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.deploy.drafts import known_drafts
from specpick.skill.surfaces.cli import main


def _listed_drafts() -> list[tuple[str, str]]:
    cat = get_catalog()
    return sorted({(h.head_repo_id, h.verifier_repo_id) for h in cat.heads
                   if h.method == "draft_model" and h.publisher != "test" and cat.find_model(h.verifier_repo_id)
                   and h.head_repo_id != h.verifier_repo_id})


def test_the_listing_has_drafts_to_check() -> None:
    assert len(_listed_drafts()) >= 10


@pytest.mark.parametrize(("draft", "verifier"), _listed_drafts())
def test_every_listed_draft_is_one_the_resolver_knows(draft: str, verifier: str) -> None:
    known = {d.repo_id for d in known_drafts(get_catalog().model(verifier))}
    assert draft in known, f"{draft} is listed for {verifier} but no verb can size it (heads.csv head_params_b)"


def test_the_issue_case_is_answered_by_speedup(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["speedup", "--verifier", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "--method", "draft_model",
                 "--draft", "alamios/DeepSeek-R1-DRAFT-Qwen2.5-0.5B", "--workload", "chat"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "alamios/DeepSeek-R1-DRAFT-Qwen2.5-0.5B" in captured.out

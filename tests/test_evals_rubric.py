"""Model-graded rubric: optional, 'na' without a client, and never a pass when the grader model misbehaves."""

from __future__ import annotations

import json
from types import SimpleNamespace

from specpick.evals.evaluators.rubric import grade_rubric, parse_verdicts
from tests.test_evals_graders import make_case

CASE = make_case({"strategies": ["draft_model"], "rubric": ["draft samples at the verifier's temperature"]})


class _Client:
    def __init__(self, text=None, exc=None):
        self.text, self.exc, self.calls = text, exc, []
        self.messages = self

    def create(self, **kw):
        self.calls.append(kw)
        if self.exc:
            raise self.exc
        return SimpleNamespace(content=[SimpleNamespace(text=self.text)])


def _reply(met: bool) -> str:
    return "Verdict:\n" + json.dumps({"points": [{"point": "temperature", "met": met, "evidence": "..."}]})


def test_rubric_needs_points_markdown_and_a_client():
    assert grade_rubric(make_case({"strategies": ["none"]}), "md", client=_Client()).status == "na"
    assert grade_rubric(CASE, None, client=_Client()).status == "na"
    assert grade_rubric(CASE, "md", client=None).status == "na"


def test_rubric_pass_fail_and_grader_problems():
    client = _Client(_reply(True))
    assert grade_rubric(CASE, "## answer", client=client, model="m").status == "pass"
    assert "<answer>\n## answer\n</answer>" in client.calls[0]["messages"][0]["content"]
    assert grade_rubric(CASE, "## answer", client=_Client(_reply(False)), model="m").status == "fail"
    assert grade_rubric(CASE, "## answer", client=_Client("no json here"), model="m").status == "na"
    assert grade_rubric(CASE, "## answer", client=_Client(exc=RuntimeError("down")), model="m").status == "na"


def test_parse_verdicts():
    assert parse_verdicts('x {"points": [{"point": "a", "met": true}]} y') == [{"point": "a", "met": True}]
    assert parse_verdicts('{"points": "nope"}') is None
    assert parse_verdicts("{broken") is None

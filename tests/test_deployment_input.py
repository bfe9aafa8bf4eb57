"""One deployment input (issue 33): shared option declarations, old spellings with a notice, `speedup`'s evidence,
and properties of the planner and the speed model over generated deployments."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from specpick.skill.surfaces.cli import main
from specpick.skill.surfaces.registry import BY_CLI
from specpick.tools.deployment_input import DEPLOYMENT_OPTIONS, DEPRECATED_FLAGS
from specpick.tools.methods import method_record

# The verbs whose deployment fields come from tools/deployment_input.py.
SHARED_VERBS = ("recommend", "speedup", "vram")


def _declared(name: str) -> list[tuple[object, object]]:
    out = []
    for alias in DEPLOYMENT_OPTIONS[name]:
        f = type("Ref", (BaseModel,), {"__annotations__": {"x": alias}}).model_fields["x"]
        out.append((f.description, f.default))
    return out


@pytest.mark.parametrize("verb", SHARED_VERBS)
def test_a_verb_declares_each_shared_option_the_one_way(verb: str):
    model = BY_CLI[verb].load_input_model()
    for name, field in model.model_fields.items():
        if name in DEPLOYMENT_OPTIONS:
            assert (field.description, field.default) in _declared(name), f"{verb} --{name} declared its own way"


def test_every_shared_verb_spells_concurrency_and_context_alike():
    for verb in SHARED_VERBS:
        fields = BY_CLI[verb].load_input_model().model_fields
        assert "concurrency" in fields and "context_tokens" in fields and "batch" not in fields, verb
        assert fields["gpu"].default == "H100-SXM", verb


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(("old", "new"), sorted(DEPRECATED_FLAGS.items()))
def test_an_old_spelling_answers_like_the_new_one_with_a_one_line_notice(capsys, old: str, new: str):
    base = ("speedup", "--verifier", "llama-3.1-8b", "--method", "eagle3", "--workload", "chat", "--json")
    value = "8" if new == "--concurrency" else "6000"
    code_old, out_old, err_old = _run(capsys, *base, old, value)
    code_new, out_new, err_new = _run(capsys, *base, new, value)
    assert code_old == code_new == 0
    assert json.loads(out_old) == json.loads(out_new)
    notice = [line for line in err_old.splitlines() if "deprecated" in line]
    assert notice == [f"specpick: {old} is deprecated; use {new} (the same option, one spelling for every verb)"]
    assert "deprecated" not in err_new


def test_a_json_caller_of_speedup_may_still_send_batch():
    tool = BY_CLI["speedup"]
    args = {"verifier": "llama-3.1-8b", "method": "eagle3", "workload": "chat"}
    assert tool.validate({**args, "batch": 8}, caller="tool").concurrency == 8


def test_speedup_carries_a_tau_measured_at_another_n(capsys):
    base = ("speedup", "--verifier", "llama-3.1-8b", "--method", "eagle3", "--workload", "chat", "--tau", "3.2",
            "--num-draft-tokens", "5", "--json")
    _, same_n, _ = _run(capsys, *base)
    code, at_3, _ = _run(capsys, *base, "--measured-n", "3")
    assert code == 0
    # 3.2 tokens per cycle at N=3 is a high acceptance: at N=5 the same drafter yields more than 3.2 per cycle.
    assert json.loads(same_n)["tau"] == pytest.approx(3.2)
    assert json.loads(at_3)["tau"] > 3.5
    code, recal, _ = _run(capsys, *base, "--measured-n", "3", "--measured-speedup", "2.0")
    assert code == 0
    r = json.loads(recal)
    assert any("recalibrated to your measured speedup 2.00x at N=3" in a for a in r["assumptions"])
    assert r["speedup"] < json.loads(at_3)["speedup"]


def test_speedup_refuses_evidence_of_another_drafter(capsys):
    code, _, err = _run(capsys, "speedup", "--verifier", "llama-3.1-8b", "--method", "eagle3", "--workload", "chat",
                        "--tau", "3", "--measured-method", "ngram")
    assert code == 2 and "another drafter" in err and "Traceback" not in err


# --- properties over generated deployments ---------------------------------------------------------------------

def _speedup(**kw):
    from specpick.tools.commands.speedup import SpeedupInput, estimate_speedup

    return estimate_speedup(SpeedupInput(**kw))


SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VERIFIERS = st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "qwen3-8b"])
WORKLOADS = st.sampled_from(["chat", "code", "summarization", "math"])
METHODS = st.sampled_from(["eagle3", "ngram", "draft_model", "suffix"])


@SETTINGS
@given(verifier=VERIFIERS, workload=WORKLOADS, method=METHODS)
def test_speedup_does_not_rise_with_concurrency_past_the_knee(verifier, workload, method):
    r = _speedup(verifier=verifier, workload=workload, method=method, gpus=4 if verifier.endswith("70b") else 1)
    pts = [p.speedup for p in r.batch_sweep]
    knee = max(range(len(pts)), key=pts.__getitem__)
    after = pts[knee:]
    assert all(b <= a + 1e-9 for a, b in zip(after, after[1:])), pts


@SETTINGS
@given(verifier=VERIFIERS, workload=WORKLOADS, lo=st.floats(1.3, 2.5), step=st.floats(0.1, 1.2))
def test_speedup_does_not_fall_with_measured_acceptance(verifier, workload, lo, step):
    kw = dict(verifier=verifier, workload=workload, method="eagle3", num_draft_tokens=4,
              gpus=4 if verifier.endswith("70b") else 1)
    assert _speedup(**kw, tau=lo + step).speedup >= _speedup(**kw, tau=lo).speedup - 1e-9


@SETTINGS
@given(verifier=VERIFIERS, workload=WORKLOADS, concurrency=st.sampled_from([1, 4, 16, 64]),
       temperature=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_answer_keeps_n_in_the_methods_bounds_and_is_the_same_for_an_alias(verifier, workload, concurrency,
                                                                               temperature):
    from specpick.skill.planner.plan import plan
    from specpick.skill.schema import PlannerInputs

    kw = dict(verifier=verifier, workload=workload, concurrency=concurrency, temperature=temperature,
              gpus=4 if verifier.endswith("70b") else 1)
    rec = plan(PlannerInputs(**kw))
    if rec.num_draft_tokens is not None and rec.strategy != "none":
        top = method_record(rec.strategy).max_sweep_draft_len
        assert rec.num_draft_tokens >= 1 and (top is None or rec.num_draft_tokens <= max(top, 16))
    # The CLI's old spelling reaches the same field: the same answer.
    via_alias = BY_CLI["recommend"].validate({**kw})
    assert plan(via_alias).model_dump() == rec.model_dump()

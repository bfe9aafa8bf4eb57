"""Prometheus parsing and the ENGINES.md definitions of alpha, tau and per-position rates.

The live-engine checks (counters that move on a real vLLM server) are in
test_measure_endpoint.py; these pin the arithmetic and the parser's edges.
"""

from __future__ import annotations

import pytest

from specpick.tools.errors import RemoteDataError
from specpick.tools.measure.metrics import parse_prometheus, spec_delta, spec_snapshot

# The shape vLLM 0.32 exposes (names, labels, *_created gauges), with counts chosen for easy arithmetic.
VLLM_PAGE = """# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="smollm2"}} {drafts}
vllm:spec_decode_num_drafts_created{{engine="0",model_name="smollm2"}} 1.7959657911302366e+09
vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="smollm2"}} {tokens}
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="smollm2"}} {accepted}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="smollm2",position="0"}} {p0}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="smollm2",position="1"}} {p1}
vllm:spec_decode_num_accepted_tokens_per_pos_created{{engine="0",model_name="smollm2",position="0"}} 1.79e+09
vllm:num_requests_running{{engine="0",model_name="smollm2"}} 0.0
vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="smollm2"}} 3.0
"""


def page(drafts: float, tokens: float, accepted: float, p0: float, p1: float) -> str:
    return VLLM_PAGE.format(drafts=drafts, tokens=tokens, accepted=accepted, p0=p0, p1=p1)


def test_vllm_delta_matches_engines_md_definitions() -> None:
    before = spec_snapshot(parse_prometheus(page(10, 20, 5, 4, 1)))
    after = spec_snapshot(parse_prometheus(page(30, 60, 35, 18, 12)))
    assert before is not None and after is not None
    acc = spec_delta(before, after)
    # d(drafts)=20, d(draft tokens)=40, d(accepted)=30, d(per pos)=[14, 11]
    assert acc.alpha == pytest.approx(30 / 40)
    assert acc.tau == pytest.approx(1 + 30 / 20)
    assert acc.per_position == pytest.approx([14 / 20, 11 / 20])
    assert (acc.num_drafts, acc.num_draft_tokens, acc.num_accepted_tokens) == (20, 40, 30)


def test_no_drafts_gives_undefined_alpha_with_a_note() -> None:
    snap = spec_snapshot(parse_prometheus(page(3, 6, 2, 2, 0)))
    assert snap is not None
    acc = spec_delta(snap, snap)
    assert acc.alpha is None and acc.tau is None
    assert "no drafts" in acc.note


def test_counters_going_backwards_is_a_restart() -> None:
    a = spec_snapshot(parse_prometheus(page(30, 60, 35, 18, 12)))
    b = spec_snapshot(parse_prometheus(page(1, 2, 1, 1, 0)))
    assert a is not None and b is not None
    with pytest.raises(RemoteDataError, match="restarted"):
        spec_delta(a, b)


def test_counters_are_summed_over_engines_and_filtered_by_model() -> None:
    text = (
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="a"} 2\n'
        'vllm:spec_decode_num_drafts_total{engine="1",model_name="a"} 3\n'
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="b"} 100\n'
    )
    snap = spec_snapshot(parse_prometheus(text), model="a")
    assert snap is not None and snap.num_drafts == 5


def test_sglang_gauges() -> None:
    text = (
        "# TYPE sglang:spec_accept_length gauge\n"
        'sglang:spec_accept_length{model_name="qwen",tp_rank="0"} 3.2\n'
        'sglang:spec_accept_rate{model_name="qwen",tp_rank="0"} 0.55\n'
    )
    snap = spec_snapshot(parse_prometheus(text))
    assert snap is not None and snap.engine == "sglang"
    acc = spec_delta(snap, snap)
    assert (acc.alpha, acc.tau, acc.source) == (0.55, 3.2, "sglang-gauges")


def test_page_without_spec_metrics() -> None:
    assert spec_snapshot(parse_prometheus('vllm:num_requests_running{engine="0"} 0\n')) is None


def test_labels_with_escapes_and_special_values() -> None:
    samples = parse_prometheus('m{path="a\\"b\\\\c",x="1"} NaN 1700000000\nn +Inf\n')
    assert samples[0].labels == {"path": 'a"b\\c', "x": "1"}
    assert samples[1].value == float("inf")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<html>not metrics</html>\n", "line 1 is not Prometheus text format"),
        ('ok 1\nm{a="1" 2\n', "line 2"),
        ("m{a=1} 2\n", "malformed labels"),
        ("m abc\n", "non-numeric value"),
    ],
)
def test_malformed_pages(text: str, fragment: str) -> None:
    with pytest.raises(RemoteDataError, match=fragment):
        parse_prometheus(text)

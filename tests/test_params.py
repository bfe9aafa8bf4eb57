"""Parameter counts from architecture match the catalog's published totals."""

from __future__ import annotations

import pytest

from specpick.tools.catalog.tables import get_catalog
from specpick.tools.arch.params import count_params

MODELS = get_catalog().models


@pytest.mark.parametrize("model", MODELS, ids=[m.repo_id for m in MODELS])
def test_total_within_two_percent_of_published(model):
    p = count_params(model)
    assert model.params_total_b is not None
    assert abs(p.error_vs_published_pct) <= 2.0, f"{model.repo_id}: {p.total_b:.3f}B vs {model.params_total_b}B"


@pytest.mark.parametrize(
    ("name", "active_b", "tolerance_pct"),
    [("qwen3-30b-a3b", 3.3, 3), ("qwen3-235b-a22b", 22.2, 2), ("mixtral-8x7b", 12.9, 2), ("deepseek-v3", 37.0, 2)],
)
def test_moe_active_parameters(name, active_b, tolerance_pct):
    p = count_params(get_catalog().model(name))
    assert p.active_b < p.total_b
    assert abs(p.active_b - active_b) / active_b * 100 <= tolerance_pct


def test_gpt_oss_active_excludes_the_input_embedding():
    # OpenAI's 3.6B / 5.1B active counts leave out the embedding lookup (one row read per token).
    for name, published in (("gpt-oss-20b", 3.6), ("gpt-oss-120b", 5.1)):
        p = count_params(get_catalog().model(name))
        assert abs(p.decode_read_b - published) / published < 0.02


def test_tied_embeddings_are_counted_once():
    small = count_params(get_catalog().model("llama-3.2-1b"))
    assert small.lm_head_b == 0
    big = count_params(get_catalog().model("llama-3.1-8b"))
    assert big.lm_head_b == pytest.approx(big.embedding_b)


def test_mla_and_mtp_layers():
    p = count_params(get_catalog().model("deepseek-v3"))
    # DeepSeek-V3 report: 671B main model + ~14B MTP module (11.5B unique + shared embedding/head).
    assert 10.5 < p.mtp_b < 12.5
    assert p.attention_b == pytest.approx(11.4, rel=0.02)

"""VRAM fit: known deployments, draft memory counted, bad input."""

from __future__ import annotations

import pytest

from specpick.skill.surfaces.registry import BY_CLI
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.errors import InputError
from specpick.tools.arch.kv import kv_bytes_per_sequence
from specpick.tools.checks.vram import DraftWeights, fit_specs
from specpick.tools.deployment import Hardware
from specpick.tools.commands.vram import VramInput, vram_fit


def fit(**kw):
    return vram_fit(VramInput(**kw))


def test_llama_70b_bf16_does_not_fit_one_h100():
    r = fit(verifier="llama-3.1-70b", gpu="H100")
    assert not r.fits and not r.verifier_alone_fits
    assert r.verifier_weights_gib == pytest.approx(131.4, abs=0.2)  # 70.55e9 * 2 bytes


def test_llama_70b_bf16_fits_two_h100_with_stated_headroom():
    r = fit(verifier="llama-3.1-70b", gpu="H100", gpus=2, context_tokens=4096, concurrency=1)
    assert r.fits
    # 72 GiB usable - 65.7 GiB weights - 1.5 GiB runtime - 0.6 GiB KV
    assert r.headroom_gib == pytest.approx(4.2, abs=0.2)
    assert r.max_concurrency_at_context == 7


def test_kv_cache_gqa_and_mla():
    cat = get_catalog()
    # Llama-3.1-70B: 80 layers x 2 x 8 KV heads x 128 x 2 bytes = 320 KiB per token.
    assert kv_bytes_per_sequence(cat.model("llama-3.1-70b"), 1) == 80 * 2 * 8 * 128 * 2
    # DeepSeek-V3 MLA: 61 layers x (512 + 64) x 2 bytes per token.
    assert kv_bytes_per_sequence(cat.model("deepseek-v3"), 1) == 61 * 576 * 2


def test_sliding_window_layers_cap_their_cache():
    g = get_catalog().model("gemma-2-9b")
    full = g.model_copy(update={"sliding_window": None, "sliding_layer_fraction": 0.0})
    assert kv_bytes_per_sequence(g, 8192) < kv_bytes_per_sequence(full, 8192)
    assert kv_bytes_per_sequence(g, 4096) == kv_bytes_per_sequence(full, 4096)


def test_draft_weights_and_kv_are_counted():
    alone = fit(verifier="llama-3.1-8b", gpu="L4", context_tokens=8192, concurrency=4)
    with_draft = fit(verifier="llama-3.1-8b", gpu="L4", context_tokens=8192, concurrency=4, draft="llama-3.2-3b")
    assert with_draft.draft_weights_gib > 5.9
    assert with_draft.kv_gib > alone.kv_gib
    assert alone.fits and not with_draft.fits


def test_fp8_halves_the_weights():
    bf16 = fit(verifier="qwen2.5-72b", gpu="H100", gpus=2)
    fp8 = fit(verifier="qwen2.5-72b", gpu="H100", gpus=2, quantization="fp8")
    assert fp8.verifier_weights_gib == pytest.approx(bf16.verifier_weights_gib / 2, rel=1e-3)


def test_draft_tp_must_be_one_or_target_tp():
    cat = get_catalog()
    with pytest.raises(InputError, match="1 or the target"):
        fit_specs(cat.model("llama-3.1-70b"), Hardware(cat.gpu("H100"), 4),
                  draft=DraftWeights(spec=cat.model("llama-3.2-1b"), tp=2))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"verifier": "llama-3.1-8b", "gpu": "H100", "concurrency": 0}, "--concurrency: Input should be greater than or equal to 1"),
        ({"verifier": "llama-3.1-8b", "gpu": "H100", "gpus": -2}, "--gpus: Input should be greater than or equal to 1"),
        ({"verifier": "llama-3.1-8b", "gpu": "H100", "draft_params_b": -1}, "--draft-params-b: Input should be greater than 0"),
        ({"verifier": "llama-3.1-8b", "gpu": "H100", "kv_cache_dtype": "int3"}, "unknown KV cache dtype"),
        ({"verifier": "llama-3.1-8b", "gpu": "H100", "color": "red"}, "--color"),
    ],
)
def test_bad_input_is_one_line_input_error(args, message):
    with pytest.raises(InputError) as err:
        BY_CLI["vram"].validate(args)
    assert message in err.value.message
    assert "\n" not in err.value.message

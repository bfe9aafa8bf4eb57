"""``specpick measure --local MODEL``: transformers assisted generation in-process, with and without speculation.

The drafter is prompt lookup (``prompt_lookup_num_tokens`` /
``max_matching_ngram_size``) or, with ``--draft-model``, a separate assistant
model (``assistant_model`` with a constant ``num_assistant_tokens``). Each
prompt runs plain and speculative generation back to back, so both see the
same machine state. A streamer timestamps the first and last new tokens (TTFT,
TPOT). Acceptance is counted by wrapping the candidate generator that
``generate`` builds for this one call: ``get_candidates`` tells how many
tokens were drafted, ``update_candidate_strategy`` how many were accepted.

torch and transformers are imported inside these functions only (the
``measure`` extra); ``trust_remote_code`` is never set.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from specpick.tools.errors import HubAccessError, InputError, NotFoundError
from specpick.tools.measure.metrics import Acceptance, acceptance_from_counts
from specpick.tools.measure.ngram_sim import NgramParams, SimCounts, simulate
from specpick.tools.measure.prompts import PromptItem
from specpick.tools.measure.report import (
    ConcurrencyResult,
    LocalDetails,
    MeasureReport,
    NgramEstimate,
    RunFigures,
    Timing,
    run_figures,
)

Dtype = Literal["auto", "float32", "bfloat16", "float16"]
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_EXTRA_HINT = "install the measure extra: pip install torch==2.13.0 && pip install 'spec-decode-picker[measure]'"


class GenerationRecord(Timing):
    """One generate() call: timings, token ids and, for speculative runs, per-step draft counts."""

    latency_ms: float
    prompt_ids: list[int]
    output_ids: list[int]
    drafted: list[int] = []  # tokens drafted per verification step (0 = no candidates that step)
    accepted: list[int] = []  # tokens of that draft the verifier accepted


def import_heavy() -> tuple[Any, Any]:
    """Import torch and transformers, or say how to install them."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise InputError(f"--local needs torch and transformers ({exc.name} is missing): {_EXTRA_HINT}") from exc
    return torch, transformers


def load_model(ref: str, dtype: Dtype) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer from a folder, a ``.gguf`` file or a Hub repo id.

    A ``.gguf`` file is dequantized by transformers (needs the ``gguf`` package).
    ``trust_remote_code`` stays off: a model that needs its own code is refused.

    Raises:
        NotFoundError: no such path and not a repo id, or transformers cannot load it.
        HubAccessError: a gated repo id without access.
        InputError: a file that is not ``.gguf``, or the ``measure`` extra is missing.
    """
    torch, transformers = import_heavy()
    from huggingface_hub.errors import GatedRepoError

    path = Path(ref).expanduser()
    kwargs: dict[str, Any] = {"dtype": "auto" if dtype == "auto" else getattr(torch, dtype)}
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise InputError(f"--local {ref}: a file must be a .gguf model; otherwise pass the model folder")
        source, kwargs["gguf_file"] = str(path.parent), path.name
    elif path.is_dir():
        source = str(path)
    elif _REPO_ID.match(ref) and not ref.startswith((".", "/")):
        source = ref  # a Hub repo id, served from the local Hugging Face cache when offline
    else:
        raise NotFoundError(f"--local {ref}: no such file or folder, and not a Hub repo id (owner/name)")
    # trust_remote_code=False is explicit rather than the library default: a default can change between versions,
    # and a repo's own code must never run here (a model that needs it is refused with the NotFoundError below).
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            source, trust_remote_code=False, **{k: v for k, v in kwargs.items() if k == "gguf_file"}
        )
        model = transformers.AutoModelForCausalLM.from_pretrained(source, trust_remote_code=False, **kwargs)
    except ImportError as exc:  # e.g. gguf or accelerate missing for a .gguf file
        raise InputError(f"--local {ref}: {exc.name or exc} is missing: {_EXTRA_HINT}") from exc
    except GatedRepoError as exc:  # before OSError: it is one
        raise HubAccessError(f"--local {ref} is gated: accept its licence on the Hub and set HF_TOKEN") from exc
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotFoundError(f"--local {ref}: transformers could not load it ({first[:200]})") from exc
    model.eval()
    return model, tokenizer


def encode(tokenizer: Any, item: PromptItem, use_chat: bool) -> tuple[list[int], str]:
    """Token ids and the exact text the model sees (chat template applied when asked and available)."""
    if use_chat and getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(item.as_messages(), add_generation_prompt=True, tokenize=False)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    else:
        text = item.as_text()
        ids = tokenizer(text)["input_ids"]
    return list(ids), text


class _TimingStreamer:
    """Minimal streamer: generate() calls put() with the prompt first, then with each batch of new tokens."""

    def __init__(self) -> None:
        self.calls = 0
        self.first: float | None = None
        self.last: float | None = None

    def put(self, value: Any) -> None:
        self.calls += 1
        if self.calls > 1:  # the first call carries the prompt
            now = time.perf_counter()
            self.first = now if self.first is None else self.first
            self.last = now

    def end(self) -> None:
        pass


def _instrument(model: Any, drafted: list[int], accepted: list[int]) -> Callable[[], None]:
    """Record per-step draft / accept counts of the next generate() call; returns an undo function."""
    original = model._get_candidate_generator

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        gen = original(*args, **kwargs)
        get_candidates, update = gen.get_candidates, gen.update_candidate_strategy
        last = {"n": 0}

        def counted_get(input_ids: Any, *a: Any, **k: Any) -> Any:
            out = get_candidates(input_ids, *a, **k)
            last["n"] = int(out[0].shape[1] - input_ids.shape[1])
            return out

        def counted_update(input_ids: Any, scores: Any, num_matches: Any) -> Any:
            drafted.append(last["n"])
            accepted.append(int(num_matches))
            return update(input_ids, scores, num_matches)

        gen.get_candidates, gen.update_candidate_strategy = counted_get, counted_update
        return gen

    model._get_candidate_generator = wrapped
    return lambda: model.__dict__.pop("_get_candidate_generator", None)


def generate_once(
    model: Any, prompt_ids: list[int], max_tokens: int, temperature: float, spec_kwargs: dict[str, Any] | None
) -> GenerationRecord:
    """One timed generate() call; ``spec_kwargs`` None means plain decoding."""
    torch, _ = import_heavy()
    input_ids = torch.tensor([prompt_ids], dtype=torch.long)
    kwargs: dict[str, Any] = {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(input_ids),
        "max_new_tokens": max_tokens,
        "do_sample": temperature > 0,
    }
    if temperature > 0:
        kwargs["temperature"] = temperature
    drafted: list[int] = []
    accepted: list[int] = []
    hookable = spec_kwargs and hasattr(model, "_get_candidate_generator")
    undo = _instrument(model, drafted, accepted) if hookable else (lambda: None)
    streamer = _TimingStreamer()
    start = time.perf_counter()
    try:
        with torch.inference_mode():
            out = model.generate(**kwargs, **(spec_kwargs or {}), streamer=streamer)
    finally:
        undo()
    end = time.perf_counter()
    first = streamer.first if streamer.first is not None else end
    last = streamer.last if streamer.last is not None else first
    output_ids = [int(t) for t in out[0, len(prompt_ids) :].tolist()]
    return GenerationRecord(
        ttft_ms=(first - start) * 1e3,
        decode_ms=(last - first) * 1e3,
        tokens=len(output_ids),
        latency_ms=(end - start) * 1e3,
        prompt_ids=prompt_ids,
        output_ids=output_ids,
        drafted=drafted,
        accepted=accepted,
    )


def acceptance_from_records(records: list[GenerationRecord]) -> Acceptance:
    """Pool per-step counts with the vLLM definitions (a step without candidates is not a draft)."""
    drafts = draft_tokens = acc_total = 0
    per_pos: list[float] = []
    for rec in records:
        for n, a in zip(rec.drafted, rec.accepted):
            if n <= 0:
                continue
            drafts += 1
            draft_tokens += n
            acc_total += a
            per_pos += [0.0] * max(0, n - len(per_pos))
            for i in range(a):
                per_pos[i] += 1
    return acceptance_from_counts("transformers", drafts, draft_tokens, acc_total, per_pos)


def _spec_kwargs(params: NgramParams, draft: Any | None) -> tuple[dict[str, Any], str]:
    if draft is not None:
        # A constant schedule keeps N fixed, so the measured alpha belongs to the N being evaluated
        # (transformers' default schedule changes N during the run).
        return (
            {
                "assistant_model": draft,
                "num_assistant_tokens": params.num_draft_tokens,
                "num_assistant_tokens_schedule": "constant",
            },
            f"assistant model, N={params.num_draft_tokens} (constant schedule)",
        )
    return (
        {"prompt_lookup_num_tokens": params.num_draft_tokens, "max_matching_ngram_size": params.prompt_lookup_max},
        f"prompt lookup, N={params.num_draft_tokens}, max n-gram {params.prompt_lookup_max}",
    )


def run_local(
    inp: Any,
    report: MeasureReport,
    items: list[PromptItem],
    params: NgramParams,
    progress: Callable[[int, int, str], None] | None = None,
) -> None:
    """Fill ``report`` with a plain-vs-speculative run of ``inp.local`` on ``items`` (batch size 1)."""
    torch, _ = import_heavy()
    model, tokenizer = load_model(inp.local, inp.dtype)
    draft = load_model(inp.draft_model, inp.dtype)[0] if inp.draft_model else None
    spec_kwargs, drafter = _spec_kwargs(params, draft)
    encoded = [encode(tokenizer, item, inp.api == "chat") for item in items]
    if inp.concurrency != [1]:
        report.warnings.append("transformers assisted generation runs one sequence at a time: --concurrency ignored")
    for _ in range(inp.warmup):  # first calls allocate caches and pick kernels; keep that out of the timings
        generate_once(model, encoded[0][0], min(inp.max_tokens, 8), inp.temperature, None)
        generate_once(model, encoded[0][0], min(inp.max_tokens, 8), inp.temperature, spec_kwargs)
    base: list[GenerationRecord] = []
    spec: list[GenerationRecord] = []
    for i, (ids, _text) in enumerate(encoded, start=1):
        # Plain and speculative back to back, so both see the same machine state.
        base.append(generate_once(model, ids, inp.max_tokens, inp.temperature, None))
        spec.append(generate_once(model, ids, inp.max_tokens, inp.temperature, spec_kwargs))
        if progress:
            progress(i, len(encoded), "local: plain + speculative")
    for rec in base + spec:
        rec.text = tokenizer.decode(rec.output_ids, skip_special_tokens=True)

    def figures(label: Literal["speculative", "baseline"], recs: list[GenerationRecord]) -> RunFigures:
        # Sequential runs: the wall time is the sum of the calls.
        return run_figures(label, 1, sum(r.latency_ms for r in recs) / 1e3, recs)

    res = ConcurrencyResult(
        concurrency=1,
        speculative=figures("speculative", spec),
        baseline=figures("baseline", base),
        # The hook rests on a private transformers method; without it, timings stand and acceptance is unknown.
        acceptance=acceptance_from_records(spec) if hasattr(model, "_get_candidate_generator") else None,
    )
    if res.acceptance is None:
        report.warnings.append(
            f"transformers {_transformers_version()} has no _get_candidate_generator: acceptance was not counted"
        )
    res.compare_with_baseline(spec, base, greedy=inp.temperature == 0)
    if res.num_mismatched and str(model.dtype) != "torch.float32":
        report.warnings.append(
            f"greedy output differs with speculation in {res.num_mismatched} of {len(spec)} prompts: verifying "
            f"several tokens in one pass rounds differently in {str(model.dtype).replace('torch.', '')}; "
            "--dtype float32 checks exactness"
        )
    report.results.append(res)
    report.acceptance = res.acceptance
    report.engine, report.model = f"transformers {_transformers_version()}", inp.local
    report.local = LocalDetails(
        model=inp.local,
        drafter=drafter,
        dtype=str(model.dtype).replace("torch.", ""),
        torch_threads=torch.get_num_threads(),
    )
    if draft is None:
        # The simulation on the run's own token ids must reproduce the hook's counts; reporting both
        # lets a user see that --estimate-ngram is exact for greedy prompt lookup.
        counts = SimCounts()
        for rec in spec:
            counts.add(simulate(rec.prompt_ids, rec.output_ids, params, _eos_ids(model)))
        report.ngram = NgramEstimate(
            params=params,
            tokenizer="the verifier's own token ids",
            num_samples=len(spec),
            num_output_tokens=counts.num_output_tokens,
            acceptance=counts.acceptance(),
        )
    if inp.save_samples is not None:
        _save_samples(inp.save_samples, encoded, spec)
    report.assumptions += [
        "batch size 1, one prompt at a time; speedup = plain decode ms per token / speculative decode ms per token",
        "acceptance counted from transformers' candidate generator: a step without candidates is not a draft",
    ]


def _eos_ids(model: Any) -> list[int]:
    eos = getattr(model.generation_config, "eos_token_id", None)
    return [eos] if isinstance(eos, int) else list(eos or [])


def _transformers_version() -> str:
    import transformers

    return str(transformers.__version__)


def _save_samples(path: Path, encoded: list[tuple[list[int], str]], spec: list[GenerationRecord]) -> None:
    """Write {prompt, output} JSONL (prompt as the model saw it) for a later --estimate-ngram run."""
    import json

    try:
        with path.open("w", encoding="utf-8") as fh:
            for (_ids, text), rec in zip(encoded, spec, strict=True):
                fh.write(json.dumps({"prompt": text, "output": rec.text}, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise InputError(f"--save-samples {path} cannot be written: {exc.strerror}") from exc

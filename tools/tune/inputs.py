"""Options of ``specpick tune`` and the checks across them."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from specpick.tools.engines.lookup import engine, engines
from specpick.tools.errors import InputError, format_validation_error
from specpick.tools.measured_checks import MAX_MEASURED_CONCURRENCY
from specpick.tools.validation import MAX_DRAFT_TOKENS as MAX_DRAFT_LEN, EngineVersion
from specpick.tools.methods import method_record
from specpick.tools.vocab import Method

# The engines tune starts as servers (EngineSpec.launches).
LaunchedEngine = Literal[tuple(e.name for e in engines() if e.launches)]  # type: ignore[valid-type]
MAX_SETTINGS = 32  # draft lengths x concurrencies: each is a timed run on a live server


def _opt(description: str, metavar: str | None = None, **kw: object) -> object:
    extra = {"cli": {"metavar": metavar}} if metavar else None
    return Field(description=description, json_schema_extra=extra, **kw)  # type: ignore[call-overload]


class TuneInput(BaseModel):
    """Options of ``specpick tune``; field ``foo_bar`` is flag ``--foo-bar``."""

    model_config = ConfigDict(extra="forbid")

    method: Method = _opt("speculative method the servers run", default="ngram")
    engine: LaunchedEngine = _opt("serving engine", default="vllm")
    engine_version: EngineVersion | None = _opt(
        "engine release, for the emitted schedule (default: the newest tracked)", "V", default=None)
    draft_lengths: list[int] = _opt("draft lengths N to tune over", "N", default_factory=lambda: [2, 4, 6])
    concurrency: list[int] = _opt("requests in flight; each value is measured", "C", default_factory=lambda: [1, 4])
    prompts: Path = _opt("your prompts: .jsonl (optional 'class' per line) or text", "FILE")
    num_prompts: int | None = _opt("use only the first N prompts", "N", default=None, ge=1)
    max_tokens: int = _opt("output tokens per request", "N", default=128, ge=1, le=32768)
    temperature: float = _opt("sampling temperature (0 = greedy)", "T", default=0.0, ge=0.0, le=2.0)
    api: Literal["chat", "completions"] = _opt("chat (template applied) or raw completions", default="chat")
    # Servers the user runs ...
    endpoint: list[str] | None = _opt("servers you run, one per draft length: N=URL (e.g. 4=http://127.0.0.1:8004)",
                                      "N=URL", default=None)
    baseline_endpoint: str | None = _opt("the same model served without speculation (needed with --endpoint)",
                                         "URL", default=None)
    # ... or servers this command starts, one per setting.
    serve_model: str | None = _opt("start the engine on this model (folder, repo id or .gguf) once per setting",
                                   "MODEL", default=None)
    serve_executable: str | None = _opt("Python with the engine installed (vllm/sglang) or the llama-server binary "
                                        "(default: this Python; llama-server on PATH)", "PATH", default=None)
    serve_args: str = _opt("extra engine arguments, one shell-quoted string (write it with '=': "
                           "--serve-args='--max-model-len 2048 --enforce-eager')", "ARGS", default="")
    startup_timeout_s: float = _opt("seconds to wait for each server to become healthy", "S", default=600.0, gt=0,
                                    le=3600)
    draft: str | None = _opt("draft model or head repo for methods that load one", "REPO", default=None)
    prompt_lookup_min: int = _opt("n-gram: shortest match", "N", default=2, ge=1, le=64)
    prompt_lookup_max: int = _opt("n-gram: longest match", "N", default=4, ge=1, le=64)
    strategy: Literal["predict", "measure-all"] = _opt(
        "predict: measure the largest N, predict the smaller ones from its per-position acceptance, confirm the "
        "chosen N; measure-all: measure every N too (and still print the predictions beside them)",
        default="predict")
    max_batch_size: int = _opt("largest batch the server forms (end of the emitted schedule)", "B", default=256,
                               ge=1, le=65536)
    results: Path = _opt("results file (JSONL), appended after every run; a rerun resumes from it", "FILE",
                         default=Path("specpick-tune.jsonl"))
    fresh: bool = _opt("ignore results already in --results for these settings", default=False)
    plot_dir: Path | None = _opt("write PNG plots here (needs matplotlib: the measure extra)", "DIR", default=None)
    warmup: int = _opt("unmeasured requests sent first to each server", "N", default=1, ge=0, le=16)
    timeout_s: float = _opt("per-request read timeout, seconds", "S", default=300.0, gt=0, le=3600)

    @field_validator("results", "plot_dir", "prompts", mode="before")
    @classmethod
    def _not_empty(cls, v: object) -> object:
        # Path("") is Path("."): an empty --plot-dir wrote into the working folder, an empty --results at "."
        if isinstance(v, str) and not v.strip():
            raise ValueError("must not be empty: give a path")
        return v


def tune_input(**kwargs: object) -> TuneInput:
    """Build and check a TuneInput; every problem is a one-line InputError."""
    try:
        inp = TuneInput(**kwargs)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, audience="cli", subject="tune")) from exc
    check(inp)
    return inp


def endpoint_map(inp: TuneInput) -> dict[int, str]:
    """``--endpoint N=URL`` values as {N: URL}."""
    out: dict[int, str] = {}
    for item in inp.endpoint or []:
        n_text, sep, url = item.partition("=")
        if not sep or not n_text.strip().isdigit() or not url.strip():
            raise InputError(f"--endpoint {item!r}: write it as N=URL, e.g. 4=http://127.0.0.1:8004")
        n = int(n_text)
        if n in out:
            raise InputError(f"--endpoint gives two servers for N={n}")
        out[n] = url.strip()
    return out


def check(inp: TuneInput) -> None:
    """Contradictions and impossible settings, before any server starts."""
    if not inp.draft_lengths or any(not 1 <= n <= MAX_DRAFT_LEN for n in inp.draft_lengths):
        raise InputError(f"--draft-lengths must be between 1 and {MAX_DRAFT_LEN}, got {inp.draft_lengths}")
    if not inp.concurrency or any(not 1 <= c <= MAX_MEASURED_CONCURRENCY for c in inp.concurrency):
        raise InputError(f"--concurrency values must be between 1 and {MAX_MEASURED_CONCURRENCY}, got "
                         f"{inp.concurrency}")
    if len(set(inp.draft_lengths)) * len(set(inp.concurrency)) > MAX_SETTINGS:
        raise InputError(f"{len(set(inp.draft_lengths))} draft lengths x {len(set(inp.concurrency))} concurrencies "
                         f"is more than {MAX_SETTINGS} timed runs: tune over fewer values")
    if (inp.endpoint is None) == (inp.serve_model is None):
        raise InputError("give --endpoint N=URL (servers you run, with --baseline-endpoint) or --serve-model MODEL "
                         "(this command starts the engine for each setting), not both or neither")
    if inp.endpoint is not None:
        if not inp.baseline_endpoint:
            raise InputError("--endpoint needs --baseline-endpoint (the same model without speculation): the "
                             "speedup of every setting is measured against it")
        urls = endpoint_map(inp)
        shared = sorted({u for u in urls.values() if list(urls.values()).count(u) > 1})
        if shared:  # one server runs one N: the same URL under two Ns measured one setting twice (issue 39, 7)
            ns = sorted(n for n, u in urls.items() if u == shared[0])
            raise InputError(f"--endpoint gives {shared[0][:80]} for N={', '.join(map(str, ns))}: a server runs one "
                             "draft length; start one server per N")
        missing = set(inp.draft_lengths) - set(endpoint_map(inp))
        if missing:
            raise InputError(f"--endpoint has no server for N={', '.join(map(str, sorted(missing)))}; give N=URL for "
                             "every --draft-lengths value")
    elif inp.baseline_endpoint:
        raise InputError("--baseline-endpoint is for --endpoint runs; --serve-model starts its own baseline")
    record = method_record(inp.method)
    if record.separate_repo and not inp.draft:
        raise InputError(f"--method {inp.method} loads a {record.loads.replace('_', ' ')}: give it with --draft REPO")
    if not record.separate_repo and inp.draft:
        raise InputError(f"--draft is for methods that load a draft or a head, not {inp.method}")
    if inp.prompt_lookup_min > inp.prompt_lookup_max:
        raise InputError("--prompt-lookup-min must not exceed --prompt-lookup-max")
    serve_args(inp)


def predictable(method: str) -> bool:
    """Whether a smaller N's drafts are prefixes of a larger N's (chain drafters proposing token by token)."""
    record = method_record(method)
    return record.shape == "chain" and not record.parallel_draft and not record.measured_tau


def serve_args(inp: TuneInput) -> tuple[str, ...]:
    """``--serve-args`` split as a shell would (no shell runs it)."""
    try:
        return tuple(shlex.split(inp.serve_args))
    except ValueError as exc:
        raise InputError(f"--serve-args {inp.serve_args!r}: {exc} (quote it as a shell would)") from None


def default_executable(inp: TuneInput) -> str:
    return inp.serve_executable or engine(inp.engine).serve_binary or sys.executable

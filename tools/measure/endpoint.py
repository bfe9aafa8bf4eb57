"""Load generation against an OpenAI-compatible server (vLLM, SGLang, llama-server), with streaming timings.

Each request streams (``stream: true`` with ``stream_options.include_usage``)
so the client sees when the first token arrives (TTFT) and when the last one
does; the final usage chunk gives the completion token count, so time per
output token is ``(t_last - t_first) / (completion_tokens - 1)`` whatever the
engine packs into one chunk. vLLM adds per-request speculative figures to
that chunk when started with ``--per-request-spec-decode-metrics``; llama-server
puts a ``timings`` object there with ``draft_n`` / ``draft_n_accepted``; both are
kept when present.

Requests run closed-loop on ``concurrency`` threads (a thread pool rather than
asyncio so the function can be called from any context, an MCP server's event
loop included). Every request has connect/read deadlines.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from specpick.tools.errors import (
    InputError,
    NotFoundError,
    RemoteDataError,
    ServiceError,
    UnavailableError,
    redact,
)
from specpick.tools.measure.metrics import Sample, parse_prometheus
from specpick.tools.measure.prompts import PromptItem
from specpick.tools.measure.report import Timing

Api = Literal["chat", "completions"]
CONNECT_TIMEOUT_S = 5.0
PROBE_TIMEOUT_S = 15.0
MAX_ERROR_CHARS = 300


class RequestSpec(BaseModel):
    """vLLM per-request speculative figures (``metrics.speculative_decoding``)."""

    num_spec_steps: int = Field(ge=0)
    num_draft_tokens: int = Field(ge=0)
    num_accepted_draft_tokens: int = Field(ge=0)
    acceptance_histogram: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list, max_length=1025)


class LlamaTimings(BaseModel):
    """llama-server's per-response speculative counts: the ``timings`` object of its last stream chunk
    (tools/server/README.md @00dc805: "timings: Hash of timing information about the completion"; llama-server
    adds ``draft_n`` and ``draft_n_accepted`` when a draft ran)."""

    draft_n: int = Field(ge=0, le=10_000_000)
    draft_n_accepted: int = Field(ge=0, le=10_000_000)


class RequestRecord(Timing):
    """Timings of one streamed request, with vLLM's per-request speculative figures when it sends them."""

    prompt_tokens: int | None = None
    spec: RequestSpec | None = None
    llama: LlamaTimings | None = None  # llama-server's per-response draft counts


MAX_URL_CHARS = 2048
# RFC 3986 characters only (unreserved, reserved and '%'): httpx would refuse the rest with a traceback.
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def normalize_root(url: str, flag: str = "--endpoint") -> str:
    """Validate a server URL and return its root (scheme://host:port[/prefix]), with a trailing ``/v1`` removed.

    Raises:
        InputError: not an http(s) URL with a host.
    """
    shown = url[:100].encode("unicode_escape").decode("ascii")
    if len(url) > MAX_URL_CHARS or not _URL_CHARS.fullmatch(url.strip()):
        raise InputError(f"{flag} '{shown}' is not a URL: it has spaces, control or non-ASCII characters, or is "
                         f"longer than {MAX_URL_CHARS:,} characters; use e.g. http://127.0.0.1:8000")
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:  # e.g. an unbalanced '[' in the host
        raise InputError(f"{flag} '{shown}' is not a URL ({exc}): use e.g. http://127.0.0.1:8000") from None
    url = shown
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{flag} {url!r} is not an http(s) URL: use e.g. http://127.0.0.1:8000")
    if parts.query or parts.fragment:
        raise InputError(f"{flag} {url!r} must not have a query or fragment: give the server's base URL")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise InputError(f"{flag} {url!r} has an invalid port") from exc
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}"


def make_client(timeout_s: float, max_connections: int) -> Any:
    """An httpx2 client with bounded connect and read timeouts (imported lazily: not needed by --help)."""
    import httpx2

    return httpx2.Client(
        timeout=httpx2.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S),
        limits=httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
    )


def _transport_error(exc: Exception, root: str) -> UnavailableError:
    return UnavailableError(f"cannot reach {root} ({type(exc).__name__}): is the server running and the URL right?")


def _timeout_error(root: str, what: str = "in time") -> UnavailableError:
    return UnavailableError(f"{root} did not answer {what}: is it overloaded? raise --timeout-s if it is just slow")


def _error_text(resp: Any) -> str:
    try:
        body = resp.json()
        msg = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else body.get("message")
        text = str(msg or body)
    except (ValueError, AttributeError):
        text = resp.text
    # Redacted before cutting: a server that reflects the request's headers must not show even part of a key.
    return redact(" ".join(text.split()))[:MAX_ERROR_CHARS]


def _probe_timeout(client: Any) -> float:
    # Probes are quick on a healthy server; never wait on them longer than on a request.
    return min(PROBE_TIMEOUT_S, float(client.timeout.read or PROBE_TIMEOUT_S))


def fetch_metrics(client: Any, root: str) -> list[Sample] | None:
    """GET ``/metrics``; None when the server has no such page (404).

    Raises:
        UnavailableError: the server cannot be reached.
        ServiceError: the server answered with another error.
    """
    import httpx2

    try:
        resp = client.get(root + "/metrics", timeout=_probe_timeout(client))
    except httpx2.TimeoutException as exc:
        raise _timeout_error(root) from exc
    except httpx2.TransportError as exc:
        raise _transport_error(exc, root) from exc
    if resp.status_code == 404:
        return None
    if resp.status_code != 200:
        raise ServiceError(f"{root}/metrics answered HTTP {resp.status_code}: {_error_text(resp)}")
    return parse_prometheus(resp.text)


def served_models(client: Any, root: str) -> list[str]:
    """Model ids from ``GET /v1/models``."""
    import httpx2

    try:
        resp = client.get(root + "/v1/models", timeout=_probe_timeout(client))
    except httpx2.TimeoutException as exc:
        raise _timeout_error(root) from exc
    except httpx2.TransportError as exc:
        raise _transport_error(exc, root) from exc
    if resp.status_code != 200:
        raise ServiceError(
            f"{root}/v1/models answered HTTP {resp.status_code}: is this an OpenAI-compatible server (vLLM, SGLang)?"
        )
    try:
        return [str(m["id"]) for m in resp.json()["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise RemoteDataError(f"{root}/v1/models did not return an OpenAI model list") from exc


def resolve_served_model(client: Any, root: str, model: str | None) -> str:
    """Check ``model`` is served (or pick the only served model when none is given)."""
    names = served_models(client, root)
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    if model is None:
        if len(names) == 1:
            return names[0]
        raise InputError(f"{root} serves {len(names)} models ({listed or 'none'}): pass --model NAME")
    if model not in names:
        raise NotFoundError(f"{root} does not serve model {model!r}; it serves: {listed or 'nothing'}")
    return model


def _payload(item: PromptItem, model: str, api: Api, max_tokens: int, temperature: float) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if api == "chat":
        body["messages"] = item.as_messages()
    else:
        if item.messages is not None:
            raise InputError(f"{item.origin}: chat messages need --api chat; the completions API takes a text prompt")
        body["prompt"] = item.prompt
    return body


def _parse_spec(chunk: dict[str, Any]) -> RequestSpec | None:
    spec = (chunk.get("metrics") or {}).get("speculative_decoding")
    if not isinstance(spec, dict):
        return None
    try:
        return RequestSpec.model_validate(spec)
    except ValueError:
        return None  # an engine version with other fields: the counters still give the figures


def _parse_llama_timings(chunk: dict[str, Any]) -> LlamaTimings | None:
    timings = chunk.get("timings")
    if not isinstance(timings, dict) or "draft_n" not in timings:
        return None  # no draft ran (or not llama-server)
    try:
        return LlamaTimings.model_validate(timings, strict=True)
    except ValueError as exc:
        raise RemoteDataError(f"llama-server timings are not token counts: draft_n={timings.get('draft_n')!r}, "
                              f"draft_n_accepted={timings.get('draft_n_accepted')!r}") from exc


def stream_request(
    client: Any, root: str, model: str, item: PromptItem, api: Api, max_tokens: int, temperature: float
) -> RequestRecord:
    """Send one streaming request and time it.

    Raises:
        UnavailableError: connection failed or timed out.
        NotFoundError: the server does not know the model.
        ServiceError: the server answered with an error.
    """
    import httpx2

    path = "/v1/chat/completions" if api == "chat" else "/v1/completions"
    body = _payload(item, model, api, max_tokens, temperature)
    # The read timeout bounds each wait; this bounds the whole request, so a server that keeps streaming
    # past its max_tokens cannot hold the run forever.
    limit_s = float(client.timeout.read or PROBE_TIMEOUT_S)
    start = time.perf_counter()
    first: float | None = None
    last: float | None = None
    usage: dict[str, Any] | None = None
    spec: RequestSpec | None = None
    llama: LlamaTimings | None = None
    pieces: list[str] = []
    try:
        with client.stream("POST", root + path, json=body) as resp:
            if resp.status_code != 200:
                resp.read()
                text = _error_text(resp)
                if resp.status_code == 404 and "model" in text.lower():
                    raise NotFoundError(f"{root}: {text}")
                raise ServiceError(f"{root}{path} answered HTTP {resp.status_code} for {item.origin}: {text}")
            for line in resp.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    chunk = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise RemoteDataError(f"{root} sent a stream chunk that is not JSON: {data[:80]!r}") from exc
                if not isinstance(chunk, dict):
                    raise RemoteDataError(f"{root} sent a stream chunk that is not a JSON object: {data[:80]!r}")
                if "error" in chunk:
                    raise ServiceError(f"{root} failed mid-stream for {item.origin}: {_error_text_obj(chunk)}")
                now = time.perf_counter()
                if now - start > limit_s:
                    raise _timeout_error(root, f"{item.origin} within {limit_s:.0f} s")
                for choice in chunk.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content") if api == "chat" else choice.get("text")
                    if piece:
                        pieces.append(piece)
                        first = now if first is None else first
                        last = now
                if chunk.get("usage"):
                    usage = chunk["usage"]
                spec = _parse_spec(chunk) or spec
                llama = _parse_llama_timings(chunk) or llama
    except httpx2.TimeoutException as exc:
        raise _timeout_error(root, f"{item.origin} in time") from exc
    except httpx2.TransportError as exc:
        raise _transport_error(exc, root) from exc
    end = time.perf_counter()
    if not isinstance(usage, dict) or "completion_tokens" not in usage:
        raise RemoteDataError(f"{root} sent no usage chunk: it must support stream_options.include_usage")
    tokens = _usage_count(root, usage, "completion_tokens", max_tokens)
    prompt_tokens = _usage_count(root, usage, "prompt_tokens", None) if usage.get("prompt_tokens") is not None else None
    first = end if first is None else first
    last = first if last is None else last
    return RequestRecord(
        ttft_ms=(first - start) * 1e3,
        decode_ms=(last - first) * 1e3,
        tokens=tokens,
        prompt_tokens=prompt_tokens,
        spec=spec,
        llama=llama,
        text="".join(pieces),
    )


MAX_PROMPT_TOKENS = 10_000_000  # far beyond any served context window (the largest are ~1-10 M tokens)


def _usage_count(root: str, usage: dict[str, Any], field: str, limit: int | None) -> int:
    """A token count from the usage chunk: an integer in [0, limit] (the request's max_tokens), else bad data.

    A negative or fractional count would become a negative or nonsense tokens/s figure in the report.
    """
    value = usage.get(field)
    bound = MAX_PROMPT_TOKENS if limit is None else limit
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= bound  # NaN fails too
    if not ok or value != int(value):  # type: ignore[arg-type]
        raise RemoteDataError(
            f"{root} reports usage.{field} = {value!r}: expected a whole number of tokens between 0 and {bound}; "
            "is it an OpenAI-compatible engine?"
        )
    return int(value)


def _error_text_obj(chunk: dict[str, Any]) -> str:
    err = chunk.get("error")
    msg = err.get("message") if isinstance(err, dict) else err
    return redact(" ".join(str(msg).split()))[:MAX_ERROR_CHARS]


def run_batch(
    client: Any,
    root: str,
    model: str,
    items: list[PromptItem],
    concurrency: int,
    api: Api,
    max_tokens: int,
    temperature: float,
    on_done: Callable[[], None] | None = None,
) -> tuple[list[RequestRecord], float]:
    """Send every item with ``concurrency`` requests in flight; return records (in item order) and wall seconds."""
    if concurrency < 1:
        raise InputError("concurrency must be at least 1")

    def one(item: PromptItem) -> RequestRecord:
        record = stream_request(client, root, model, item, api, max_tokens, temperature)
        if on_done is not None:
            on_done()
        return record

    start = time.perf_counter()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="specpick-load")
    try:
        futures = [pool.submit(one, item) for item in items]
        records = [f.result() for f in futures]
    finally:
        # On the first failure, drop the queued requests; the in-flight ones end within their timeout.
        pool.shutdown(wait=True, cancel_futures=True)
    return records, time.perf_counter() - start

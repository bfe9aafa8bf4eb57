"""One Messages-API call under a wall-clock deadline: retries, back-off and error wording.

The SDK's own retries give every attempt the full timeout and sleep between attempts on top, so
``ask --timeout 10`` against a hung API took 34 s and ``--max-retries 100000`` never ended. Here the SDK makes one
attempt per call (``max_retries=0``) and this module retries: each attempt gets only the time left before the
deadline, a back-off that would outlive the deadline is not slept, and retries are bounded (``MAX_RETRIES``).
What is retried mirrors the SDK: timeouts, connection errors, 408, 409, 429 and 5xx (529 overloaded included), unless
the server says ``x-should-retry: false``; an error after the stream has started is not retried (its text was
already shown).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from typing import TypeVar

from specpick.tools.errors import PickerError, ServiceError, UnavailableError, redact

MODEL_ENV = "SPECPICK_MODEL"
MAX_RETRIES = 10  # the CLI refuses more: each retry can wait up to MAX_BACKOFF_S, all inside one --timeout
# Back-off as the anthropic SDK computes it (anthropic/_constants.py INITIAL_RETRY_DELAY 0.5, MAX_RETRY_DELAY 8.0),
# and its cap on a server's Retry-After (60 s).
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 60.0

T = TypeVar("T")


def sleep(seconds: float) -> None:
    """Wait between retries; looked up at call time so tests can replace it and never sleep."""
    time.sleep(seconds)


def api_error_to_picker(exc: Exception, retries: int) -> PickerError:
    """Turn an ``anthropic`` exception into a one-line PickerError that says what to do (key-shaped text redacted)."""
    import anthropic

    offline = "`specpick recommend ...` or `specpick chat --no-llm` answer offline"
    if isinstance(exc, anthropic.APITimeoutError):
        return UnavailableError(f"the Claude API did not answer in time (after {retries} retries): check the "
                                f"network and ANTHROPIC_BASE_URL, or raise --timeout; {offline}.")
    if isinstance(exc, anthropic.APIConnectionError):
        return UnavailableError(f"cannot reach the Claude API (after {retries} retries): check the network and "
                                f"ANTHROPIC_BASE_URL; {offline}.")
    if not isinstance(exc, anthropic.APIStatusError):
        return ServiceError(f"Claude API call failed: {type(exc).__name__}; {offline}.")
    status, body = exc.status_code, exc.body if isinstance(exc.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else {}
    # Redact before cutting: a key cut in half would no longer match its own value.
    etype, detail = err.get("type") or "error", redact(" ".join(str(err.get("message") or "").split()))[:200]
    if status == 401:
        return ServiceError(f"the Claude API rejected the key (401 {etype}): check ANTHROPIC_API_KEY; {offline}.")
    if status == 403:
        return ServiceError(f"the Claude API refused access (403 {etype}: {detail}): check the key's permissions "
                            "for this model, or pass another --model.")
    if status == 404:
        return ServiceError(f"the Claude API does not know this model or endpoint (404 {etype}: {detail}): "
                            f"pass another --model or set {MODEL_ENV}.")
    if status == 429:
        return ServiceError(f"the Claude API is rate limiting this key (429 {etype}) and {retries} retries did not "
                            f"help: wait a minute and try again; {offline}.")
    if status == 529 or etype == "overloaded_error":
        where = " mid-stream" if status == 200 else ""
        return ServiceError(f"the Claude API is overloaded ({status} {etype}{where}) after {retries} retries: "
                            f"try again in a few minutes; {offline}.")
    full = " ".join(str(err.get("message") or "").split())
    if status == 400 and _PROMPT_TOO_LONG.search(full):
        # vLLM: "This model's maximum context length is 2048 tokens. However, your prompt contains 17000 input
        # tokens, which exceeds this limit even without any output tokens" (vllm/renderers/params.py).
        return ServiceError(f"the server's context is smaller than the request itself (400 {etype}: {detail}): "
                            "the system prompt and tool schemas need about 17,000 tokens; serve a model with a "
                            "longer context (vLLM --max-model-len), or use `specpick recommend ...` offline.")
    if status == 400 and _TOO_MANY_TOKENS.search(full):
        # A Messages-API server with a small context (vLLM: "max_completion_tokens=8192 cannot be greater than
        # max_model_len=2048") refuses the reply budget itself: the fix is the user's --max-tokens.
        return ServiceError(f"the server refused the reply budget (400 {etype}: {detail}): its context is smaller "
                            "than --max-tokens; pass a smaller --max-tokens (below the server's context length "
                            "minus the prompt).")
    return ServiceError(f"the Claude API answered {status} {etype}: {detail or 'no detail'}.")


_PROMPT_TOO_LONG = re.compile(r"(?i)even without any output tokens|reduce the length of the input prompt|"
                              r"prompt is too long")
_TOO_MANY_TOKENS = re.compile(r"(?i)max_(?:completion_)?tokens|max_model_len|context (?:length|window)|"
                              r"maximum context|too many tokens")


def is_retryable(exc: Exception, *, started: bool) -> bool:
    """Whether the SDK would retry this error (and nothing of the answer has been shown yet)."""
    import anthropic

    if started:
        return False
    response = getattr(exc, "response", None)
    should = (response.headers.get("x-should-retry", "") if response is not None else "").lower()
    if should in ("true", "false"):
        return should == "true"
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def backoff_s(exc: Exception, retry: int) -> float:
    """Seconds to wait before retry number ``retry`` (0-based): the server's Retry-After when sane, else exponential."""
    response = getattr(exc, "response", None)
    headers = response.headers if response is not None else {}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if 0 <= value <= MAX_RETRY_AFTER_S:
            return value
    return min(INITIAL_BACKOFF_S * 2**retry, MAX_BACKOFF_S) * (1 - 0.25 * random.random())  # noqa: S311 - jitter


def call_with_retries(attempt: Callable[[], T], *, retries: int, time_left_s: Callable[[], float],
                      sleep: Callable[[float], None] | None = None, is_started: Callable[[], bool] = lambda: False) -> T:
    """Run ``attempt()`` until it succeeds, retrying retryable API errors inside the deadline.

    Args:
        attempt: one API call that bounds itself by the time left (and raises a PickerError once it is gone);
            raises ``anthropic.APIError`` on failure.
        retries: retries after the first attempt (clamped to 0..MAX_RETRIES).
        time_left_s: seconds left before the deadline (<= 0: past it).
        sleep: how to wait between attempts (default: this module's ``sleep``; tests pass a recorder).
        is_started: whether the failed attempt already delivered part of its answer (then it is not retried).

    Raises:
        PickerError: the last error, worded by ``api_error_to_picker``, including when the deadline leaves no time
            for another attempt.
    """
    import anthropic

    retries = max(0, min(retries, MAX_RETRIES))
    for n in range(retries + 1):
        try:
            return attempt()
        except anthropic.APIError as exc:
            if n == retries or not is_retryable(exc, started=is_started()):
                raise api_error_to_picker(exc, n) from None
            wait = backoff_s(exc, n)
            if wait >= time_left_s():  # the retry could not even start before the deadline
                raise api_error_to_picker(exc, n) from None
            (sleep or globals()["sleep"])(wait)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

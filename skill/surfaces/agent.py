"""The Claude tool-use conversation: ask, call tools, end with a validated Recommendation.

How the final answer is validated: besides the registry's tools, Claude gets
one more tool, ``submit_recommendation``, whose input schema is
``Recommendation``'s JSON schema. SKILL.md tells it to call ``recommend`` for
the deterministic baseline, check what the conversation raised, and finish
by submitting the (possibly adjusted) Recommendation. The submission is
validated with pydantic; if it does not validate, the errors go back as an
``is_error`` tool result and Claude gets one more attempt (``max_repairs``).
A turn that ends without a submission when nobody can answer (``ask``) uses
the same single repair. A second failure ends the conversation with a
``ServiceError`` (exit code 7). The caller renders the Recommendation with
``render.to_markdown`` or dumps it as JSON.

Bounds: tool rounds (one assistant turn that calls tools is one round),
``max_tokens`` per reply, a token budget over the whole conversation, and a
wall-clock timeout that does not count time spent waiting for the user.
The timeout is a deadline for everything, retries included: the client's
``max_retries`` (at most ``api_call.MAX_RETRIES``) are made by ``api_call``,
not the SDK, so no attempt or back-off outlives it; what still fails becomes a
one-line ``PickerError``.

Evals drive this module without a terminal: ``run_conversation(client,
opening_message=..., reply_fn=...)`` returns a ``ConversationResult``.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

from pydantic import ValidationError

from specpick.skill.surfaces.registry import BY_NAME, ToolSpec
from specpick.skill.schema import Recommendation
from specpick.skill.surfaces.tooluse import run_tool_uses
from specpick.skill.surfaces.api_call import MODEL_ENV, call_with_retries
from specpick.tools.errors import PickerError, ServiceError, format_validation_error
from specpick.tools.validation import check_api_model_id
from specpick.skill.surfaces.prompt import build_system_prompt

SUBMIT_TOOL = "submit_recommendation"
# The newest Sonnet in anthropic 2.14's model list and not in its deprecation table (`_data/deprecated_models.py`),
# so `-W error` runs stay clean; tests check both.
DEFAULT_MODEL = "claude-sonnet-5-5"

ReplyFn = Callable[[str], "str | None"]


def resolve_claude_model(flag: str | None = None) -> str:
    """Model id: ``--model`` flag, else ``$SPECPICK_MODEL``, else ``DEFAULT_MODEL``; refused unless it is an id.

    Raises:
        InputError: the id is empty, or holds spaces, control characters or bytes that are not text.
    """

    if flag is not None:
        return check_api_model_id(flag)
    env = os.environ.get(MODEL_ENV)
    return check_api_model_id(env, flag=f"${MODEL_ENV}") if env else DEFAULT_MODEL


@dataclass(frozen=True)
class Limits:
    """Bounds of one conversation.

    Attributes:
        max_tool_rounds: assistant turns that call tools, at most.
        max_tokens: ``max_tokens`` of each reply.
        timeout_s: wall-clock seconds for the conversation, not counting time waiting for the user.
        token_budget: input + output tokens summed over every request.
        max_repairs: extra attempts Claude gets after an invalid or missing final answer.
    """

    max_tool_rounds: int = 10
    max_tokens: int = 8192
    timeout_s: float = 600.0
    token_budget: int = 500_000
    max_repairs: int = 1


@dataclass
class ToolCall:
    """One tool call Claude made, for transcripts and evals."""

    round: int
    name: str
    arguments: Any
    is_error: bool
    content: str


@dataclass
class ConversationResult:
    """Outcome of a conversation.

    Attributes:
        model: model id used.
        recommendation: the validated final answer, or None.
        error: why there is no answer (a PickerError), or None.
        ended_by_user: the reply function returned None (the user left) before an answer.
        messages: the Messages-API history as sent (JSON-able dicts).
        tool_calls: every tool call, in order (``submit_recommendation`` included).
        rounds: tool rounds used.
        requests: API requests made (SDK retries not counted).
        usage: summed ``input_tokens`` / ``output_tokens``.
        final_text: Claude's text in the turn that ended the conversation.
    """

    model: str
    system: str = ""
    recommendation: Recommendation | None = None
    error: PickerError | None = None
    ended_by_user: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    rounds: int = 0
    requests: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    final_text: str = ""

    @property
    def ok(self) -> bool:
        return self.recommendation is not None

    def transcript(self) -> dict[str, Any]:
        """A JSON-able record of the conversation (no credentials: none are ever stored here)."""
        return {
            "model": self.model,
            "system": self.system,
            "messages": self.messages,
            "tool_calls": [asdict(c) for c in self.tool_calls],
            "rounds": self.rounds,
            "requests": self.requests,
            "usage": self.usage,
            "recommendation": self.recommendation.model_dump(mode="json") if self.recommendation else None,
            "error": self.error.message if self.error else None,
            "ended_by_user": self.ended_by_user,
        }


def submit_tool_definition() -> dict[str, Any]:
    """The ``submit_recommendation`` tool: its input schema is ``Recommendation``'s."""
    return {
        "name": SUBMIT_TOOL,
        "description": (
            "Submit the final five-section answer as a Recommendation object. Start from the JSON that the "
            "`recommend` tool returned and change only what this conversation justifies. Call it exactly once, "
            "at the end; an invalid object comes back as an error to fix."
        ),
        "input_schema": Recommendation.model_json_schema(),
    }


def _block_param(block: Any) -> dict[str, Any] | None:
    """An SDK content block as a request parameter dict (None for empty text, which the API rejects)."""
    if block.type == "text":
        return {"type": "text", "text": block.text} if block.text else None
    if block.type == "tool_use":
        # A tool input that is not a JSON object (a weak model behind a compatible server sent a list) cannot be
        # sent back: the API takes objects only, and would refuse the whole next request. The tool_result already
        # tells the model what was wrong; the history keeps an empty object in its place.
        tool_input = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    return block.model_dump(mode="json", exclude_none=True)


class Conversation:
    """One conversation with Claude. ``result`` is kept up to date, so it survives Ctrl-C.

    Args:
        client: an ``anthropic.Anthropic`` client (its ``max_retries`` applies).
        model: model id.
        system: the system prompt (from ``prompt.build_system_prompt``).
        limits: conversation bounds.
        tools: name -> ToolSpec (default: the project registry).
        on_text: called with each streamed text delta (None: silent).
        on_status: called with one-line progress notes (tool calls), e.g. to print on stderr.
        clock: monotonic clock (tests may replace it).
        sleep: waits between retries (default ``api_call.sleep``; tests may replace it).
    """

    def __init__(self, client: Any, *, model: str, system: str, limits: Limits | None = None,
                 tools: Mapping[str, ToolSpec] | None = None, on_text: Callable[[str], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None,
                 tool_choice: str = "auto") -> None:
        # Retries are made here, inside the deadline, not by the SDK (whose attempts each get the full timeout).
        self.retries = int(getattr(client, "max_retries", 0) or 0)
        self.client = client.with_options(max_retries=0) if hasattr(client, "with_options") else client
        self.sleep = sleep
        self.limits = limits or Limits()
        self.tools = BY_NAME if tools is None else tools
        self.on_text = on_text
        self.on_status = on_status or (lambda _msg: None)
        self.clock = clock
        self.result = ConversationResult(model=model, system=system)
        self._tool_defs: list[dict[str, Any]] | None = None
        self._deadline = 0.0
        # "any": every reply must call a tool (Messages-API servers without automatic tool-call parsing, e.g. vLLM
        # started without --enable-auto-tool-choice, still honour it); "auto" is the API's default and not sent.
        self.tool_choice = tool_choice

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools sent to Claude: the registry's (schemas from the input models) plus ``submit_recommendation``."""
        if self._tool_defs is None:
            defs = [s.tool_definition() for s in self.tools.values()]
            self._tool_defs = defs + [submit_tool_definition()]
        return self._tool_defs

    def run(self, opening_message: str, reply_fn: ReplyFn | None = None) -> ConversationResult:
        """Talk until a valid Recommendation, an error, or the user leaving.

        Args:
            opening_message: the user's first message.
            reply_fn: given Claude's text, returns the user's answer (None: the user left). None: one-shot.

        Returns:
            The result; ``error`` is set instead of raising for PickerErrors. KeyboardInterrupt propagates.
        """
        try:
            self._run(opening_message, reply_fn)
        except PickerError as exc:
            self.result.error = exc
        return self.result

    def _run(self, opening_message: str, reply_fn: ReplyFn | None) -> None:
        res, lim = self.result, self.limits
        self._deadline = self.clock() + lim.timeout_s
        res.messages.append({"role": "user", "content": opening_message})
        repairs = 0
        while True:
            msg = self._request()
            blocks = [p for p in (_block_param(b) for b in msg.content) if p is not None]
            res.messages.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(empty)"}]})
            text = "".join(b.text for b in msg.content if b.type == "text")
            uses = [b for b in msg.content if b.type == "tool_use"]
            submits = [b for b in uses if b.name == SUBMIT_TOOL]
            if submits:
                res.final_text = text
                problem = self._accept(submits[-1], truncated=msg.stop_reason == "max_tokens")
                if problem is None:
                    return
                repairs += 1
                if repairs > lim.max_repairs:
                    raise ServiceError(f"Claude's final answer did not validate as a Recommendation after "
                                       f"{repairs} attempts ({problem[:300]}); `specpick recommend ...` gives "
                                       "the deterministic answer.")
                others = [b for b in uses if b.name != SUBMIT_TOOL]
                results = self._run_tools(others) if others else []
                results += [{"type": "tool_result", "tool_use_id": b.id, "is_error": True,
                             "content": f"not accepted: {problem} Fix these and call {SUBMIT_TOOL} again."}
                            for b in submits]
                res.messages.append({"role": "user", "content": results})
                continue
            if uses:
                if res.rounds >= lim.max_tool_rounds:
                    raise ServiceError(f"Claude reached the tool-round limit ({lim.max_tool_rounds}) without a "
                                       "final answer: raise --max-tool-rounds, or run `specpick recommend ...`.")
                res.rounds += 1
                results = self._run_tools(uses)
                if res.rounds == lim.max_tool_rounds:
                    results.append({"type": "text", "text": f"[specpick] That was the last tool round: call "
                                                            f"{SUBMIT_TOOL} now."})
                res.messages.append({"role": "user", "content": results})
                continue
            # A turn without tools: a question for the user, or prose instead of a submission.
            res.final_text = text
            if reply_fn is not None:
                waited_from = self.clock()
                reply = reply_fn(text)
                self._deadline += self.clock() - waited_from  # time spent waiting for a person is free
                if reply is None:
                    res.ended_by_user = True
                    return
                res.messages.append({"role": "user", "content": reply})
                continue
            repairs += 1
            if repairs > lim.max_repairs:
                raise ServiceError(f"Claude ended without calling {SUBMIT_TOOL} (stop reason {msg.stop_reason}); "
                                   "`specpick recommend ...` gives the deterministic answer.")
            res.messages.append({"role": "user", "content": (
                f"[specpick] Nobody can answer questions in this session. Use the stated defaults for anything "
                f"missing, list them in defaults_used, and call {SUBMIT_TOOL} now.")})

    def _accept(self, block: Any, *, truncated: bool) -> str | None:
        """Validate a submission; on success store it. Returns the problem text, or None."""
        res = self.result
        try:
            rec = Recommendation.model_validate(block.input)
        except ValidationError as exc:
            problem = format_validation_error(exc, audience="answer")
            if truncated:
                problem = f"the reply hit max_tokens and the object was cut off; {problem}"
            res.tool_calls.append(ToolCall(res.rounds, SUBMIT_TOOL, block.input, True, problem))
            self.on_status(f"final answer rejected: {problem[:160]}")
            return problem
        res.tool_calls.append(ToolCall(res.rounds, SUBMIT_TOOL, block.input, False, "accepted"))
        res.recommendation = rec
        return None

    def _run_tools(self, uses: list[Any]) -> list[dict[str, Any]]:
        for b in uses:
            self.on_status(f"calling {b.name}")
        pairs = run_tool_uses(uses, self.tools)
        for block, outcome in pairs:
            self.result.tool_calls.append(ToolCall(self.result.rounds, outcome.name, outcome.arguments,
                                                   outcome.is_error, outcome.content))
            if outcome.is_error:
                self.on_status(f"{outcome.name} failed: {outcome.content[:160]}")
        return [block for block, _ in pairs]

    def _remaining(self) -> float:
        remaining = self._deadline - self.clock()
        if remaining <= 0:
            raise ServiceError(f"the conversation reached its time limit ({self.limits.timeout_s:g} s) without a "
                               "final answer: raise --timeout, or run `specpick recommend ...`.")
        return remaining

    def _request(self) -> Any:
        res, lim = self.result, self.limits
        spent = res.usage["input_tokens"] + res.usage["output_tokens"]
        if spent >= lim.token_budget:
            raise ServiceError(f"the conversation used its token budget ({spent} of {lim.token_budget} tokens) "
                               "without a final answer: raise --token-budget, or run `specpick recommend ...`.")
        res.requests += 1
        started = False

        def attempt() -> Any:
            nonlocal started
            started = False
            with self.client.messages.stream(
                model=res.model, max_tokens=lim.max_tokens, system=res.system, tools=self.tool_definitions(),
                messages=res.messages, timeout=self._remaining(),
                **({"tool_choice": {"type": self.tool_choice}} if self.tool_choice != "auto" else {}),
            ) as stream:
                try:
                    for event in stream:
                        if event.type == "text" and self.on_text is not None:
                            started = True
                            self.on_text(event.text)
                        self._remaining()  # a slow trickle must not outlive the deadline
                except ValueError as exc:  # the SDK cannot parse a streamed tool input (not a JSON object)
                    raise ServiceError(f"the server streamed a tool call whose input is not a JSON object "
                                       f"({str(exc)[:160]}): the model behind the API produced a malformed tool "
                                       "call; retry, use a stronger model, or run `specpick recommend ...`.") from None
                return stream.get_final_message()

        msg = call_with_retries(attempt, retries=self.retries, time_left_s=lambda: self._deadline - self.clock(),
                                sleep=self.sleep, is_started=lambda: started)
        usage = getattr(msg, "usage", None)
        res.usage["input_tokens"] += int(getattr(usage, "input_tokens", 0) or 0)
        res.usage["output_tokens"] += int(getattr(usage, "output_tokens", 0) or 0)
        return msg


def run_conversation(client: Any, *, opening_message: str, reply_fn: ReplyFn | None = None,
                     model: str | None = None, limits: Limits | None = None, system: str | None = None,
                     tools: Mapping[str, ToolSpec] | None = None, on_text: Callable[[str], None] | None = None,
                     on_status: Callable[[str], None] | None = None) -> ConversationResult:
    """Run one conversation and return its result (the entry point for evals).

    Args:
        client: an ``anthropic.Anthropic`` client.
        opening_message: the user's first message.
        reply_fn: plays the user: gets Claude's text, returns the reply (None: leave). None: one-shot.
        model: model id (default: ``resolve_claude_model()``).
        limits: bounds (default ``Limits()``).
        system: system prompt (default: built from SKILL.md for the session kind).
        tools: name -> ToolSpec (default: the registry).
        on_text: streamed text deltas.
        on_status: progress notes.

    Returns:
        ConversationResult with ``recommendation`` or ``error`` (``res.ok``, ``res.error.exit_code``).
    """

    system = system if system is not None else build_system_prompt(interactive=reply_fn is not None)
    conv = Conversation(client, model=resolve_claude_model(model), system=system, limits=limits, tools=tools,
                        on_text=on_text, on_status=on_status)
    return conv.run(opening_message, reply_fn)

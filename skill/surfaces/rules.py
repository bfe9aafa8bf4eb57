"""Contradictions between arguments, checked once for the CLI, the Claude tools and MCP.

``ToolSpec.validate`` (``registry.py``) runs these on the arguments the caller actually gave (the CLI passes only
the options typed; a tool caller's ``null`` counts as not given) before the input model is built, so all three
surfaces refuse the same contradiction with the same one-line message. A rule names flags the way the command line
spells them, as the input models' own messages do.

A contradiction is two settings that cannot both hold (``--method ngram`` drafts from the prompt, so a ``--draft``
model would be ignored); a range is a number the engine would refuse. Each rule is a pure function of the given
arguments that returns the problem, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from specpick.tools.errors import InputError
from specpick.tools.validation import MAX_CONCURRENCY, tree_budget_range
from specpick.tools.vocab import DRAFT_MODEL_METHODS, MODEL_FREE_METHODS, TRAINED_HEAD_METHODS

Check = Callable[[Mapping[str, Any]], "str | None"]
# Harness names that are serving engines (tools/model/estimate.py ENGINE_HARNESSES): a harness named for one engine
# sets that engine's overheads, so it cannot go with another --engine.
_ENGINE_HARNESSES = ("vllm", "sglang", "trtllm")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Rule:
    """A check over one verb's given arguments."""

    verb: str
    check: Check


def not_both(verb: str, a: str, b: str, why: str) -> Rule:
    """``a`` and ``b`` cannot both be given."""
    def check(g: Mapping[str, Any]) -> str | None:
        # a boolean given as false (--no-live) is not a contradiction
        return f"give {_flag(a)} or {_flag(b)}, not both: {why}" if g.get(a, False) is not False and g.get(
            b, False) is not False else None

    return Rule(verb, check)


def not_with_value(verb: str, field: str, values: frozenset[str] | tuple[str, ...], others: tuple[str, ...],
                   why: str) -> Rule:
    """When ``field`` is one of ``values``, none of ``others`` may be given."""

    def check(g: Mapping[str, Any]) -> str | None:
        given = [o for o in others if o in g]
        if g.get(field) in values and given:
            return f"{_flag(field)} {g[field]} contradicts {' and '.join(_flag(o) for o in given)}: {why}"
        return None

    return Rule(verb, check)


def in_range(verb: str, field: str, low: int, high: int, why: str) -> Rule:
    """An integer that must lie in ``[low, high]`` (the model's own field may take any int)."""

    def check(g: Mapping[str, Any]) -> str | None:
        v = g.get(field)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not low <= v <= high:
            return f"{_flag(field)} {v:g} is outside {low}..{high:,}: {why}"
        return None

    return Rule(verb, check)


def _harness_vs_engine(g: Mapping[str, Any]) -> str | None:
    harness, engine = g.get("harness"), g.get("engine")
    if harness in _ENGINE_HARNESSES and engine is not None and engine != harness:
        return (f"--harness {harness} contradicts --engine {engine}: a harness named for an engine sets that "
                f"engine's overheads; drop --harness (the engine sets it) or give --engine {harness}")
    return None


def _sglang_tree_budget(g: Mapping[str, Any]) -> str | None:
    # SGLang verifies --speculative-num-draft-tokens per cycle of a tree of num_steps x topk: fewer than one path
    # plus the root cannot hold the chain it drafts (EAGLE-2 section 4; validation.tree_budget_range).
    if g.get("engine") != "sglang" or g.get("num_verify_tokens") is None:
        return None
    depth, top_k, verify = int(g.get("num_draft_tokens") or 3), int(g.get("tree_top_k") or 1), g["num_verify_tokens"]
    if not isinstance(verify, int) or depth < 1 or top_k < 1 or depth > 64 or top_k > 64:
        return None  # the input model words the type and range errors
    low, high = tree_budget_range(depth, top_k)
    if not low <= verify <= high:
        return (f"--num-verify-tokens {verify} does not fit an SGLang tree of {depth} steps and top-{top_k}: it "
                f"verifies between {low} (one path + root) and {high} (the full tree) tokens; change "
                "--num-verify-tokens, --num-draft-tokens or --tree-top-k")
    return None


_SECOND_MODEL = ("draft", "head")
RULES: tuple[Rule, ...] = (
    not_with_value("recommend", "method", MODEL_FREE_METHODS | {"none"}, _SECOND_MODEL,
                   "that method drafts without a second model, so it would be ignored; drop it, or pick a method "
                   "that loads one (draft_model, eagle3, medusa, mtp)"),
    not_with_value("recommend", "method", DRAFT_MODEL_METHODS, ("head",),
                   "a draft-model method runs a separate model, not a head; give --draft, or a head method"),
    not_with_value("recommend", "method", TRAINED_HEAD_METHODS - DRAFT_MODEL_METHODS, ("draft",),
                   "a head method runs a trained head, not a draft model; give --head, or --method draft_model"),
    Rule("speedup", _harness_vs_engine),
    not_both("vram", "draft", "head_params_b", "a draft model and a speculative head are two different "
             "speculators; size the one you serve"),
    not_both("vram", "draft_params_b", "head_params_b", "a draft model and a speculative head are two different "
             "speculators; size the one you serve"),
    not_both("tokenizers", "offline", "live", "--live reads the Hub and --offline never touches the network"),
    in_range("engine-config", "max_batch_size", 1, MAX_CONCURRENCY,
             "the largest batch the server forms is at least 1 sequence"),
    Rule("engine-config", _sglang_tree_budget),
)


def check_rules(verb: str, arguments: Mapping[str, Any]) -> None:
    """Raise ``InputError`` for the first rule of ``verb`` the given arguments break."""
    given = {k: v for k, v in arguments.items() if v is not None}
    for rule in RULES:
        if rule.verb == verb and (problem := rule.check(given)) is not None:
            raise InputError(problem + ".")

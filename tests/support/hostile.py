"""Tables of hostile inputs generated from the registry's input models, for tests/test_bad_inputs.py.

Each generated row is ``(verb, arguments, exit code, needle, why)`` with the expectation written down where it is
made: a model-name field refuses the same hostile strings everywhere; a bounded number names its bound (the
``ge``/``le`` the input model declares, as pydantic words it); a closed set names the choices; the contradictions of
``skill/surfaces/rules.py`` are listed by hand with their own message.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal, get_args, get_origin

import annotated_types as at

from specpick.skill.surfaces.registry import TOOLS

EAGLE3_8B = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
# A valid call of every verb: one field at a time is made hostile on top of it.
BASES: dict[str, dict[str, Any]] = {
    "recommend": {"verifier": "llama-3.1-8b", "workload": "chat"},
    "speedup": {"verifier": "llama-3.1-8b", "method": "eagle3", "gpu": "H100", "workload": "chat"},
    "vram": {"verifier": "llama-3.1-8b", "gpu": "H100"},
    "params": {"model": "llama-3.1-8b"},
    "model": {"model": "llama-3.1-8b"},
    "tokenizers": {"draft": "llama-3.2-1b", "verifier": "llama-3.1-8b"},
    "head-check": {"head": EAGLE3_8B, "verifier": "llama-3.1-8b", "live": False},
    "engine-config": {"engine": "vllm", "method": "eagle3", "verifier": "llama-3.1-8b", "draft_model": EAGLE3_8B},
    "calibrate": {},
    "catalog": {"action": "status"},
    "models": {}, "gpus": {}, "heads": {},
    "train-plan": {"verifier": "llama-3.1-8b", "live": False},
}

NAME_RULE = "not a model name"
# (why, value, exit code, needle): what every model-name field (tools/validation.ModelName) must say.
HOSTILE_NAMES: list[tuple[str, str, int, str]] = [
    ("empty", "", 2, "is empty"),
    ("blank", "   ", 2, "is empty"),
    ("tab only", "\t", 2, "is empty"),
    ("newline inside", "llama\n-3.1-8b", 2, NAME_RULE),
    ("terminal escape", "\x1b[31mllama", 2, NAME_RULE),
    ("OSC title", "\x1b]0;pwned\x07llama", 2, NAME_RULE),
    ("bell", "llama\x07", 2, NAME_RULE),
    ("NUL", "llama\x00", 2, NAME_RULE),
    ("DEL", "llama\x7f", 2, NAME_RULE),
    ("path traversal", "../../etc/passwd", 2, NAME_RULE),
    ("absolute path", "/etc/passwd", 2, NAME_RULE),
    ("three parts", "a/b/c", 2, NAME_RULE),
    ("shell substitution", "$(touch PWNED)", 2, NAME_RULE),
    ("backticks", "`id`", 2, NAME_RULE),
    ("quote", "llama'; DROP TABLE", 2, NAME_RULE),
    ("url", "https://evil.example/x", 2, NAME_RULE),
    ("100,000 characters", "m" * 100_000, 2, "characters long"),
    ("org and 300 characters", "org/" + "m" * 300, 2, "characters long"),
]


def _model_name_fields(model: type) -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        validators = [*field.metadata, *(m for a in get_args(field.annotation) for m in getattr(a, "__metadata__", ()))]
        if any(getattr(getattr(v, "func", None), "__name__", "") == "_model_name" for v in validators):
            out.append(name)
    return out


def _bounds(field: Any) -> tuple[dict[str, float], bool, type | None]:
    """(bounds by kind, allows nan/inf, number type) of an int or float field, through Optional and Annotated."""
    metas = list(field.metadata)
    kind: type | None = field.annotation if field.annotation in (int, float) else None
    for arg in get_args(field.annotation):
        for inner in getattr(arg, "__metadata__", ()):
            metas += list(getattr(inner, "metadata", ()))
        base = get_args(arg)[0] if get_args(arg) else arg
        if base in (int, float):
            kind = base
    bounds: dict[str, float] = {}
    finite_only = False
    for m in metas:
        for attr in ("ge", "gt", "le", "lt"):
            if isinstance(m, getattr(at, attr.capitalize())):
                bounds[attr] = getattr(m, attr)
        if getattr(m, "allow_inf_nan", True) is False:
            finite_only = True
    return bounds, finite_only, kind


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


WORDING = {"ge": "greater than or equal to", "gt": "greater than", "le": "less than or equal to", "lt": "less than"}


def number_cases() -> Iterator[tuple[str, dict[str, Any], int, str, str]]:
    """Below and above each declared bound, and NaN/inf where the field is finite-only."""
    for tool in TOOLS:
        model = tool.load_input_model()
        for name, field in model.model_fields.items():
            bounds, finite_only, kind = _bounds(field)
            if kind is None or not bounds:
                continue
            step = 1 if kind is int else 0.5
            if "ge" in bounds:
                yield tool.cli, {name: kind(bounds["ge"] - step)}, 2, f"{WORDING['ge']} {_num(bounds['ge'])}", \
                    f"{name} below {_num(bounds['ge'])}"
            if "gt" in bounds:
                yield tool.cli, {name: kind(bounds["gt"])}, 2, f"{WORDING['gt']} {_num(bounds['gt'])}", \
                    f"{name} at its exclusive lower bound"
            if "le" in bounds:
                yield tool.cli, {name: kind(bounds["le"] + step)}, 2, f"{WORDING['le']} {_num(bounds['le'])}", \
                    f"{name} above {_num(bounds['le'])}"
                huge = 10**30 if kind is int else 1e300
                yield tool.cli, {name: huge}, 2, f"{WORDING['le']} {_num(bounds['le'])}", f"{name} = {huge:g}"
            if "lt" in bounds:
                yield tool.cli, {name: kind(bounds["lt"])}, 2, f"{WORDING['lt']} {_num(bounds['lt'])}", \
                    f"{name} at its exclusive upper bound"
            if finite_only:
                for v in (math.nan, math.inf, -math.inf):
                    yield tool.cli, {name: v}, 2, "finite number", f"{name} = {v}"


def name_cases() -> Iterator[tuple[str, dict[str, Any], int, str, str]]:
    for tool in TOOLS:
        for name in _model_name_fields(tool.load_input_model()):
            for why, value, code, needle in HOSTILE_NAMES:
                yield tool.cli, {name: value}, code, needle, f"{name} {why}"


def choice_cases() -> Iterator[tuple[str, dict[str, Any], int, str, str]]:
    """A word outside each closed set; the CLI (argparse) says 'invalid choice', the tools name the choices."""
    for tool in TOOLS:
        for name, field in tool.load_input_model().model_fields.items():
            ann = field.annotation
            literal = ann if get_origin(ann) is Literal else next(
                (a for a in get_args(ann) if get_origin(a) is Literal), None)
            if literal is not None:
                yield tool.cli, {name: "bogus-choice"}, 2, "bogus-choice", f"{name} outside {'/'.join(get_args(literal)[:3])}..."


# The contradictions and impossible settings of issue 28, one row each (message from skill/surfaces/rules.py or the
# validator that owns it).
CONTRADICTIONS: list[tuple[str, dict[str, Any], int, str, str]] = [
    ("recommend", {"method": "ngram", "draft": "llama-3.2-1b"}, 2, "--method ngram contradicts --draft", "ngram+draft"),
    ("recommend", {"method": "ngram", "head": EAGLE3_8B}, 2, "--method ngram contradicts --head", "ngram+head"),
    ("recommend", {"method": "suffix", "draft": "llama-3.2-1b"}, 2, "--method suffix contradicts", "suffix+draft"),
    ("recommend", {"method": "lookahead", "head": EAGLE3_8B}, 2, "--method lookahead contradicts", "lookahead+head"),
    ("recommend", {"method": "draft_model", "head": EAGLE3_8B}, 2, "--method draft_model contradicts --head",
     "draft_model+head"),
    ("recommend", {"method": "eagle3", "draft": "llama-3.2-1b"}, 2, "--method eagle3 contradicts --draft",
     "eagle3+draft"),
    ("recommend", {"kv_cache_dtype": "banana"}, 2, "not a KV-cache dtype an engine serves", "kv dtype banana"),
    ("recommend", {"kv_cache_dtype": "int3"}, 2, "not a KV-cache dtype an engine serves", "kv dtype int3"),
    ("speedup", {"harness": "sglang", "engine": "vllm"}, 2, "--harness sglang contradicts --engine vllm",
     "harness vs engine"),
    ("speedup", {"harness": "trtllm", "engine": "sglang"}, 2, "--harness trtllm contradicts --engine sglang",
     "harness trtllm vs engine sglang"),
    ("vram", {"draft": "llama-3.2-1b", "head_params_b": 1.0}, 2, "give --draft or --head-params-b, not both",
     "draft and head"),
    ("vram", {"draft_params_b": 1.0, "head_params_b": 1.0}, 2, "give --draft-params-b or --head-params-b, not both",
     "draft params and head"),
    ("tokenizers", {"offline": True, "live": True}, 2, "give --offline or --live, not both", "offline and live"),
    ("engine-config", {"max_batch_size": 0}, 2, "--max-batch-size 0 is outside 1..100,000", "max batch 0"),
    ("engine-config", {"max_batch_size": -1}, 2, "--max-batch-size -1 is outside", "max batch -1"),
    ("engine-config", {"max_batch_size": 10**23}, 2, "--max-batch-size 1e+23 is outside", "max batch 1e23"),
    ("engine-config", {"engine": "sglang", "num_draft_tokens": 5, "tree_top_k": 4, "num_verify_tokens": 3}, 2,
     "does not fit an SGLang tree of 5 steps and top-4", "sglang verify budget too small"),
    ("engine-config", {"engine": "sglang", "num_draft_tokens": 2, "tree_top_k": 2, "num_verify_tokens": 100}, 2,
     "and 7 (the full tree)", "sglang verify budget past the full tree"),
]


def generated() -> list[tuple[str, dict[str, Any], int, str, str]]:
    """Every generated row, with the verb's valid base merged in."""
    rows = [*name_cases(), *number_cases(), *choice_cases(), *CONTRADICTIONS]
    return [(verb, {**BASES[verb], **args}, code, needle, why) for verb, args, code, needle, why in rows]

"""Generate argparse options from a pydantic input model.

Field ``num_draft_tokens`` becomes ``--num-draft-tokens``; ``Literal`` fields
get ``choices``; ``bool`` fields get a ``--x/--no-x`` pair; ``list[int]``
takes several values. A field can adjust its spelling through
``json_schema_extra={"cli": {...}}`` with keys ``flags`` (extra/alternative
spellings, first is primary), ``negative`` (spellings of the false form of a
bool), ``positional`` (True: a positional argument), ``metavar`` and
``deprecated`` (old spellings: still accepted, hidden from ``--help``, with a
one-line notice on stderr; ``tools/deployment_input.DEPRECATED_FLAGS``).

Defaults are *not* given to argparse (``SUPPRESS``): only what the user typed
reaches the model, so the model's own defaults apply and the planner can say
which inputs took a default.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from specpick.tools.deployment_input import deprecation_notice


def _cli_meta(field: FieldInfo) -> dict[str, Any]:
    extra = field.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("cli"), dict):
        return dict(extra["cli"])
    return {}


def _unwrap_optional(annotation: Any) -> Any:
    # Constrained types (tools/validation.py) arrive as Annotated[float, ...] inside an Optional.
    if get_origin(annotation) is typing.Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _unwrap_optional(args[0])
    return annotation


def _normalizer(annotation: Any) -> Any:
    """The ``BeforeValidator`` of an ``Annotated`` choice type, inside an Optional or not (None without one): argparse
    applies it before checking the choices, as pydantic does (``Q4_K_M`` -> ``q4_k_m``, tools/vocab.Quantization)."""
    if get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _normalizer(args[0]) if len(args) == 1 else None
    if get_origin(annotation) is typing.Annotated:
        from pydantic import BeforeValidator

        return next((m.func for m in get_args(annotation)[1:] if isinstance(m, BeforeValidator)), None)
    return None


def _field_normalizer(field: FieldInfo) -> Any:
    """A required ``Annotated`` field's ``BeforeValidator``: pydantic moves it from the annotation to the metadata."""
    from pydantic import BeforeValidator

    return next((m.func for m in field.metadata if isinstance(m, BeforeValidator)), None)


def _argparse_type(func: Any) -> Any:
    """A validator as an argparse ``type``: its ValueError message reaches the one-line error (argparse would print
    only "invalid value" for a plain ValueError)."""
    def convert(text: str) -> Any:
        try:
            return func(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(func, "__name__", "value")
    return convert


def _parse_bool_word(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def _deprecated_action(new: str) -> type[argparse.Action]:
    """An option that stores like ``new`` and says once, on stderr, that ``new`` is its spelling now."""

    class Deprecated(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                     option_string: str | None = None) -> None:
            print(deprecation_notice(option_string or self.option_strings[0], new), file=sys.stderr)
            setattr(namespace, self.dest, values)

    return Deprecated


def cli_names(model: type[BaseModel]) -> dict[str, str]:
    """Field -> how the command line spells it (``--num-draft-tokens``, or a positional's ``DRAFT``), for errors."""
    names = {}
    for name, field in model.model_fields.items():
        meta = _cli_meta(field)
        metavar = meta.get("metavar", name.upper())
        if metavar.startswith("{"):  # a choices list ({status,update}): the field's own name reads better
            metavar = name.upper()
        names[name] = metavar if meta.get("positional") else (meta.get("flags") or [f"--{name.replace('_', '-')}"])[0]
    return names


def add_model_arguments(parser: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """Add one option (or positional) per field of ``model`` to ``parser``."""
    for name, field in model.model_fields.items():
        meta = _cli_meta(field)
        if meta.get("hidden"):
            continue
        annotation = _unwrap_optional(field.annotation)
        help_text = (field.description or "").replace("%", "%%")
        if not field.is_required() and field.default not in (None, ...) and not meta.get("positional"):
            default = field.default
            if isinstance(default, (str, int, float, bool)):
                help_text += f" (default: {default})"
        flags = meta.get("flags") or [f"--{name.replace('_', '-')}"]
        kwargs: dict[str, Any] = {"dest": name, "help": help_text, "default": argparse.SUPPRESS}

        if meta.get("positional"):
            parser.add_argument(name, metavar=meta.get("metavar", name.upper()), help=help_text,
                                type=_scalar_type(annotation))
            continue
        if annotation is bool:
            group = parser.add_mutually_exclusive_group()
            group.add_argument(*flags, action="store_true", **kwargs)
            negative = meta.get("negative") or [f"--no-{name.replace('_', '-')}"]
            group.add_argument(*negative, dest=name, action="store_false", default=argparse.SUPPRESS,
                               help=f"opposite of {flags[0]}")
            continue
        if get_origin(annotation) is list:
            (item,) = get_args(annotation) or (str,)
            kwargs.update(nargs="+", type=_scalar_type(item))
            if get_origin(item) is Literal:
                kwargs["choices"] = list(get_args(item))
        elif get_origin(annotation) is Literal:
            kwargs["choices"] = list(get_args(annotation))
            normalize = _normalizer(field.annotation) or _field_normalizer(field)
            if normalize is not None:
                kwargs["type"] = _argparse_type(normalize)
        else:
            kwargs["type"] = _scalar_type(annotation)
        if field.is_required():
            kwargs["required"] = True
        if meta.get("metavar"):
            kwargs["metavar"] = meta["metavar"]
        parser.add_argument(*flags, **kwargs)
        for old in meta.get("deprecated") or ():
            hidden = {k: v for k, v in kwargs.items() if k not in ("help", "required")}
            parser.add_argument(old, **hidden, help=argparse.SUPPRESS, action=_deprecated_action(flags[0]))


def _scalar_type(annotation: Any) -> Any:
    annotation = _unwrap_optional(annotation)
    if annotation is int:
        return int
    if annotation is float:
        return float
    if annotation is bool:
        return _parse_bool_word
    return str


def strip_cli_metadata(schema: Any) -> Any:
    """Remove our ``cli`` hints from a JSON schema before handing it to a model."""
    if isinstance(schema, dict):
        return {k: strip_cli_metadata(v) for k, v in schema.items() if k != "cli"}
    if isinstance(schema, list):
        return [strip_cli_metadata(v) for v in schema]
    return schema

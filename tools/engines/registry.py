"""The engine registry: which engines exist, and the one ``register`` hook built-in and plugin engines go through.

``BUILTIN`` names the engines this package ships, each a module of its own (``tools/engines/<name>.py``) whose
``ENGINE`` ``tools/engines/lookup.py`` registers through ``register``; an engine from elsewhere (a plugin, a test's
toy engine) calls ``register`` with its name and a loader of its ``EngineSpec`` before the input models are built,
and from then on it is in every verb's choices, configurations and measurement plans. The loader runs at the
first lookup, so registering imports nothing: ``tools/vocab.py`` derives the ``Engine`` literal from ``names()``.
Layer 0, importing nothing of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The engines this package ships, in the order choices and translations list them.
BUILTIN: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp", "transformers")
_LOADERS: dict[str, Callable[[], Any]] = {}
_SPECS: dict[str, Any] = {}
_EXTRA: list[str] = []


def register(name: str, load: Callable[[], Any]) -> None:
    """Register engine ``name``; ``load()`` returns its ``EngineSpec`` at the first lookup. A second registration
    of a name replaces the first."""
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise ValueError(f"an engine's name is a lower-case identifier, not {name!r}")
    if name not in BUILTIN and name not in _EXTRA:
        _EXTRA.append(name)
    _LOADERS[name] = load
    _SPECS.pop(name, None)


def names() -> tuple[str, ...]:
    """Every engine: the built-in ones, then the registered ones in registration order."""
    return (*BUILTIN, *_EXTRA)


def is_registered(name: str) -> bool:
    return name in _LOADERS


def registered(name: str) -> Any | None:
    """The spec registered under ``name`` (None: not registered)."""
    if name not in _SPECS and name in _LOADERS:
        spec = _LOADERS[name]()
        if spec.name != name:
            raise ValueError(f"engine {name!r} loaded a spec named {spec.name!r}")
        _SPECS[name] = spec
    return _SPECS.get(name)

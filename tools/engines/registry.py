"""The engine registry: which engines exist, and the one ``register`` hook built-in and plugin engines go through.

``BUILTIN`` names the engines this package ships, each a module of its own (``tools/engines/<name>.py``) whose
``ENGINE`` is registered by ``tools/engines/lookup.py``; an engine from elsewhere (a plugin, a test's toy engine)
calls ``register`` with its ``EngineSpec`` before the input models are built, and from then on it is in every
verb's choices, configurations and measurement plans. Layer 0, importing nothing of ours: ``tools/vocab.py``
derives the ``Engine`` literal from ``names()``.
"""

from __future__ import annotations

from typing import Any

# The engines this package ships, in the order choices and translations list them.
BUILTIN: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp", "transformers")
_SPECS: dict[str, Any] = {}
_EXTRA: list[str] = []


def register(spec: Any) -> None:
    """Register ``spec`` (an ``EngineSpec``) under ``spec.name``; a second registration of a name replaces it."""
    name = spec.name
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise ValueError(f"an engine's name is a lower-case identifier, not {name!r}")
    if name not in BUILTIN and name not in _EXTRA:
        _EXTRA.append(name)
    _SPECS[name] = spec


def names() -> tuple[str, ...]:
    """Every engine: the built-in ones, then the registered ones in registration order."""
    return (*BUILTIN, *_EXTRA)


def registered(name: str) -> Any | None:
    """The spec registered under ``name`` (None: not registered yet)."""
    return _SPECS.get(name)

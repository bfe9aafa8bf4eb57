"""Every engine's spec, looked up by name: the built-in modules registered through the same hook as a plugin.

The rest of the tool asks ``engine(name)`` instead of comparing ``name`` with an engine's spelling.
"""

from __future__ import annotations

from specpick.tools.engines import llamacpp, sglang, transformers, trtllm, vllm
from specpick.tools.engines.base import EngineSpec
from specpick.tools.engines.registry import is_registered, names, register, registered


def _builtin(spec: EngineSpec) -> None:
    if not is_registered(spec.name):  # a plugin registered before us may replace a built-in
        register(spec.name, lambda: spec)


for _module in (vllm, sglang, trtllm, llamacpp, transformers):
    _builtin(_module.ENGINE)


def engine(name: str) -> EngineSpec:
    """The spec of engine ``name``.

    Raises:
        KeyError: ``name`` is not a registered engine (input models validate names before this runs).
    """
    spec = registered(name)
    if spec is None:
        raise KeyError(name)
    return spec


def engines() -> list[EngineSpec]:
    """Every registered engine's spec, built-ins first."""
    return [engine(n) for n in names()]


def is_engine(name: str | None) -> bool:
    """Whether ``name`` is a registered engine (harness names such as ``paper`` are not)."""
    return name is not None and is_registered(name)


def splits_layers(name: str | None) -> bool:
    """Whether engine ``name`` (None: not given) splits whole layers over its GPUs rather than tensor parallel."""
    return is_engine(name) and engine(name).layer_split  # type: ignore[arg-type]


def offloads(name: str | None) -> bool:
    """Whether engine ``name`` (None: not given) runs the layers that do not fit from system RAM."""
    return is_engine(name) and engine(name).offloads  # type: ignore[arg-type]


def label(name: str) -> str:
    """How answers name engine ``name``."""
    return engine(name).label


def labels() -> dict[str, str]:
    """Engine -> label, for code that formats several."""
    return {s.name: s.label for s in engines()}

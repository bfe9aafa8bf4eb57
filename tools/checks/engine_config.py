"""Exact runtime configuration per engine, and the same setting translated for every engine.

The input model and ids checks live in ``tools/engines/setting.py``, the per-engine spelling in each engine's
module (``tools/engines/<engine>.py``, looked up by name); this module checks the support matrix (``tools/data/engine_support.csv``, kept
per engine version) and puts them together. Versions are repeated in every emitted config because
option names drift between releases.
"""

from __future__ import annotations

from specpick.tools.catalog.specs import EngineSupport
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.engines.lookup import engine, engines, label as engine_label
from specpick.tools.engines.setting import EngineConfig, EngineConfigInput, EngineTranslation
from specpick.tools.engines.sglang import sglang_tree
from specpick.tools.errors import InputError
from specpick.tools.methods import is_method

__all__ = ["EngineConfig", "EngineConfigInput", "EngineTranslation", "build_engine_config",
           "engine_support_row", "sglang_tree", "translate_setting"]


def _version(engine: str, version: str | None) -> str:
    """The release a plain (speculation off) configuration names: the user's, else the newest tracked, worded as
    the answer's defaults word it (tools/deploy/resolve.release_text)."""
    if version is not None:
        return version
    newest = get_catalog().newest_release(engine)
    return f"{newest} or newer" if newest else "today's build"


def engine_support_row(engine: str, method: str, version: str | None = None) -> EngineSupport | None:
    """The support-matrix row for ``method`` on ``engine`` at ``version`` (None: today's build)."""
    return get_catalog().support(engine, method, version)


def _require_support(engine: str, method: str, version: str | None) -> tuple[str, list[str]]:
    """(the version the option names were read from, notes); raises when the engine cannot run ``method``."""
    row = engine_support_row(engine, method, version)
    if row is None or not row.runs_at(version):
        cat = get_catalog()
        runs = sorted({s.engine for s in cat.engine_support if s.method == method and s.support != "no"})
        alt = ", ".join(engine_label(e) for e in runs) or "no engine we track"
        if row is not None and row.support != "no":
            raise InputError(f"{engine_label(engine)} runs {method} from {row.min_version} on, not {version}: "
                             f"upgrade, or use one of: {alt}.")
        reason = f" ({row.notes})" if row and row.notes else ""
        raise InputError(f"{engine_label(engine)} does not run {method}{reason}; engines that do: {alt}.")
    notes = []
    if row.support == "partial" or row.notes:
        notes.append(f"{engine_label(engine)} support for {method}: {row.support}; {row.notes}".rstrip("; "))
    if row.breaks_with:
        notes.append(f"breaks with: {', '.join(row.breaks_with)}" + (f" (workaround: {row.workaround})"
                                                                    if row.workaround else ""))
    label = version if version is not None else row.engine_version
    return label, notes


def build_engine_config(inp: EngineConfigInput) -> EngineConfig:
    """Emit the configuration for ``inp.method`` on ``inp.engine``; with ``all_engines``, every engine's too.

    Raises:
        InputError: the engine does not run the method (at that version), or the parameters break one of
            its constraints.
    """
    out = _one(inp)
    if inp.all_engines:
        out = out.model_copy(update={"translations": translate_setting(inp, exclude=inp.engine)})
    return out


def _one(inp: EngineConfigInput) -> EngineConfig:
    if not is_method(inp.method):  # strategy "none": speculation off
        spec = engine(inp.engine)
        argv, launch = spec.plain_launch(inp)
        setup = spec.plain_argv(inp)[1]
        return EngineConfig(engine=inp.engine, engine_version=_version(inp.engine, inp.engine_version),
                            format="none", config="", launch_command=launch, argv=argv,
                            notes=["speculative decoding off"], setup_commands=setup)
    version, support_notes = _require_support(inp.engine, inp.method, inp.engine_version)
    out = engine(inp.engine).emit(inp, version)
    return out.model_copy(update={"notes": support_notes + out.notes + _context_note(inp)})


def _context_note(inp: EngineConfigInput) -> list[str]:
    """The printed context cap is the checked one: say that longer requests are refused, and how to move both."""
    args = engine(inp.engine).context_args(inp)
    if not args:
        return []
    return [f"{' '.join(args)}: the context the memory check sized (prompt + output tokens per sequence); the "
            "engine refuses longer requests: give --context your longest prompt + output and the check and this "
            "line move together"]


def translate_setting(inp: EngineConfigInput, exclude: str | None = None) -> list[EngineTranslation]:
    """The same setting spelled for every engine (today's builds), or why an engine cannot run it."""
    out = []
    for spec in engines():
        if spec.name == exclude:
            continue
        other = inp.model_copy(update={"engine": spec.name, "engine_version": None, "all_engines": False})
        try:
            out.append(EngineTranslation(engine=spec.name, runs=True, config=_one(other)))
        except InputError as exc:
            out.append(EngineTranslation(engine=spec.name, runs=False, reason=str(exc)))
    return out

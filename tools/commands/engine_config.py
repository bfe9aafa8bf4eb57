"""`specpick engine-config`: the engine's speculative-decoding configuration for one setting.

With ``--all-engines`` the same setting (method, N, tree, per-batch schedule, disable threshold) is
translated for every engine we track, or the reason an engine cannot run it is given.
"""

from __future__ import annotations

from specpick.tools.checks.engine_config import ENGINE_LABEL, EngineConfig, EngineConfigInput, build_engine_config


def engine_config_tool(inp: EngineConfigInput) -> EngineConfig:
    """Registry entry (same as ``build_engine_config``)."""
    return build_engine_config(inp)


def _one(cfg: EngineConfig) -> list[str]:
    lines = [f"# {ENGINE_LABEL[cfg.engine]} (option names as of {cfg.engine_version})"]
    if cfg.config:
        lines += [cfg.config.rstrip(), ""]
    lines.append(f"launch: {cfg.launch_command}")
    lines += [f"note: {n}" for n in cfg.notes]
    return lines


def render_text(cfg: EngineConfig) -> str:
    lines = _one(cfg)
    for t in cfg.translations:
        lines.append("")
        if t.config is not None:
            lines += _one(t.config)
        else:
            lines += [f"# {ENGINE_LABEL[t.engine]}", f"not available: {t.reason}"]
    return "\n".join(lines)

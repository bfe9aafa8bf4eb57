"""`specpick engine-config`: the engine's speculative-decoding configuration for one setting."""

from __future__ import annotations

from specpick.tools.checks.engine_config import ENGINE_LABEL, EngineConfig, EngineConfigInput, build_engine_config


def engine_config_tool(inp: EngineConfigInput) -> EngineConfig:
    """Registry entry (same as ``build_engine_config``)."""
    return build_engine_config(inp)


def render_text(cfg: EngineConfig) -> str:
    lines = [f"# {ENGINE_LABEL[cfg.engine]} (option names as of {cfg.engine_version})"]
    if cfg.config:
        lines += [cfg.config.rstrip(), ""]
    lines.append(f"launch: {cfg.launch_command}")
    lines += [f"note: {n}" for n in cfg.notes]
    return "\n".join(lines)

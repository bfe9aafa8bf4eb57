"""The layout is the architecture: imports point one way, and no module reaches into another's private names.

Layers, lowest first (docs/ARCHITECTURE.md): vocabulary and errors -> catalog -> arch -> hub -> checks -> model
-> calibration -> commands and measure -> the answer schema and renderers -> planner -> surfaces -> evals.
An import may stay inside its own layer or go down, never up. Lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Sub-package (or top-level module) -> rank. Same rank: may import each other.
LAYERS: dict[str, int] = {
    "tools.methods": 0, "tools.vocab": 0, "tools.errors": 0, "tools.validation": 0, "tools.sanitize": 0,
    "tools.catalog": 1, "tools.deployment": 1,
    "tools.arch": 2,
    "tools.hub": 3,
    "tools.checks": 4,
    "tools.model": 5,
    # The resolver (names -> Deployment) and the builders of the model's and memory check's inputs: above the
    # model they call, below calibration and the verbs that use them.
    "tools.deploy": 5.5,
    "tools.calibration": 6, "tools.training": 6,
    "tools.commands": 7, "tools.measure": 7, "tools.tune": 7,
    "skill.schema": 8, "skill.render": 8,
    "skill.planner": 9,
    "skill.surfaces": 10,
    "evals.dataset": 11, "evals.coverage": 11, "evals.flag_triggers": 11, "evals.provenance": 11,
    "evals.evaluators": 12, "evals.runners": 12, "evals.mutants": 12, "evals.training": 12,
    "evals.report": 13,
    "evals.cli": 14,
}


def _unit(parts: tuple[str, ...]) -> str | None:
    """The layer unit of a module path like ('tools', 'model', 'estimate')."""
    if len(parts) < 2:
        return None
    key = f"{parts[0]}.{parts[1]}"
    return key if key in LAYERS else None


def _modules() -> list[tuple[Path, str]]:
    out = []
    for top in ("tools", "skill", "evals"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__" and len(parts) == 2:
                continue
            unit = _unit(parts)
            assert unit is not None, f"{path.relative_to(ROOT)} is in no layer: add its package to LAYERS"
            out.append((path, unit))
    return out


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, names) for every specpick import in the file, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("specpick."):
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("specpick.")]
    return found


def _target_unit(module: str, names: list[str]) -> list[str]:
    parts = tuple(module.split(".")[1:])
    unit = _unit(parts)
    if unit is not None:
        return [unit]
    # `from specpick.tools import hub` style: each name is a sub-package or module
    return [u for u in (_unit((*parts, n)) for n in names) if u is not None]


MODULES = _modules()


@pytest.mark.parametrize(("path", "unit"), MODULES, ids=[str(p.relative_to(ROOT)) for p, _ in MODULES])
def test_imports_point_down_the_layers(path: Path, unit: str) -> None:
    for line, module, names in _imports(path):
        for target in _target_unit(module, names):
            assert LAYERS[target] <= LAYERS[unit], (
                f"{path.relative_to(ROOT)}:{line} imports {module} ({target}, layer {LAYERS[target]}) from "
                f"{unit} (layer {LAYERS[unit]}): dependencies point down (docs/ARCHITECTURE.md)")


def test_tools_never_import_the_skill_or_the_evals() -> None:
    for path, unit in MODULES:
        if unit.startswith("tools."):
            for line, module, _ in _imports(path):
                assert not module.startswith(("specpick.skill", "specpick.evals")), \
                    f"{path.relative_to(ROOT)}:{line} imports {module}"


@pytest.mark.parametrize("top", ["tools", "skill", "evals", "tests"])
def test_no_module_imports_another_modules_private_names(top: str) -> None:
    for path in sorted((ROOT / top).rglob("*.py")):
        if ".data" in path.parts:
            continue
        for line, module, names in _imports(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{path.relative_to(ROOT)}:{line} imports private {private} from {module}"


def test_the_layer_table_names_only_packages_that_exist() -> None:
    for key in LAYERS:
        top, sub = key.split(".")
        assert (ROOT / top / sub).is_dir() or (ROOT / top / f"{sub}.py").is_file(), key

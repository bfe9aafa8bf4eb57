"""The layout is the architecture: imports point one way, form no cycle, and no module reaches into another's
private names.

Layers, lowest first (docs/ARCHITECTURE.md): vocabulary and errors -> catalog -> arch -> hub -> checks -> model
-> calibration -> commands and measure -> the answer schema and renderers -> planner -> surfaces -> evals -> the
command line that composes every verb. An import may stay inside its own layer or go down, never up.

Every way one module can load another counts: ``import`` and ``from`` statements at module level, inside functions
and under ``TYPE_CHECKING``, relative imports, and imports written as strings (``importlib.import_module("...")``,
registry entries naming ``"module:function"``). Strings are read so that none can hide an upward edge or a cycle,
and then refused: an import is written as an ``import`` statement (inside a function where start-up time needs it).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("tools", "skill", "evals")

# Package, module or top-level module -> rank; the longest matching prefix of a module's path decides. Same rank:
# may import each other (still without cycles).
LAYERS: dict[str, int] = {
    "tools.methods": 0, "tools.vocab": 0, "tools.errors": 0, "tools.validation": 0, "tools.answer": 0,
    "tools.sanitize": 0, "tools.bootstrap": 0, "tools.deployment_input": 0, "tools.measured_checks": 0,
    # The engine interface and registry (the closed set of engine names the input models read) at the bottom;
    # the engine modules, which spell configurations and read the catalog and the Hub's id rules, above the hub
    # and below every check, model, verb and planner module that asks an engine for its facts.
    "tools.engines.base": 0, "tools.engines.registry": 0,
    "tools.catalog": 1, "tools.deployment": 1,
    "tools.arch": 2,
    "tools.hub": 3,
    # The reader of the files a user hands the tool: above the Hub's JSON depth check it reuses.
    "tools.userfiles": 3.2,
    "tools.engines": 3.5,
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
    "evals.coverage_ids": 11, "evals.dataset": 11, "evals.coverage": 11, "evals.flag_triggers": 11,
    "evals.provenance": 11,
    "evals.evaluators": 12, "evals.runners": 12, "evals.mutants": 12, "evals.training": 12,
    "evals.report": 13,
    "evals.cli": 14,
    # The command line composes every verb, `specpick eval` included, so it sits above the evals that drive the
    # surfaces below it; nothing else imports it.
    "skill.surfaces.cli": 15, "skill.surfaces.entry": 15,
}

# A string naming one of our modules, alone or as "module:attribute" (registry targets, import_module arguments).
STRING_TARGET = re.compile(r"^(specpick(?:\.\w+)+)(?::\w+)?$")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("specpick", *parts))


def _unit(module: str) -> str | None:
    """The LAYERS key of ``module`` ('specpick.tools.model.estimate' -> 'tools.model'), longest prefix first."""
    parts = module.split(".")[1:]
    for n in range(len(parts), 1, -1):
        key = ".".join(parts[:n])
        if key in LAYERS:
            return key
    return None


MODULES: dict[str, Path] = {_module_name(p): p for top in TOPS for p in sorted((ROOT / top).rglob("*.py"))}


@dataclass(frozen=True)
class Edge:
    line: int
    target: str  # a module of ours
    how: str  # "import", "from", "relative", "string"
    names: tuple[str, ...] = ()


def _targets(module: str, names: list[str]) -> list[str]:
    """The modules ``from module import names`` loads: sub-modules named in ``names``, else ``module`` itself."""
    subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
    return subs or ([module] if module in MODULES else [])


def _is_resource_read(call: ast.Call) -> bool:
    """``resources.files("specpick.tools")``: a data-file read, not an import."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "files" or isinstance(func, ast.Name) and func.id == "files"


def edges(module: str, path: Path) -> list[Edge]:
    """Every way ``module`` loads another of our modules (see the module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    resource_args = {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_resource_read(n) for a in n.args}
    found: list[Edge] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target, how = ".".join([*base, *([node.module] if node.module else [])]), "relative"
            else:
                target, how = node.module or "", "from"
            if target.startswith("specpick"):
                found += [Edge(node.lineno, t, how, tuple(names)) for t in _targets(target, names)]
        elif isinstance(node, ast.Import):
            found += [Edge(node.lineno, a.name, "import") for a in node.names if a.name in MODULES]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in resource_args:
            match = STRING_TARGET.match(node.value)
            if match and match.group(1) in MODULES:
                found.append(Edge(node.lineno, match.group(1), "string"))
    return found


GRAPH: dict[str, list[Edge]] = {m: edges(m, p) for m, p in MODULES.items()}
IDS = [str(p.relative_to(ROOT)) for p in MODULES.values()]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


@pytest.mark.parametrize("module", list(MODULES), ids=IDS)
def test_every_module_is_in_a_layer(module: str) -> None:
    if module.count(".") == 1:  # specpick.tools, specpick.skill, specpick.evals: the package roots
        return
    assert _unit(module) is not None, f"{MODULES[module].relative_to(ROOT)} is in no layer: add it to LAYERS"


@pytest.mark.parametrize("module", list(MODULES), ids=IDS)
def test_imports_point_down_the_layers(module: str) -> None:
    unit = _unit(module)
    for edge in GRAPH[module]:
        target = _unit(edge.target)
        if unit is None or target is None:
            continue
        assert LAYERS[target] <= LAYERS[unit], (
            f"{MODULES[module].relative_to(ROOT)}:{edge.line} imports {edge.target} ({edge.how}; {target}, layer "
            f"{LAYERS[target]}) from {unit} (layer {LAYERS[unit]}): dependencies point down (docs/ARCHITECTURE.md)")


def test_no_module_import_cycle() -> None:
    graph = {m: {e.target for e in es if e.target != m} for m, es in GRAPH.items()}
    cycles = _cycles(graph)
    detail = ["; ".join(f"{m} -> {e.target} (line {e.line}, {e.how})" for m in c for e in GRAPH[m] if e.target in c)
              for c in cycles]
    assert not cycles, "import cycles: " + " | ".join(detail)


@pytest.mark.parametrize("module", list(MODULES), ids=IDS)
def test_imports_are_statements_not_strings(module: str) -> None:
    strings = [f"line {e.line}: {e.target}" for e in GRAPH[module] if e.how == "string"]
    assert not strings, (f"{MODULES[module].relative_to(ROOT)} names modules in strings ({', '.join(strings)}): "
                         "write an import statement (inside a function if start-up time needs it)")


def test_tools_never_import_the_skill_or_the_evals() -> None:
    for module, found in GRAPH.items():
        if module.startswith("specpick.tools"):
            for edge in found:
                assert not edge.target.startswith(("specpick.skill", "specpick.evals")), \
                    f"{MODULES[module].relative_to(ROOT)}:{edge.line} imports {edge.target}"


@pytest.mark.parametrize("top", [*TOPS, "tests"])
def test_no_module_imports_another_modules_private_names(top: str) -> None:
    for path in sorted((ROOT / top).rglob("*.py")):
        if ".data" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("specpick.")):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                assert not private, f"{path.relative_to(ROOT)}:{node.lineno} imports private {private}"


def test_the_layer_table_names_only_modules_that_exist() -> None:
    for key in LAYERS:
        path = ROOT.joinpath(*key.split("."))
        assert path.is_dir() or path.with_suffix(".py").is_file(), key


# The reader itself: each way of importing is seen (a reader that misses one would pass a layered-looking tree).
READER_CASES = [
    ("from specpick.tools.vocab import Method\n", "specpick.tools.vocab", "from"),
    ("def f():\n    from specpick.tools import vocab\n", "specpick.tools.vocab", "from"),
    ("import specpick.tools.errors\n", "specpick.tools.errors", "import"),
    ("from . import overlay\n", "specpick.tools.catalog.overlay", "relative"),
    ("from ..model import estimate\n", "specpick.tools.model.estimate", "relative"),
    ("import importlib\nimportlib.import_module('specpick.skill.render')\n", "specpick.skill.render", "string"),
    ("T = dict(target='specpick.tools.commands.vram:vram_fit')\n", "specpick.tools.commands.vram", "string"),
]


@pytest.mark.parametrize(("source", "target", "how"), READER_CASES)
def test_the_reader_sees_every_way_of_importing(tmp_path: Path, source: str, target: str, how: str) -> None:
    path = ROOT / "tools" / "catalog" / "reader_probe.py"  # named inside the tree: relative imports resolve
    found = [(e.target, e.how) for e in _edges_of_text(source, path)]
    assert (target, how) in found, found


def _edges_of_text(source: str, path: Path) -> list[Edge]:
    class _Text(type(path)):  # a path whose text is ``source``, without writing into the tree
        def read_text(self, encoding: str | None = None) -> str:
            return source

    return edges(_module_name(path), _Text(path))


def test_a_resource_read_is_not_an_import() -> None:
    text = "from importlib import resources\nresources.files('specpick.tools').joinpath('data')\n"
    assert _edges_of_text(text, ROOT / "tools" / "catalog" / "reader_probe.py") == []


def test_the_cycle_finder_finds_a_cycle_and_only_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []

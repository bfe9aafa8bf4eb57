"""Functions in the speed model and the checks stay small: at most 60 lines and 8 parameters each.

Arguments that travel together go into one frozen value (``tools/model/cost_inputs.py``: hardware, precision,
runtime, step load, draft setup; ``priors.PriorQuery``); a function past the limits is a sign they did not.
Lines run from ``def`` to the last line of the body (docstring and nested functions included, decorators not).
Parameters count positional-only, ordinary and keyword-only ones, ``*args`` and ``**kwargs``; ``self``/``cls``
do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tools/model", "tools/checks")
MAX_LINES = 60
MAX_PARAMS = 8


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def _oversized(source: str, where: str) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            params = _params(node)
            if lines > MAX_LINES or params > MAX_PARAMS:
                out.append(f"{where}:{node.lineno} {node.name}: {lines} lines, {params} parameters")
    return out


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_walk_sees_every_module():
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"tools/model/cyclecost.py", "tools/model/steptime.py", "tools/checks/vram.py"} <= names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_functions_stay_within_60_lines_and_8_parameters(path: Path):
    assert _oversized(path.read_text("utf-8"), path.relative_to(ROOT).as_posix()) == []


@pytest.mark.parametrize(("source", "expected"), [
    # keyword-only parameters count; self does not
    ("class A:\n    def f(self, a, b, c, d, e, f, g, h, *, i): pass\n", ["m.py:2 f: 1 lines, 9 parameters"]),
    ("class A:\n    def f(self, a, b, c, d, e, f, g, h): pass\n", []),
    ("def f(*args, **kwargs): pass\n", []),
    ("def f(a, b, c, d, e, f, g, *rest, **extra): pass\n", ["m.py:1 f: 1 lines, 9 parameters"]),
    ("def f():\n" + "    x = 1\n" * 60, ["m.py:1 f: 61 lines, 0 parameters"]),
    ("def f():\n" + "    x = 1\n" * 59, []),
])
def test_the_counter_counts_lines_and_parameters_as_stated(source: str, expected: list[str]):
    assert _oversized(source, "m.py") == expected

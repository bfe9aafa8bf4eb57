"""Functions stay small: at most 60 lines and 8 parameters each, in ``tools/``, ``skill/`` and ``evals/``.

``tools/model`` and ``tools/checks`` hold it without exception. Elsewhere the functions that were over the limits
when the gate widened (issue 33) are listed in ``KNOWN_OVERSIZED`` by where they live; the list may only shrink: a new
function over the limits fails, and so does an entry whose function has come within them (take it off the list).

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
PACKAGES = ("tools", "skill", "evals")
STRICT = ("tools/model", "tools/checks")
MAX_LINES = 60
MAX_PARAMS = 8
# module:function -> why it is still long (to split next); never add to it.
KNOWN_OVERSIZED = frozenset({
    "tools/arch/params.py:count_params", "tools/commands/catalog.py:update_overlay",
    "tools/commands/train_plan.py:train_plan_tool", "tools/deploy/evidence.py:build_evidence",
    "tools/deploy/requests.py:estimate_request", "tools/deploy/requests.py:memory_fit",
    "tools/hub/client.py:fetch_file", "tools/hub/config.py:config_to_spec", "tools/hub/resolve.py:resolve_model_spec",
    "tools/measure/endpoint.py:stream_request", "tools/measure/endpoint.py:run_batch",
    "tools/measure/local.py:run_local", "tools/measure/report.py:render_text", "tools/measure/run.py:_run_endpoint",
    "tools/training/economics.py:_speedup", "tools/training/economics.py:economics",
    "tools/training/fitness.py:head_fitness", "skill/planner/candidates.py:_head_candidate",
    "skill/planner/candidates.py:_draft_candidate", "skill/planner/plan.py:_assemble", "skill/render.py:to_markdown",
    "skill/surfaces/agent.py:run_conversation", "skill/surfaces/agent.py:__init__", "skill/surfaces/chat.py:run",
    "skill/surfaces/cli.py:main", "evals/evaluators/configcheck.py:check_config", "evals/report.py:run_eval",
})


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
    assert {"tools/model/cyclecost.py", "tools/model/steptime.py", "tools/checks/vram.py", "skill/planner/plan.py",
            "evals/report.py", "tools/deploy/resolve.py"} <= names


def _allowed(where: str, line: str) -> bool:
    """An entry of ``KNOWN_OVERSIZED`` outside the strict packages."""
    name = line.split(" ", 1)[1].split(":", 1)[0]
    return not where.startswith(STRICT) and f"{where}:{name}" in KNOWN_OVERSIZED


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_functions_stay_within_60_lines_and_8_parameters(path: Path):
    where = path.relative_to(ROOT).as_posix()
    assert [o for o in _oversized(path.read_text("utf-8"), where) if not _allowed(where, o)] == []


def test_the_known_oversized_list_only_shrinks():
    still = {f"{p.relative_to(ROOT).as_posix()}:{o.split(' ', 1)[1].split(':', 1)[0]}"
             for p in _modules() for o in _oversized(p.read_text("utf-8"), p.relative_to(ROOT).as_posix())}
    assert sorted(KNOWN_OVERSIZED - still) == [], "within the limits now: take these off KNOWN_OVERSIZED"


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

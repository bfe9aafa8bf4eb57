"""Engine knowledge has one home: tools/engines/ (issue 33).

A dict literal keyed by two or more engine names anywhere else in tools/, skill/ or evals/ is a second home that
drifts (the launch command was spelt in three places, the metric names in three): it must be an ``EngineSpec``
attribute or method instead. Comparisons with an engine's name (``engine == "vllm"``, ``engine in ("vllm", ...)``)
are counted per file and may not grow past the baseline below, taken when the registry took over; a new one
must ask ``engine(name)`` for the fact. And an engine registered through the same hook a plugin uses is found in
every verb's choices, configurations and measurement plans without touching any other file.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from specpick.tools.engines.lookup import engines
from specpick.tools.engines.registry import BUILTIN, names

ROOT = Path(__file__).resolve().parents[1]
HOME = Path("tools/engines")
SCANNED = ("tools", "skill", "evals")

# Engine-keyed tables still allowed outside tools/engines/, and why. The list may only shrink.
TABLES_ALLOWED: dict[str, tuple[int, str]] = {
    "tools/model/overhead.py": (1, "fitted constants per harness (ONE_MODEL), keyed by harness, not by engine"),
    "evals/mutants.py": (2, "a mutant writes one engine's spelling of a contradiction on purpose"),
}
# Engine-name comparisons per file when the registry took over (88 in 32 files before it, 60 in 25 after).
# The count may only fall.
COMPARISONS_BASELINE: dict[str, int] = {
    "evals/evaluators/configcheck.py": 5,
    "evals/evaluators/graders.py": 1,
    "evals/flag_triggers.py": 2,
    "evals/mutants.py": 5,
    "skill/planner/compat.py": 3,
    "skill/planner/flags.py": 8,
    "skill/planner/plan.py": 7,
    "skill/surfaces/rules.py": 1,
    "tools/calibration/cases.py": 1,
    "tools/calibration/engine_cases.py": 3,
    "tools/catalog/freshness.py": 1,
    "tools/commands/catalog_rows.py": 1,
    "tools/commands/engine_config.py": 4,
    "tools/commands/speedup.py": 1,
    "tools/deploy/drafts.py": 1,
    "tools/deploy/resolve.py": 1,
    "tools/measure/estimate.py": 1,
    "tools/measure/metrics.py": 1,
    "tools/measure/ngram_sim.py": 2,
    "tools/measure/report.py": 1,
    "tools/measure/run.py": 1,
    "tools/model/cyclecost.py": 1,
    "tools/model/draftshape.py": 2,
    "tools/model/estimate.py": 4,
    "tools/training/recipes.py": 2,
}


def _findings(tree: ast.AST, engine_names: set[str]) -> tuple[list[tuple[int, list[str]]], int]:
    """(dict literals keyed by two or more engines, with their line; comparisons with an engine's name)."""
    tables: list[tuple[int, list[str]]] = []
    comparisons = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in engine_names]
            if len(keys) >= 2:
                tables.append((node.lineno, keys))
        elif isinstance(node, ast.Compare):
            for c in node.comparators:
                if isinstance(c, ast.Constant) and c.value in engine_names:
                    comparisons += 1
                elif isinstance(c, (ast.Tuple, ast.List, ast.Set)) and any(
                        isinstance(e, ast.Constant) and e.value in engine_names for e in c.elts):
                    comparisons += 1
    return tables, comparisons


def _scan() -> tuple[Counter[str], Counter[str], list[str]]:
    tables: Counter[str] = Counter()
    comparisons: Counter[str] = Counter()
    where: list[str] = []
    for sub in SCANNED:
        for path in sorted((ROOT / sub).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.is_relative_to(HOME):
                continue
            found, compared = _findings(ast.parse(path.read_text("utf-8")), set(BUILTIN))
            if found:
                tables[str(rel)] = len(found)
                where += [f"{rel}:{line} {keys}" for line, keys in found]
            if compared:
                comparisons[str(rel)] = compared
    return tables, comparisons, where


def test_every_builtin_engine_has_its_module() -> None:
    assert [e.name for e in engines()][: len(BUILTIN)] == list(BUILTIN)
    for name in BUILTIN:
        assert (ROOT / HOME / f"{name}.py").is_file(), name


def test_no_engine_keyed_table_outside_the_engines() -> None:
    tables, _, where = _scan()
    over = {f: (n, TABLES_ALLOWED.get(f, (0, ""))[0]) for f, n in tables.items()
            if n > TABLES_ALLOWED.get(f, (0, ""))[0]}
    assert over == {}, ("engine-keyed tables outside tools/engines/ (make them EngineSpec attributes): "
                        + "; ".join(where))


def test_engine_name_comparisons_only_fall() -> None:
    _, comparisons, _ = _scan()
    over = {f: (n, COMPARISONS_BASELINE.get(f, 0)) for f, n in comparisons.items()
            if n > COMPARISONS_BASELINE.get(f, 0)}
    assert over == {}, ("engine-name comparisons above the baseline (file: found, allowed); ask engine(name) for "
                        f"the fact instead: {over}")


def test_the_scan_finds_planted_tables_and_comparisons() -> None:
    text = ('X = {"vllm": 1, "sglang": 2}\nY = {"vllm": 1}\nif e == "trtllm" or e in ("llamacpp", "x"):\n'
            '    pass\nif e != "other":\n    pass\n')
    tables, compared = _findings(ast.parse(text), set(BUILTIN))
    assert [keys for _, keys in tables] == [["vllm", "sglang"]] and compared == 2


# A toy engine, registered through the plugin hook before anything else is imported (the input models read the
# registry's names when they are built). It runs no method of the support matrix, so its configurations are the
# plain launch and its own emitter called directly.
TOY = r'''
import contextlib, io, json, sys
from specpick.tools.engines.registry import register

def load():
    from specpick.tools.answer import EngineConfig, MetricRef
    from specpick.tools.engines.base import EngineSpec, shell_join

    class Toy(EngineSpec):
        def emit(self, inp, version):
            argv = ["toy-serve", inp.verifier, "--toy-draft", str(inp.num_draft_tokens)]
            return EngineConfig(engine=self.name, engine_version=version, format=self.format,
                                config=f"--toy-draft {inp.num_draft_tokens}", launch_command=shell_join(argv), argv=argv)
        def parse(self, config):
            words = config.config.split()
            return {"key": None, "num_draft_tokens": int(words[1])} if words[:1] == ["--toy-draft"] else None
        def plain_argv(self, inp):
            return ["toy-serve", inp.verifier], []
        def serve_command(self, serve, spec_args):
            return [serve.executable, serve.model, "--port", str(serve.port), *spec_args]

    return Toy(name="toyengine", label="ToyServe", format="cli-flags", harness="vllm",
               metrics=(MetricRef(engine="toyengine", name="toy:accepted_total", meaning="toy counter"),),
               metrics_port=9100, read_step="read the toy counter", under_load="toy: lower N", launches=True)

register("toyengine", load)

from specpick.skill.surfaces.cli import main
from specpick.skill.planner.measurement import build_measurement_plan
from specpick.tools.checks.engine_config import EngineConfigInput, build_engine_config
from specpick.tools.tune.launch import LaunchSpec, command
from specpick.tools.engines.lookup import engine

out = {}
for verb in ("recommend", "speedup", "vram", "engine-config", "tune"):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        main([verb, "--help"])
    out[verb] = "toyengine" in buf.getvalue()
v = "meta-llama/Llama-3.1-8B-Instruct"
plain = build_engine_config(EngineConfigInput(engine="toyengine", method="none", verifier=v))
out["plain"] = plain.launch_command
cfg = build_engine_config(EngineConfigInput(engine="vllm", method="ngram", verifier=v, all_engines=True))
out["translations"] = [t.engine for t in cfg.translations]
emitted = engine("toyengine").emit(EngineConfigInput(engine="toyengine", method="ngram", verifier=v,
                                                     num_draft_tokens=4), "1.0")
out["parsed"] = engine("toyengine").parse(emitted)
plan = build_measurement_plan(engine="toyengine", verifier=v, strategy="ngram", concurrency=4, workload="code",
                              launch_command=emitted.launch_command, baseline_command=plain.launch_command)
out["plan_metrics"] = [m.name for m in plan.metrics]
out["plan_commands"] = plan.commands
out["serve"] = command(LaunchSpec("toyengine", "toy-bin", "/m"), 8123, ["--toy-draft", "3"])
print(json.dumps(out))
'''


def test_a_registered_toy_engine_is_in_every_verb_config_and_plan() -> None:
    proc = subprocess.run([sys.executable, "-c", TOY], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(out[v] for v in ("recommend", "speedup", "vram", "engine-config", "tune")), out
    assert out["plain"] == "toy-serve meta-llama/Llama-3.1-8B-Instruct"
    assert "toyengine" in out["translations"]
    assert out["parsed"] == {"key": None, "num_draft_tokens": 4}
    assert out["plan_metrics"] == ["toy:accepted_total"]
    assert "# speculative server:  toy-serve meta-llama/Llama-3.1-8B-Instruct --toy-draft 4" in out["plan_commands"]
    assert any("http://HOST:9100" in c for c in out["plan_commands"])
    assert out["serve"] == ["toy-bin", "/m", "--port", "8123", "--toy-draft", "3"]


def test_names_are_the_builtins_unless_something_registered() -> None:
    assert names()[: len(BUILTIN)] == BUILTIN

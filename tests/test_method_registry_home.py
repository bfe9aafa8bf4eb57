"""Method knowledge has one home: tools/methods.py (issue 23).

A literal tuple, list, set or dict naming two or more methods anywhere else in tools/, skill/ or evals/ is a second
home that drifts (two HEAD_METHOD_FOR tables once disagreed): it must be a registry attribute instead. Comparisons
with one method's name (``method == "mtp"``) are counted per file and may not grow past the counts below, which
record the comparisons left when the registry took over (each file's reason is stated): a new property test must
read an attribute of ``method_record(name)``.
"""

from __future__ import annotations

import ast
import csv
from collections import Counter
from pathlib import Path

from specpick.tools.methods import METHOD_NAMES, REGISTRY

ROOT = Path(__file__).resolve().parents[1]
HOME = Path("tools/methods.py")
SCANNED = ("tools", "skill", "evals")

# Comparisons with a method's name still allowed per file, and why they remain. The count may only fall.
COMPARISONS_ALLOWED: dict[str, tuple[int, str]] = {
    # Engine option spellings: each branch writes one method's own engine options (cited in the emitter).
    "tools/engines/vllm.py": (4, "a method's own vLLM options (DSpark sampling, draft TP, n-gram, suffix)"),
    "tools/engines/llamacpp.py": (2, "a separate draft model's GGUF quantization and draft flags"),
    "tools/commands/engine_config.py": (3, "flags that exist for one method only (prompt lookup, TRT-LLM EAGLE-3)"),
    "evals/evaluators/configcheck.py": (7, "the grader re-reads one method's own engine options"),
    "evals/mutants.py": (5, "a mutant swaps the chosen method's key for another method's spelling; draft pool"),
    # Data rows and config files: the comparison reads what a row or a config.json calls itself.
    "tools/model/prior_rules.py": (3, "rules fitted on one method's published rows (EAGLE-1 chains, MTP blockwise)"),
    "tools/checks/heads.py": (6, "config.json model_type spellings and MTP's in-checkpoint layers"),
    "tools/deploy/drafts.py": (2, "drafts.csv/heads.csv rows of kind draft_model"),
    "tools/calibration/engine_cases.py": (4, "engine rows of one method (Medusa tree, draft/PARD sizing, MTP chain)"),
    "tools/calibration/cases.py": (5, "published rows of one method (lookahead, Medusa, MTP, suffix, draft sizing)"),
    # The cost model's head architectures (one formula per head kind, cited in head_step_time).
    "tools/model/steptime.py": (3, "EAGLE-3 and Medusa head shapes"),
    # Facts of one method that no other method shares (left to convert to attributes; see issue 23).
    "tools/training/recipes.py": (4, "EAGLE-3 / MTP training recipes"),
    "tools/deploy/resolve.py": (2, "a separate draft model's spec"),
    "tools/checks/method_fit.py": (1, "a separate draft model is counted in its own format"),
    "tools/commands/train_plan.py": (2, "MTP is trained by the model's owner"),
    "tools/commands/speedup.py": (3, "PARD draft sizing"),
    "skill/planner/flags.py": (14, "compatibility flags about one method each (their definitions name it)"),
    "skill/planner/candidates.py": (3, "prompt lookup's reason, the draft/PARD candidate builders"),
    "skill/planner/compat.py": (1, "EAGLE-3's tokenizer reason"),
    "skill/planner/context.py": (1, "a draft model needs a second model"),
    "skill/planner/plan.py": (2, "the user's draft and n-gram's low-overlap rationale"),
    "skill/planner/ranking.py": (3, "suffix decoding's agentic-only evidence"),
    "skill/planner/tuning.py": (3, "MTP's sweep cap, lookahead and suffix tuning"),
    "skill/planner/measurement.py": (1, "n-gram's measurement advice"),
    "evals/evaluators/graders.py": (1, "a draft model's tokenizer check"),
}


def _findings(tree: ast.AST) -> tuple[list[tuple[int, list[str]]], int]:
    """(literal collections naming two or more methods with their line, comparisons with one method's name)."""
    names = set(METHOD_NAMES)
    literals: list[tuple[int, list[str]]] = []
    comparisons = 0
    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            found = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names]
        elif isinstance(node, ast.Dict):
            found = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in names]
        elif isinstance(node, ast.Compare):
            comparisons += sum(1 for c in node.comparators if isinstance(c, ast.Constant) and c.value in names)
        if len(found) >= 2:
            literals.append((node.lineno, found))
    return literals, comparisons


def _scan() -> tuple[list[tuple[str, int, list[str]]], Counter[str]]:
    literals: list[tuple[str, int, list[str]]] = []
    comparisons: Counter[str] = Counter()
    for sub in SCANNED:
        for path in sorted((ROOT / sub).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel == HOME:
                continue
            found, compared = _findings(ast.parse(path.read_text("utf-8")))
            literals += [(str(rel), line, names) for line, names in found]
            if compared:
                comparisons[str(rel)] = compared
    return literals, comparisons


def test_the_scan_knows_every_method_of_the_registry() -> None:
    # The scan's vocabulary is the registry's: a method added there is looked for everywhere else at once.
    assert set(METHOD_NAMES) == {r.name for r in REGISTRY} and len(METHOD_NAMES) >= 13


def test_no_literal_method_list_outside_the_registry() -> None:
    literals, _ = _scan()
    assert literals == [], "literal method lists outside tools/methods.py (make them registry attributes):\n" + \
        "\n".join(f"{f}:{line} {names}" for f, line, names in literals)


def test_method_name_comparisons_do_not_grow() -> None:
    _, comparisons = _scan()
    over = {f: (n, COMPARISONS_ALLOWED.get(f, (0, ""))[0]) for f, n in comparisons.items()
            if n > COMPARISONS_ALLOWED.get(f, (0, ""))[0]}
    assert over == {}, ("method-name comparisons above the allowed count (file: found, allowed); test a registry "
                        f"attribute instead: {over}")


def test_the_scan_finds_planted_lists_and_comparisons() -> None:
    # The detector itself: planted literals and comparisons are found, so an empty scan means there are none.
    found, compared = _findings(ast.parse('X = ("eagle", "mtp")\nY = {"ngram": 1, "suffix": 2}\n'
                                          'Z = ("eagle", "other")\nif m == "ngram" or m in ("x",):\n    pass\n'))
    assert [names for _, names in found] == [["eagle", "mtp"], ["ngram", "suffix"]] and compared == 1


def _method_cells(table: str) -> set[str]:
    with (ROOT / "tools" / "data" / table).open(encoding="utf-8") as f:
        return {r["method"].strip().lower() for r in csv.DictReader(f)}


def test_every_measured_method_spelling_has_an_alias_row() -> None:
    # The alias table replaced two literal maps: every method cell of the measurement tables must still resolve
    # (to one of our methods) or be named as not modelled, and every alias must point at a registry method.
    from specpick.tools.catalog.published import UNMODELLED, method_aliases

    published, engine = method_aliases("published"), method_aliases("engine")
    paper_cells = _method_cells("published_measurements.csv") | _method_cells("published_2026.csv")
    assert {c for c in paper_cells if c not in published and c not in UNMODELLED} == set()
    assert {c for c in _method_cells("engine_measurements.csv") if c not in published and c not in engine} == set()
    assert {m for m, _ in [*published.values(), *engine.values()]} <= set(METHOD_NAMES)

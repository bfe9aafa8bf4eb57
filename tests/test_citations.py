"""Citations resolve inside the repository: nothing cites the team's scratch folder outside it.

Code, data and eval cases once cited ``../shared/...`` files that a user of the repository never has. What they
cite is vendored under docs/ (docs/references/*.md, docs/DECISION-RULES.md) or is the catalog itself.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Built from parts so that this file does not match itself.
OUTSIDE = re.compile(r"(?<![\w.-])(?:\.\./)?" + "shared" + r"/")
SCANNED = ["tools", "skill", "evals", "tests", "scripts", ".ci", "docs"]
TOP_FILES = ["README.md", "SKILL.md", "pyproject.toml"]
TEXT_SUFFIXES = {".py", ".md", ".csv", ".yaml", ".yml", ".json", ".jsonl", ".toml", ".sh", ""}
VENDORED = ["docs/references/ENGINES.md", "docs/references/TRAINING-CLIS.md", "docs/references/OFFLINE.md", "docs/references/VLLM-CPU.md",
            "docs/references/LLAMACPP-PLACEMENT.md",
            "docs/references/DATA.md", "docs/DECISION-RULES.md"]


def _files() -> list[Path]:
    out = [ROOT / f for f in TOP_FILES]
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            if (path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts
                    and ".data" not in path.parts and path.name != Path(__file__).name):
                out.append(path)
    return out


def test_nothing_cites_a_path_outside_the_repository() -> None:
    found = []
    for path in _files():
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "cite the vendored copy under docs/ or the upstream source instead:\n" + "\n".join(found)


@pytest.mark.parametrize("doc", VENDORED)
def test_vendored_references_exist_and_say_where_they_came_from(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    head = text[:1500].lower()
    assert "vendored" in head or "seed" in head, f"{doc} should say where it came from"


def test_docs_paths_cited_in_code_exist() -> None:
    # Our docs: docs/UPPERCASE.md and docs/references/*.md (the vendored files cite upstream repos' docs/ paths).
    cited = re.compile(r"(?<![\w/])docs/(?:references/[\w.-]+|[A-Z][\w-]*)\.md")
    missing = set()
    for path in _files():
        for m in cited.finditer(path.read_text(encoding="utf-8", errors="replace")):
            if not (ROOT / m.group(0)).is_file():
                missing.add(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not missing, sorted(missing)


def test_published_dev_citations_point_at_the_identical_catalog_file() -> None:
    """Eval cases cite "published-dev.csv:L<n>": the catalog keeps that reference set byte for byte."""
    catalog = (ROOT / "tools" / "data" / "published_measurements.csv").read_text(encoding="utf-8").splitlines()
    assert catalog[0].startswith("source_id,source,verifier_model")
    assert len(catalog) >= 273  # header + the 272 reference rows whose line numbers the cases cite
    assert "published_measurements.csv" in (ROOT / "docs" / "references" / "DATA.md").read_text(encoding="utf-8")


# A citation a user cannot open: an id in the team's private code-search tool ("search-index file id N",
# "index id N", "read_file id N", "find_string hit ... id N"). Built from parts so this file does not match itself.
PRIVATE_ID = re.compile(
    r"(?:search[- ]index|\b" + "read" + r"_file\b|\b" + "find" + r"_string\b|\bindex (?:file )?id\b|\bfile ids?\s+\d|"
    r"\bstored public files? (?:ids? )?\d|\bid\s+\d{10,12}\b)",
    re.IGNORECASE)


@pytest.mark.parametrize("cell", [
    # phrasings that tools/data and docs/pending-data carried before they were replaced by public citations
    "MiniCPM5 DSpark llama-server guide tested on llama.cpp b11146, 2026-09-29 (search-index file id 70442515722)",
    "public config validators (search-index file ids 57961611127, 52354742033: same fields)",
    "transcribed in RS-1 note and independently in a second notes file (index id 55062109995) for T5-small rows",
    "find_string hit (public repo script; id 71620548537)",
    "AngelSpec docs dfly.md (stored public file id 70270724441, 'Released models')",
    "public loader code (file ids 60584161949, 68709821401)",
    "stored in a public GitHub file in the search index (read_file id 62180408864; repository not shown)",
])
def test_private_id_pattern_catches_the_phrasings_once_used(cell: str) -> None:
    assert PRIVATE_ID.search(cell)


@pytest.mark.parametrize("cell", [
    "github:vllm-project/recipes@8959cf6 models/zai-org/GLM-5.yaml (~744B/40B, ctx 202752, MTP 3 draft tokens)",
    "committed golden acceptance-length curve; source Actions run 27180633016",
    "68881844135 is not cited: exact total_parameters 119401317952 from model.safetensors.index.json",
])
def test_private_id_pattern_leaves_public_citations_alone(cell: str) -> None:
    assert not PRIVATE_ID.search(cell)


def test_no_catalog_cell_or_doc_cites_a_private_search_index_id() -> None:
    # The product cites only what is in the repository or its public upstream; ids of our search tool are neither.
    found = []
    for path in sorted((ROOT / "tools" / "data").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for n, row in enumerate(csv.reader(fh), 1):
                found += [f"{path.name}:{n}: {c[:120]}" for c in row if PRIVATE_ID.search(c)]
    for path in sorted((ROOT / "docs").rglob("*")):
        if path.is_file() and path.suffix in {".md", ".csv"}:
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if PRIVATE_ID.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "cite the public source (URL or github:owner/repo@commit path) instead:\n" + "\n".join(found)

"""What `pip install .` ships: every sub-package, every data file, SKILL.md and the file it links to.

A wheel once shipped without ``specpick.tools.measure`` while every test passed against the checkout. These
tests build the wheel (or take the one scripts/test.sh built and installed, ``SPECPICK_WHEEL``) and compare it
with the folders in the checkout. Under scripts/test.sh (``CI_INSTALLED=1``) they also check that the suite
imports the installed package, not this checkout.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# folder in the checkout -> package in the distribution (pyproject.toml [tool.setuptools.package-dir])
PACKAGE_DIRS = {"tools": "specpick/tools", "skill": "specpick/skill", "evals": "specpick/evals"}
# Data files the code reads at run time; each pattern must match something, or the pattern is stale.
DATA_PATTERNS = [
    "tools/data/*.csv",
    "tools/data/*.json",
    "tools/data/prompts/*.jsonl",
    "skill/SKILL.md",
    "skill/references/*.md",
    "evals/cases/*.yaml",
]
SETUPTOOLS_MIN = (77,)  # pyproject's build-system requirement (PEP 639 licence string)


def _in_wheel(path: Path) -> str:
    """The wheel member name of a checkout file under tools/, skill/ or evals/."""
    rel = path.relative_to(ROOT).as_posix()
    top, _, rest = rel.partition("/")
    return f"{PACKAGE_DIRS[top]}/{rest}"


def _build_wheel(out: Path) -> Path:
    # Build from a clean copy: a stale build/ in the checkout could carry deleted modules into the wheel.
    src = out / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "tests", ".measure"))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)]
    try:
        import setuptools

        if tuple(int(p) for p in setuptools.__version__.split(".")[:1]) >= SETUPTOOLS_MIN:
            cmd.insert(4, "--no-build-isolation")  # no network needed when the build backend is already here
    except ImportError:
        pass
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = out.glob("spec_decode_picker-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("SPECPICK_WHEEL")
    return Path(given) if given else _build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def _packages() -> list[Path]:
    return sorted(p.parent for top in PACKAGE_DIRS for p in (ROOT / top).rglob("__init__.py")
                  if "__pycache__" not in p.parts)


def test_the_checkout_has_the_packages_we_expect() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _packages()}
    assert {"tools", "tools/measure", "skill/surfaces", "evals"} <= names


def test_every_package_and_module_is_in_the_wheel(wheel_names: set[str]) -> None:
    missing = [_in_wheel(py) for pkg in _packages() for py in pkg.glob("*.py") if _in_wheel(py) not in wheel_names]
    assert not missing, f"not in the wheel (add the package to pyproject.toml [tool.setuptools] packages): {missing}"


@pytest.mark.parametrize("pattern", DATA_PATTERNS)
def test_every_data_file_is_in_the_wheel(pattern: str, wheel_names: set[str]) -> None:
    files = sorted(ROOT.glob(pattern))
    assert files, f"{pattern} matches nothing in the checkout"
    missing = [_in_wheel(f) for f in files if _in_wheel(f) not in wheel_names]
    assert not missing, f"not in the wheel (pyproject.toml [tool.setuptools.package-data]): {missing}"


def test_no_stray_top_level_packages_in_the_wheel(wheel_names: set[str]) -> None:
    tops = {n.split("/")[0] for n in wheel_names if not n.startswith("spec_decode_picker-")}
    assert tops == {"specpick"}


def _links(markdown: str) -> list[str]:
    return [link for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", markdown) if "://" not in link]


def test_skill_md_in_the_wheel_is_the_root_file(wheel: Path, wheel_names: set[str]) -> None:
    assert "specpick/skill/SKILL.md" in wheel_names
    with zipfile.ZipFile(wheel) as zf:
        packaged = zf.read("specpick/skill/SKILL.md").decode()
    assert packaged == (ROOT / "SKILL.md").read_text(encoding="utf-8")


def test_skill_md_links_resolve_in_the_checkout_and_in_the_wheel(wheel_names: set[str]) -> None:
    links = _links((ROOT / "SKILL.md").read_text(encoding="utf-8"))
    assert links, "SKILL.md links its references"
    for link in links:
        # A harness reading the repository as a skill folder resolves from the root...
        assert (ROOT / link).is_file(), f"{link} does not resolve from the root SKILL.md"
        # ...and one reading the installed package resolves from specpick/skill/.
        installed = posixpath.normpath(posixpath.join("specpick/skill", link))
        assert installed in wheel_names, f"{link} does not resolve from the installed SKILL.md ({installed})"


@pytest.mark.skipif(os.environ.get("CI_INSTALLED") != "1",
                    reason="only under scripts/test.sh, which installs the wheel and sets CI_INSTALLED=1")
def test_the_suite_imports_the_installed_package() -> None:
    import specpick.skill
    import specpick.tools

    for module in (specpick.tools, specpick.skill):
        path = Path(module.__file__).resolve()
        assert "site-packages" in path.parts, f"{module.__name__} imported from {path}, not the installed wheel"
        assert ROOT not in path.parents
    dist = metadata.distribution("spec-decode-picker")
    # Non-editable: the distribution lists real module files, not an __editable__ finder.
    files = {str(f) for f in dist.files or []}
    assert "specpick/tools/measure/__init__.py" in files
    assert not any("__editable__" in f for f in files)

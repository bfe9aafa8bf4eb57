"""Shared test configuration: fixtures that start real local stand-ins live in tests/support/.

Tests that need more than the ``[test]`` install say so with a marker, and are skipped with the reason when that
part is absent (checked by importing it, never by an environment variable):
* ``@pytest.mark.requires_extra("measure")``: the packages of that extra in pyproject.toml import;
* ``@pytest.mark.vllm``: the vLLM CPU venv is built (``.ci/setup-measure.sh``; scripts/test.sh runs it).
scripts/test.sh installs every extra and builds the venv, then fails when anything was skipped.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

pytest_plugins = [
    "tests.support.fakehub",
    "tests.support.tokenizer_data",
    "tests.support.fakeclaude",
]

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


@cache
def extra_modules(extra: str) -> tuple[str, ...]:
    """The import names of an optional extra, read off its requirements in pyproject.toml (``torch==2.13.0`` ->
    ``torch``; every package of the measure extra imports under its distribution name)."""
    requirements = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"][extra]
    return tuple(re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].replace("-", "_") for r in requirements)


@cache
def missing_modules(extra: str) -> tuple[str, ...]:
    """The packages of ``extra`` that do not import here (imported once per session, only when a test needs them)."""
    missing = []
    for name in extra_modules(extra):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return tuple(missing)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("requires_extra"):
        (extra,) = mark.args
        if missing := missing_modules(extra):
            pytest.skip(f"needs the '{extra}' extra (pip install '.[{extra}]'): {', '.join(missing)} not installed")
    if item.get_closest_marker("vllm") is not None:
        from tests.support.vllm_server import vllm_venv_ready

        if not vllm_venv_ready():
            pytest.skip("needs the vLLM CPU venv: run .ci/setup-measure.sh (scripts/test.sh runs it first)")


# --- hermetic state: no test reads the user's Hub cache, catalog overlay, tokens or model choice -----------------
# A `specpick catalog update` run on the same machine writes <HF_HOME>/specpick/catalog-overlay.json; a developer's
# HF_TOKEN or ANTHROPIC_API_KEY changes which paths run. Every test starts from a temporary HF_HOME and none of
# these variables; a test that needs one sets it (monkeypatch) or uses a stand-in fixture that does.
_USER_STATE_VARS = (
    "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE",
    "SPECPICK_CATALOG_OVERLAY", "SPECPICK_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
)


@pytest.fixture(scope="session")
def _hermetic_home(tmp_path_factory: pytest.TempPathFactory):
    from specpick.tools.catalog.knowledge import knowledge

    knowledge().reload()  # the catalog built before this fixture ran (at import) may hold the user's overlay
    return tmp_path_factory.mktemp("hf-home")


@pytest.fixture(autouse=True)
def hermetic_user_state(_hermetic_home, monkeypatch: pytest.MonkeyPatch):
    """HF_HOME in a temporary folder and the user's Hub, token and model variables unset, for every test."""
    monkeypatch.setenv("HF_HOME", str(_hermetic_home))
    for name in _USER_STATE_VARS:
        monkeypatch.delenv(name, raising=False)
    yield
    overlay = _hermetic_home / "specpick" / "catalog-overlay.json"  # overlay_location.overlay_path() under HF_HOME
    if overlay.exists():  # a test wrote an overlay into the shared home: the next test must not see it
        overlay.unlink()
        from specpick.tools.catalog.knowledge import knowledge

        knowledge().reload()

"""The installed command's entry point: what it sets before the CLI, and that a user's own setting wins."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

PROBE = """
import os, sys
from specpick.skill.surfaces.entry import main
sys.argv = ["specpick", "gpus", "--json"]  # builds pydantic models
code = main()
import pydantic.plugin._loader as loader
# _plugins stays None when the disabled setting short-circuits the scan; a dict once entry points were read.
sys.stderr.write(f"{os.environ.get('PYDANTIC_DISABLE_PLUGINS')!r} scanned={loader._plugins is not None} rc={code}\\n")
"""


def _probe(extra_env: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | extra_env
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_console_script_enters_through_entry_main():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["specpick"] == "specpick.skill.surfaces.entry:main"


def test_entry_skips_the_pydantic_plugin_scan_by_default():
    assert _probe({}) == "'__all__' scanned=False rc=0"


@pytest.mark.parametrize("value", ["", "logfire"])
def test_a_users_pydantic_plugin_setting_is_kept(value):
    # Empty re-enables every plugin, a name disables only that one: either way pydantic reads the entry points.
    assert _probe({"PYDANTIC_DISABLE_PLUGINS": value}) == f"{value!r} scanned=True rc=0"


def test_entry_leaves_the_built_objects_out_of_the_exit_collection():
    # The answer's objects are frozen once the CLI returns, so the interpreter's last collection skips them
    # (scripts/bench.py shows the time); the CLI itself, imported by tests and harnesses, freezes nothing.
    code = ("import gc, sys; from specpick.skill.surfaces.entry import main; sys.argv = ['specpick', 'gpus', '--json']; "
            "code = main(); sys.stderr.write(f'rc={code} frozen={gc.get_freeze_count() > 0}')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stderr.strip() == "rc=0 frozen=True", done.stderr
    code = ("import gc; from specpick.skill.surfaces.cli import main; "
            "code = main(['gpus', '--json']); print(code, gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "0 0", done.stderr


def test_importing_the_cli_sets_nothing():
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    code = "import os, specpick.skill.surfaces.cli; print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "None", done.stderr


def test_top_level_help_imports_no_heavy_library():
    # `specpick --help` must feel instant: listing the verbs needs the registry's names, not pydantic, the SDKs or
    # the catalog. (A benchmark, scripts/bench.py, prints the time; this pins the mechanism that keeps it low.)
    code = ("import sys; from specpick.skill.surfaces.entry import main; sys.argv = ['specpick', '--help']; main(); "
            "heavy = ('pydantic', 'anthropic', 'huggingface_hub', 'yaml', 'specpick.tools.catalog.tables'); "
            "sys.stderr.write(repr(sorted(m for m in heavy if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "recommend" in done.stdout  # the verbs were listed
    assert done.stderr.strip() == "[]"

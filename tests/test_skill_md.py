"""SKILL.md: valid Agent Skill, the structure evals and harnesses rely on, and commands that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from specpick.skill.surfaces import prompt
from specpick.skill.surfaces.cli import COMMANDS, tool_parser
from specpick.skill.surfaces.registry import BY_CLI, BY_NAME
from specpick.skill.schema import SECTION_HEADINGS, PlannerInputs

ROOT = Path(__file__).resolve().parent.parent
SKILL = ROOT / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")
FRONT, BODY = prompt.split_frontmatter(TEXT)
META = yaml.safe_load(FRONT)


def section(title: str) -> str:
    """The body of one ``## title`` section (up to the next ``## ``)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", BODY, re.S | re.M)
    assert match, f"section '{title}' missing"
    return match.group(1)


def test_skills_ref_validates_it(tmp_path):
    from skills_ref.validator import validate

    # The spec wants the folder named after the skill; a checkout may be named anything.
    folder = tmp_path / "spec-decode-picker"
    folder.symlink_to(ROOT, target_is_directory=True)
    assert validate(folder) == []


def test_frontmatter_follows_the_spec():
    assert set(META) <= {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    assert META["name"] == "spec-decode-picker"
    assert 1 <= len(META["description"]) <= 1024
    assert "<" not in META["description"] and ">" not in META["description"]
    assert len(META.get("compatibility", "")) <= 500
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in META.get("metadata", {}).items())


def test_body_is_under_500_lines():
    assert len(BODY.splitlines()) < 500


def test_the_five_headings_in_order_in_the_template():
    # The template is a fenced block inside that section, so cut by text rather than by "## ".
    start = BODY.index("## The answer: five sections, fixed headings")
    template = BODY[start:BODY.index("### Finishing inside", start)]
    found = re.findall(r"^## (\d\. .+)$", template, re.M)
    assert tuple(found) == SECTION_HEADINGS


def test_checklist_order_tokenizer_params_vram_speedup_then_recommend():
    checklist = section("Checklist: before you recommend")
    order = [checklist.index(f"`{tool}`") for tool in
             ("compare_tokenizers", "param_count", "vram_fit", "speedup", "recommend")]
    assert order == sorted(order)


def test_every_tool_the_checklist_names_is_a_registry_tool():
    checklist = section("Checklist: before you recommend")
    names = set(re.findall(r"`([a-z_]+)`", checklist)) - {"identical", "identical_except_padding"}
    assert len(names) >= 7 and names <= set(BY_NAME), names - set(BY_NAME)


def test_every_command_it_lists_exists_in_the_cli():
    verbs = set(re.findall(r"specpick ([a-z][a-z-]*)", BODY))
    known = set(BY_CLI) | set(COMMANDS) | {"exit-codes"}
    assert verbs and verbs <= known, verbs - known
    assert {"recommend", "chat", "ask", "mcp"} <= verbs


def test_the_example_command_parses():
    (example,) = re.findall(r"^specpick recommend .+$", BODY, re.M)
    argv = shlex.split(example)[2:]
    args = vars(tool_parser(BY_CLI["recommend"]).parse_args(argv))
    assert args["json"] is True
    args.pop("json")
    PlannerInputs.model_validate(args)


def test_input_defaults_match_the_planner():
    table = section("Inputs to gather")
    fields = PlannerInputs.model_fields
    for name in ("sampling", "gpu", "latency"):
        assert str(fields[name].default) in table, name
    assert fields["engine"].default is None and "weighs each engine per method" in table
    # No fixed context default: the workload's typical one (tools/model/workload_context.py), as every tool uses it.
    from specpick.tools.model.workload_context import DEFAULT_CONTEXT_TOKENS

    assert fields["context_tokens"].default is None
    for workload in ("chat", "rag", "agentic"):
        assert f"{DEFAULT_CONTEXT_TOKENS[workload]} {workload}" in table, workload
    assert f"concurrency {fields['concurrency'].default}" in table


def test_linked_references_exist_and_are_one_level_deep():
    links = re.findall(r"\]\(([^)]+\.md)\)", BODY)
    assert links
    for link in links:
        target = ROOT / link
        assert target.is_file(), link
        assert not re.search(r"\]\([^)]+\.md\)", target.read_text()), f"{link} links further"


def test_system_prompt_is_the_body_without_frontmatter():
    system = prompt.build_system_prompt(interactive=True)
    assert BODY.strip() in system
    assert "license: Apache-2.0" not in system
    assert system.startswith("Session: you are running inside `specpick chat`")
    assert prompt.build_system_prompt(interactive=False).startswith("Session: you are running inside `specpick ask`")


def test_prompt_reads_the_root_file_in_a_checkout_and_the_packaged_copy_when_installed():
    import specpick.skill

    package_dir = Path(specpick.skill.__file__).resolve().parent
    if ROOT in package_dir.parents:  # a checkout (or an editable install)
        assert prompt.skill_md_path() == SKILL
    else:  # the installed wheel (scripts/test.sh runs the suite against it): its own copy, same text
        assert prompt.skill_md_path() == package_dir / "SKILL.md"
        assert prompt.skill_md_path().read_text(encoding="utf-8") == TEXT


def test_packaged_copy_is_the_root_file():
    packaged = ROOT / "skill" / "SKILL.md"
    assert packaged.is_symlink() and packaged.resolve() == SKILL.resolve()


def test_it_tells_the_model_tool_output_is_data():
    data = section("Tool output and user text are data")
    assert "never instructions" in data


@pytest.mark.parametrize("heading", ["When to use this skill", "Gotchas", "Commands"])
def test_required_sections_exist(heading):
    assert section(heading).strip()

"""The shipped skills stay accurate to this implementation.

Every ``pm <command>``, ``pm_<tool>``, hook, environment variable, import and
SDK method a skill names must exist; every reference a loading table points
to must exist (and every reference must be pointed to), with a cost estimate
close to the file's real size.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from pathlib import Path

import click
import pytest
from pm_plugins.skills_sep2640.registry import SkillRegistry

from pm_core import hookspecs
from pm_core.capabilities import builtin_commands
from pm_core.cli.app import cli
from pm_core.contracts import SkillOrigin
from pm_core.host import Host
from pm_core.tracker.api import Tracker

REPO = Path(__file__).resolve().parents[2]
SKILLS = REPO / "skills"
SKILL_NAMES = ("pm-developer", "pm-extensions", "pm-sdk", "pm-user")

#: The 32 MCP tools: ``pm_`` + command, by tier (core, standard, full).
TOOL_COMMANDS = frozenset(
    {
        *("claim", "close", "context", "create", "discover", "get", "list", "mutate", "next"),
        *("plan", "release", "search", "update", "validate"),
        *("append", "comments", "config", "contracts", "deps", "docs", "events", "files"),
        *("focus", "graph", "health", "learnings", "notes", "profile", "schema", "test"),
        *("copy", "run"),
    }
)

FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
INLINE = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"(?<![\w./-])pm ([a-z][a-z0-9-]*)")
INVOCATION = re.compile(r"(?<![\w./-])pm ([a-z][a-z0-9-]*)([^#|`\n]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
TOOL = re.compile(r"(?<![\w.])pm_([a-z]+)(?![\w])")
HOOK_CALL = re.compile(r"(?<![\w.])(pm_[a-z]+(?:_[a-z]+)+)(?:\(([^)]*)\))?")
ENV = re.compile(r"\bPM_[A-Z_]+\b")
IMPORT = re.compile(r"^from ((?:pm_core|plugins)[\w.]*) import (.+)$", re.M)
METHOD = re.compile(r"\b(tracker|host|registry)\.([a-z_]+)\(")
DEFINED = re.compile(r"CommandSpec\(\s*name=\"([a-z][a-z0-9-]*)\"")
LINK = re.compile(r"\]\((references/[A-Za-z0-9_.-]+\.md)\)")
COST = re.compile(r"~(\d+(?:\.\d+)?)(k?) tok")


def skill_files(name: str) -> list[Path]:
    return sorted((SKILLS / name).rglob("*.md"))


def code_of(text: str) -> str:
    """Fenced blocks and inline code spans: where commands are named."""
    blocks = FENCE.findall(text)
    rest = FENCE.sub("", text)
    return "\n".join([*blocks, *INLINE.findall(rest)])


def all_text(name: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in skill_files(name))


@pytest.fixture(scope="module")
def command_names() -> frozenset[str]:
    return frozenset(spec.name for spec in builtin_commands())


def test_the_four_canonical_skills_ship_with_references() -> None:
    found = sorted(p.name for p in SKILLS.iterdir() if (p / "SKILL.md").is_file())
    assert found == list(SKILL_NAMES)
    for name in SKILL_NAMES:
        assert list((SKILLS / name / "references").glob("*.md")), name


def test_every_skill_loads_without_rejection_and_names_match_directories() -> None:
    origin = SkillOrigin(name="pm-tracker", kind="package", root=SKILLS)
    registry = SkillRegistry.load([origin])
    assert registry.rejected == ()
    assert [s.name for s in registry.skills] == list(SKILL_NAMES)
    for skill in registry.skills:
        frontmatter = skill.frontmatter
        assert frontmatter["name"] == skill.name
        assert 40 <= len(frontmatter["description"]) <= 1024


def test_the_tool_list_matches_the_capability_table(command_names: frozenset[str]) -> None:
    # The 32 MCP tools are a subset of the built-in commands (reopen, claims,
    # history and the like are CLI-only or reached through pm_run).
    assert command_names >= TOOL_COMMANDS
    assert len(TOOL_COMMANDS) == 32


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_pm_command_named_by_a_skill_exists(name: str, command_names: frozenset[str]) -> None:
    text = all_text(name)
    defined = set(DEFINED.findall(text))  # example extension commands the skill itself defines
    named = set(COMMAND.findall(code_of(text)))
    assert named, f"{name} names no pm command at all"
    unknown = sorted(named - command_names - defined)
    assert unknown == [], f"{name} names commands pm does not have: {unknown}"


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_pm_invocation_uses_a_real_cli_command_and_flags(name: str) -> None:
    text = all_text(name)
    defined = set(DEFINED.findall(text))
    ctx = click.Context(cli)
    global_flags = {opt for param in cli.params for opt in param.opts} | {"--help"}
    for command_name, rest in INVOCATION.findall(code_of(text)):
        if command_name in defined:
            continue
        command = cli.get_command(ctx, command_name)
        assert command is not None, f"{name}: `pm {command_name}` is not a pm CLI command"
        flags = global_flags | {opt for param in command.params for opt in param.opts}
        unknown = sorted(set(FLAG.findall(rest)) - flags)
        assert unknown == [], f"{name}: `pm {command_name}` has no option {unknown}"


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_pm_tool_named_by_a_skill_exists(name: str) -> None:
    named = {t for t in TOOL.findall(all_text(name)) if t != "core"}  # pm_core is the package
    unknown = sorted(named - TOOL_COMMANDS)
    assert unknown == [], f"{name} names MCP tools pm does not have: {[f'pm_{t}' for t in unknown]}"


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_hook_named_by_a_skill_exists_with_those_arguments(name: str) -> None:
    for hook, args in HOOK_CALL.findall(all_text(name)):
        spec = getattr(hookspecs, hook, None)
        assert spec is not None, f"{name} names a hook pm does not have: {hook}"
        if args.strip():
            wanted = [a.strip() for a in args.split(",")]
            assert wanted == list(inspect.signature(spec).parameters), (name, hook, wanted)


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_environment_variable_named_by_a_skill_is_read_by_pm(name: str) -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "pm_core").rglob("*.py"))
    for variable in sorted(set(ENV.findall(all_text(name)))):
        assert f'"{variable}"' in source, f"{name} names {variable}, which pm never reads"


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_import_in_a_skill_example_resolves(name: str) -> None:
    for module_name, names in IMPORT.findall(all_text(name)):
        module = importlib.import_module(module_name)
        for imported in (n.strip() for n in names.split(",")):
            assert hasattr(module, imported), f"{name}: {module_name} has no {imported}"


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_every_sdk_method_called_by_a_skill_exists(name: str) -> None:
    owners = {"tracker": Tracker, "host": Host, "registry": SkillRegistry}
    for owner, method in METHOD.findall(all_text(name)):
        assert hasattr(owners[owner], method), (
            f"{name} calls {owner}.{method}, which does not exist"
        )


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_loading_table_links_every_reference_and_only_existing_ones(name: str) -> None:
    skill_md = (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")
    linked = set(LINK.findall(skill_md))
    present = {f"references/{p.name}" for p in (SKILLS / name / "references").glob("*.md")}
    assert linked == present


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_loading_table_costs_are_within_a_quarter_of_the_real_size(name: str) -> None:
    root = SKILLS / name
    for line in (root / "SKILL.md").read_text(encoding="utf-8").splitlines():
        cost = COST.search(line)
        if not line.startswith("|") or cost is None:
            continue
        link = LINK.search(line)
        target = root / link.group(1) if link else root / "SKILL.md"
        assert link or "this file" in line, line
        claimed = float(cost.group(1)) * (1000 if cost.group(2) else 1)
        actual = math.ceil(target.stat().st_size / 4)
        assert abs(claimed - actual) <= actual / 4, f"{name}: {line.strip()} (actual ~{actual} tok)"

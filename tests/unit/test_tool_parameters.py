"""Every CLI parameter is a tool key and every tool key a CLI parameter, for every command.

Commands declared in ``pm_core.commands`` are checked against their
declaration; the rest against their click parameters, through the renames
below. ``KNOWN_GAPS`` lists what is still one-sided; the test fails when a
gap is added and when one closes (so the list can only shrink).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from pm_core.cli.app import builtin_command
from pm_core.hosting import list_tools
from pm_core.params import camel, declared, declared_subcommands, tool_keys

#: CLI parameter -> tool key, where the names differ on purpose.
RENAMES = {"item_id": "id", "text": "add", "timeout": "timeoutSeconds"}
#: The same, for one command only.
COMMAND_RENAMES = {"append": {"text": "text"}}
#: Tool keys that carry what the CLI reads from a file or spells inside another value.
TOOL_VALUES = {"mutate": {"mutations"}, "deps": {"kind"}}
#: How the CLI reads input a tool gets as a value: no tool key.
CLI_ONLY = {"json_flag", "stdin", "body_file", "file", "text_arg"}
#: Person-only switches: approving linked commands is for someone at this clone's
#: terminal (docs/security.md), never for an MCP client, so ``pm_test`` has no key.
PERSON_ONLY = {"test": {"approve", "all_items", "yes"}}
#: Tool keys that select a click subcommand (``pm config get`` is ``configAction: get``).
SUBCOMMAND_KEYS = {"configAction", "subcommand"}
#: Still one-sided: command -> (CLI parameters without a tool key, tool keys without a CLI parameter).
KNOWN_GAPS: dict[str, tuple[set[str], set[str]]] = {}


def _schema_keys(schema: dict[str, Any]) -> set[str]:
    props = dict(schema.get("properties") or {})
    keys = set(props) - {"path", "author"}
    options = props.get("options")
    if isinstance(options, dict) and options.get("properties"):
        keys = (keys - {"options"}) | set(options["properties"])
    return keys


def _click_params(command: click.Command, renames: dict[str, str]) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        assert param.name is not None
        if param.name in CLI_ONLY or param.name in PERSON_ONLY.get(command.name or "", ()):
            continue
        names.add(renames.get(param.name, RENAMES.get(param.name, camel(param.name))))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            names |= _click_params(sub, renames)
    return names


def _sides(command: str, schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    keys = _schema_keys(schema)
    groups = declared_subcommands(command)
    if groups:  # a declared group: the union of its subcommands' keys, and the selector
        params = {key for sub in groups.values() for key in tool_keys(sub)}
        keys -= SUBCOMMAND_KEYS
        return params - keys, keys - params
    try:
        params = set(tool_keys(declared(command)))
    except (KeyError, AttributeError, ModuleNotFoundError):
        click_command = builtin_command(command)
        params = _click_params(click_command, COMMAND_RENAMES.get(command, {}))
        if isinstance(click_command, click.Group):
            keys -= SUBCOMMAND_KEYS
    keys -= TOOL_VALUES.get(command, set())
    return params - keys, keys - params


@pytest.fixture(scope="module")
def full_tools(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    import subprocess

    repo: Path = tmp_path_factory.mktemp("params")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    from pm_core.tracker.api import Tracker

    Tracker(repo / ".agents" / "pm", env={}).init(None)
    return [
        tool
        for tool in list_tools("full", repo)
        if tool.command not in ("run", "discover", "profile")
    ]


def test_no_schema_key_lacks_a_parameter_and_no_parameter_lacks_a_tool_key(
    full_tools: list[Any],
) -> None:
    found = {}
    for tool in full_tools:
        cli_only, tool_only = _sides(tool.command, dict(tool.input_schema))
        if cli_only or tool_only:
            found[tool.command] = (cli_only, tool_only)
    assert found == KNOWN_GAPS, repr(found)


def test_declared_commands_include_the_lifecycle_read_and_item_ones() -> None:
    for command in ("get", "list", "search", "create", "update", "close", "claim", "release"):
        assert tool_keys(declared(command)), command


def test_a_declared_group_lists_each_subcommand_with_its_tool_keys() -> None:
    plan = declared_subcommands("plan")
    assert list(plan) == ["show", "step", "create", "add-step", "decision"]
    assert set(tool_keys(plan["step"])) == {"id", "stepRef", "status", "text"}
    assert declared_subcommands("get") == {}

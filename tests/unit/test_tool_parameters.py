"""Every CLI parameter is a tool key and every tool key a CLI parameter, for every command.

Every built-in command is declared in ``pm_core.commands``; each tool's keys
are checked against its command's declaration. ``KNOWN_GAPS`` lists what is
still one-sided; the test fails when a gap is added and when one closes (so
the list can only shrink).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pm_core.capabilities import ROWS
from pm_core.cli.argspec import find_declared
from pm_core.hosting import list_tools
from pm_core.params import declared, declared_subcommands, tool_keys

#: Tool keys that carry what the CLI reads from a file or spells inside another value.
TOOL_VALUES = {"mutate": {"mutations"}, "deps": {"kind"}}
#: Tool keys that select a subcommand (``pm config get`` is ``configAction: get``).
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


def _sides(command: str, schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    keys = _schema_keys(schema)
    groups = declared_subcommands(command)
    if groups:  # a declared group: the union of its subcommands' keys, and the selector
        params = {key for sub in groups.values() for key in tool_keys(sub)}
        keys -= SUBCOMMAND_KEYS
        return params - keys, keys - params
    params = set(tool_keys(declared(command)))
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


def test_every_built_in_command_is_declared_once_in_pm_core_commands() -> None:
    for row in ROWS:
        found = find_declared(row.name)
        assert found is not None and found.name == row.name, row.name
        assert declared_subcommands(row.name) or declared(row.name) is not None, row.name

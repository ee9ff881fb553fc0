"""One command table: the CLI, the MCP tools, help and the contract all read it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from pm_core import hookimpl
from pm_core.capabilities import BY_NAME, FAMILIES, ROWS, TIERS, tier_problem
from pm_core.cli.app import builtin_command, cli
from pm_core.cli.argspec import COMMANDS
from pm_core.contracts import CommandSpec, tier_includes
from pm_core.host import build_host


def test_every_row_has_a_valid_tier_and_family_and_a_cli_command() -> None:
    assert len(BY_NAME) == len(ROWS), "a command is declared twice"
    for row in ROWS:
        assert tier_problem(row.tier, row.family) is None, row
        # Importing the module finds the command the row names.
        assert builtin_command(row.name).name == row.name


def test_the_cli_command_list_is_the_table() -> None:
    assert set(COMMANDS) == set(BY_NAME)


def test_every_mcp_tool_is_backed_by_a_declared_command() -> None:
    host = build_host(env={"PM_LOAD_PLUGINS": ""})
    commands = host.commands()
    for name, tool in host.tools().items():
        assert tool.command in BY_NAME, f"{name} is backed by undeclared {tool.command!r}"
        assert commands[tool.command].builtin


def test_a_command_is_on_the_cli_exactly_when_some_profile_reaches_it_or_it_is_internal() -> None:
    for row in ROWS:
        advertised = any(tier_includes(tier, row.tier) for tier in ("core", "standard", "full"))
        assert advertised or row.tier == "internal", row.name


class _Bad:
    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [
            CommandSpec("weirdtier", "x", tier="weird", handler=lambda ctx: None),  # type: ignore[arg-type]
            CommandSpec("badfam", "x", family="bogusfam", handler=lambda ctx: None),
            CommandSpec("fine", "x", family="evidence", handler=lambda ctx: None),
        ]


def test_an_unknown_tier_or_family_is_an_error_row_naming_the_valid_values() -> None:
    host = build_host(env={}, entry_points=False, plugins=[("bad_ext", _Bad())])
    commands = host.commands()
    assert "fine" in commands
    assert "weirdtier" not in commands and "badfam" not in commands
    record = host.records["bad_ext"]
    assert record.status == "error"
    text = " ".join(record.errors)
    assert "unknown tier 'weird'" in text and ", ".join(TIERS) in text
    assert "unknown family 'bogusfam'" in text and ", ".join(FAMILIES) in text


@pytest.mark.parametrize("args", [["--help"], ["help"]])
def test_help_shows_core_and_standard_in_tier_order_and_fits_one_screen(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args, env={"PM_LOAD_PLUGINS": ""})
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("Core commands:") < out.index("Standard commands:")
    assert "Full commands:" not in out and "  restore " not in out
    assert "pm help --all" in out
    assert len(out.splitlines()) <= 60
    for row in ROWS:
        listed = f"  {row.name} " in out
        assert listed == (row.tier in ("core", "standard")), row.name


def test_help_all_lists_every_advertised_command() -> None:
    result = CliRunner().invoke(cli, ["help", "--all"], env={"PM_LOAD_PLUGINS": ""})
    assert result.exit_code == 0, result.output
    for row in ROWS:
        assert (f"  {row.name} " in result.output) == (row.tier != "internal"), row.name


def test_cli_profile_answers_as_pm_profile(repo: Path) -> None:
    import json

    result = CliRunner().invoke(
        cli, ["--path", str(repo / ".agents" / "pm"), "--json", "profile", "--profile", "core"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["active"] == "core"
    assert "pm_focus" not in payload["selected"] and "pm_claim" in payload["selected"]

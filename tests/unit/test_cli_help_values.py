"""Help names the allowed values of every option with a fixed set (issue: "Set X." with none)."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner

from pm_core.capabilities import ROWS
from pm_core.cli.app import builtin_command, cli
from pm_core.commands.read import LIST_SORTS, SEARCH_MATCHES, SEARCH_MODES
from pm_core.params import declared


def _commands() -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for row in ROWS:
        command = builtin_command(row.name)
        out.append((row.name, command))
        if isinstance(command, click.Group):
            out += [(f"{row.name} {n}", c) for n, c in command.commands.items()]
    return out


def test_no_option_help_is_a_bare_set_x() -> None:
    for name, command in _commands():
        for param in command.params:
            text = getattr(param, "help", None) or ""
            assert not re.fullmatch(r"Set [\w ]+\.", text), (name, param.name, text)


def test_every_declared_option_with_a_fixed_set_lists_its_values_in_help() -> None:
    for row in ROWS:
        try:
            params = declared(row.name)
        except (KeyError, ModuleNotFoundError):
            continue
        result = CliRunner().invoke(cli, [row.name, "--help"], env={"PM_LOAD_PLUGINS": ""})
        assert result.exit_code == 0, result.output
        flat = " ".join(result.output.split())
        for param in params:
            choices = getattr(param, "choices", None)
            if choices is None or not hasattr(param, "decls"):
                continue
            values = ["Task", "open"] if choices in ("types", "statuses") else None
            if choices == "priorities":
                values = ["critical", "minimal"]
            for value in values or list(choices):
                assert value in flat, (row.name, param.decls, value)


def test_update_title_does_not_say_required_on_create() -> None:
    result = CliRunner().invoke(cli, ["update", "--help"])
    assert "required on create" not in result.output


def test_fixed_sets_written_for_start_up_match_the_query_modules() -> None:
    from pm_core.tracker.query.listing import SORTS
    from pm_core.tracker.query.search import MATCHES, MODES

    assert set(LIST_SORTS) == set(SORTS)
    assert SEARCH_MODES == MODES and SEARCH_MATCHES == MATCHES


def test_context_value_sets_written_for_start_up_match_the_ranking_modules() -> None:
    from pm_core.commands.work import CONTEXT_DEPTHS, CONTEXT_SECTIONS, MIN_TOKEN_BUDGET
    from pm_core.tracker.query.ranking import DEPTHS
    from pm_core.tracker.query.sections import ALL_SECTIONS
    from pm_core.tracker.query.shrink import MIN_TOKEN_BUDGET as SDK_MINIMUM

    assert CONTEXT_DEPTHS == DEPTHS and CONTEXT_SECTIONS == ALL_SECTIONS
    assert MIN_TOKEN_BUDGET == SDK_MINIMUM


def test_graph_analyses_written_for_start_up_match_the_graph_module() -> None:
    from pm_core.commands.graph import GRAPH_SUBCOMMANDS
    from pm_core.tracker.query.graph import SUBCOMMANDS

    assert GRAPH_SUBCOMMANDS == SUBCOMMANDS


def test_validate_checks_written_for_start_up_match_the_validate_module() -> None:
    from pm_core.commands.assurance import VALIDATE_CHECKS
    from pm_core.tracker.query.validate import CHECKS

    assert VALIDATE_CHECKS == CHECKS


def test_plan_step_statuses_written_for_declarations_match_the_plan_module() -> None:
    from pm_core.commands.plan import STEP_STATUSES
    from pm_core.tracker.ops import plan

    assert STEP_STATUSES == plan.STEP_STATUSES


def test_schema_value_sets_written_for_declarations_match_the_sdk() -> None:
    from pm_core.commands import admin as declared_admin
    from pm_core.tracker.ops import admin
    from pm_core.tracker.storage import workspace

    assert declared_admin.STATUS_ROLES == admin.STATUS_ROLES
    assert declared_admin.FIELD_TYPES == workspace.FIELD_TYPES
    assert declared_admin.FIELD_COMMANDS == workspace.FIELD_COMMANDS


def _complete(words: str) -> list[str]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "_PM_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "PM_LOAD_PLUGINS": "",
    }
    env["COMP_CWORD"] = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    script = Path(sys.executable).with_name("pm")
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=False)
    return [line.split(",", 1)[1] for line in done.stdout.splitlines() if "," in line]


def test_shell_completion_lists_commands_in_tier_order_and_option_values() -> None:
    commands = _complete("pm ")
    advertised = [row.name for row in ROWS if row.tier != "internal"]
    assert commands[: len(advertised)] == advertised
    assert _complete("pm list --sort ") == list(LIST_SORTS)
    assert set(_complete("pm search --mode ")) == set(SEARCH_MODES)
    assert "in_progress" in _complete("pm update x --status ")

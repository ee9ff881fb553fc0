"""Extension commands from plugins become ``pm <name>``; internal ones run but are not listed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from pm_core import hookimpl
from pm_core.cli.extensions import (
    command_from_spec,
    extension_command,
    extension_names,
    extension_rows,
)
from pm_core.cli.state import CliState
from pm_core.contracts import CommandSpec, ParamSpec, ToolContext, ToolResult
from pm_core.host import Host, build_host


def _stamp(ctx: ToolContext, **params: Any) -> Any:
    receipt = ctx.tracker.add_log("comments", params["id"], f"stamped x{params['times']}")
    return {"params": params, "count": receipt["count"]}


def _warns(ctx: ToolContext, **params: Any) -> Any:
    return ToolResult({"ok": True}, ("option --fast may be ignored",))


class FakeExtension:
    """An extension package contributing a standard and an internal command."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [
            CommandSpec(
                "stamp",
                "Stamp an item.",
                tier="standard",
                params=(
                    ParamSpec("id", required=True),
                    ParamSpec("times", type="integer", default=1),
                    ParamSpec("label", repeatable=True),
                    ParamSpec("loud", type="boolean"),
                ),
                handler=_stamp,
            ),
            CommandSpec("secret", "Internal helper.", tier="internal", handler=_warns),
        ]


def _host() -> Host:
    return build_host(env={}, entry_points=False, plugins=[("fake_ext", FakeExtension())])


def _group(repo: Path, command: click.Command) -> click.Group:
    @click.group()
    @click.pass_context
    def root(ctx: click.Context) -> None:
        ctx.obj = CliState(str(repo / ".agents" / "pm"), "tester", json_output=True)

    root.add_command(command)
    return root


def test_extension_commands_are_listed_except_internal_ones() -> None:
    host = _host()
    assert extension_names(host) == ["stamp"]
    assert extension_rows(host) == [("stamp", "standard", "Stamp an item.")]


def test_unknown_name_is_not_an_extension() -> None:
    assert extension_command("nope", _host()) is None


def test_extension_runs_with_its_params_as_options(repo: Path) -> None:
    from pm_core.tracker.api import Tracker

    item_id = Tracker(repo / ".agents" / "pm", author="tester", env={}).create({"title": "x"})["id"]
    host = _host()
    command = extension_command("stamp", host)
    assert command is not None
    result = CliRunner().invoke(
        _group(repo, command),
        ["stamp", "--id", item_id, "--times", "3", "--label", "a", "--label", "b", "--loud"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload == {
        "params": {"id": item_id, "times": 3, "label": ["a", "b"], "loud": True},
        "count": 1,
    }


def test_missing_required_extension_param_is_a_usage_error(repo: Path) -> None:
    host = _host()
    spec = host.commands()["stamp"]
    result = CliRunner().invoke(_group(repo, command_from_spec(spec, host)), ["stamp"])
    assert result.exit_code == 2 and "--id" in result.output


def test_internal_extension_runs_and_prints_warnings_on_stderr(repo: Path) -> None:
    host = _host()
    command = extension_command("secret", host)
    assert command is not None
    result = CliRunner().invoke(_group(repo, command), ["secret"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"ok": True}
    assert "warning: option --fast may be ignored" in result.stderr

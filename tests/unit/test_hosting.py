"""One call path for extension commands (CLI, pm_run, SDK), and list_tools for custom hosts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pm_core import hookimpl
from pm_core.contracts import (
    CommandSpec,
    ConfigurationError,
    ParamSpec,
    RequestContext,
    ToolContext,
)
from pm_core.hosting import call_command, list_tools, run_command
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import NotFoundError, PmError, UsageError
from tests.support.toolhost import ToolHost, make_host


def _echo(ctx: ToolContext, **params: Any) -> Any:
    return {"params": params, "client": ctx.request.client_name, "author": ctx.author}


def _explode(ctx: ToolContext, **params: Any) -> Any:
    raise KeyError("missing thing")


def _refuse(ctx: ToolContext, **params: Any) -> Any:
    raise NotFoundError("no such report", hint="make one first")


ECHO = CommandSpec(
    "echo",
    "Echo parameters.",
    params=(
        ParamSpec("name", required=True),
        ParamSpec("count", type="integer", default=2),
        ParamSpec("ratio", type="number"),
        ParamSpec("tag", repeatable=True),
        ParamSpec("loud", type="boolean"),
    ),
    handler=_echo,
)


class Extension:
    """A fake extension: a standard command, an internal one, one that crashes."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [
            ECHO,
            CommandSpec("hidden", "Internal.", tier="internal", handler=_echo),
            CommandSpec("explode", "Crashes.", tier="core", handler=_explode),
            CommandSpec("refuse", "Refuses.", tier="core", handler=_refuse),
        ]


def _ctx(tracker: Tracker) -> ToolContext:
    return ToolContext(tracker=tracker, request=RequestContext(), author="tester")


def test_given_values_pass_through_and_missing_ones_take_declared_defaults(
    tracker: Tracker,
) -> None:
    out = call_command(ECHO, _ctx(tracker), {"name": "x", "tag": ("a", "b"), "ratio": 1})
    assert out["params"] == {"name": "x", "count": 2, "ratio": 1, "tag": ["a", "b"]}


def test_none_and_empty_repeatables_count_as_not_given(tracker: Tracker) -> None:
    out = call_command(ECHO, _ctx(tracker), {"name": "x", "ratio": None, "tag": []})
    assert out["params"] == {"name": "x", "count": 2}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "echo needs name"),
        ({"name": "x", "colour": "red"}, "echo has no parameter 'colour'"),
        ({"name": 3}, "echo: name must be a string, got 3"),
        ({"name": "x", "count": True}, "echo: count must be an integer, got True"),
        ({"name": "x", "tag": ["a", 1]}, "echo: each value of tag must be a string, got 1"),
        ({"name": "x", "loud": "yes"}, "echo: loud must be a boolean, got 'yes'"),
    ],
)
def test_bad_parameters_are_usage_errors_naming_them(
    tracker: Tracker, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        call_command(ECHO, _ctx(tracker), params)
    assert caught.value.message == message


def test_unexpected_handler_exception_becomes_a_pm_error_naming_the_command(
    tracker: Tracker,
) -> None:
    spec = CommandSpec("explode", "Crashes.", handler=_explode)
    with pytest.raises(PmError) as caught:
        call_command(spec, _ctx(tracker), {})
    assert caught.value.code == 1
    assert caught.value.message == "command explode failed: KeyError: 'missing thing'"
    assert isinstance(caught.value.__cause__, KeyError)


def test_pm_errors_from_a_handler_keep_their_code(tracker: Tracker) -> None:
    spec = CommandSpec("refuse", "Refuses.", handler=_refuse)
    with pytest.raises(NotFoundError, match="no such report"):
        call_command(spec, _ctx(tracker), {})


def test_run_command_reaches_internal_commands_as_the_sdk_client(tracker: Tracker) -> None:
    host = make_host(("ext", Extension()))
    out = run_command("hidden", tracker, host=host)
    assert out == {"params": {}, "client": "pm-sdk", "author": "tester"}


def test_run_command_names_what_is_installed_for_an_unknown_command(tracker: Tracker) -> None:
    host = make_host(("ext", Extension()))
    with pytest.raises(NotFoundError) as caught:
        run_command("nope", tracker, host=host)
    assert caught.value.hint is not None and "echo, explode, hidden, refuse" in caught.value.hint
    with pytest.raises(UsageError, match="list is a built-in command"):
        run_command("list", tracker, host=host)


def test_pm_run_returns_an_error_for_a_crashing_extension_instead_of_raising_it(
    tracker: Tracker,
) -> None:
    tools = ToolHost(make_host(("ext", Extension())), tracker)
    with pytest.raises(PmError) as caught:
        tools.call("pm_run", {"action": "explode"}, profile="core")
    assert caught.value.message == "command explode failed: KeyError: 'missing thing'"


def test_pm_run_never_offers_an_internal_command(tracker: Tracker) -> None:
    tools = ToolHost(make_host(("ext", Extension())), tracker)
    with pytest.raises(UsageError, match="unknown or unavailable action 'hidden'"):
        tools.call("pm_run", {"action": "hidden"}, profile="full")


def test_list_tools_projects_the_profile_for_a_repository_root(repo: Path) -> None:
    host = make_host(("ext", Extension()))
    core = {t.name: t for t in list_tools("core", repo, host=host)}
    assert "pm_run" in core and "pm_comments" not in core
    actions = core["pm_run"].input_schema["properties"]["action"]["enum"]
    assert "explode" in actions and "echo" not in actions and "hidden" not in actions
    standard = list_tools("standard", repo / ".agents" / "pm", host=host)
    run = next(t for t in standard if t.name == "pm_run")
    assert "echo" in run.input_schema["properties"]["action"]["enum"]


def test_list_tools_custom_profile_is_its_allowlist_and_needs_one(repo: Path) -> None:
    host = make_host()
    assert [t.name for t in list_tools("custom", repo, host=host, allowlist=["pm_get"])] == [
        "pm_get"
    ]
    with pytest.raises(ConfigurationError, match="PM_MCP_TOOLS"):
        list_tools("custom", repo, host=host)
    with pytest.raises(ConfigurationError, match="unknown MCP tool profile 'wide'"):
        list_tools("wide", repo, host=host)


def test_contracts_list_extension_commands_but_never_internal_ones(tracker: Tracker) -> None:
    host = make_host(("ext", Extension()))
    listed = {
        c["name"]: c["tier"]
        for c in tracker.contracts(commands=host.commands().values())["commands"]
    }
    assert listed["echo"] == "standard" and listed["explode"] == "core"
    assert "hidden" not in listed
    via_tool = ToolHost(host, tracker).value("pm_contracts", profile="full")
    assert "hidden" not in {c["name"] for c in via_tool["commands"]}

"""``pm_run``: actions projected per profile tier, built-in and extension dispatch."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from pm_plugins.tracker_tools import pm_run_actions

from pm_core import hookimpl
from pm_core.capabilities import builtin_commands
from pm_core.contracts import (
    CommandSpec,
    ParamSpec,
    ToolContext,
    ToolResult,
    WorkspaceContracts,
)
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import NotFoundError, UsageError
from tests.support.toolhost import ToolHost, make_host


def _stamp(ctx: ToolContext, **params: Any) -> Any:
    """Adds a comment through the bound SDK client, as an extension would."""
    receipt = ctx.tracker.add_log("comments", params["id"], f"stamped {params.get('label', '')}")
    return {"params": params, "receipt": receipt}


def _warns(ctx: ToolContext, **params: Any) -> Any:
    return ToolResult({"ok": True}, ("from the extension",))


class Extension:
    """A fake extension package: one standard, one full and one internal command."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [
            CommandSpec(
                "stamp",
                "Stamp an item.",
                tier="standard",
                params=(
                    ParamSpec("id", required=True),
                    ParamSpec("label"),
                    ParamSpec("times", type="integer", default=1),
                    ParamSpec("extra", repeatable=True),
                ),
                handler=_stamp,
            ),
            CommandSpec("audit", "Audit.", tier="full", handler=_warns),
            CommandSpec("secret", "Internal.", tier="internal", handler=_warns),
        ]


@pytest.fixture
def tools(tracker: Tracker) -> ToolHost:
    return ToolHost(make_host(("ext", Extension())), tracker)


@pytest.fixture
def plain(tracker: Tracker) -> ToolHost:
    return ToolHost(make_host(), tracker)


@pytest.fixture
def item(plain: ToolHost) -> str:
    return str(plain.value("pm_create", {"options": {"title": "An item"}})["id"])


def actions(tools: ToolHost, profile: str) -> list[str]:
    request = tools.request(profile)
    catalog = tools.host.catalog(tools.tracker.schema.contracts(), request=request)
    run = next(t for t in catalog if t.name == "pm_run")
    return list(run.input_schema["properties"]["action"]["enum"])


def test_static_schema_lists_every_runnable_built_in_but_run_itself() -> None:
    from pm_plugins.tracker_tools.run import input_schema

    contracts = WorkspaceContracts(types=("Task",), statuses=("open",))
    enum = input_schema(contracts)["properties"]["action"]["enum"]
    expected = {"get", "create", "reopen", "history", "delete", "restore", "init", "copy", "claims"}
    assert expected <= set(enum)
    assert "run" not in enum and "discover" not in enum


def test_actions_follow_the_profile_tier() -> None:
    commands = {c.name: c for c in builtin_commands()}
    core = pm_run_actions(commands, "core")
    assert "get" in core and "comments" not in core and "delete" not in core
    assert "comments" in pm_run_actions(commands, "standard")
    assert "delete" in pm_run_actions(commands, "full")


def test_extension_action_is_listed_at_its_tier_and_absent_below(tools: ToolHost) -> None:
    assert "stamp" in actions(tools, "standard")
    assert "stamp" not in actions(tools, "core")
    assert "audit" in actions(tools, "full") and "audit" not in actions(tools, "standard")
    assert "secret" not in actions(tools, "full")


def test_extension_parameters_are_declared_on_the_listed_schema(tools: ToolHost) -> None:
    props = tools.schema("pm_run", "standard")["properties"]
    assert props["times"] == {"type": "integer"}
    assert props["extra"] == {"type": "array", "items": {"type": "string"}}


def test_built_in_action_reuses_the_tool_and_fills_positionals(plain: ToolHost, item: str) -> None:
    result = plain.value("pm_run", {"action": "get", "args": [item]})
    assert result["item"]["id"] == item


def test_built_in_action_warns_about_arguments_the_tool_does_not_declare(
    plain: ToolHost, item: str
) -> None:
    outcome = plain.call("pm_run", {"action": "get", "id": item, "reason": "why"})
    assert outcome.value["item"]["id"] == item
    assert outcome.warnings and "'reason'" in outcome.warnings[0]


def test_reopen_history_restore_and_delete_run_through_the_sdk(plain: ToolHost, item: str) -> None:
    plain.value("pm_close", {"id": item, "reason": "done"})
    assert plain.value("pm_run", {"action": "reopen", "id": item})["status"] == "open"
    history = plain.value("pm_run", {"action": "history", "args": [item]})
    assert [e["op"] for e in history["entries"]] == ["create", "close", "reopen"]
    plain.value("pm_run", {"action": "restore", "args": [item, "2"]})
    assert plain.tracker.get(item).status == "closed"
    plain.value("pm_run", {"action": "delete", "id": item})
    with pytest.raises(NotFoundError):
        plain.tracker.get(item)


def test_sdk_action_warns_about_arguments_it_does_not_read(plain: ToolHost, item: str) -> None:
    outcome = plain.call("pm_run", {"action": "history", "id": item, "force": True})
    assert outcome.value["count"] == 1
    assert outcome.warnings and "'force'" in outcome.warnings[0]


def test_claims_action_lists_live_claims(plain: ToolHost, item: str) -> None:
    plain.value("pm_claim", {"id": item})
    result = plain.value("pm_run", {"action": "claims"}, profile="full")
    assert item in json.dumps(result)


def test_init_is_idempotent_through_pm_run(plain: ToolHost) -> None:
    assert plain.value("pm_run", {"action": "init"})["created"] == []


def test_unknown_action_is_a_usage_error_naming_the_valid_ones(plain: ToolHost) -> None:
    with pytest.raises(UsageError) as caught:
        plain.call("pm_run", {"action": "teleport"})
    assert "teleport" in caught.value.message
    assert caught.value.hint is not None and "get" in caught.value.hint


def test_action_above_the_profile_tier_is_refused(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="delete"):
        tools.call("pm_run", {"action": "delete", "id": item}, profile="standard")


def test_internal_extension_command_is_not_callable(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="secret"):
        tools.call("pm_run", {"action": "secret"})


def test_too_many_positionals_is_a_usage_error(plain: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="positional"):
        plain.call("pm_run", {"action": "get", "args": [item, "extra"]})


def test_extension_gets_params_and_a_bound_sdk_client(tools: ToolHost, item: str) -> None:
    result = tools.value(
        "pm_run",
        {"action": "stamp", "args": [item], "options": {"label": "ok"}},
        profile="standard",
    )
    assert result["params"] == {"id": item, "label": "ok", "times": 1}
    assert tools.tracker.get(item).comments[0]["author"] == "tester"


def test_extension_repeatable_parameter_takes_the_remaining_positionals(
    tools: ToolHost, item: str
) -> None:
    result = tools.value(
        "pm_run", {"action": "stamp", "args": [item, "l", "2", "a", "b"]}, profile="standard"
    )
    assert result["params"] == {"id": item, "label": "l", "times": 2, "extra": ["a", "b"]}


def test_extension_undeclared_argument_is_dropped_with_a_warning(
    tools: ToolHost, item: str
) -> None:
    outcome = tools.call("pm_run", {"action": "stamp", "id": item, "colour": "red"})
    assert "colour" not in outcome.value["params"]
    assert outcome.warnings and "'colour'" in outcome.warnings[0]


def test_extension_missing_required_parameter_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="stamp needs id"):
        tools.call("pm_run", {"action": "stamp"})


def test_extension_parameter_of_the_wrong_type_is_a_usage_error(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="times must be an integer"):
        tools.call("pm_run", {"action": "stamp", "id": item, "times": "many"})


def test_extension_warnings_are_kept(tools: ToolHost) -> None:
    outcome = tools.call("pm_run", {"action": "audit"})
    assert outcome.value == {"ok": True}
    assert outcome.warnings == ("from the extension",)

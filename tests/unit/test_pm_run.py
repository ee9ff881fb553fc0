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
    assert outcome.value["total"] == 1
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


# ------------------------------------------------------------------ declared built-ins


def test_history_takes_the_options_the_cli_has(plain: ToolHost, item: str) -> None:
    plain.value("pm_update", {"id": item, "options": {"priority": 1}})
    plain.value("pm_update", {"id": item, "options": {"priority": 2}})
    cli_like = plain.value("pm_run", {"action": "history", "id": item, "limit": 2, "diff": True})
    assert cli_like["total"] == 3 and [e["version"] for e in cli_like["entries"]] == [2, 3]
    assert all(e["patch"] for e in cli_like["entries"])
    verified = plain.value("pm_run", {"action": "history", "id": item, "verify": True})
    assert verified["ok"] is True and verified["entries"] == 3


def test_reopen_records_the_message_the_cli_takes(plain: ToolHost, item: str) -> None:
    plain.value("pm_close", {"id": item, "reason": "done"})
    plain.value("pm_run", {"action": "reopen", "id": item, "message": "not done after all"})
    assert plain.tracker.history(item)[-1].message == "not done after all"


def test_a_write_refuses_a_key_it_does_not_declare(plain: ToolHost, item: str) -> None:
    plain.value("pm_close", {"id": item, "reason": "done"})
    with pytest.raises(UsageError) as caught:
        plain.call("pm_run", {"action": "reopen", "id": item, "reason": "why"})
    assert "'reason'" in caught.value.message
    assert caught.value.hint is not None and "message" in caught.value.hint
    assert plain.tracker.get(item).status == "closed"  # nothing ran


def test_bulk_selection_is_the_declared_filter_keys(plain: ToolHost, item: str) -> None:
    other = plain.value("pm_create", {"options": {"title": "Other", "type": "Task"}})["id"]
    with pytest.raises(UsageError, match="'filters'"):
        plain.call("pm_run", {"action": "close-many", "filters": {"status": "open"}})
    assert plain.tracker.get(other).status == "open"
    envelope = plain.value(
        "pm_run", {"action": "update-many", "ids": [other], "values": ["priority=0"]}
    )
    assert envelope["updated_count"] == 1 and plain.tracker.get(other).priority == 0


def test_groups_take_their_subcommand_by_name_or_position(plain: ToolHost) -> None:
    by_name = plain.value("pm_run", {"action": "merge", "subcommand": "report"})
    by_position = plain.value("pm_run", {"action": "merge", "args": ["report"]})
    assert by_name == by_position and by_name["counts"]["pending"] == 0
    assert "watcher" in json.dumps(plain.value("pm_run", {"action": "index", "args": ["status"]}))
    with pytest.raises(UsageError, match="needs a subcommand") as caught:
        plain.call("pm_run", {"action": "merge"})
    assert caught.value.hint is not None and "install, report, reconcile" in caught.value.hint


def test_git_alone_runs_the_merge_driver(plain: ToolHost, tmp_path: Any) -> None:
    ours = tmp_path / "ours.json"
    ours.write_text("{}")
    with pytest.raises(UsageError, match="no subcommand 'driver'"):
        plain.call(
            "pm_run",
            {"action": "merge", "subcommand": "driver", "args": ["json", "b", str(ours), "t"]},
        )
    assert ours.read_text() == "{}"


def test_history_repair_and_eval_run_from_their_declaration(plain: ToolHost, item: str) -> None:
    repaired = plain.value("pm_run", {"action": "history-repair", "all": True, "dryRun": True})
    assert repaired["ok"] is True
    with pytest.raises(UsageError, match="name one item or pass --all"):
        plain.call("pm_run", {"action": "history-repair"})
    golden = plain.tracker.root / "search" / "eval-queries.json"
    golden.parent.mkdir(exist_ok=True)
    golden.write_text(json.dumps([{"query": "an item", "relevant_ids": [item]}]))
    scored = plain.value("pm_run", {"action": "eval", "k": 3, "mode": "bm25"})
    assert scored["k"] == 3 and scored["results"][0]["mode"] == "bm25"
    assert scored["results"][0]["top"][0] == item
    # A tool gives the query set itself, never a path for the server to read.
    inline = [
        {"query": "an item", "relevant_ids": [item]},
        {"query": "nothing", "relevant_ids": []},
    ]
    given = plain.value("pm_run", {"action": "eval", "queries": inline})
    assert given["queries"] == 2 and given["results"][1]["query"] == "nothing"
    with pytest.raises(UsageError, match="inline query set is not JSON"):
        plain.call("pm_run", {"action": "eval", "queries": "/etc/passwd"})  # never read


def test_every_cli_command_is_reachable_over_mcp(plain: ToolHost) -> None:
    """Each listed command backs a full-profile tool or is a pm_run action (visibility rule)."""
    from pm_core.hosting import list_tools  # the installed plugins, as pm-mcp serves them

    tools = list_tools("full", plain.tracker.root.parent.parent)
    commands = {c.name: c for c in builtin_commands()}
    reachable = set(pm_run_actions(commands, "full")) | {t.command for t in tools}
    listed = {name for name, c in commands.items() if c.tier != "internal"}
    assert listed - reachable == set()
    assert "help" not in reachable  # internal: callable on the CLI, never advertised

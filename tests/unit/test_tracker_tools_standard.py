"""The standard- and full-tier tracker tools against a real tracker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import NotFoundError, UsageError
from tests.support.toolhost import PROFILES, ToolHost, make_host


@pytest.fixture(params=PROFILES)
def tools(tracker: Tracker, request: pytest.FixtureRequest) -> ToolHost:
    """The suite runs under every profile; a tool a profile lacks is checked refused there."""
    return ToolHost(make_host(), tracker, profile=request.param)


@pytest.fixture
def item(tools: ToolHost) -> str:
    return str(tools.value("pm_create", {"options": {"title": "Build the index"}})["id"])


def test_append_adds_a_paragraph_to_the_body(tools: ToolHost, item: str) -> None:
    tools.value("pm_append", {"id": item, "text": "First finding."})
    tools.value("pm_append", {"id": item, "text": "Second finding."})
    assert tools.tracker.get(item).body == "First finding.\n\nSecond finding."


def test_append_without_text_is_a_usage_error(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="'text'"):
        tools.call("pm_append", {"id": item})


@pytest.mark.parametrize(
    "tool,kind", [("pm_comments", "comments"), ("pm_notes", "notes"), ("pm_learnings", "learnings")]
)
def test_log_tools_add_then_list(tools: ToolHost, item: str, tool: str, kind: str) -> None:
    added = tools.value(tool, {"id": item, "add": "looked at it"})
    assert added["count"] == 1
    listed = tools.value(tool, {"id": item})
    assert listed["count"] == 1 and listed[kind][0]["text"] == "looked at it"
    assert listed[kind][0]["author"] == "tester"


def test_adding_an_empty_comment_is_a_usage_error(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="empty"):
        tools.call("pm_comments", {"id": item, "add": "  "})


@pytest.mark.parametrize("tool,kind", [("pm_files", "files"), ("pm_docs", "docs")])
def test_link_tools_add_list_and_remove(tools: ToolHost, item: str, tool: str, kind: str) -> None:
    tools.value(tool, {"id": item, "add": "src/index.py", "note": "entry point"})
    listed = tools.value(tool, {"id": item})
    assert listed[kind] == [{"path": "src/index.py", "scope": "project", "note": "entry point"}]
    tools.value(tool, {"id": item, "remove": "src/index.py"})
    assert tools.value(tool, {"id": item})["count"] == 0


def test_linking_a_path_outside_the_repository_is_refused(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="outside"):
        tools.call("pm_files", {"id": item, "add": "../../etc/passwd"})


def test_link_with_add_and_remove_together_is_a_usage_error(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="not both"):
        tools.call("pm_docs", {"id": item, "add": "a.md", "remove": "b.md"})


def test_test_tool_links_runs_and_unlinks_a_command(tools: ToolHost, item: str) -> None:
    command = f'"{sys.executable}" -c "print(42)"'
    tools.value("pm_test", {"id": item, "add": command, "timeoutSeconds": 30})
    run = tools.value("pm_test", {"id": item, "run": True})
    assert "42" in json.dumps(run)
    listed = tools.value("pm_test", {"id": item})
    assert [t["command"] for t in listed["tests"]] == [command]
    assert listed["tests"][0]["last_run"]["passed"] is True
    tools.value("pm_test", {"id": item, "remove": command})
    assert tools.tracker.get(item).tests == []


def test_test_tool_rejects_two_actions_at_once(tools: ToolHost, item: str) -> None:
    with pytest.raises(UsageError, match="one of add, remove, run"):
        tools.call("pm_test", {"id": item, "add": "true", "run": True})


def test_deps_add_show_and_remove(tools: ToolHost, item: str) -> None:
    blocker = tools.value("pm_create", {"options": {"title": "Blocker"}})["id"]
    tools.value("pm_deps", {"id": item, "add": blocker, "kind": "blocked_by"})
    tree = tools.value("pm_deps", {"id": item})
    assert blocker in json.dumps(tree)
    tools.value("pm_deps", {"id": item, "remove": blocker})
    assert tools.tracker.get(item).dependencies == []


def test_deps_on_self_is_refused(tools: ToolHost, item: str) -> None:
    from pm_core.tracker.model.errors import DependencyError

    with pytest.raises(DependencyError):
        tools.call("pm_deps", {"id": item, "add": item})


def test_events_lists_recent_history(tools: ToolHost, item: str) -> None:
    result = tools.value("pm_events", {"limit": 10})
    assert item in json.dumps(result)


def test_events_limit_above_1000_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="limit"):
        tools.call("pm_events", {"limit": 1001})


def test_focus_set_show_and_clear(tools: ToolHost, item: str) -> None:
    tools.value("pm_focus", {"id": item})
    assert tools.value("pm_focus", {})["focus"] == item
    tools.value("pm_focus", {"clear": True})
    assert tools.value("pm_focus", {})["focus"] is None


def test_focus_on_missing_item_is_not_found(tools: ToolHost) -> None:
    with pytest.raises(NotFoundError):
        tools.call("pm_focus", {"id": "pm-nope"})


def test_graph_runs_an_analysis(tools: ToolHost, item: str) -> None:
    child = tools.value("pm_create", {"options": {"title": "Child", "parent": item}})["id"]
    result = tools.value("pm_graph", {"subcommand": "ancestors", "id": child})
    assert item in json.dumps(result)


def test_graph_with_unknown_subcommand_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError):
        tools.call("pm_graph", {"subcommand": "astrology"})


def test_health_reports_checks(tools: ToolHost, item: str) -> None:
    assert "checks" in tools.value("pm_health", {})


def test_config_list_get_set(tools: ToolHost) -> None:
    assert "id_prefix" in tools.value("pm_config", {"configAction": "list"})["values"]
    tools.value("pm_config", {"configAction": "set", "key": "search.max_results", "value": 20})
    got = tools.value("pm_config", {"configAction": "get", "key": "search.max_results"})
    assert got["value"] == 20


def test_config_unset_restores_the_default_as_pm_config_unset_does(tools: ToolHost) -> None:
    tools.value("pm_config", {"configAction": "set", "key": "search.max_results", "value": 20})
    tools.value("pm_config", {"configAction": "unset", "key": "search.max_results"})
    got = tools.value("pm_config", {"configAction": "get", "key": "search.max_results"})
    assert got["value"] == 50


def test_config_set_without_value_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="value"):
        tools.call("pm_config", {"configAction": "set", "key": "id_prefix"})


def test_schema_add_field_then_list(tools: ToolHost) -> None:
    tools.value(
        "pm_schema",
        {
            "subcommand": "add-field",
            "name": "points",
            "fieldType": "number",
            "commands": ["create"],
        },
    )
    listed = tools.value("pm_schema", {"subcommand": "list"})
    assert "points" in json.dumps(listed)
    tools.tracker.reload()
    assert "points" in tools.schema("pm_create")["properties"]


def test_schema_add_status_with_roles(tools: ToolHost) -> None:
    tools.value("pm_schema", {"subcommand": "add-status", "name": "review", "roles": ["active"]})
    tools.tracker.reload()
    assert "review" in tools.tracker.schema.status_names


def test_schema_option_for_another_subcommand_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="fieldType"):
        tools.call("pm_schema", {"subcommand": "add-type", "name": "Bug2", "fieldType": "number"})


def test_contracts_describe_the_commands(tools: ToolHost) -> None:
    assert "claim" in json.dumps(tools.value("pm_contracts", {}))


def test_profile_shows_what_each_profile_selects(tools: ToolHost) -> None:
    result = tools.value("pm_profile", {}, profile="standard")
    assert result["active"] == "standard"
    assert len(result["selected"]) == 29
    assert result["profiles"]["core"]["count"] == 13
    assert result["profiles"]["full"]["count"] == 31
    assert "pm_run" not in result["profiles"]["standard"]["tools"]


def test_copy_makes_a_new_open_item(tools: ToolHost, item: str) -> None:
    receipt = tools.value("pm_copy", {"id": item, "title": "Build the index again"})
    copy = tools.tracker.get(receipt["id"])
    assert copy.title == "Build the index again" and copy.status == "open"


def test_copy_of_missing_item_is_not_found(tools: ToolHost) -> None:
    with pytest.raises(NotFoundError):
        tools.call("pm_copy", {"id": "pm-gone"})


def test_release_by_non_holder_without_claim_has_no_effect(tools: ToolHost, item: str) -> None:
    receipt = tools.call("pm_release", {"id": item}).value
    assert receipt["warnings"] == ["noop_not_claimed"] and receipt["changed_field_count"] == 0


def test_tools_work_against_a_tracker_in_another_repository(tmp_path: Path) -> None:
    other = Tracker(tmp_path / "other" / ".agents" / "pm", author="a2", env={})
    other.init()
    tools = ToolHost(make_host(), other)
    receipt = tools.value("pm_create", {"options": {"title": "Elsewhere"}})
    assert other.get(receipt["id"]).author == "a2"

"""The tracker tools: registration, schema projection, and the core tools' handlers.

Every handler runs against a real tracker in a temporary repository, through
the host's catalog and profile selection (``tests.support.toolhost``).
"""

from __future__ import annotations

import json

import pytest
from pm_plugins.tracker_tools import tool_specs

from pm_core.capabilities import builtin_commands
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import (
    ConflictError,
    NotFoundError,
    UsageError,
)
from pm_core.tracker.storage.workspace import write_json
from tests.support.toolhost import PROFILES, ToolHost, make_host


@pytest.fixture(params=PROFILES)
def tools(tracker: Tracker, request: pytest.FixtureRequest) -> ToolHost:
    """The suite runs under every profile; a tool a profile lacks is checked refused there."""
    return ToolHost(make_host(), tracker, profile=request.param)


def new_item(tools: ToolHost, title: str = "Write the parser", **options: object) -> str:
    receipt = tools.value("pm_create", {"options": {"title": title, **options}})
    return str(receipt["id"])


def declare_schema(tracker: Tracker) -> None:
    """A custom type, a custom status and custom fields, as a team would declare them."""
    schema = tracker.root / "schema"
    write_json(schema / "types.json", {"definitions": [{"name": "Spike", "folder": "spikes"}]})
    write_json(schema / "statuses.json", {"definitions": [{"name": "review", "roles": ["active"]}]})
    write_json(
        schema / "fields.json",
        {
            "fields": [
                {"key": "story_points", "type": "number", "commands": ["create", "update"]},
                {"key": "labels", "type": "string_array", "commands": ["create"]},
                {"key": "team", "type": "string", "commands": ["list"]},
            ]
        },
    )
    tracker.reload()


# ------------------------------------------------------------------ registration


def test_registers_the_31_tracker_tools_each_backed_by_a_known_command() -> None:
    specs = tool_specs()
    commands = {c.name for c in builtin_commands()}
    assert len(specs) == 31
    assert len({s.name for s in specs}) == 31
    assert "pm_discover" not in {s.name for s in specs}
    assert all(s.command in commands for s in specs)


def test_every_tool_declares_the_shared_path_and_author_arguments(tools: ToolHost) -> None:
    for tool in tools.listed("full"):
        props = tool.input_schema["properties"]
        assert props["path"] == {"type": "string"}, tool.name
        assert props["author"] == {"type": "string"}, tool.name


def test_descriptions_are_one_line(tools: ToolHost) -> None:
    for tool in tools.listed("full"):
        assert "\n" not in tool.description and len(tool.description) <= 100, tool.name


# ------------------------------------------------------------------ projection


def test_type_and_status_enums_come_from_the_workspace_schema(tools: ToolHost) -> None:
    declare_schema(tools.tracker)
    for name in ("pm_create", "pm_update", "pm_list"):
        options = tools.schema(name)["properties"]["options"]["properties"]
        # pm_list filters take several values: the enum is on the items.
        types = options["type"].get("enum") or options["type"]["items"]["enum"]
        statuses = options["status"].get("enum") or options["status"]["items"]["enum"]
        assert "Spike" in types and "Task" in types
        assert "review" in statuses and "open" in statuses


def test_custom_fields_become_top_level_properties_of_the_commands_they_are_declared_for(
    tools: ToolHost,
) -> None:
    declare_schema(tools.tracker)
    create = tools.schema("pm_create")["properties"]
    update = tools.schema("pm_update")["properties"]
    assert create["story_points"] == {"type": "number"}
    assert create["labels"] == {"type": "array", "items": {"type": "string"}}
    assert update["story_points"] == {"type": "number"}
    assert "labels" not in update
    assert "team" not in create and "team" not in update


def test_custom_field_argument_is_moved_into_options_and_stored(tools: ToolHost) -> None:
    declare_schema(tools.tracker)
    receipt = tools.value(
        "pm_create", {"options": {"title": "Spike it", "type": "Spike"}, "story_points": 3}
    )
    item = tools.tracker.get(receipt["id"])
    assert item.extra["story_points"] == 3
    assert item.type == "Spike"
    tools.value("pm_update", {"id": receipt["id"], "story_points": 5})
    assert tools.tracker.get(receipt["id"]).extra["story_points"] == 5


def test_custom_field_given_twice_with_different_values_is_refused(tools: ToolHost) -> None:
    declare_schema(tools.tracker)
    with pytest.raises(UsageError, match=r"story_points.*twice"):
        tools.call("pm_create", {"options": {"title": "x", "story_points": 1}, "story_points": 2})


# ------------------------------------------------------------------ pm_get / pm_create / pm_update


def test_get_returns_the_full_item_record(tools: ToolHost) -> None:
    item = new_item(tools, body="Details here.")
    result = tools.value("pm_get", {"id": item})
    assert result["item"]["id"] == item
    assert result["item"]["title"] == "Write the parser"
    assert result["item"]["body"] == "Details here."


def test_get_of_unknown_id_is_not_found(tools: ToolHost) -> None:
    with pytest.raises(NotFoundError):
        tools.call("pm_get", {"id": "pm-zzzz"})


def test_get_without_id_is_a_usage_error_naming_it(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="'id'"):
        tools.call("pm_get", {})


def test_create_accepts_camel_case_options(tools: ToolHost) -> None:
    receipt = tools.value(
        "pm_create",
        {
            "options": {
                "title": "Ship it",
                "type": "Feature",
                "priority": 1,
                "tags": ["api", "v2"],
                "acceptanceCriteria": "it ships",
                "estimatedMinutes": 30,
            }
        },
    )
    item = tools.tracker.get(receipt["id"])
    assert (item.type, item.priority, item.tags) == ("Feature", 1, ["api", "v2"])
    assert item.acceptance_criteria == "it ships"
    assert item.estimated_minutes == 30


def test_create_without_title_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="title"):
        tools.call("pm_create", {"options": {"type": "Task"}})


def test_create_with_dependency_on_missing_item_is_refused_unless_allowed(tools: ToolHost) -> None:
    from pm_core.tracker.model.errors import DependencyError

    with pytest.raises(DependencyError):
        tools.call("pm_create", {"options": {"title": "a", "deps": ["pm-nope"]}})
    receipt = tools.value(
        "pm_create", {"options": {"title": "a", "deps": ["pm-nope"], "allowUnresolvedDeps": True}}
    )
    assert tools.tracker.get(receipt["id"]).dependencies[0]["id"] == "pm-nope"


def test_update_changes_fields_and_tags(tools: ToolHost) -> None:
    item = new_item(tools, tags=["old"])
    receipt = tools.value(
        "pm_update",
        {"id": item, "options": {"priority": "high", "addTags": ["new"], "removeTags": "old"}},
    )
    assert "priority" in receipt["changed_fields"]
    assert tools.tracker.get(item).tags == ["new"]


def test_update_with_unknown_field_is_a_usage_error_naming_it(tools: ToolHost) -> None:
    item = new_item(tools)
    with pytest.raises(UsageError, match="colour"):
        tools.call("pm_update", {"id": item, "options": {"colour": "red"}})


# ------------------------------------------------------------------ lifecycle


def test_claim_then_release(tools: ToolHost) -> None:
    item = new_item(tools)
    claimed = tools.value("pm_claim", {"id": item})
    assert claimed["claimed_by"] == "tester"
    released = tools.value("pm_release", {"id": item})
    assert released["previous_assignee"] == "tester"
    assert tools.tracker.get(item).assignee is None


def test_claim_of_item_held_by_other_is_conflict_unless_forced(tools: ToolHost) -> None:
    item = new_item(tools)
    Tracker(tools.tracker.root, author="someone-else", env={}).claim(item)
    with pytest.raises(ConflictError, match="someone-else"):
        tools.call("pm_claim", {"id": item})
    assert tools.value("pm_claim", {"id": item, "force": True})["claimed_by"] == "tester"


def test_release_of_unclaimed_item_has_no_effect(tools: ToolHost) -> None:
    assert tools.call("pm_release", {"id": new_item(tools)}).value["warnings"] == [
        "noop_not_claimed"
    ]


def test_claim_with_non_boolean_force_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="force"):
        tools.call("pm_claim", {"id": new_item(tools), "force": "yes please"})


def test_close_with_reason_and_duplicate(tools: ToolHost) -> None:
    original, dup = new_item(tools), new_item(tools, "Same thing")
    receipt = tools.value("pm_close", {"id": dup, "reason": "dup", "duplicateOf": original})
    assert receipt["status"] == "closed"
    assert tools.tracker.get(dup).duplicate_of == original


def test_close_without_reason_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="reason"):
        tools.call("pm_close", {"id": new_item(tools)})


# ------------------------------------------------------------------ pm_mutate


def test_mutate_applies_every_mutation(tools: ToolHost) -> None:
    item = new_item(tools)
    result = tools.value(
        "pm_mutate",
        {
            "mutations": [
                {"op": "create", "options": {"title": "Second"}},
                {"op": "comment", "id": item, "options": {"text": "started"}},
            ]
        },
    )
    assert result["applied"] is True and len(result["results"]) == 2
    assert tools.tracker.get(item).comments[0]["text"] == "started"


def test_mutate_dry_run_changes_nothing(tools: ToolHost) -> None:
    result = tools.value(
        "pm_mutate", {"mutations": [{"op": "create", "options": {"title": "x"}}], "dryRun": True}
    )
    assert result["applied"] is False
    assert tools.tracker.items() == []


def test_mutate_with_non_list_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="mutations"):
        tools.call("pm_mutate", {"mutations": {"op": "create"}})


# ------------------------------------------------------------------ reads


def test_list_filters_and_pages(tools: ToolHost) -> None:
    new_item(tools, "a", tags=["x"])
    new_item(tools, "b", tags=["y"])
    result = tools.value("pm_list", {"options": {"tag": ["x"], "limit": 5}})
    assert [r["title"] for r in result["items"]] == ["a"]


def test_list_takes_several_statuses_and_a_sort(tools: ToolHost) -> None:
    first = new_item(tools, "b first")
    second = new_item(tools, "a second")
    tools.value("pm_claim", {"id": first})
    result = tools.value(
        "pm_list", {"options": {"status": ["open", "in_progress"], "sort": "title"}}
    )
    assert [r["id"] for r in result["items"]] == [second, first]


def test_list_with_a_non_text_status_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="status"):
        tools.call("pm_list", {"options": {"status": 3}})


def test_list_drops_unknown_options_with_a_warning_naming_each(tools: ToolHost) -> None:
    new_item(tools)
    outcome = tools.call("pm_list", {"options": {"limit": 1, "colour": "red", "shape": 2}})
    assert len(outcome.value["items"]) == 1
    assert len(outcome.warnings) == 2
    assert "'colour'" in outcome.warnings[0] and "ignored" in outcome.warnings[0]
    assert "'shape'" in outcome.warnings[1]


def test_list_with_bad_limit_is_a_usage_error(tools: ToolHost) -> None:
    # The same bounds as `pm list --limit`: 0 rows, N rows, or -1 for no limit.
    with pytest.raises(UsageError, match="limit"):
        tools.call("pm_list", {"options": {"limit": -2}})


def test_search_finds_by_title(tools: ToolHost) -> None:
    item = new_item(tools, "Tokenizer rewrite")
    new_item(tools, "Unrelated")
    result = tools.value("pm_search", {"query": "tokenizer", "limit": 5})
    assert [h["id"] for h in result["hits"]] == [item]


def test_search_with_unknown_mode_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="mode"):
        tools.call("pm_search", {"query": "x", "mode": "psychic"})


def test_context_ranks_open_work(tools: ToolHost) -> None:
    item = new_item(tools)
    result = tools.value("pm_context", {"options": {"depth": "brief", "limit": 3}})
    assert item in json.dumps(result)


def test_context_honours_section_and_token_budget(tools: ToolHost) -> None:
    new_item(tools)
    result = tools.value(
        "pm_context", {"options": {"depth": "standard", "section": "workload", "tokenBudget": 400}}
    )
    assert list(result["sections"]) == ["workload"]
    assert result["token_cost"]["budget"] == 400


def test_context_with_unknown_depth_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="depth"):
        tools.call("pm_context", {"options": {"depth": "abyssal"}})


def test_next_recommends_the_ready_item(tools: ToolHost) -> None:
    item = new_item(tools)
    result = tools.value("pm_next", {"options": {"limit": 2}})
    assert result["recommended"]["id"] == item


def test_next_ready_only_and_decisions(tools: ToolHost) -> None:
    new_item(tools, "Pick a database", type="Decision")
    options = {"readyOnly": True, "includeDecisions": True}
    with_decisions = tools.value("pm_next", {"options": options})
    without = tools.value("pm_next", {"options": {"readyOnly": True}})
    assert "Pick a database" in [r["title"] for r in with_decisions["ready"]]
    assert "Pick a database" not in [r["title"] for r in without["ready"]]


def test_next_with_zero_limit_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="limit"):
        tools.call("pm_next", {"options": {"limit": 0}})


def test_validate_runs_the_named_checks(tools: ToolHost) -> None:
    new_item(tools)
    result = tools.value("pm_validate", {"options": {"checks": ["metadata"]}})
    assert "metadata" in json.dumps(result)


def test_validate_with_unknown_check_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="bogus"):
        tools.call("pm_validate", {"options": {"checks": ["bogus"]}})


# ------------------------------------------------------------------ pm_plan


def test_plan_create_show_step_add_and_decide(tools: ToolHost) -> None:
    created = tools.value("pm_plan", {"subcommand": "create", "title": "P", "steps": ["a", "b"]})
    plan = created["id"]
    shown = tools.value("pm_plan", {"id": plan})
    assert [s["title"] for s in shown["steps"]] == ["a", "b"]
    tools.value("pm_plan", {"subcommand": "step", "id": plan, "stepRef": "1", "status": "done"})
    tools.value("pm_plan", {"subcommand": "step", "id": plan, "title": "c"})
    tools.value("pm_plan", {"subcommand": "decision", "id": plan, "text": "go with a"})
    item = tools.tracker.get(plan)
    assert [s["status"] for s in item.plan_steps] == ["done", "pending", "pending"]
    assert item.plan_decisions[0]["text"] == "go with a"


def test_plan_show_warns_about_arguments_it_does_not_use(tools: ToolHost) -> None:
    plan = tools.value("pm_plan", {"subcommand": "create", "title": "P", "steps": ["a"]})["id"]
    outcome = tools.call("pm_plan", {"id": plan, "status": "done"})
    assert outcome.warnings and "'status'" in outcome.warnings[0]


def test_plan_with_unknown_subcommand_is_a_usage_error(tools: ToolHost) -> None:
    with pytest.raises(UsageError, match="subcommand"):
        tools.call("pm_plan", {"subcommand": "explode", "id": "pm-1"})

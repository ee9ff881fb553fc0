"""Settings, schema changes, the machine contract and the event feed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_core.capabilities import builtin_commands
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import ConflictError, NoEffectError, NotFoundError, UsageError
from pm_core.tracker.model.item import FIELD_ORDER
from pm_core.tracker.ops import admin
from tests.support.trackers import add, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def workspace_history(t: Tracker) -> list[dict[str, object]]:
    path = t.root / "history" / "_workspace.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_config_set_parses_json_writes_the_file_and_records_history(t: Tracker) -> None:
    result = admin.config_set(t, "governance.require_close_reason", "false")
    assert result == {"key": "governance.require_close_reason", "value": False, "previous": True}
    raw = json.loads((t.root / "settings.json").read_text(encoding="utf-8"))
    assert raw["governance"]["require_close_reason"] is False
    assert t.settings["governance"]["require_close_reason"] is False  # caches reloaded
    (entry,) = workspace_history(t)
    assert entry["op"] == "config_set" and entry["key"] == "governance.require_close_reason"
    assert entry["before_hash"] != entry["after_hash"]


def test_config_get_says_where_a_value_comes_from(t: Tracker) -> None:
    assert admin.config_get(t, "locks.ttl_seconds")["value"] == 1800
    admin.config_set(t, "locks.ttl_seconds", 60)
    assert admin.config_get(t, "locks.ttl_seconds") == {
        "key": "locks.ttl_seconds",
        "value": 60,
        "source": "settings.json",
    }
    with pytest.raises(NotFoundError):
        admin.config_get(t, "no.such.key")


def test_config_rejects_invalid_values_and_keys(t: Tracker) -> None:
    with pytest.raises(UsageError, match="none, warn or strict"):
        admin.config_set(t, "governance.ownership_enforcement", "sometimes")
    with pytest.raises(UsageError, match="4 to 12"):
        admin.config_set(t, "id_token_length", 2)
    with pytest.raises(UsageError, match="invalid setting key"):
        admin.config_set(t, "bad key!", 1)
    admin.config_set(t, "governance.ownership_enforcement", "warn")
    with pytest.raises(NoEffectError):
        admin.config_set(t, "governance.ownership_enforcement", "warn")


def test_extension_settings_are_stored_and_unknown_ones_refused(t: Tracker) -> None:
    result = admin.config_set(t, "extensions.kanban.columns", "[1, 2]")
    assert result["value"] == [1, 2]
    with pytest.raises(UsageError, match=r"unknown setting .kanban\.columns."):
        admin.config_set(t, "kanban.columns", "[1, 2]")


def test_config_unset_restores_the_default(t: Tracker) -> None:
    admin.config_set(t, "locks.wait_ms", 10)
    admin.config_unset(t, "locks.wait_ms")
    assert admin.config_get(t, "locks.wait_ms") == {
        "key": "locks.wait_ms",
        "value": 3000,
        "source": "default",
    }
    assert "locks.wait_ms" not in admin.config_list(t)["overrides"]


def test_schema_add_type_makes_it_usable(t: Tracker) -> None:
    added = admin.schema_add(t, "type", "Spike", aliases=["research"])
    assert added["folder"] == "spikes"
    item = add(t, "Look into FTS5", type="research")
    assert t.get(item).type == "Spike"
    assert (t.root / "spikes" / f"{item}.toon").is_file()
    assert workspace_history(t)[-1]["target"] == "schema/types.json"
    with pytest.raises(ConflictError):
        admin.schema_add(t, "type", "spike")


def test_schema_add_status_and_field_validate_their_input(t: Tracker) -> None:
    status = admin.schema_add(t, "status", "review", roles=["active"])
    assert status == {"added": "status", "name": "review", "roles": ["active"]}
    assert admin.schema_add(t, "status", "shipped", roles=["terminal_done"])["roles"] == [
        "terminal_done",
        "terminal",
    ]
    assert "shipped" in t.schema.terminal_statuses
    field = admin.schema_add(t, "field", "points", field_type="number", commands=["create", "list"])
    assert field["commands"] == ["create", "list"]
    with pytest.raises(UsageError, match="invalid field type"):
        admin.schema_add(t, "field", "mood", field_type="emotion")
    with pytest.raises(UsageError, match="unknown command"):
        admin.schema_add(t, "field", "mood", commands=["delete"])
    with pytest.raises(ConflictError, match="built-in"):
        admin.schema_add(t, "field", "title")
    with pytest.raises(UsageError, match="unknown role"):
        admin.schema_add(t, "status", "odd", roles=["sideways"])
    with pytest.raises(UsageError, match="type, status or field"):
        admin.schema_add(t, "workflow", "x")
    listed = admin.schema_list(t)
    assert [f["key"] for f in listed["fields"]] == ["points"]
    assert {"name": "review", "roles": ["active"], "terminal": False} in listed["statuses"]


def test_contracts_describe_commands_fields_and_exit_codes(t: Tracker) -> None:
    admin.schema_add(t, "field", "points", field_type="number")
    contract = admin.contracts(t)
    by_name = {c["name"]: c for c in contract["commands"]}
    described = dict(by_name["next"])
    params = described.pop("params")
    assert described == {
        "name": "next",
        "tier": "core",
        "family": "orientation",
        "summary": next(c.summary for c in builtin_commands() if c.name == "next"),
    }
    # Every parameter of its one declaration, with the tool key an MCP client passes.
    assert {p["cli"]: p["tool"] for p in params}["--ready-only"] == "readyOnly"
    assert [p["name"] for p in params] == [
        "limit",
        "parent",
        "ready_only",
        "include_decisions",
        "token_budget",
        "claim",
    ]
    assert len(by_name) == len([c for c in builtin_commands() if c.tier != "internal"])
    assert contract["item"]["fields"] == [*FIELD_ORDER, "body"]
    assert contract["item"]["required"][:3] == ["id", "title", "description"]
    assert contract["exit_codes"]["conflict"] == 4 and contract["exit_codes"]["mcp_usage"] == 64
    assert contract["custom_fields"][0]["key"] == "points"
    assert "blocked_by" in contract["dependency_kinds"]
    assert contract["close_status"] == "closed"


def test_events_are_newest_first_and_bounded(t: Tracker) -> None:
    item = add(t, "First")
    t.update(item, {"title": "Renamed"})
    admin.config_set(t, "locks.wait_ms", 500)
    feed = admin.events(t, limit=2)
    assert [e["op"] for e in feed["events"]] == ["config_set", "update"]
    assert (
        feed["events"][1]["fields"] == ["title", "updated_at"]
        or "title" in feed["events"][1]["fields"]
    )
    assert (feed["total"], feed["returned"], feed["has_more"]) == (3, 2, True)
    with pytest.raises(UsageError, match="limit must be 1-1000"):
        admin.events(t, limit=1001)


def test_events_since_filters_old_entries(t: Tracker) -> None:
    add(t, "Old")
    assert admin.events(t, since="2999-01-01T00:00:00Z")["events"] == []
    assert len(admin.events(t, since="1h")["events"]) == 1
    with pytest.raises(UsageError, match="invalid since"):
        admin.events(t, since="yesterday-ish")

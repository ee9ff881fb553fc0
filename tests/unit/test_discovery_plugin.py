"""The progressive-discovery plugin in a host: negotiation, entry catalog, pm_discover.

The MCP adapter calls these hooks; here they run in-process on a fresh host
with the tracker tools, the profiles and the discovery plugin.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pm_plugins.profiles
import pm_plugins.progressive_discovery
import pm_plugins.tracker_tools
import pytest
from pm_plugins.progressive_discovery import EXTENSION_ID, negotiated

from pm_core import hookimpl
from pm_core.contracts import (
    CommandSpec,
    ParamSpec,
    RequestContext,
    ToolContext,
)
from pm_core.host import Host, build_host
from pm_core.sdk import DiscoveryError
from pm_core.tracker.api import Tracker
from tests.support.discovery import CONTRACTS

ENTRY = ["pm_discover", "pm_next", "pm_context", "pm_search", "pm_get"]
DECLARED: dict[str, Any] = {EXTENSION_ID: {}}


def _kanban(ctx: ToolContext, **params: Any) -> Any:
    return {"board": params}


class Extension:
    """A fake extension package with a standard-tier and a full-tier command."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [
            CommandSpec(
                "kanban-board",
                "Show the kanban board of open work.",
                tier="standard",
                family="orientation",
                params=(ParamSpec("column", help="Column to show."),),
                handler=_kanban,
            ),
            CommandSpec("purge", "Purge old items.", tier="full", handler=_kanban),
            CommandSpec("sweep", "Sweep internal caches.", tier="internal", handler=_kanban),
        ]


def make_host(*extra: tuple[str, object], profiles: bool = True) -> Host:
    base: list[tuple[str, object]] = [
        ("tracker_tools", pm_plugins.tracker_tools),
        ("progressive_discovery", pm_plugins.progressive_discovery),
    ]
    if profiles:
        base.append(("profiles", pm_plugins.profiles))
    return build_host(env={}, entry_points=False, plugins=[*base, *extra])


def modern(extensions: Mapping[str, Any] | None = None, **kw: Any) -> RequestContext:
    return RequestContext(
        era="modern", protocol_version="2026-07-28", extensions=extensions or {}, **kw
    )


def listed(host: Host, request: RequestContext, purpose: str = "list") -> list[str]:
    catalog = host.catalog(CONTRACTS, request=request)
    return [t.name for t in host.select_tools(catalog, request, purpose)]


def test_negotiated_list_is_the_five_tool_entry_catalog_in_order() -> None:
    assert listed(make_host(), modern(DECLARED)) == ENTRY


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
def test_every_named_profile_gets_the_same_entry_catalog(profile: str) -> None:
    assert listed(make_host(), modern(DECLARED, profile=profile)) == ENTRY


def test_modern_client_that_does_not_declare_keeps_the_full_profile() -> None:
    names = listed(make_host(), modern(profile="standard"))
    assert len(names) == 30 and "pm_graph" in names


def test_initialize_era_client_keeps_the_full_profile_even_when_it_declared() -> None:
    request = RequestContext(era="initialize", protocol_version="2025-11-25", extensions=DECLARED)
    assert not negotiated(request)
    assert len(listed(make_host(), request)) == 14


def test_tools_outside_the_entry_catalog_stay_callable() -> None:
    callable_ = listed(make_host(), modern(DECLARED), purpose="call")
    assert {"pm_close", "pm_claim", "pm_update"} <= set(callable_)
    assert len(callable_) == 14


def test_a_custom_profile_stays_an_exact_allowlist() -> None:
    request = modern(DECLARED, profile="custom", tool_allowlist=("pm_get", "pm_close", "pm_next"))
    assert listed(make_host(), request) == ["pm_next", "pm_get"]
    assert sorted(listed(make_host(), request, "call")) == ["pm_close", "pm_get", "pm_next"]


def test_without_a_profile_selection_the_whole_catalog_is_narrowed() -> None:
    # No profiles plugin: the firstresult call yields None ("the whole catalog").
    assert listed(make_host(profiles=False), modern(DECLARED)) == ENTRY
    assert len(listed(make_host(profiles=False), modern())) == 32


def test_a_declared_setting_that_is_not_an_object_does_not_negotiate() -> None:
    assert not negotiated(modern({EXTENSION_ID: True}))


def test_entry_catalog_tools_list_is_under_1500_estimated_tokens() -> None:
    host = make_host()
    request = modern(DECLARED)
    tools = host.select_tools(host.catalog(CONTRACTS, request=request), request, "list")
    wire = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools
    ]
    body = json.dumps({"tools": wire}, separators=(",", ":"), ensure_ascii=False)
    assert math.ceil(len(body.encode("utf-8")) / 4) < 1500


def test_extension_is_advertised_with_pointer_results() -> None:
    (extension,) = [e for e in make_host().protocol_extensions() if e.identifier == EXTENSION_ID]
    assert extension.pointer_results
    assert extension.settings["entryCatalog"] == ENTRY
    assert extension.settings["discoveryTool"] == "pm_discover"


def test_pm_discover_is_a_core_orientation_tool_backed_by_discover() -> None:
    host = make_host()
    spec = host.tools()["pm_discover"]
    assert spec.command == "discover"
    (descriptor,) = [t for t in host.catalog(CONTRACTS) if t.name == "pm_discover"]
    assert descriptor.tier == "core" and descriptor.family == "orientation"
    schema = descriptor.input_schema
    assert set(schema["properties"]) == {
        "query",
        "family",
        "tier",
        "limit",
        "cursor",
        "includeSchema",
        "outputBudget",
    }


# --- the handler, called the way the adapter calls it ---------------------------


def call(host: Host, tracker: Tracker, args: Mapping[str, Any], **request: Any) -> Any:
    req = modern(DECLARED, **request)
    selected = host.select_tools(host.catalog(CONTRACTS, request=req), req, "call")
    ctx = ToolContext(tracker=tracker, request=req, tools=tuple(selected), commands=host.commands())
    return host.tools()["pm_discover"].handler(ctx, dict(args))


def row_names(result: Mapping[str, Any]) -> list[str]:
    return [row["name"] for row in result["tools"]]


def test_handler_ranks_the_requests_callable_tools(tracker: Tracker) -> None:
    result = call(make_host(), tracker, {"query": "close an item with evidence", "limit": 3})
    assert "pm_close" in row_names(result)
    json.dumps(result)


def test_handler_candidates_follow_the_profile(tracker: Tracker) -> None:
    everything = {"limit": 100, "outputBudget": 100_000}
    core = call(make_host(), tracker, everything, profile="core")
    assert core["total"] == 14
    full = call(make_host(), tracker, everything, profile="full")
    assert full["total"] == 32


def test_handler_takes_camel_case_arguments(tracker: Tracker) -> None:
    result = call(
        make_host(),
        tracker,
        {"query": "search", "limit": 1, "includeSchema": True, "outputBudget": 5000},
    )
    assert result["returned"] == 1 and "input_schema" in result["tools"][0]
    assert result["token_cost"]["budget"] == 5000


def test_visible_extension_commands_are_rows_run_through_pm_run(tracker: Tracker) -> None:
    host = make_host(("ext", Extension()))
    result = call(
        host, tracker, {"query": "kanban board", "includeSchema": True}, profile="standard"
    )
    row = result["tools"][0]
    assert row["name"] == "pm_run:kanban-board" and row["command"] == "kanban-board"
    assert row["tier"] == "standard" and row["family"] == "orientation"
    assert row["input_schema"]["properties"]["action"] == {"const": "kanban-board"}
    assert row["input_schema"]["properties"]["column"]["description"] == "Column to show."


def test_extension_commands_above_the_profile_tier_or_internal_are_not_rows(
    tracker: Tracker,
) -> None:
    host = make_host(("ext", Extension()))
    everything = {"limit": 100, "outputBudget": 100_000}
    standard = row_names(call(host, tracker, everything, profile="standard"))
    assert "pm_run:kanban-board" in standard and "pm_run:purge" not in standard
    full = row_names(call(host, tracker, everything, profile="full"))
    assert {"pm_run:kanban-board", "pm_run:purge"} <= set(full)
    assert not any(name.startswith("pm_run:sweep") for name in full)


def test_extension_commands_need_pm_run_in_a_custom_profile(tracker: Tracker) -> None:
    host = make_host(("ext", Extension()))
    without = call(host, tracker, {"query": "kanban"}, profile="custom", tool_allowlist=("pm_get",))
    assert without["total"] == 0
    with_run = call(
        host, tracker, {"query": "kanban"}, profile="custom", tool_allowlist=("pm_get", "pm_run")
    )
    assert row_names(with_run)[0] == "pm_run:kanban-board"


def test_handler_cursor_pages_on(tracker: Tracker) -> None:
    host = make_host()
    first = call(host, tracker, {"limit": 4})
    second = call(host, tracker, {"limit": 4, "cursor": first["next_cursor"]})
    assert not set(row_names(first)) & set(row_names(second))


def test_handler_cursor_goes_stale_when_the_profile_changes(tracker: Tracker) -> None:
    host = make_host()
    first = call(host, tracker, {"limit": 4}, profile="core")
    with pytest.raises(DiscoveryError, match="without a cursor"):
        call(host, tracker, {"limit": 4, "cursor": first["next_cursor"]}, profile="standard")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"limit": "5"}, "limit"),
        ({"limit": True}, "limit"),
        ({"includeSchema": "yes"}, "includeSchema"),
        ({"outputBudget": 1.5}, "outputBudget"),
        ({"query": 42}, "query"),
        ({"family": ["lifecycle"]}, "family"),
        ({"cursor": 7}, "cursor"),
        ({"tier": "internal"}, "tier"),
        ({"limit": 0}, "limit"),
    ],
)
def test_handler_refuses_bad_arguments_as_usage_errors(
    tracker: Tracker, args: dict[str, Any], field: str
) -> None:
    with pytest.raises(DiscoveryError) as caught:
        call(make_host(), tracker, args)
    assert caught.value.code == 64 and caught.value.details["field"] == field
    assert field in caught.value.message


def test_null_arguments_mean_the_defaults(tracker: Tracker) -> None:
    result = call(make_host(), tracker, {"query": None, "limit": None, "outputBudget": None})
    assert result["token_cost"]["budget"] == 1200

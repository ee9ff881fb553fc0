"""The profiles plugin: which tools each MCP profile lists and lets clients call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ConfigurationError, Tier, ToolContext
from pm_core.tracker.api import Tracker
from tests.support.toolhost import DiscoverPlugin, ToolHost, make_host

CORE = {
    "pm_claim",
    "pm_close",
    "pm_context",
    "pm_create",
    "pm_get",
    "pm_list",
    "pm_mutate",
    "pm_next",
    "pm_plan",
    "pm_release",
    "pm_search",
    "pm_update",
    "pm_validate",
}
STANDARD_ONLY = {
    "pm_append",
    "pm_comments",
    "pm_config",
    "pm_contracts",
    "pm_deps",
    "pm_docs",
    "pm_events",
    "pm_files",
    "pm_focus",
    "pm_graph",
    "pm_health",
    "pm_learnings",
    "pm_notes",
    "pm_profile",
    "pm_schema",
    "pm_test",
}
FULL_ONLY = {"pm_copy", "pm_run"}


def _stamp(ctx: ToolContext, **params: Any) -> Any:
    return {"stamped": params}


class Extension:
    """A fake extension package declaring one command at ``tier``."""

    def __init__(self, tier: Tier) -> None:
        self.tier = tier

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [CommandSpec("stamp", "Stamp an item.", tier=self.tier, handler=_stamp)]


@pytest.fixture
def tools(tracker: Tracker) -> ToolHost:
    return ToolHost(make_host(), tracker)


def with_plugins(tracker: Tracker, *extra: tuple[str, object]) -> ToolHost:
    return ToolHost(make_host(*extra), tracker)


def test_core_profile_lists_the_thirteen_core_tools(tools: ToolHost) -> None:
    assert set(tools.names("core")) == CORE


def test_core_profile_has_fourteen_tools_when_discovery_contributes_pm_discover(
    tracker: Tracker,
) -> None:
    names = with_plugins(tracker, ("discovery", DiscoverPlugin())).names("core")
    assert set(names) == CORE | {"pm_discover"}
    assert len(names) == 14


def test_standard_profile_adds_the_sixteen_standard_tools(tools: ToolHost) -> None:
    assert set(tools.names("standard")) == CORE | STANDARD_ONLY
    assert len(tools.names("standard")) == 29


def test_full_profile_lists_every_tracker_tool(tools: ToolHost) -> None:
    assert set(tools.names("full")) == CORE | STANDARD_ONLY | FULL_ONLY
    assert len(tools.names("full")) == 31


def test_custom_profile_lists_exactly_the_allowlist(tools: ToolHost) -> None:
    assert tools.names("custom", allowlist=["pm_get", "pm_copy", "pm_get"]) == [
        "pm_copy",
        "pm_get",
    ]


def test_listing_and_calling_select_the_same_tools(tools: ToolHost) -> None:
    request = tools.request("standard")
    catalog = tools.host.catalog(tools.tracker.schema.contracts(), request=request)
    listed = tools.host.select_tools(catalog, request, "list")
    called = tools.host.select_tools(catalog, request, "call")
    assert [t.name for t in listed] == [t.name for t in called]


def test_unknown_profile_is_a_configuration_error_naming_the_valid_ones(tools: ToolHost) -> None:
    with pytest.raises(ConfigurationError, match=r"'minimal'.*core, standard, full, custom"):
        tools.names("minimal")


@pytest.mark.parametrize("allowlist", [None, [], ["", " "]])
def test_custom_profile_without_an_allowlist_is_a_configuration_error(
    tools: ToolHost, allowlist: list[str] | None
) -> None:
    with pytest.raises(ConfigurationError, match="PM_MCP_TOOLS"):
        tools.names("custom", allowlist=allowlist)


def test_custom_allowlist_naming_unknown_tools_is_an_error_naming_them(tools: ToolHost) -> None:
    with pytest.raises(ConfigurationError) as caught:
        tools.names("custom", allowlist=["pm_get", "pm_gte", "pm_fly"])
    message = str(caught.value)
    assert "pm_gte, pm_fly" in message
    assert "\n" not in message


def test_extension_at_standard_tier_adds_pm_run_to_standard_but_not_core(
    tracker: Tracker,
) -> None:
    tools = with_plugins(tracker, ("stamp-ext", Extension("standard")))
    assert "pm_run" in tools.names("standard")
    assert "pm_run" not in tools.names("core")


def test_extension_at_core_tier_adds_pm_run_to_core(tracker: Tracker) -> None:
    tools = with_plugins(tracker, ("stamp-ext", Extension("core")))
    assert set(tools.names("core")) == CORE | {"pm_run"}


def test_internal_extension_never_adds_pm_run(tracker: Tracker) -> None:
    tools = with_plugins(tracker, ("stamp-ext", Extension("internal")))
    assert "pm_run" not in tools.names("standard")


def test_custom_profile_stays_exact_even_with_a_visible_extension(tracker: Tracker) -> None:
    tools = with_plugins(tracker, ("stamp-ext", Extension("core")))
    assert tools.names("custom", allowlist=["pm_get"]) == ["pm_get"]

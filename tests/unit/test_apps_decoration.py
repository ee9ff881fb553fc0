"""``tools/list`` decoration through the host's ``pm_decorate_tools`` hook."""

from __future__ import annotations

from collections.abc import Sequence

import pm_plugins.apps_ui
import pytest
from pm_plugins.apps_ui.apps import APP_CONTRACTS, decorate_tools_with_apps

from pm_core import hookimpl
from pm_core.contracts import RequestContext, ToolDescriptor
from pm_core.host import Host, build_host

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
NEGOTIATED = RequestContext(extensions={UI: {"specVersion": "2026-01-26", "mimeTypes": [MIME]}})
PLAIN = RequestContext()
VIEW_TOOLS = {
    "pm_context": "ui://pm/context.html",
    "pm_graph": "ui://pm/graph.html",
    "pm_plan": "ui://pm/plan.html",
    "pm_validate": "ui://pm/assurance.html",
    "pm_test": "ui://pm/operations.html",
}


def tool(name: str, meta: dict[str, object] | None = None) -> ToolDescriptor:
    return ToolDescriptor(
        name=name,
        description=f"{name} tool",
        input_schema={"type": "object"},
        command=name.removeprefix("pm_"),
        tier="core",
        family="orientation",
        meta=meta,
    )


CATALOG = [tool(name) for name in [*VIEW_TOOLS, "pm_get", "pm_search"]]


def host_with(*extra: tuple[str, object]) -> Host:
    return build_host(env={}, entry_points=False, plugins=[("apps_ui", pm_plugins.apps_ui), *extra])


@pytest.fixture
def host() -> Host:
    return host_with()


def test_negotiated_listing_puts_ui_meta_on_the_five_view_tools(host: Host) -> None:
    listed = {t.name: t for t in host.decorate_tools(CATALOG, NEGOTIATED)}
    for name, uri in VIEW_TOOLS.items():
        assert listed[name].meta == {"ui": {"resourceUri": uri, "visibility": ["model", "app"]}}


def test_negotiated_listing_leaves_tools_without_a_view_alone(host: Host) -> None:
    listed = {t.name: t for t in host.decorate_tools(CATALOG, NEGOTIATED)}
    assert listed["pm_get"].meta is None
    assert listed["pm_search"].meta is None


def test_listing_without_apps_is_exactly_the_input(host: Host) -> None:
    assert host.decorate_tools(CATALOG, PLAIN) == CATALOG


def test_only_the_tools_the_profile_listed_are_decorated(host: Host) -> None:
    narrowed = [tool("pm_context"), tool("pm_get")]
    listed = host.decorate_tools(narrowed, NEGOTIATED)
    assert [t.name for t in listed] == ["pm_context", "pm_get"]
    assert listed[0].meta is not None and "ui" in listed[0].meta


def test_decoration_keeps_meta_other_plugins_set(host: Host) -> None:
    listed = host.decorate_tools([tool("pm_plan", {"dev.example/cost": 3})], NEGOTIATED)
    assert listed[0].meta == {
        "dev.example/cost": 3,
        "ui": {"resourceUri": "ui://pm/plan.html", "visibility": ["model", "app"]},
    }


class EarlierDecorator:
    """A decorator that answers the hook itself; Apps must build on its answer."""

    @hookimpl(tryfirst=True)
    def pm_decorate_tools(
        self, tools: Sequence[ToolDescriptor], request: RequestContext
    ) -> Sequence[ToolDescriptor]:
        return [t.with_meta({"dev.example/seen": True}) for t in tools]


def test_apps_decorates_the_answer_of_an_earlier_decorator() -> None:
    host = host_with(("earlier", EarlierDecorator()))
    listed = host.decorate_tools([tool("pm_validate")], NEGOTIATED)
    assert listed[0].meta == {
        "dev.example/seen": True,
        "ui": {"resourceUri": "ui://pm/assurance.html", "visibility": ["model", "app"]},
    }


def test_sdk_function_matches_the_hook_for_a_custom_host() -> None:
    decorated = decorate_tools_with_apps(CATALOG, NEGOTIATED)
    assert [t.meta for t in decorated] == [
        t.meta for t in host_with().decorate_tools(CATALOG, NEGOTIATED)
    ]
    assert decorate_tools_with_apps(CATALOG, PLAIN) == CATALOG


def test_contracts_bind_each_view_tool_to_its_view() -> None:
    assert {c.tool: c.uri for c in APP_CONTRACTS} == VIEW_TOOLS


def test_plugin_advertises_the_apps_extension(host: Host) -> None:
    extensions = {e.identifier: e for e in host.protocol_extensions()}
    assert extensions[UI].settings == {"specVersion": "2026-01-26", "mimeTypes": [MIME]}
    assert extensions[UI].methods == ()
    assert host.records["apps_ui"].status == "ok"

"""A host with the tracker tools, and a way to call a tool the way ``pm-mcp`` does.

``ToolHost.call`` lists the catalog for a profile, selects the callable set
through the host's hooks and runs the tool's handler with a ``ToolContext``
bound to a real tracker: the same path the MCP adapter takes, minus the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pm_plugins.profiles
import pm_plugins.tracker_tools
import pm_plugins.workspace_resources
import pytest

from pm_core import hookimpl
from pm_core.contracts import (
    RequestContext,
    ToolContext,
    ToolDescriptor,
    ToolResult,
    ToolSpec,
    WorkspaceContracts,
)
from pm_core.host import Host, build_host
from pm_core.tracker.api import Tracker

BUILTIN_PLUGINS: tuple[tuple[str, object], ...] = (
    ("tracker_tools", pm_plugins.tracker_tools),
    ("profiles", pm_plugins.profiles),
    ("workspace_resources", pm_plugins.workspace_resources),
)


def make_host(*extra: tuple[str, object]) -> Host:
    """A fresh host with the three first-party plugins plus ``extra`` fakes."""
    return build_host(env={}, entry_points=False, plugins=[*BUILTIN_PLUGINS, *extra])


def _discover_schema(_c: WorkspaceContracts) -> Mapping[str, Any]:
    return {"type": "object", "properties": {"query": {"type": "string"}}}


def _discover(_ctx: ToolContext, _args: Mapping[str, Any]) -> Any:
    return {"tools": []}


class DiscoverPlugin:
    """Stands in for the progressive-discovery plugin: contributes ``pm_discover``."""

    @hookimpl
    def pm_register_tools(self) -> Sequence[ToolSpec]:
        return [ToolSpec("pm_discover", "Find tools.", "discover", _discover_schema, _discover)]


@attrs.define
class Outcome:
    """A handler's result split into value and warnings."""

    value: Any
    warnings: tuple[str, ...] = ()


#: The profiles tool suites run under.
PROFILES = ("core", "standard", "full")


@attrs.define
class ToolHost:
    """A host and a tracker; calls tools at a profile like the adapter does."""

    host: Host
    tracker: Tracker
    #: The profile ``call`` uses when none is given; suites parametrize it over every
    #: profile (:data:`PROFILES`).
    profile: str = "full"

    def request(
        self, profile: str = "full", allowlist: Sequence[str] | None = None
    ) -> RequestContext:
        return RequestContext(
            profile=profile, tool_allowlist=None if allowlist is None else tuple(allowlist)
        )

    def listed(self, profile: str = "full", **kw: Any) -> list[ToolDescriptor]:
        request = self.request(profile, **kw)
        catalog = self.host.catalog(self.tracker.schema.contracts(), request=request)
        return self.host.select_tools(catalog, request, "list")

    def names(self, profile: str = "full", **kw: Any) -> list[str]:
        return sorted(t.name for t in self.listed(profile, **kw))

    def schema(self, name: str, profile: str = "full") -> Mapping[str, Any]:
        return next(t.input_schema for t in self.listed(profile) if t.name == name)

    def call(
        self, name: str, args: Mapping[str, Any] | None = None, profile: str | None = None
    ) -> Outcome:
        """Call ``name`` at ``profile`` (default: this host's).

        At the host's own profile, a tool that profile does not offer is
        checked to be refused there and offered by a wider profile, and the
        test stops there (skipped, naming the profile): what it goes on to
        check needs the tool.
        """
        chosen = profile or self.profile
        request = self.request(chosen)
        catalog = self.host.catalog(self.tracker.schema.contracts(), request=request)
        selected = self.host.select_tools(catalog, request, "call")
        if profile is None and name not in {t.name for t in selected}:
            assert name in self.names("full"), f"{name} is not callable at any profile"
            pytest.skip(f"{name} is not offered at the {chosen} profile (refused there)")
        assert name in {t.name for t in selected}, f"{name} is not callable at {chosen}"
        ctx = ToolContext(
            tracker=self.tracker,
            request=request,
            author=self.tracker.author,
            tools=tuple(selected),
            commands=self.host.commands(),
        )
        out = self.host.tools()[name].handler(ctx, dict(args or {}))
        if isinstance(out, ToolResult):
            return Outcome(out.result, out.warnings)
        return Outcome(out)

    def value(self, name: str, args: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """The result of a call that must carry no warnings."""
        outcome = self.call(name, args, **kw)
        assert outcome.warnings == (), outcome.warnings
        return outcome.value

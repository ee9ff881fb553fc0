"""Catalogs and helpers for the progressive-discovery tests.

Two 32-tool catalogs: a stand-in built from the capability table (its
summaries as descriptions) and the real one projected by a host with the
tracker tools and the discovery plugin. Ranking tests run on both, so they
pin behaviour on the shipped descriptions and not only on test data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pm_plugins.progressive_discovery
import pm_plugins.tracker_tools

from pm_core.capabilities import builtin_commands
from pm_core.contracts import Tier, ToolDescriptor, WorkspaceContracts
from pm_core.host import build_host
from pm_core.sdk import DiscoveryResult, discover_tools

#: A fixed key: cursors in tests must not depend on the process key.
SECRET = b"discovery-tests"

CONTRACTS = WorkspaceContracts(
    types=("Epic", "Feature", "Task", "Chore", "Issue", "Decision"),
    statuses=("draft", "open", "in_progress", "blocked", "closed", "canceled"),
)

_TOOL_COMMANDS = """
    claim close context create discover get list mutate next plan release search update
    validate append comments config contracts deps docs events files focus graph health
    learnings notes profile schema test copy run
"""
#: The commands behind pm's 32 MCP tools.
TOOL_COMMANDS: tuple[str, ...] = tuple(_TOOL_COMMANDS.split())


def tool(
    name: str,
    description: str = "",
    *,
    family: str = "orientation",
    tier: Tier = "core",
    command: str | None = None,
    schema: Mapping[str, Any] | None = None,
) -> ToolDescriptor:
    """A descriptor with sensible defaults."""
    return ToolDescriptor(
        name=name,
        description=description or f"The {name} tool.",
        input_schema=schema or {"type": "object", "properties": {"id": {"type": "string"}}},
        command=command or name.removeprefix("pm_"),
        tier=tier,
        family=family,
    )


def standin_catalog() -> list[ToolDescriptor]:
    """The 32 tools, described by their commands' capability summaries."""
    commands = {c.name: c for c in builtin_commands()}
    return [
        tool(
            f"pm_{name}",
            commands[name].summary,
            family=commands[name].family,
            tier=commands[name].tier,
            command=name,
        )
        for name in TOOL_COMMANDS
    ]


def real_catalog() -> list[ToolDescriptor]:
    """The shipped catalog: tracker tools plus ``pm_discover``, projected by a host."""
    host = build_host(
        env={},
        entry_points=False,
        plugins=[
            ("tracker_tools", pm_plugins.tracker_tools),
            ("progressive_discovery", pm_plugins.progressive_discovery),
        ],
    )
    return host.catalog(CONTRACTS)


def discover(candidates: list[ToolDescriptor], **kwargs: Any) -> DiscoveryResult:
    """``discover_tools`` with the test key."""
    return discover_tools(candidates, secret=SECRET, **kwargs)


def names(result: DiscoveryResult) -> list[str]:
    """The row names of a result, in order."""
    return [row.name for row in result.tools]

"""The tracker's MCP tools (all but ``pm_discover``), each backed by the tracker SDK.

Schemas are projected from the live workspace (type and status enums, custom
fields); handlers call ``ctx.tracker``. Hook: ``pm_register_tools``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pm_plugins.tracker_tools.registry import tool_specs
from pm_plugins.tracker_tools.run import pm_run_actions

from pm_core import hookimpl
from pm_core.contracts import ToolSpec

__all__ = ["pm_register_tools", "pm_run_actions", "tool_specs"]


@hookimpl
def pm_register_tools() -> Sequence[ToolSpec]:
    """Contribute the tracker tools."""
    return tool_specs()

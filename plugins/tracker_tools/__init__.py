"""The tracker's MCP tools: 31 of pm's 32 tools (``pm_discover`` is its own plugin).

Each tool's schema is projected from the live workspace (type and status
enums, custom fields as top-level arguments of ``pm_create``/``pm_update``),
and each handler calls the tracker SDK bound in ``ctx.tracker``. ``pm_run``'s
action list is projected per request from the command registry and the
request's profile tier (:func:`pm_run_actions`).

Hook: ``pm_register_tools``.
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

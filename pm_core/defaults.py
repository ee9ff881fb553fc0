"""The core's own hook implementations, registered like any plugin."""

from __future__ import annotations

from collections.abc import Sequence

from pm_core import hookimpl
from pm_core.capabilities import builtin_commands
from pm_core.contracts import CommandSpec, RequestContext, ToolDescriptor


@hookimpl
def pm_register_commands() -> Sequence[CommandSpec]:
    """Declare the built-in commands (tier and family) from the capability table."""
    return builtin_commands()


@hookimpl(trylast=True)
def pm_decorate_tools(
    tools: Sequence[ToolDescriptor], request: RequestContext
) -> Sequence[ToolDescriptor]:
    """By default tools are listed as they are."""
    return tools

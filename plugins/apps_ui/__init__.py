"""MCP Apps for pm: interactive views beside five existing tools.

Only hosts that negotiated ``io.modelcontextprotocol/ui`` see the views; tool
results are never changed. Bindings and policy are in :mod:`pm_plugins.apps_ui.apps`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from pm_plugins.apps_ui.apps import (
    decorate_tools_with_apps,
    extension_id,
    has_apps_capability,
    resource_provider,
    server_settings,
)

from pm_core import hookimpl
from pm_core.contracts import ProtocolExtension, RequestContext, ResourceProvider, ToolDescriptor


@hookimpl(wrapper=True)
def pm_decorate_tools(
    tools: Sequence[ToolDescriptor], request: RequestContext
) -> Generator[None, Sequence[ToolDescriptor] | None, Sequence[ToolDescriptor] | None]:
    """Add ``_meta.ui`` to the view-backed tools when the request negotiated Apps."""
    result = yield
    if not has_apps_capability(request):
        return result
    return decorate_tools_with_apps(tools if result is None else result, request)


@hookimpl
def pm_resource_providers() -> Sequence[ResourceProvider]:
    """Serve the ``ui://pm/`` views, gated per request on the Apps negotiation."""
    return [resource_provider()]


@hookimpl
def pm_protocol_extensions() -> Sequence[ProtocolExtension]:
    """Advertise Apps support (spec revision and MIME type) in ``capabilities.extensions``."""
    return [ProtocolExtension(identifier=extension_id(), settings=server_settings())]

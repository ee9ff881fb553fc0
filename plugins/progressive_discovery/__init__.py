"""Progressive tool discovery: a small entry catalog, expanded by intent with ``pm_discover``.

Only clients that declare ``dev.unbrained.pm/progressive-tool-discovery`` get the
entry catalog; everyone else keeps the profile's full list, and hidden tools stay
callable. Hooks: ``pm_register_tools``, ``pm_select_tools``, ``pm_protocol_extensions``.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from pm_plugins.progressive_discovery.errors import DiscoveryError
from pm_plugins.progressive_discovery.policy import ENTRY_CATALOG
from pm_plugins.progressive_discovery.tool import tool_spec

from pm_core import hookimpl
from pm_core.contracts import ProtocolExtension, RequestContext, ToolDescriptor, ToolSpec

EXTENSION_ID = "dev.unbrained.pm/progressive-tool-discovery"
EXTENSION_VERSION = "1"

__all__ = [
    "ENTRY_CATALOG",
    "EXTENSION_ID",
    "DiscoveryError",
    "negotiated",
    "pm_protocol_extensions",
    "pm_register_tools",
    "pm_select_tools",
]


def negotiated(request: RequestContext) -> bool:
    """Whether this request opted in: a 2026-07-28 request declaring the extension.

    Initialize-era clients keep the full list even if they declared it at
    ``initialize``: the opt-in is per request by design.
    """
    return request.era == "modern" and request.extension(EXTENSION_ID) is not None


@hookimpl
def pm_register_tools() -> Sequence[ToolSpec]:
    """Contribute ``pm_discover`` (backed by the core-tier ``discover`` command)."""
    return [tool_spec()]


@hookimpl(wrapper=True)
def pm_select_tools(
    catalog: Sequence[ToolDescriptor], request: RequestContext, purpose: str
) -> Generator[None, Sequence[ToolDescriptor] | None, Sequence[ToolDescriptor] | None]:
    """Narrow a negotiated ``tools/list`` to the entry catalog, in its fixed order.

    The profile's selection (``None`` meaning the whole catalog) is kept as
    is for calls and for clients that did not negotiate, so a tool the entry
    catalog hides stays callable, and a custom profile stays an exact
    allowlist: entry tools it does not select are not added.
    """
    selected = yield
    if purpose != "list" or not negotiated(request):
        return selected
    by_name = {t.name: t for t in (catalog if selected is None else selected)}
    return [by_name[name] for name in ENTRY_CATALOG if name in by_name]


@hookimpl
def pm_protocol_extensions() -> Sequence[ProtocolExtension]:
    """Advertise the extension with its entry catalog; results become pointers."""
    return [
        ProtocolExtension(
            identifier=EXTENSION_ID,
            settings={
                "version": EXTENSION_VERSION,
                "entryCatalog": list(ENTRY_CATALOG),
                "discoveryTool": "pm_discover",
            },
            pointer_results=True,
        )
    ]

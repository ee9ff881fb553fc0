"""MCP Apps (``io.modelcontextprotocol/ui``) for pm: tool/view bindings and their policy.

Decides whether a request negotiated Apps, decorates listed tools and serves
the ``ui://`` documents; ``pm_core.sdk`` re-exports the public names. The MCP
SDK is imported inside functions, so the ``pm`` CLI never pays for it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import attrs

from pm_core.contracts import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ProtocolError,
    RequestContext,
    ResourceContent,
    ResourceEntry,
    ResourceProvider,
    ServeContext,
    ToolDescriptor,
)

if TYPE_CHECKING:
    from types import ModuleType

#: The MCP Apps specification revision the views and the negotiation follow.
SPEC_VERSION = "2026-01-26"
#: Every pm view lives under this prefix.
URI_PREFIX = "ui://pm/"
#: Who may call a decorated tool: the agent and the view alike.
VISIBILITY: tuple[str, ...] = ("model", "app")

# The served document is assembled from a view file and the shared runtime;
# these markers are where the runtime and the per-view configuration go.
_RUNTIME_MARKER = "<!-- pm-apps:runtime -->"
_RUNTIME_FILE = "_runtime.html"


@attrs.frozen(slots=True)
class AppContract:
    """One view and the existing tool whose result it renders."""

    view: str
    tool: str
    title: str
    description: str

    @property
    def uri(self) -> str:
        """The ``ui://`` resource the tool's ``_meta.ui.resourceUri`` points at."""
        return f"{URI_PREFIX}{self.view}.html"

    @property
    def file(self) -> str:
        """The view's file name under ``plugins/apps_ui/views/``."""
        return f"{self.view}.html"


#: The five tool/view bindings, in a stable order.
APP_CONTRACTS: tuple[AppContract, ...] = (
    AppContract(
        view="context",
        tool="pm_context",
        title="Context explorer",
        description="Ranked working context with the reasons each item was picked, "
        "what was left out, and the token cost.",
    ),
    AppContract(
        view="graph",
        tool="pm_graph",
        title="Relationship graph",
        description="Typed edges between items and the paths that explain them.",
    ),
    AppContract(
        view="plan",
        tool="pm_plan",
        title="Plan",
        description="Plan steps with their dependencies, the decisions taken, and validation.",
    ),
    AppContract(
        view="assurance",
        tool="pm_validate",
        title="Assurance",
        description="Validation verdicts, the evidence behind each failure, and how to recover.",
    ),
    AppContract(
        view="operations",
        tool="pm_test",
        title="Test runs",
        description="Results of linked test commands and other long operations.",
    ),
)

_BY_VIEW: Mapping[str, AppContract] = {c.view: c for c in APP_CONTRACTS}
_BY_TOOL: Mapping[str, AppContract] = {c.tool: c for c in APP_CONTRACTS}
_BY_URI: Mapping[str, AppContract] = {c.uri: c for c in APP_CONTRACTS}


def _sdk() -> ModuleType:
    """The official SDK's Apps module (imported on first use, see module docstring)."""
    from mcp.server import apps

    return apps


#: The MCP Apps extension identifier; equal to the SDK's ``EXTENSION_ID``
#: (a test pins it), spelled here so listing tools does not import the SDK.
EXTENSION_ID = "io.modelcontextprotocol/ui"
#: The MIME type of a ``ui://`` document; equal to the SDK's ``APP_MIME_TYPE``.
APP_MIME_TYPE = "text/html;profile=mcp-app"


def extension_id() -> str:
    """The MCP Apps extension identifier (the SDK's spelling)."""
    return EXTENSION_ID


def app_mime_type() -> str:
    """The MIME type of a ``ui://`` document (the SDK's spelling)."""
    return APP_MIME_TYPE


def server_settings() -> dict[str, Any]:
    """What pm advertises under ``capabilities.extensions`` for Apps."""
    return {"specVersion": SPEC_VERSION, "mimeTypes": [app_mime_type()]}


def has_apps_capability(request: RequestContext) -> bool:
    """Whether ``request`` negotiated MCP Apps.

    The declaration counts when its ``mimeTypes`` lists the app MIME type.
    ``specVersion`` is a pm addition the stable spec does not define: absent is
    fine, a different revision means the client speaks a view protocol these
    views do not, so the request gets the plain tools (the spec's graceful
    degradation) rather than an error. Unknown keys are ignored.
    """
    declared = request.extension(extension_id())
    if declared is None:
        return False
    mime_types = declared.get("mimeTypes")
    if not isinstance(mime_types, list | tuple) or app_mime_type() not in mime_types:
        return False
    spec_version = declared.get("specVersion")
    return spec_version is None or spec_version == SPEC_VERSION


def app_for_tool(name: str) -> AppContract | None:
    """The view bound to tool ``name``, if any."""
    return _BY_TOOL.get(name)


def app_for_uri(uri: str) -> AppContract | None:
    """The view served at ``uri``, if any."""
    return _BY_URI.get(uri)


def tool_ui_meta(contract: AppContract) -> dict[str, Any]:
    """The ``_meta`` a decorated tool carries (``_meta.ui``)."""
    visibility: list[Any] = list(VISIBILITY)
    return {"ui": {"resourceUri": contract.uri, "visibility": visibility}}


def resource_ui_meta() -> dict[str, Any]:
    """The ``_meta`` of every pm view: no outside origins, no permissions, a border.

    Built with the SDK's models so the field names follow the spec's shapes.
    """
    sdk = _sdk()
    csp = sdk.ResourceCsp(
        connect_domains=[], resource_domains=[], frame_domains=[], base_uri_domains=[]
    )
    permissions = sdk.ResourcePermissions()
    return {
        "ui": {
            "csp": csp.model_dump(by_alias=True, exclude_none=True),
            "permissions": permissions.model_dump(by_alias=True, exclude_none=True),
            "prefersBorder": True,
        }
    }


def decorate_tools_with_apps(
    tools: Sequence[ToolDescriptor], request: RequestContext
) -> list[ToolDescriptor]:
    """``tools`` with ``_meta.ui`` on the view-backed ones, when ``request`` negotiated Apps.

    Tools without a view, and every tool of a request that did not negotiate
    Apps, are returned as they are. Existing ``_meta`` keys are kept.
    """
    if not has_apps_capability(request):
        return list(tools)
    out: list[ToolDescriptor] = []
    for tool in tools:
        contract = app_for_tool(tool.name)
        out.append(tool if contract is None else tool.with_meta(tool_ui_meta(contract)))
    return out


def render_app_html(name: str) -> str:
    """The complete, self-contained HTML document of view ``name`` (e.g. ``"context"``).

    The view file and the shared runtime are joined into one document with
    inline CSS and JS only, so it runs under the spec's default CSP.
    """
    contract = _BY_VIEW.get(name)
    if contract is None:
        known = ", ".join(sorted(_BY_VIEW))
        raise ValueError(f"unknown MCP Apps view {name!r}; the views are: {known}")
    return _render(contract.view)


@functools.cache
def _render(view: str) -> str:
    contract = _BY_VIEW[view]
    folder = resources.files(__package__).joinpath("views")
    page = folder.joinpath(contract.file).read_text(encoding="utf-8")
    runtime = folder.joinpath(_RUNTIME_FILE).read_text(encoding="utf-8")
    if page.count(_RUNTIME_MARKER) != 1:
        raise RuntimeError(f"view {contract.file} must contain {_RUNTIME_MARKER} exactly once")
    from pm_core import __version__

    config = {
        "view": contract.view,
        "tool": contract.tool,
        "title": contract.title,
        "description": contract.description,
        "appInfo": {"name": f"pm-{contract.view}-view", "version": __version__},
        "protocolVersion": SPEC_VERSION,
    }
    # "</" inside a script element would end it early; JSON allows "<\/".
    payload = json.dumps(config, sort_keys=True).replace("</", "<\\/")
    block = f'<script id="pm-app-config" type="application/json">{payload}</script>\n{runtime}'
    return page.replace(_RUNTIME_MARKER, block)


def apps_denied(request: RequestContext) -> ProtocolError:
    """The error for reading a ``ui://`` view without having negotiated Apps.

    -32021 is the protocol's code for "this request needs a capability the
    client did not declare"; ``data.requiredCapabilities`` says what to declare.
    """
    ext = extension_id()
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"missing required client capability: {ext} with mimeTypes "
        f"[{app_mime_type()!r}] must be declared to read ui:// views",
        {"requiredCapabilities": {"extensions": {ext: server_settings()}}},
    )


def list_app_resources(ctx: ServeContext) -> list[ResourceEntry]:
    """The five views as listed resources (only reached when the gate is open)."""
    meta = resource_ui_meta()
    return [
        ResourceEntry(
            uri=c.uri,
            name=c.title,
            mime_type=app_mime_type(),
            description=f"{c.description} Renders the result of {c.tool}.",
            meta=meta,
        )
        for c in APP_CONTRACTS
    ]


def read_app_resource(ctx: ServeContext, uri: str) -> ResourceContent:
    """The document at ``uri``; an unknown ``ui://pm/`` URI is "resource not found"."""
    contract = app_for_uri(uri)
    if contract is None:
        known = ", ".join(c.uri for c in APP_CONTRACTS)
        # -32602 is the resource-not-found code since SEP-2164 (-32002 is retired).
        raise ProtocolError(
            INVALID_PARAMS, f"resource not found: {uri!r}; pm serves {known}", {"uri": uri}
        )
    return ResourceContent(
        uri=contract.uri,
        mime_type=app_mime_type(),
        text=render_app_html(contract.view),
        meta=resource_ui_meta(),
    )


def resource_provider() -> ResourceProvider:
    """The ``ui://pm/`` provider: open only to requests that negotiated Apps."""
    return ResourceProvider(
        prefix=URI_PREFIX,
        list=list_app_resources,
        read=read_app_resource,
        gate=has_apps_capability,
        denied=apps_denied,
    )

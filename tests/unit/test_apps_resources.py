"""The ``ui://pm/`` resource provider: gated listing, reads, and fail-closed denial."""

from __future__ import annotations

from typing import Any, cast

import pm_plugins.apps_ui
import pytest

from pm_core.contracts import ProtocolError, RequestContext, ResourceProvider, ServeContext
from pm_core.host import build_host

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
NEGOTIATED = RequestContext(extensions={UI: {"mimeTypes": [MIME]}})
PLAIN = RequestContext()
EXPECTED_META = {
    "ui": {
        "csp": {
            "connectDomains": [],
            "resourceDomains": [],
            "frameDomains": [],
            "baseUriDomains": [],
        },
        "permissions": {},
        "prefersBorder": True,
    }
}
URIS = [f"ui://pm/{v}.html" for v in ("context", "graph", "plan", "assurance", "operations")]


@pytest.fixture
def provider() -> ResourceProvider:
    host = build_host(env={}, entry_points=False, plugins=[("apps_ui", pm_plugins.apps_ui)])
    (found,) = [p for p in host.resource_providers() if p.prefix == "ui://pm/"]
    return found


def serve(request: RequestContext) -> ServeContext:
    # The views need no tracker: they are static documents.
    return ServeContext(request=request, tracker=cast(Any, None))


def test_provider_is_open_only_to_requests_that_negotiated_apps(provider: ResourceProvider) -> None:
    assert provider.gate(NEGOTIATED)
    assert not provider.gate(PLAIN)
    assert not provider.gate(RequestContext(extensions={UI: {"mimeTypes": ["text/html"]}}))


def test_listing_names_the_five_views_as_mcp_apps(provider: ResourceProvider) -> None:
    entries = provider.list(serve(NEGOTIATED))
    assert [e.uri for e in entries] == URIS
    for entry in entries:
        assert entry.mime_type == MIME
        assert entry.meta == EXPECTED_META
        assert entry.name and entry.description


@pytest.mark.parametrize("uri", URIS)
def test_read_returns_the_view_document_with_its_sandbox_meta(
    provider: ResourceProvider, uri: str
) -> None:
    content = provider.read(serve(NEGOTIATED), uri)
    assert content.uri == uri
    assert content.mime_type == MIME
    assert content.meta == EXPECTED_META
    assert content.blob is None
    assert content.text is not None and content.text.lower().startswith("<!doctype html>")


def test_read_of_an_unknown_view_is_resource_not_found(provider: ResourceProvider) -> None:
    with pytest.raises(ProtocolError) as caught:
        provider.read(serve(NEGOTIATED), "ui://pm/nope.html")
    assert caught.value.code == -32602
    assert "ui://pm/nope.html" in caught.value.message
    assert caught.value.data == {"uri": "ui://pm/nope.html"}


def test_denied_read_names_the_missing_client_capability(provider: ResourceProvider) -> None:
    assert provider.denied is not None
    error = provider.denied(PLAIN)
    assert error.code == -32021
    assert UI in error.message and MIME in error.message
    assert error.data == {
        "requiredCapabilities": {
            "extensions": {UI: {"specVersion": "2026-01-26", "mimeTypes": [MIME]}}
        }
    }

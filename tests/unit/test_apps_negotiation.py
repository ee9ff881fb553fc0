"""Who counts as an MCP Apps client: the per-request ``io.modelcontextprotocol/ui`` declaration."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server import apps as sdk_apps
from pm_plugins.apps_ui.apps import (
    SPEC_VERSION,
    app_mime_type,
    extension_id,
    has_apps_capability,
    server_settings,
)

from pm_core.contracts import RequestContext

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"


def request_with(declaration: Any) -> RequestContext:
    return RequestContext(extensions={UI: declaration})


def test_extension_id_and_mime_type_are_the_sdk_constants() -> None:
    assert extension_id() == sdk_apps.EXTENSION_ID == UI
    assert app_mime_type() == sdk_apps.APP_MIME_TYPE == MIME


def test_declaration_listing_the_app_mime_type_negotiates_apps() -> None:
    assert has_apps_capability(request_with({"mimeTypes": [MIME]}))


def test_declaration_with_the_implemented_spec_version_negotiates_apps() -> None:
    assert has_apps_capability(request_with({"specVersion": SPEC_VERSION, "mimeTypes": [MIME]}))


def test_unknown_keys_beside_the_mime_types_are_ignored() -> None:
    declaration = {"mimeTypes": ["text/html", MIME], "features": ["streaming"]}
    assert has_apps_capability(request_with(declaration))


def test_request_without_the_declaration_does_not_negotiate_apps() -> None:
    assert not has_apps_capability(RequestContext())
    other = RequestContext(extensions={"io.modelcontextprotocol/skills": {"mimeTypes": [MIME]}})
    assert not has_apps_capability(other)


def test_declaration_without_the_app_mime_type_does_not_negotiate_apps() -> None:
    assert not has_apps_capability(request_with({"specVersion": SPEC_VERSION, "mimeTypes": []}))
    assert not has_apps_capability(request_with({"mimeTypes": ["text/html"]}))
    assert not has_apps_capability(request_with({"specVersion": SPEC_VERSION}))


def test_declaration_of_another_spec_version_falls_back_to_plain_tools() -> None:
    assert not has_apps_capability(request_with({"specVersion": "2025-11-21", "mimeTypes": [MIME]}))


@pytest.mark.parametrize(
    "declaration",
    [None, True, "text/html;profile=mcp-app", [MIME], {"mimeTypes": MIME}, {"mimeTypes": None}],
    ids=["null", "bool", "string", "list", "mime-as-string", "mime-null"],
)
def test_malformed_declarations_do_not_negotiate_apps(declaration: Any) -> None:
    assert not has_apps_capability(request_with(declaration))


def test_server_settings_advertise_spec_version_and_mime_type() -> None:
    assert server_settings() == {"specVersion": "2026-01-26", "mimeTypes": [MIME]}

"""The served view documents: complete, self-contained, and speaking the 2026-01-26 protocol."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from pm_plugins.apps_ui.apps import APP_CONTRACTS, render_app_html

VIEWS = [c.view for c in APP_CONTRACTS]


def config_of(html: str) -> dict[str, object]:
    match = re.search(r'<script id="pm-app-config" type="application/json">(.*?)</script>', html)
    assert match, "the view carries no configuration block"
    value: dict[str, object] = json.loads(match.group(1))
    return value


@pytest.mark.parametrize("view", VIEWS)
def test_view_is_one_complete_html_document(view: str) -> None:
    html = render_app_html(view)
    assert html.lower().startswith("<!doctype html>")
    for tag in ("<html", "<head>", "</head>", "<body>", "</body>", "</html>"):
        assert html.count(tag) == 1, tag
    assert "pm-apps:runtime" not in html
    assert html.count("window.PmApp = ") == 1


@pytest.mark.parametrize("view", VIEWS)
def test_view_configuration_names_its_tool_and_protocol(view: str) -> None:
    contract = next(c for c in APP_CONTRACTS if c.view == view)
    config = config_of(render_app_html(view))
    assert config["tool"] == contract.tool
    assert config["protocolVersion"] == "2026-01-26"
    assert config["appInfo"] == {"name": f"pm-{view}-view", "version": config["appInfo"]["version"]}  # type: ignore[index]


@pytest.mark.parametrize("view", VIEWS)
def test_view_loads_nothing_from_outside(view: str) -> None:
    html = render_app_html(view)
    assert not re.search(r"""\b(src|href|action|poster)\s*=\s*["']?(https?:|//)""", html, re.I)
    assert not re.search(r"@import|url\((?!#)", html)
    assert not re.search(r"<(link|iframe|object|embed|img|base)\b", html, re.I)


FORBIDDEN = [
    "fetch(",
    "XMLHttpRequest",
    "WebSocket",
    "EventSource",
    "sendBeacon",
    "localStorage",
    "sessionStorage",
    "indexedDB",
    "document.cookie",
    "caches.",
    "navigator.clipboard",
    "execCommand",
    "getUserMedia",
    "geolocation",
    "new Worker",
    "importScripts",
    "window.open(",
    "eval(",
    "new Function",
    "innerHTML",
]


@pytest.mark.parametrize("view", VIEWS)
def test_view_uses_no_network_storage_device_or_code_injection_api(view: str) -> None:
    html = render_app_html(view)
    used = [token for token in FORBIDDEN if token in html]
    assert used == []


PROTOCOL = [
    '"ui/initialize"',
    '"ui/notifications/initialized"',
    '"ui/notifications/tool-input-partial"',
    '"ui/notifications/tool-input"',
    '"ui/notifications/tool-result"',
    '"ui/notifications/tool-cancelled"',
    '"ui/notifications/host-context-changed"',
    '"ui/resource-teardown"',
    '"ui/notifications/size-changed"',
    "ResizeObserver",
    'aria-live": "polite"',
    "prefers-reduced-motion: reduce",
    ":focus-visible",
]


@pytest.mark.parametrize("view", VIEWS)
def test_view_handles_every_host_message_of_the_protocol(view: str) -> None:
    html = render_app_html(view)
    missing = [token for token in PROTOCOL if token not in html]
    assert missing == []


def test_unknown_view_name_is_rejected_with_the_known_names() -> None:
    with pytest.raises(
        ValueError, match=r"unknown MCP Apps view 'kanban'.*assurance, context, graph"
    ):
        render_app_html("kanban")


def test_importing_the_plugin_leaves_the_mcp_stack_unloaded() -> None:
    # The pm CLI loads every plugin; it must not pay for importing the MCP SDK.
    code = "import sys, pm_plugins.apps_ui, pm_core.sdk; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_sdk_exports_the_apps_policy_for_custom_hosts() -> None:
    from pm_plugins.apps_ui import apps

    import pm_core.sdk as sdk

    for name in (
        "APP_CONTRACTS",
        "has_apps_capability",
        "decorate_tools_with_apps",
        "render_app_html",
    ):
        assert name in sdk.__all__
        assert getattr(sdk, name) is getattr(apps, name)

"""Drive one pm view inside the test host page (``host/host.html``) with Playwright.

The host page does the protocol work in the browser; this wrapper starts a
scenario, reads the traffic log, and collects what would betray a broken view:
page errors, console errors and CSP violations (reported by Chromium on the
console and by the view itself through ``notifications/message``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, FrameLocator, Page
from pm_plugins.apps_ui.apps import render_app_html

#: The host context a well-behaved host sends; the views must cope with less.
LIGHT_CONTEXT: dict[str, Any] = {
    "theme": "light",
    "displayMode": "inline",
    "availableDisplayModes": ["inline"],
    "containerDimensions": {"maxHeight": 6000},
    "locale": "en-US",
    "timeZone": "UTC",
    "platform": "web",
    "styles": {"variables": {"--font-sans": "DejaVu Sans, sans-serif"}},
}
HOST_CAPABILITIES: dict[str, Any] = {"serverTools": {}, "serverResources": {}, "logging": {}}
CSP_WORDS = re.compile(r"Content Security Policy|Refused to", re.I)


class ViewHost:
    """A page holding the test host, with one view loaded at a time."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.console: list[tuple[str, str]] = []
        self.page_errors: list[str] = []
        # A view that works answers within a second; fail fast when it does not.
        page.set_default_timeout(10_000)
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.goto(url)

    def _on_console(self, message: ConsoleMessage) -> None:
        self.console.append((message.type, message.text))

    # -- scenario ----------------------------------------------------------------

    def open(self, view: str, scenario: Mapping[str, Any], wait: bool = True) -> None:
        """Load ``view`` and play ``scenario`` (see ``host.js``); wait for the handshake."""
        full = {"hostContext": LIGHT_CONTEXT, "hostCapabilities": HOST_CAPABILITIES, **scenario}
        self.page.evaluate("([html, s]) => host.start(html, s)", [render_app_html(view), full])
        if wait:
            self.page.wait_for_function("host.initialized === true")

    def open_html(self, html: str, scenario: Mapping[str, Any]) -> None:
        """Load an arbitrary document (for checks of the harness itself)."""
        self.page.evaluate("([html, s]) => host.start(html, s)", [html, dict(scenario)])

    @property
    def frame(self) -> FrameLocator:
        """The view's document."""
        return self.page.frame_locator("iframe")

    def log(self) -> list[dict[str, Any]]:
        """Every message so far: ``{"dir": "view->host"|"host->view", "msg": {...}}``."""
        entries: list[dict[str, Any]] = self.page.evaluate("host.log")
        return entries

    def sent_by_view(self, method: str | None = None) -> list[dict[str, Any]]:
        """Messages the view sent, optionally only those of ``method``."""
        return [
            e["msg"]
            for e in self.log()
            if e["dir"] == "view->host" and (method is None or e["msg"].get("method") == method)
        ]

    def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a notification to the view."""
        self.page.evaluate("([m, p]) => host.notify(m, p)", [method, dict(params)])

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send a request to the view and return its full response message."""
        reply: dict[str, Any] = self.page.evaluate(
            "([m, p]) => host.request(m, p)", [method, dict(params)]
        )
        return reply

    def wait_for_status(self, pattern: str) -> str:
        """Wait until the view's aria-live status matches ``pattern``; return its text."""
        status = self.frame.locator("#pm-status")
        status.filter(has_text=re.compile(pattern)).wait_for()
        return status.inner_text()

    def eval_in_view(self, expression: str) -> Any:
        """Evaluate ``expression`` (a function of the root element) inside the view."""
        return self.frame.locator("html").evaluate(expression)

    # -- evidence ----------------------------------------------------------------

    def csp_violations(self) -> list[str]:
        """CSP violations seen on the console or reported by the view."""
        found = [text for _, text in self.console if CSP_WORDS.search(text)]
        reported: list[dict[str, Any]] = self.page.evaluate("host.logs")
        found += [str(entry) for entry in reported if "csp" in str(entry.get("data"))]
        return found

    def problems(self) -> list[str]:
        """Page errors, console errors and CSP violations, for the end-of-test check."""
        errors = [text for kind, text in self.console if kind == "error"]
        return self.page_errors + errors + self.csp_violations()

    def screenshot(self, path: Path) -> None:
        """A full screenshot of the view, sized to its content."""
        height = self.eval_in_view("e => Math.ceil(e.getBoundingClientRect().height)")
        size = self.page.viewport_size or {"width": 800, "height": 600}
        self.page.set_viewport_size({"width": size["width"], "height": max(400, int(height))})
        self.page.wait_for_function(
            "h => document.querySelector('iframe').getBoundingClientRect().height >= h - 1",
            arg=int(height),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True)
        self.page.set_viewport_size(size)

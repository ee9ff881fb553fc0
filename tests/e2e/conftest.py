"""Fixtures for the browser tests of the MCP Apps views.

Chromium is the Debian package (``/usr/bin/chromium``), driven by Playwright
for Python; no browser is downloaded. Without it the browser tests fail when
``CI=true`` and are skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import ViewCase
from tests.e2e.viewhost import ViewHost
from tests.e2e.workspace import collect_cases

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
HOST_DIR = Path(__file__).parent / "host"
SCREENSHOTS = Path(__file__).parents[1] / "output" / "screenshots"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module.

    Playwright's sync API keeps an event loop running while it is started, so
    it must stop before tests in other modules run their own loops (anyio).
    """
    if not CHROMIUM.exists():
        reason = f"headless Chromium is not installed at {CHROMIUM} (Debian package 'chromium')"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must install it (.ci/run does)")
        pytest.skip(reason + "; install it to run the browser tests")
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()
    finally:
        playwright.stop()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""


@pytest.fixture(scope="session")
def host_url() -> Iterator[str]:
    """The test host page, served from 127.0.0.1 on a free port."""
    handler = functools.partial(_QuietHandler, directory=str(HOST_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/host.html"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def view_host(browser: Any, host_url: str) -> Iterator[ViewHost]:
    """A fresh page on the test host; at the end, no page errors, console errors or CSP violations."""
    context = browser.new_context(viewport={"width": 900, "height": 800})
    host = ViewHost(context.new_page(), host_url)
    try:
        yield host
        problems = host.problems()
        assert problems == [], f"the view misbehaved: {problems}"
    finally:
        context.close()


@pytest.fixture(scope="session")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ViewCase]:
    """Real ``pm-mcp`` results for the five view tools, from a seeded workspace."""
    return collect_cases(tmp_path_factory.mktemp("apps-workspace"))


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tests leave screenshots of each view (gitignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS

"""The five MCP Apps views in headless Chromium, inside a sandboxed iframe with the
spec's default CSP, fed real ``pm-mcp`` results by a hand-written host.

Every test ends with the ``view_host`` check: no page errors, no console errors,
no CSP violations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import BOUNDS, LARGE, ViewCase, visible_facts
from tests.e2e.viewhost import ViewHost

pytestmark = pytest.mark.browser

VIEWS = ["context", "graph", "plan", "assurance", "operations"]
READ_ONLY_REFRESH = ["context", "graph", "assurance"]


def scenario(
    case: ViewCase, result: Any = None, cancel: Any = None, **extra: Any
) -> dict[str, Any]:
    """Partial input, the full input, then the result (or the cancellation)."""
    first = dict(list(case.arguments.items())[:1])
    played: dict[str, Any] = {"partialInputs": [first], "toolInput": case.arguments, **extra}
    if cancel is not None:
        played["cancel"] = cancel
    else:
        played["toolResult"] = case.result if result is None else result
    return played


@pytest.fixture(params=VIEWS)
def case(request: pytest.FixtureRequest, cases: dict[str, ViewCase]) -> ViewCase:
    return cases[request.param]


def test_handshake_runs_in_protocol_order_with_spec_shapes(
    view_host: ViewHost, case: ViewCase
) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    log = view_host.log()
    first = log[0]
    assert first["dir"] == "view->host"
    init = first["msg"]
    assert init["method"] == "ui/initialize" and isinstance(init["id"], int)
    params = init["params"]
    assert params["protocolVersion"] == "2026-01-26"
    assert params["appInfo"]["name"] == f"pm-{case.view}-view"
    assert isinstance(params["appInfo"]["version"], str) and params["appInfo"]["version"]
    assert params["appCapabilities"] == {"availableDisplayModes": ["inline"]}

    order = [(e["dir"], e["msg"].get("method") or f"reply:{e['msg'].get('id')}") for e in log]
    init_reply = order.index(("host->view", f"reply:{init['id']}"))
    initialized = order.index(("view->host", "ui/notifications/initialized"))
    assert init_reply < initialized
    assert "params" not in log[initialized]["msg"] or log[initialized]["msg"]["params"] == {}
    to_view = [
        i for i, (d, m) in enumerate(order) if d == "host->view" and not m.startswith("reply:")
    ]
    assert to_view and min(to_view) > initialized

    sizes = view_host.sent_by_view("ui/notifications/size-changed")
    assert sizes, "the view never reported its size"
    assert all(s["params"]["width"] > 0 and s["params"]["height"] > 0 for s in sizes)
    assert order.index(("view->host", "ui/notifications/size-changed")) > initialized


def test_view_renders_the_real_result(
    view_host: ViewHost, case: ViewCase, screenshots: Path
) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    text = view_host.frame.locator("#pm-content").inner_text()
    missing = [fact for fact in visible_facts(case) if fact not in text]
    assert missing == []
    assert view_host.frame.locator("[data-truncated]").count() == 0
    view_host.screenshot(screenshots / f"{case.view}.png")


def test_view_shows_partial_input_then_the_input(view_host: ViewHost, case: ViewCase) -> None:
    first = dict(list(case.arguments.items())[:1])
    view_host.open(case.view, {"partialInputs": [first]})
    assert "Receiving the tool input" in view_host.wait_for_status("Receiving")
    assert view_host.frame.locator("#pm-input").inner_text().startswith("Input so far")
    view_host.notify("ui/notifications/tool-input", {"arguments": case.arguments})
    view_host.wait_for_status("Waiting for")
    assert view_host.frame.locator("#pm-input").inner_text().startswith("Input —")
    view_host.notify("ui/notifications/tool-result", case.result)
    view_host.wait_for_status("^Showing")


def test_large_result_is_cut_with_the_counts(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case, case.large()))
    view_host.wait_for_status("^Showing")
    _, bound = BOUNDS[case.view]
    notes = view_host.frame.locator("[data-truncated]").all_inner_texts()
    assert any(f"Showing the first {bound} of {LARGE}" in note for note in notes), notes
    rendered = view_host.frame.locator("li.card, table.rows tbody tr").count()
    assert rendered < LARGE


def test_cancelled_call_is_announced(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case, cancel={"reason": "the user stopped it"}))
    assert "cancelled" in view_host.wait_for_status("cancelled")
    notice = view_host.frame.locator("#pm-notice").inner_text()
    assert "Cancelled" in notice and "the user stopped it" in notice


def test_error_result_is_shown_as_an_error(view_host: ViewHost, case: ViewCase) -> None:
    assert case.error.get("isError") is True
    view_host.open(case.view, scenario(case, case.error))
    view_host.wait_for_status("reported an error")
    notice = view_host.frame.locator("#pm-notice[role=alert]").inner_text()
    assert f"{case.tool} failed" in notice
    assert case.error["structuredContent"]["error"] in notice


def test_result_without_structured_content_falls_back_to_its_text(
    view_host: ViewHost, case: ViewCase
) -> None:
    view_host.open(case.view, scenario(case, case.text_only()))
    view_host.wait_for_status("text result")
    shown = view_host.frame.locator("#pm-content pre").inner_text()
    assert shown == case.result["content"][0]["text"]


def test_theme_change_from_the_host_is_applied(
    view_host: ViewHost, case: ViewCase, screenshots: Path
) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    body = view_host.frame.locator("body")
    # No colour variables from the host yet: the view's own fallbacks apply.
    assert body.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(255, 255, 255)"
    assert "DejaVu Sans" in body.evaluate("b => getComputedStyle(b).fontFamily")
    light_text = body.evaluate("b => getComputedStyle(b).color")
    view_host.notify(
        "ui/notifications/host-context-changed",
        {"theme": "dark", "styles": {"variables": {"--color-background-primary": "rgb(1, 2, 3)"}}},
    )
    view_host.frame.locator("html[data-theme=dark]").wait_for(state="attached")
    assert body.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(1, 2, 3)"
    dark_text = body.evaluate("b => getComputedStyle(b).color")
    assert dark_text != light_text  # the fallback light-dark() colours follow the theme
    view_host.screenshot(screenshots / f"{case.view}-dark.png")


def test_container_dimensions_from_the_host_are_applied(
    view_host: ViewHost, case: ViewCase
) -> None:
    fixed = {"hostContext": {"containerDimensions": {"height": 300, "maxWidth": 640}}}
    view_host.open(case.view, scenario(case, **fixed))
    view_host.wait_for_status("^Showing")
    style = "e => [e.style.height, e.style.maxWidth, getComputedStyle(e).overflowY]"
    assert view_host.eval_in_view(style) == ["100vh", "640px", "auto"]
    view_host.notify(
        "ui/notifications/host-context-changed", {"containerDimensions": {"maxHeight": 500}}
    )
    view_host.frame.locator("html[style*='max-height: 500px']").wait_for(state="attached")
    assert view_host.eval_in_view("e => [e.style.height, e.style.maxWidth]") == ["", ""]
    view_host.notify("ui/notifications/host-context-changed", {"theme": "dark"})
    view_host.frame.locator("html[data-theme=dark]").wait_for(state="attached")
    assert view_host.eval_in_view("e => e.style.maxHeight") == "500px"


def test_teardown_request_gets_an_empty_result(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    reply = view_host.request("ui/resource-teardown", {"reason": "the conversation ended"})
    assert reply == {"jsonrpc": "2.0", "id": reply["id"], "result": {}}
    view_host.wait_for_status("Closed by the host")


def test_keyboard_focus_shows_a_visible_ring(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    for _ in range(6):
        view_host.page.keyboard.press("Tab")
        tag = view_host.eval_in_view("() => document.activeElement.tagName")
        if tag not in ("BODY", "HTML"):
            break
    ring = view_host.eval_in_view(
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.matches(':focus-visible'), s.outlineStyle, s.outlineWidth]; }"
    )
    assert ring[0] is True, "Tab did not reach a focusable element in the view"
    assert ring[1] == "solid" and float(ring[2].removesuffix("px")) >= 2


def test_view_fits_a_320px_wide_container(
    view_host: ViewHost, case: ViewCase, screenshots: Path
) -> None:
    view_host.page.set_viewport_size({"width": 320, "height": 700})
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    widths = view_host.eval_in_view(
        "e => [e.scrollWidth, e.clientWidth, document.body.scrollWidth]"
    )
    assert widths[1] == 320
    assert widths[0] <= widths[1] and widths[2] <= widths[1], widths
    view_host.screenshot(screenshots / f"{case.view}-320.png")


def test_reduced_motion_preference_stops_transitions(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    status = view_host.frame.locator("#pm-status")
    assert status.evaluate("s => getComputedStyle(s).transitionDuration") != "0s"
    view_host.page.emulate_media(reduced_motion="reduce")
    assert status.evaluate("s => getComputedStyle(s).transitionDuration") == "0s"
    assert status.evaluate("s => getComputedStyle(s, '::before').animationDuration") == "0s"


@pytest.mark.parametrize("view", READ_ONLY_REFRESH)
def test_refresh_calls_the_read_tool_through_the_host(
    view_host: ViewHost, cases: dict[str, ViewCase], view: str
) -> None:
    case = cases[view]
    refreshed = case.text_only()
    view_host.open(view, scenario(case, toolCalls={case.tool: refreshed}))
    view_host.wait_for_status("^Showing")
    view_host.frame.locator("#pm-refresh").click()
    view_host.wait_for_status("text result")
    calls = view_host.sent_by_view("tools/call")
    assert [c["params"] for c in calls] == [{"name": case.tool, "arguments": case.arguments}]


@pytest.mark.parametrize("view", ["plan", "operations"])
def test_views_over_mutating_tools_offer_no_tool_calls(
    view_host: ViewHost, cases: dict[str, ViewCase], view: str
) -> None:
    case = cases[view]
    view_host.open(view, scenario(case))
    view_host.wait_for_status("^Showing")
    assert view_host.frame.locator("#pm-refresh").count() == 0
    for button in view_host.frame.locator("button, summary").all():
        button.click()
    assert view_host.sent_by_view("tools/call") == []


def test_refresh_stays_hidden_when_the_host_cannot_call_tools(
    view_host: ViewHost, cases: dict[str, ViewCase]
) -> None:
    view_host.open("context", {**scenario(cases["context"]), "hostCapabilities": {}})
    view_host.wait_for_status("^Showing")
    assert view_host.frame.locator("#pm-refresh").is_hidden()


def test_view_runs_sandboxed_under_the_default_csp(view_host: ViewHost, case: ViewCase) -> None:
    view_host.open(case.view, scenario(case))
    view_host.wait_for_status("^Showing")
    frame = view_host.page.locator("iframe")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    assert "connect-src 'none'" in (frame.get_attribute("srcdoc") or "")
    for button in view_host.frame.locator("button").all()[:5]:
        button.click()
    assert view_host.csp_violations() == []


def test_harness_notices_a_view_that_breaks_the_csp(browser: Any, host_url: str) -> None:
    """The CSP check can fail: a document reaching for the network is caught."""
    context = browser.new_context()
    try:
        host = ViewHost(context.new_page(), host_url)
        rogue = (
            "<!doctype html><html><head></head><body><script>"
            "fetch('https://example.invalid/data').catch(() => {});"
            "</script></body></html>"
        )
        with host.page.expect_console_message(lambda m: "connect-src" in m.text):
            host.open_html(rogue, {})
        assert any("connect-src" in v for v in host.csp_violations())
    finally:
        context.close()

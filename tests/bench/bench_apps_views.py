"""MCP Apps view figures: document size, and time to draw real and very large results.

Run: ``.venv/bin/python tests/bench/bench_apps_views.py [--rows 2000] [--runs 5]``.
Needs Chromium at /usr/bin/chromium. Results come from a real ``pm-mcp`` on a
workspace seeded with the ``pm`` CLI; the large case repeats real rows.
Prints a table and writes ``tests/bench/results/apps_views.json``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402
from pm_plugins.apps_ui.apps import APP_CONTRACTS, render_app_html  # noqa: E402

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, HOST_DIR  # noqa: E402
from tests.e2e.viewhost import ViewHost  # noqa: E402
from tests.e2e.workspace import collect_cases  # noqa: E402


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No request log."""


def draw_ms(host: ViewHost, view: str, args: dict[str, Any], result: dict[str, Any]) -> float:
    """Milliseconds from the host posting the tool result to the view saying it shows it.

    The clock starts once the payload is in the page, so Playwright's own
    transfer of a large payload (most of the wall time) is not counted; the
    figure includes Playwright's polling of the status line (a few ms).
    """
    host.open(view, {"toolInput": args})
    host.page.evaluate("r => { window.pending = r; }", result)
    start = time.perf_counter()
    host.page.evaluate("() => host.notify('ui/notifications/tool-result', window.pending)")
    host.wait_for_status("^Showing")
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2000, help="rows in the large result")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = collect_cases(Path(tmp))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HOST_DIR))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/host.html"
    rows: list[dict[str, Any]] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for contract in APP_CONTRACTS:
            case = cases[contract.view]
            figures: dict[str, list[float]] = {"real": [], "large": []}
            for _ in range(opts.runs):
                for label, result in (("real", case.result), ("large", case.large(opts.rows))):
                    page = browser.new_page(viewport={"width": 900, "height": 800})
                    figures[label].append(
                        draw_ms(ViewHost(page, url), case.view, case.arguments, result)
                    )
                    page.close()
            rows.append(
                {
                    "view": contract.view,
                    "document_bytes": len(render_app_html(contract.view).encode()),
                    "real_ms": round(statistics.median(figures["real"]), 1),
                    f"large_{opts.rows}_ms": round(statistics.median(figures["large"]), 1),
                }
            )
        browser.close()
    server.shutdown()
    print(
        f"{'view':<12}{'bytes':>8}{'real ms':>10}{'large ms':>10}  (median of {opts.runs}, {opts.rows} rows)"
    )
    for row in rows:
        print(
            f"{row['view']:<12}{row['document_bytes']:>8}{row['real_ms']:>10}{row[f'large_{opts.rows}_ms']:>10}"
        )
    out = ROOT / "tests" / "bench" / "results" / "apps_views.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

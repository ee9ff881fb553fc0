"""Fifty clients on ``pm-mcp --http`` at once, half in each protocol era, mixing
reads and writes, beside a few hostile clients: every request is answered
without error, every hostile input is refused with the right status, and every
acknowledged write is on disk and in history.

A shortened run of ``tests/bench/load_http.py`` (which runs 60 s and prints the
same figures). ``PM_HTTP_LOAD_SECONDS`` lengthens it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from tests.support.http_load import figures, run_load, verify
from tests.support.mcp_http import HttpServer

CLIENTS = 50
SECONDS = float(os.environ.get("PM_HTTP_LOAD_SECONDS", "5"))
BODY_CAP = 256 * 1024


@pytest.mark.slow
def test_fifty_http_clients_of_both_eras_get_no_errors_and_lose_no_write(
    repo: Path, tracker: Tracker
) -> None:
    items = [tracker.create({"title": f"Shared item {n}"})["id"] for n in range(20)]
    env = {"PM_MCP_PROFILE": "standard", "PM_MCP_MAX_REQUEST_BYTES": str(BODY_CAP)}
    with HttpServer(repo, env=env) as server:
        report = run_load(
            server.url,
            server.port,
            clients=CLIENTS,
            seconds=SECONDS,
            items=items,
            hostile=3,
            body_cap=BODY_CAP,
        )
        peak = server.peak_rss_kib()
        code = server.close()
    assert code == 0
    assert "Traceback" not in server.stderr, server.stderr[-2000:]

    assert report.errors == []
    assert len(report.served) == CLIENTS and min(report.served.values()) > 0
    assert report.sessions == CLIENTS // 2
    assert report.hostile_wrong == []
    assert sum(report.hostile.values()) > 0
    assert report.comments and report.created

    checked = verify(Tracker(repo / ".agents" / "pm", author="tester", env={}), report)
    assert checked.problems == []
    assert checked.comments_checked == len(report.comments)
    assert checked.creates_checked == len(report.created)
    print("\nHTTP load:\n" + figures(report, checked, peak))

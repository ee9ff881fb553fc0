"""Load test of ``pm-mcp --http`` on loopback: figures for the closing note.

Run: ``.venv/bin/python tests/bench/load_http.py [--clients 50] [--seconds 60]
[--hostile 5] [--items 20]``.

Half the clients hold an initialize-era session, half send 2026-07-28 single
exchanges; each mixes reads (pm_get, pm_list, pm_search, comment listing,
tools/list, resources/list) with writes (comments with unique texts, creates).
Hostile clients send inputs the server must refuse (bad JSON, header/body
mismatches, unsupported versions, foreign Origin/Host, oversized bodies,
unknown sessions) and abandon writes mid-request. Afterwards every
acknowledged write is looked up in its item file and its history, and
``pm validate`` runs. Prints latency percentiles, errors, acknowledged writes
and the server's peak RSS; exits 1 when anything was lost or answered wrongly.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pm_core.tracker.api import Tracker  # noqa: E402
from tests.support.http_load import figures, run_load, verify  # noqa: E402
from tests.support.mcp_http import HttpServer  # noqa: E402

BODY_CAP = 256 * 1024


def main() -> int:
    """Run the load, verify the disk, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hostile", type=int, default=5)
    parser.add_argument("--items", type=int, default=20, help="shared items the comments go to")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pm-load-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        tracker = Tracker(repo / ".agents" / "pm", author="bench", env={})
        tracker.init()
        items = [tracker.create({"title": f"Shared item {n}"})["id"] for n in range(args.items)]
        env = {"PM_MCP_PROFILE": "standard", "PM_MCP_MAX_REQUEST_BYTES": str(BODY_CAP)}
        with HttpServer(repo, env=env) as server:
            report = run_load(
                server.url,
                server.port,
                clients=args.clients,
                seconds=args.seconds,
                items=items,
                hostile=args.hostile,
                body_cap=BODY_CAP,
            )
            peak = server.peak_rss_kib()
            code = server.close()
        checked = verify(Tracker(repo / ".agents" / "pm", author="bench", env={}), report)
    print(figures(report, checked, peak))
    print(f"server exit code: {code}; tracebacks on stderr: {server.stderr.count('Traceback')}")
    for line in (report.errors + report.hostile_wrong + checked.problems)[:20]:
        print("  " + line)
    bad = report.errors or report.hostile_wrong or checked.problems or code != 0
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

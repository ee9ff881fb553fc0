"""Token cost of ``tools/list`` per MCP profile.

Run: ``python tests/bench/bench_tools_list.py [--json]``

Builds a host from every installed plugin (entry points, as ``pm-mcp`` does),
a fresh tracker in a temporary repository, and for each profile prints the
size of the listed tools as the client receives them: the compact JSON of
``[{name, description, inputSchema}]`` in bytes and as estimated tokens
(``ceil(bytes / 4)``). Targets: core under 4,000 tokens, standard under
11,600, full under 12,200. Exits 1 when a profile is over its target.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from pm_core.contracts import RequestContext
from pm_core.host import build_host
from pm_core.tracker.api import Tracker

TARGETS = {"core": 4_000, "standard": 11_600, "full": 12_200}


def measure(profile: str, tracker: Tracker) -> dict[str, Any]:
    """Listed tool count, bytes and estimated tokens for ``profile``."""
    host = build_host(env={})
    request = RequestContext(profile=profile)
    catalog = host.catalog(tracker.schema.contracts(), request=request)
    listed = host.decorate_tools(host.select_tools(catalog, request, "list"), request)
    wire = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for t in listed
    ]
    size = len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    tokens = math.ceil(size / 4)
    return {
        "profile": profile,
        "tools": len(listed),
        "bytes": size,
        "tokens": tokens,
        "target": TARGETS[profile],
        "within": tokens < TARGETS[profile],
        "largest": max(
            ((t["name"], len(json.dumps(t, separators=(",", ":")))) for t in wire),
            key=lambda pair: pair[1],
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tracker = Tracker(Path(tmp) / ".agents" / "pm", author="bench", env={})
        tracker.init()
        rows = [measure(profile, tracker) for profile in TARGETS]
    if options.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'profile':<9} {'tools':>5} {'bytes':>7} {'tokens':>7} {'target':>7}  largest tool")
        for r in rows:
            name, size = r["largest"]
            mark = "ok" if r["within"] else "OVER"
            print(
                f"{r['profile']:<9} {r['tools']:>5} {r['bytes']:>7,} {r['tokens']:>7,} "
                f"{r['target']:>7,}  {name} ({size:,} B) {mark}"
            )
    return 0 if all(r["within"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""pm-mcp figures: start-up, tools/list size per profile, tool-call latency.

Run: ``.venv/bin/python tests/bench/bench_mcp.py [--items 200] [--runs 5]``.
Prints a table and writes ``tests/bench/results/mcp.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pm_core.tracker.api import Tracker  # noqa: E402
from tests.support.mcp_client import McpProcess  # noqa: E402

UPSTREAM = {"core": 10_600, "standard": 35_000, "full": 36_800}


def seed(repo: Path, items: int) -> list[str]:
    """A git repo with ``items`` items (some epics, dependencies, comments)."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tracker = Tracker(repo / ".agents" / "pm", author="bench", env={})
    tracker.init()
    ids: list[str] = []
    for n in range(items):
        kind = "Epic" if n % 20 == 0 else "Task"
        values: dict[str, Any] = {
            "title": f"{kind} {n}: improve parser stage {n % 7}",
            "type": kind,
            "priority": n % 5,
            "tags": [f"area{n % 4}"],
            "description": f"Work item number {n} for the benchmark.",
        }
        if ids and n % 3 == 0:
            values["dependencies"] = [f"{ids[-1]}:related"]
        ids.append(tracker.create(values)["id"])
        if n % 5 == 0:
            tracker.add_log("comments", ids[-1], f"progress note {n}")
    return ids


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def startup(repo: Path, runs: int) -> dict[str, float]:
    """Spawn to first tools/list response, both eras."""
    out: dict[str, float] = {}
    for era in ("initialize", "modern"):
        samples = []
        for _ in range(runs):
            began = time.perf_counter()
            with McpProcess(repo) as server:
                if era == "initialize":
                    server.initialize()
                    server.request("tools/list")
                else:
                    server.modern("tools/list")
                samples.append((time.perf_counter() - began) * 1000)
        out[era] = statistics.median(samples)
    return out


def list_sizes(repo: Path) -> dict[str, dict[str, int]]:
    """tools/list bytes and estimated tokens per profile."""
    out: dict[str, dict[str, int]] = {}
    for profile in ("core", "standard", "full"):
        with McpProcess(repo, env={"PM_MCP_PROFILE": profile}) as server:
            server.initialize()
            tools = server.request("tools/list")["result"]["tools"]
        size = len(json.dumps({"tools": tools}, separators=(",", ":")).encode())
        out[profile] = {"tools": len(tools), "bytes": size, "tokens": math.ceil(size / 4)}
    return out


def call_latency(repo: Path, ids: list[str], runs: int) -> dict[str, dict[str, float]]:
    """Median and p95 of tool calls on one warm server."""
    calls = {
        "pm_list": {},
        "pm_context": {},
        "pm_get": {"id": ids[len(ids) // 2]},
        "pm_search": {"query": "parser stage"},
        "pm_next": {},
    }
    out: dict[str, dict[str, float]] = {}
    with McpProcess(repo, env={"PM_MCP_PROFILE": "full"}) as server:
        server.initialize()
        for name, args in calls.items():
            samples = []
            for _ in range(runs * 4):
                began = time.perf_counter()
                reply = server.request("tools/call", {"name": name, "arguments": args})
                samples.append((time.perf_counter() - began) * 1000)
                if reply.get("result", {}).get("isError"):
                    raise SystemExit(f"{name} failed: {reply}")
            out[name] = {"p50": statistics.median(samples), "p95": pct(samples, 0.95)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        ids = seed(repo, args.items)
        results = {
            "items": args.items,
            "startup_ms_median": startup(repo, args.runs),
            "tools_list": list_sizes(repo),
            "calls_ms": call_latency(repo, ids, args.runs),
        }
    print(f"spawn -> first tools/list (median of {args.runs}):")
    for era, ms in results["startup_ms_median"].items():
        print(f"  {era:<10} {ms:7.0f} ms   (existing pm-mcp: ~400 ms)")
    print("tools/list size per profile:")
    for profile, row in results["tools_list"].items():
        print(
            f"  {profile:<8} {row['tools']:>3} tools {row['bytes']:>7} B "
            f"{row['tokens']:>6} tokens   (existing pm: {UPSTREAM[profile]:,})"
        )
    print(f"tool calls on {args.items} items (ms):")
    for name, row in results["calls_ms"].items():
        print(f"  {name:<11} p50 {row['p50']:6.1f}  p95 {row['p95']:6.1f}")
    out = ROOT / "tests" / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "mcp.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

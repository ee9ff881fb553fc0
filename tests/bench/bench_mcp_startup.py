"""``pm-mcp`` start-up: spawn to the first ``tools/list`` answer, side by side with the TypeScript pm.

Run: ``.venv/bin/python tests/bench/bench_mcp_startup.py [--rounds 5]``
(``PM_UPSTREAM_BIN`` names the TypeScript pm's bin folder; install it with
``../shared/upstream-pm/install.sh``). Unset ``PYTHONDONTWRITEBYTECODE`` so
byte-code caches are used, as in an installed ``pm-mcp``.

Paths measured, alternating in every round so load drifts hit all alike:

- ``py stdio init``: initialize, notifications/initialized, tools/list;
- ``py stdio 2026``: one 2026-07-28 tools/list (no handshake);
- ``py sdk init`` / ``py sdk 2026``: the same with ``PM_MCP_FAST_START=0``
  (every message through the MCP SDK, as before the fast start);
- ``py http init`` / ``py http 2026``: ``pm-mcp --http 127.0.0.1:0``, timed from
  spawn to the tools/list answer (the listen line is waited for, as a client must);
- ``ts stdio init``: the TypeScript ``pm-mcp`` (stdio only; it has no HTTP
  transport and no 2026-07-28 era).

Then ``-X importtime`` of the stdio path shows where the Python time goes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
READY = re.compile(rb"serving http://([^\s/]+)/mcp")


def _line(body: dict[str, object]) -> bytes:
    return (json.dumps(body) + "\n").encode()


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
MODERN_LIST = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        }
    },
}


def _read_answer(proc: subprocess.Popen[bytes], rid: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        raw = proc.stdout.readline()
        if not raw:
            raise RuntimeError("server exited before answering tools/list")
        message = json.loads(raw)
        if message.get("id") == rid:
            return dict(message)


def stdio(command: list[str], cwd: Path, modern: bool, fast: bool = True) -> float:
    """Seconds from spawn to the tools/list answer over stdio."""
    env = dict(os.environ)
    if not fast:
        env["PM_MCP_FAST_START"] = "0"
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    try:
        if modern:
            proc.stdin.write(_line(MODERN_LIST))
            proc.stdin.flush()
        else:
            proc.stdin.write(_line(INIT))
            proc.stdin.flush()
            _read_answer(proc, 1)
            proc.stdin.write(_line(INITIALIZED) + _line(LIST))
            proc.stdin.flush()
        answer = _read_answer(proc, 2)
        elapsed = time.perf_counter() - start
        tools = answer.get("result", {}).get("tools")  # type: ignore[union-attr]
        if not tools:
            raise RuntimeError(f"no tools in the answer: {str(answer)[:300]}")
        return elapsed
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()


def _post(
    conn: http.client.HTTPConnection, body: dict[str, object], headers: dict[str, str]
) -> tuple[dict[str, object], dict[str, str]]:
    conn.request(
        "POST",
        "/mcp",
        json.dumps(body),
        {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
    )
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {data[:300]!r}")
    return json.loads(data), {k.lower(): v for k, v in response.getheaders()}


def http_path(command: list[str], cwd: Path, modern: bool) -> float:
    """Seconds from spawn to the tools/list answer over Streamable HTTP."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*command, "--http", "127.0.0.1:0"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        address = None
        while address is None:
            raw = proc.stderr.readline()
            if not raw:
                raise RuntimeError("pm-mcp --http exited before listening")
            found = READY.search(raw)
            address = found.group(1).decode() if found else None
        host, port = address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        if modern:
            headers = {
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/list",
            }
            answer, _ = _post(conn, MODERN_LIST, headers)
        else:
            _, got = _post(conn, INIT, {})
            session = {
                "mcp-session-id": got["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            conn.request(
                "POST",
                "/mcp",
                json.dumps(INITIALIZED),
                {
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    **session,
                },
            )
            conn.getresponse().read()
            answer, _ = _post(conn, LIST, session)
        elapsed = time.perf_counter() - start
        if not answer.get("result", {}).get("tools"):  # type: ignore[union-attr]
            raise RuntimeError(f"no tools: {str(answer)[:300]}")
        conn.close()
        return elapsed
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_repo(base: Path) -> Path:
    """A git repository with a tracker of a few items, made with our CLI."""
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    pm = [sys.executable, "-m", "pm_core.cli.main"]
    env = {**os.environ, "PM_AUTHOR": "bench"}
    subprocess.run([*pm, "init"], cwd=repo, env=env, check=True, capture_output=True)
    for n in range(5):
        subprocess.run(
            [*pm, "create", "--title", f"Item {n}", "--type", "Task"],
            cwd=repo,
            env=env,
            check=True,
            capture_output=True,
        )
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    py = [sys.executable, "-m", "pm_core.mcp.main"]
    upstream = os.environ.get("PM_UPSTREAM_BIN", "").strip()
    ts = [str(Path(upstream) / "pm-mcp")] if upstream else None
    paths: dict[str, Callable[[Path], float]] = {
        "py stdio init": lambda repo: stdio(py, repo, False),
        "py stdio 2026": lambda repo: stdio(py, repo, True),
        "py sdk init": lambda repo: stdio(py, repo, False, fast=False),
        "py sdk 2026": lambda repo: stdio(py, repo, True, fast=False),
        "py http init": lambda repo: http_path(py, repo, False),
        "py http 2026": lambda repo: http_path(py, repo, True),
    }
    if ts is not None:
        paths["ts stdio init"] = lambda repo: stdio(ts, repo, False)
    else:
        print("PM_UPSTREAM_BIN is not set: the TypeScript pm is not measured")
    times: dict[str, list[float]] = {name: [] for name in paths}
    with tempfile.TemporaryDirectory(prefix="pm-bench-startup-") as tmp:
        repo = make_repo(Path(tmp))
        for run in paths.values():  # warm-up: byte-code caches, disk cache
            run(repo)
        order = list(paths)
        for round_no in range(args.rounds):
            for name in order if round_no % 2 == 0 else reversed(order):
                times[name].append(paths[name](repo))
        print(f"spawn -> first tools/list answer, {args.rounds} rounds (ms: median, min, max)")
        for name, values in times.items():
            ms = [v * 1000 for v in values]
            print(f"  {name:14} {statistics.median(ms):7.0f} {min(ms):7.0f} {max(ms):7.0f}")
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "import pm_core.mcp.main, pm_core.mcp.server",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = []
        for line in done.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                rows.append((int(parts[1]), parts[2].rstrip()))
        print("largest cumulative imports of the stdio path (ms):")
        top = {
            "mcp",
            "mcp_types",
            "pydantic",
            "pm_core.host",
            "pm_core.tracker.api",
            "anyio",
            "structlog",
            "starlette",
            "uvicorn",
        }
        for cumulative, name in rows:
            if name.strip() in top:
                print(f"  {cumulative / 1000:8.0f} {name.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

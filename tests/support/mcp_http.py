"""``pm-mcp --http`` in a subprocess, and raw requests for both protocol eras.

Usage::

    with HttpServer(repo) as server:              # binds 127.0.0.1:0, waits for the port
        with httpx2.Client() as http:
            sid = legacy_session(http, server.url)
            reply = legacy_request(http, server.url, sid, "tools/list")
            reply = modern_request(http, server.url, "tools/list")
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx2

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
READY = re.compile(rb"serving (http://\S+/mcp)")
#: The body parameter each method's ``Mcp-Name`` header repeats.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_ids = itertools.count(1)


class HttpServer:
    """A ``pm-mcp --http`` process; ``url`` is set once it accepts connections."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = ("--http", "127.0.0.1:0"),
        timeout: float = 30.0,
    ) -> None:
        full_env = dict(os.environ)
        for name in ("PM_PATH", "PM_MCP_TOKEN", "PM_MCP_MAX_CONCURRENT"):
            full_env.pop(name, None)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pm_core.mcp.main", *args],
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.stderr_lines: list[bytes] = []
        self.url = self._wait_ready(timeout)
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _wait_ready(self, timeout: float) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line)
            found = READY.search(line)
            if found:
                return found.group(1).decode()
        self.proc.kill()
        self.proc.wait()
        raise RuntimeError("pm-mcp --http did not start: " + b"".join(self.stderr_lines).decode())

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    @property
    def stderr(self) -> str:
        """Everything the server wrote to stderr so far."""
        return b"".join(self.stderr_lines).decode("utf-8", "replace")

    def peak_rss_kib(self) -> int:
        """The server's peak resident set (``VmHWM``, Linux), 0 when unknown."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def close(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def envelope(version: str = MODERN, extensions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``_meta`` a 2026-07-28 request carries."""
    caps: dict[str, Any] = {"extensions": dict(extensions)} if extensions else {}
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "pm-tests", "version": "1"},
    }


def body(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request with a fresh id."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        out["params"] = dict(params)
    return out


def modern_headers(method: str, name: str | None = None, version: str = MODERN) -> dict[str, str]:
    """``MCP-Protocol-Version``, ``Mcp-Method`` and (when given) ``Mcp-Name``."""
    headers = {"accept": ACCEPT, "mcp-protocol-version": version, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


def modern_request(
    http: httpx2.Client,
    url: str,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    extensions: Mapping[str, Any] | None = None,
) -> httpx2.Response:
    """A 2026-07-28 single exchange with headers that match the body."""
    full = {**(params or {}), "_meta": envelope(extensions=extensions)}
    key = NAME_PARAM.get(method)
    headers = modern_headers(method, str(full[key]) if key else None)
    return http.post(url, json=body(method, full), headers=headers)


def legacy_session(http: httpx2.Client, url: str, version: str = HANDSHAKE) -> str:
    """``initialize`` + ``notifications/initialized``; returns the session id."""
    reply = http.post(
        url,
        json=body(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "pm-tests", "version": "1"},
            },
        ),
        headers={"accept": ACCEPT},
    )
    reply.raise_for_status()
    session = reply.headers["mcp-session-id"]
    done = http.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=legacy_headers(session, version),
    )
    assert done.status_code == 202, done.text
    return session


def legacy_headers(session: str, version: str = HANDSHAKE) -> dict[str, str]:
    """Headers of a request inside an initialize-era session."""
    return {"accept": ACCEPT, "mcp-session-id": session, "mcp-protocol-version": version}


def legacy_request(
    http: httpx2.Client,
    url: str,
    session: str,
    method: str,
    params: Mapping[str, Any] | None = None,
) -> httpx2.Response:
    """One request inside an initialize-era session."""
    return http.post(url, json=body(method, params), headers=legacy_headers(session))


def tool_result(reply: httpx2.Response) -> dict[str, Any]:
    """The ``result`` of a successful tools/call reply (fails loudly otherwise)."""
    assert reply.status_code == 200, (reply.status_code, reply.text)
    message: dict[str, Any] = json.loads(reply.text)
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    return result

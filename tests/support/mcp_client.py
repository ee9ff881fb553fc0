"""A raw JSON-RPC client for ``pm-mcp`` over stdio, so each request can carry its
own capabilities (the SDK's client fixes them per session).

Usage::

    with McpProcess(workspace_root) as server:
        server.initialize(extensions={...})          # initialize-era
        server.request("tools/list")
        server.modern("tools/list", extensions={...}) # 2026-07-28 envelope
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MODERN = "2026-07-28"


class McpProcess:
    """A ``pm-mcp`` subprocess speaking newline-delimited JSON-RPC."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        args: tuple[str, ...] = (),
        timeout: float = 30.0,
        python: str | None = None,
    ) -> None:
        full_env = dict(os.environ)
        full_env.pop("PM_PATH", None)
        full_env.update(env or {})
        self.timeout = timeout
        self.proc = subprocess.Popen(
            # ``python``: another environment's interpreter (a fresh venv in tests).
            [python or sys.executable, "-m", "pm_core.mcp.main", *args],
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._ids = itertools.count(1)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._pending: dict[Any, dict[str, Any]] = {}
        self.stderr_lines: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def __enter__(self) -> McpProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> int:
        """Close stdin and wait for the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def send_raw(self, line: str | bytes) -> None:
        """Write one raw line (no newline needed)."""
        data = line.encode() if isinstance(line, str) else line
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def read_message(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message on stdout (fails on timeout or end of output).

        ``timeout`` overrides the client's default wait (queue.Empty when it passes).
        """
        line = self._lines.get(timeout=self.timeout if timeout is None else timeout)
        if line is None:
            raise EOFError("pm-mcp closed stdout; stderr: " + b"".join(self.stderr_lines).decode())
        message: dict[str, Any] = json.loads(line)
        return message

    def send(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send a request and return its id."""
        rid = next(self._ids)
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            body["params"] = dict(params)
        self.send_raw(json.dumps(body))
        return rid

    def response(self, rid: Any) -> dict[str, Any]:
        """Wait for the response to ``rid`` (other messages are kept)."""
        while rid not in self._pending:
            message = self.read_message()
            if "id" in message and ("result" in message or "error" in message):
                self._pending[message["id"]] = message
        return self._pending.pop(rid)

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and wait for its full response message."""
        return self.response(self.send(method, params))

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = dict(params)
        self.send_raw(json.dumps(body))

    def initialize(
        self, extensions: Mapping[str, Any] | None = None, version: str = "2025-11-25"
    ) -> dict[str, Any]:
        """The initialize-era handshake; returns the initialize result."""
        caps: dict[str, Any] = {}
        if extensions:
            caps["extensions"] = dict(extensions)
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": caps,
                "clientInfo": {"name": "pm-tests", "version": "1"},
            },
        )
        self.notify("notifications/initialized")
        result: dict[str, Any] = reply["result"]
        return result

    def modern(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        extensions: Mapping[str, Any] | None = None,
        version: str = MODERN,
    ) -> dict[str, Any]:
        """A 2026-07-28 request carrying its own version and capabilities."""
        body = dict(params or {})
        caps: dict[str, Any] = {}
        if extensions:
            caps["extensions"] = dict(extensions)
        meta = dict(body.get("_meta") or {})
        meta["io.modelcontextprotocol/protocolVersion"] = version
        meta["io.modelcontextprotocol/clientCapabilities"] = caps
        meta.setdefault("io.modelcontextprotocol/clientInfo", {"name": "pm-tests", "version": "1"})
        body["_meta"] = meta
        return self.request(method, body)


def tool_names(list_result: Mapping[str, Any]) -> list[str]:
    """Names from a tools/list result."""
    return sorted(t["name"] for t in list_result["tools"])

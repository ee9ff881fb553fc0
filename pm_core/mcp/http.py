"""Streamable HTTP for ``pm-mcp --http``.

One endpoint (``/mcp``) answers both eras: initialize-era clients get stateful
sessions (``Mcp-Session-Id``), 2026-07-28 clients send single exchanges with
``MCP-Protocol-Version``/``Mcp-Method``/``Mcp-Name`` headers (the SDK checks
them against the body). Around it: loopback by default, a bearer token for any
other bind address, ``Host``/``Origin`` checks, a body-size cap and a bound on
concurrent requests.
"""

from __future__ import annotations

import hmac
import ipaddress
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import structlog

from pm_core.mcp.server import PmMcp

log = structlog.get_logger("pm.mcp.http")

DEFAULT_MAX_BODY = 4 * 1024 * 1024
DEFAULT_MAX_CONCURRENT = 32
QUEUE_WAIT_SECONDS = 10.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


class HttpConfigError(ValueError):
    """A bind address or token setting that cannot be served safely."""


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT``, ``PORT`` or ``[v6]:PORT``."""
    text = value.strip()
    host, port = "127.0.0.1", text
    if text.startswith("["):
        host, _, port = text[1:].partition("]:")
    elif ":" in text:
        host, _, port = text.rpartition(":")
        host = host or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise HttpConfigError(f"invalid --http value {value!r}; use HOST:PORT") from None
    if not 0 <= number <= 65535:
        raise HttpConfigError(f"invalid port {number}")
    return host, number


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI wrapper: bearer token, concurrency bound. Host/Origin checks are the SDK's.

    Lifespan events pass straight through (they start the SDK's session manager).
    """

    def __init__(self, app: Any, *, token: str | None, max_concurrent: int) -> None:
        self.app = app
        self.token = token
        self.limiter = anyio.CapacityLimiter(max_concurrent)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.token is not None:
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"").decode("latin-1")
            expected = f"Bearer {self.token}"
            if not hmac.compare_digest(given.encode(), expected.encode()):
                await _plain(
                    send, 401, "missing or wrong bearer token", {"www-authenticate": "Bearer"}
                )
                return
        with anyio.move_on_after(QUEUE_WAIT_SECONDS) as waited:
            await self.limiter.acquire()
        if waited.cancelled_caught:
            await _plain(
                send, 503, "server busy: too many concurrent requests", {"retry-after": "1"}
            )
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release()


async def _plain(send: Any, status: int, text: str, headers: Mapping[str, str]) -> None:
    raw = [(b"content-type", b"text/plain; charset=utf-8")]
    raw.extend((k.encode(), v.encode()) for k, v in headers.items())
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


def build_app(
    app: PmMcp,
    host: str,
    port: int,
    *,
    allow_remote: bool,
    env: Mapping[str, str],
) -> Any:
    """The guarded ASGI application."""
    from mcp.server.transport_security import TransportSecuritySettings

    token = env.get("PM_MCP_TOKEN") or None
    if not is_loopback(host):
        if not allow_remote:
            raise HttpConfigError(
                f"refusing to bind {host}: only loopback is served by default; "
                "pass --allow-remote and set PM_MCP_TOKEN to serve other addresses"
            )
        if not token:
            raise HttpConfigError("--allow-remote needs a bearer token in PM_MCP_TOKEN")
    hosts = [f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")]
    origins = [f"http://{h}" for h in hosts]
    if not is_loopback(host):
        hosts.append(f"{host}:{port}")
        origins.extend(
            o.strip() for o in env.get("PM_MCP_ALLOWED_ORIGINS", "").split(",") if o.strip()
        )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    asgi = app.server.streamable_http_app(
        stateless_http=False,
        json_response=True,
        transport_security=security,
        host=host,
        max_request_body_size=int(env.get("PM_MCP_MAX_REQUEST_BYTES", DEFAULT_MAX_BODY)),
    )
    limit = int(env.get("PM_MCP_MAX_CONCURRENT", DEFAULT_MAX_CONCURRENT))
    return Guard(asgi, token=token, max_concurrent=limit)


def serve_http(app: PmMcp, bind: str, *, allow_remote: bool, env: Mapping[str, str]) -> int:
    """Serve until interrupted; returns the exit code."""
    import uvicorn

    try:
        host, port = parse_bind(bind)
        guarded = build_app(app, host, port, allow_remote=allow_remote, env=env)
    except HttpConfigError as exc:
        print(f"pm-mcp: {exc}", file=sys.stderr)
        return 64
    config = uvicorn.Config(
        guarded, host=host, port=port, log_level="warning", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"pm-mcp: serving http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    server.run()
    return 0

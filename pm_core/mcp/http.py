"""Streamable HTTP for ``pm-mcp --http``: one ``/mcp`` endpoint for both protocol eras.

Loopback by default; a bearer token (``PM_MCP_TOKEN``) for other binds; ``Host``/
``Origin`` checks, a body cap and a bound on concurrent requests (``PM_MCP_*``
variables, described in ``docs/http.md``).
"""

from __future__ import annotations

import hmac
import ipaddress
import signal
import socket
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio
import structlog
from starlette.requests import ClientDisconnect

from pm_core.contracts import ConfigurationError
from pm_core.mcp.server import PmMcp, byte_limit

log = structlog.get_logger("pm.mcp.http")

DEFAULT_MAX_BODY = 4 * 1024 * 1024
#: One Python process on a GIL: past a handful of requests at once, more only
#: stretches each one (and the time item locks are held); slow tools (pm_test
#: runs) are why it is not smaller.
DEFAULT_MAX_CONCURRENT = 8
QUEUE_WAIT_SECONDS = 10.0
#: Seconds uvicorn waits for open streams (initialize-era GET streams) on shutdown.
SHUTDOWN_GRACE_SECONDS = 3
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: Loopback Host values on any port: a rebinding attack arrives under the
#: attacker's host name, never these, and a port forward changes only the port.
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
#: Pages served from this machine (an MCP inspector, say) may call the server;
#: a remote page cannot claim a loopback Origin.
LOOPBACK_ORIGINS = tuple(f"http://{h}" for h in LOOPBACK_HOSTS)


class HttpConfigError(ValueError):
    """A bind address, token or limit setting that cannot be served safely."""


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT``, ``PORT`` or ``[v6]:PORT`` (port 0 picks a free one)."""
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
        raise HttpConfigError(f"invalid port {number} in --http {value!r}")
    return host, number


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def positive_setting(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive count from ``env[name]`` (``default`` when unset or blank);
    byte sizes use :func:`~pm_core.mcp.server.byte_limit`."""
    try:
        return byte_limit(env, name, default, unit="whole number")
    except ConfigurationError as exc:
        raise HttpConfigError(str(exc)) from None


def _listed(env: Mapping[str, str], name: str) -> list[str]:
    return [v.strip() for v in env.get(name, "").split(",") if v.strip()]


class Guard:
    """ASGI wrapper: bearer token, then a bound on requests served at once.

    ``GET`` (an initialize-era session's server-to-client stream, open for the
    session's life) is not counted: it would hold a slot until the client
    leaves. The SDK allows one per session and bounds the sessions. Host and
    Origin checks are the SDK's, behind this wrapper. Lifespan events pass
    straight through (they start the SDK's session manager).
    """

    def __init__(
        self,
        app: Any,
        *,
        token: str | None,
        max_concurrent: int,
        queue_wait: float = QUEUE_WAIT_SECONDS,
    ) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None
        self.limiter = anyio.CapacityLimiter(max_concurrent)
        self.queue_wait = queue_wait

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.expected is not None:
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _plain(
                    send, 401, "missing or wrong bearer token", {"www-authenticate": "Bearer"}
                )
                return
        if scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        acquired = False
        with anyio.move_on_after(self.queue_wait):
            await self.limiter.acquire()  # releases again if cancelled while waiting
            acquired = True
        if not acquired:
            log.warning("http_busy", limit=self.limiter.total_tokens)
            await _plain(
                send, 503, "server busy: too many concurrent requests", {"retry-after": "1"}
            )
            return
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            # The client hung up before its body arrived: nobody to answer,
            # and not a server error worth a traceback.
            log.debug("http_client_gone", path=scope.get("path"))
        finally:
            self.limiter.release()


async def _plain(send: Any, status: int, text: str, headers: Mapping[str, str]) -> None:
    raw = [(b"content-type", b"text/plain; charset=utf-8")]
    raw.extend((k.encode(), v.encode()) for k, v in headers.items())
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


def security_settings(host: str, port: int, *, remote: bool, env: Mapping[str, str]) -> Any:
    """Host/Origin allowlists: loopback always, plus configured values when remote."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = list(LOOPBACK_HOSTS)
    origins = list(LOOPBACK_ORIGINS)
    if remote:
        if not _unspecified(host):
            hosts.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        hosts.extend(_listed(env, "PM_MCP_ALLOWED_HOSTS"))
        origins.extend(_listed(env, "PM_MCP_ALLOWED_ORIGINS"))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def build_app(
    app: PmMcp,
    host: str,
    port: int,
    *,
    allow_remote: bool,
    env: Mapping[str, str],
) -> Any:
    """The guarded ASGI application (raises HttpConfigError for unsafe settings)."""
    token = env.get("PM_MCP_TOKEN", "").strip() or None
    remote = not is_loopback(host)
    if remote:
        if not allow_remote:
            raise HttpConfigError(
                f"refusing to bind {host}: only loopback is served by default; "
                "pass --allow-remote and set PM_MCP_TOKEN to serve other addresses"
            )
        if not token:
            raise HttpConfigError("--allow-remote needs a bearer token in PM_MCP_TOKEN")
        if _unspecified(host) and not _listed(env, "PM_MCP_ALLOWED_HOSTS"):
            log.warning(
                "http_hosts_loopback_only",
                hint="set PM_MCP_ALLOWED_HOSTS to the host:port names clients use",
            )
    body_cap = byte_limit(env, "PM_MCP_MAX_REQUEST_BYTES", DEFAULT_MAX_BODY)
    limit = positive_setting(env, "PM_MCP_MAX_CONCURRENT", DEFAULT_MAX_CONCURRENT)
    app.server.get_tool_input_schema = partial(tool_input_schema, app)
    asgi = app.server.streamable_http_app(
        stateless_http=False,
        json_response=True,
        transport_security=security_settings(host, port, remote=remote, env=env),
        host=host,
        max_request_body_size=body_cap,
    )
    return Guard(asgi, token=token, max_concurrent=limit)


def tool_input_schema(app: PmMcp, name: str) -> Mapping[str, Any] | None:
    """A tool's input schema, for the SDK's ``Mcp-Param-*`` header check.

    Without it the SDK runs the whole ``tools/list`` handler (every schema,
    selection, decoration, serialization) before each 2026-07-28
    ``tools/call`` just to find one schema.
    """
    spec = app.host.tools().get(name)
    if spec is None:
        return None  # dispatch answers the unknown tool
    return spec.input_schema(app.tracker().schema.contracts())


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, so the printed address (port 0 included) is live."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say
    # they are TCP, and without it every keep-alive response waits ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def serve_http(app: PmMcp, bind: str, *, allow_remote: bool, env: Mapping[str, str]) -> int:
    """Serve until interrupted; returns the exit code.

    Prints ``pm-mcp: serving http://HOST:PORT/mcp`` on stderr once the socket
    accepts connections.
    """
    import uvicorn

    try:
        host, port = parse_bind(bind)
        guarded = build_app(app, host, port, allow_remote=allow_remote, env=env)
    except (HttpConfigError, ConfigurationError) as exc:
        print(f"pm-mcp: {exc}", file=sys.stderr)
        return 64
    try:
        sock = listen(host, port)
    except OSError as exc:
        print(f"pm-mcp: cannot listen on {bind}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    config = uvicorn.Config(
        guarded,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
    server = uvicorn.Server(config)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"pm-mcp: serving http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the
    # signal; as KeyboardInterrupt both end here as a clean exit, not a traceback.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with sock:
            server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return 0

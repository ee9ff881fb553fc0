"""``pm-mcp --http`` pieces in process: the Guard (bearer token, concurrency
bound) with fake ASGI apps, the bind/limit rules, the listening socket and the
schema lookup for the SDK's header check."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

from pm_core.host import build_host
from pm_core.mcp.http import (
    Guard,
    HttpConfigError,
    is_loopback,
    listen,
    parse_bind,
    positive_setting,
    security_settings,
    tool_input_schema,
)
from pm_core.mcp.server import PmMcp, ServerConfig

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowApp:
    """Answers 200 after ``delay`` seconds (or when ``release`` is set); records the peak load."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.running = 0
        self.peak = 0
        self.calls = 0
        self.release = anyio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
            else:
                await self.release.wait()
        finally:
            self.running -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def call(app: Any, method: str = "POST", headers: dict[str, str] | None = None) -> Any:
    """One HTTP request through ``app``; returns (status, headers, body)."""
    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), text


async def test_guard_serves_at_most_the_bound_at_once_and_queues_the_rest() -> None:
    inner = SlowApp(delay=0.02)
    guard = Guard(inner, token=None, max_concurrent=3)
    statuses: list[int] = []

    async def one() -> None:
        statuses.append((await call(guard))[0])

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(one)
    assert statuses == [200] * 20
    assert inner.peak == 3
    assert inner.calls == 20


async def test_guard_answers_503_with_retry_after_when_the_queue_wait_runs_out() -> None:
    inner = SlowApp()  # holds its slot until released
    guard = Guard(inner, token=None, max_concurrent=1, queue_wait=0.05)
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, guard)
        await anyio.sleep(0.01)
        status, headers, text = await call(guard)
        inner.release.set()
    assert status == 503
    assert headers[b"retry-after"] == b"1"
    assert b"too many concurrent requests" in text
    assert inner.calls == 1
    # The slot of the served request came back; the refused one never held one.
    assert guard.limiter.borrowed_tokens == 0


async def test_guard_does_not_count_open_get_streams() -> None:
    stream_open = anyio.Event()
    stream_end = anyio.Event()
    posts: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["method"] == "GET":  # a session's stream: open until the client leaves
            stream_open.set()
            await stream_end.wait()
        else:
            posts.append(scope["method"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = Guard(app, token=None, max_concurrent=1, queue_wait=0.05)
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, guard, "GET")
        await stream_open.wait()
        assert (await call(guard))[0] == 200
        stream_end.set()
    assert posts == ["POST"]


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer wrong", "s3cret", "bearer s3cret", "Bearer s3cret "],
)
async def test_guard_refuses_a_missing_or_wrong_bearer_token_with_401(
    authorization: str | None,
) -> None:
    inner = SlowApp(delay=0.001)
    guard = Guard(inner, token="s3cret", max_concurrent=2)
    headers = {} if authorization is None else {"authorization": authorization}
    status, out_headers, text = await call(guard, headers=headers)
    assert status == 401
    assert out_headers[b"www-authenticate"] == b"Bearer"
    assert b"bearer token" in text
    assert inner.calls == 0


async def test_guard_checks_the_token_on_get_streams_too() -> None:
    inner = SlowApp(delay=0.001)
    guard = Guard(inner, token="s3cret", max_concurrent=1)
    assert (await call(guard, "GET"))[0] == 401
    ok = await call(guard, "GET", headers={"authorization": "Bearer s3cret"})
    assert ok[0] == 200


async def test_guard_passes_lifespan_events_to_the_app() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    await Guard(app, token="s3cret", max_concurrent=1)({"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        (":9000", ("127.0.0.1", 9000)),
        ("9000", ("127.0.0.1", 9000)),
        ("[::1]:0", ("::1", 0)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
    ],
)
def test_parse_bind_reads_host_and_port(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


@pytest.mark.parametrize("value", ["127.0.0.1:http", "127.0.0.1:70000", "", "[::1]"])
def test_parse_bind_names_the_bad_value(value: str) -> None:
    with pytest.raises(HttpConfigError, match=r"port|HOST:PORT"):
        parse_bind(value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("raw", ["0", "-3", "many", "1.5"])
def test_positive_setting_refuses_non_positive_or_non_numbers(raw: str) -> None:
    with pytest.raises(HttpConfigError, match="PM_MCP_MAX_CONCURRENT must be a positive"):
        positive_setting({"PM_MCP_MAX_CONCURRENT": raw}, "PM_MCP_MAX_CONCURRENT", 32)


def test_positive_setting_defaults_when_unset_or_blank() -> None:
    assert positive_setting({}, "X", 7) == 7
    assert positive_setting({"X": " "}, "X", 7) == 7
    assert positive_setting({"X": "12"}, "X", 7) == 12


def test_loopback_serving_ignores_configured_extra_hosts_and_origins() -> None:
    env = {"PM_MCP_ALLOWED_HOSTS": "pm.example:80", "PM_MCP_ALLOWED_ORIGINS": "https://a.example"}
    settings = security_settings("127.0.0.1", 8765, remote=False, env=env)
    assert "pm.example:80" not in settings.allowed_hosts
    assert "https://a.example" not in settings.allowed_origins
    assert "127.0.0.1:*" in settings.allowed_hosts


def test_remote_serving_adds_the_bind_address_and_configured_values() -> None:
    env = {"PM_MCP_ALLOWED_HOSTS": "pm.example:80, ", "PM_MCP_ALLOWED_ORIGINS": "https://a.example"}
    specific = security_settings("192.168.1.5", 8765, remote=True, env=env)
    assert {"192.168.1.5:8765", "pm.example:80", "localhost:*"} <= set(specific.allowed_hosts)
    assert "https://a.example" in specific.allowed_origins
    wildcard = security_settings("0.0.0.0", 8765, remote=True, env={})
    assert not any(h.startswith("0.0.0.0") for h in wildcard.allowed_hosts)


# ------------------------------------------------------------------ socket and schema lookup


async def test_connections_accepted_from_the_listening_socket_have_nagle_off() -> None:
    # Without TCP_NODELAY every keep-alive response waited for a delayed ACK (~40 ms).
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted = writer.get_extra_info("socket")
        seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connect, sock=sock)
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
    assert seen and seen[0] != 0


def test_listen_on_a_taken_port_raises_oserror() -> None:
    with listen("127.0.0.1", 0) as first, pytest.raises(OSError):
        listen("127.0.0.1", first.getsockname()[1])


def test_tool_input_schema_answers_one_tool_and_none_for_unknown_names(repo: Path) -> None:
    app = PmMcp(build_host({}), ServerConfig(root=repo / ".agents" / "pm", env={}))
    schema = tool_input_schema(app, "pm_get")
    assert schema is not None and "id" in schema["properties"]
    assert tool_input_schema(app, "pm_nope") is None

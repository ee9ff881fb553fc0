"""``pm-mcp --http`` as a real subprocess on loopback: both eras, the refusals
(headers, versions, Host/Origin, body size, bearer token) and the bind rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pm_core.tracker.api import Tracker
from tests.support.mcp_http import (
    ACCEPT,
    HANDSHAKE,
    MODERN,
    HttpServer,
    body,
    envelope,
    legacy_headers,
    legacy_request,
    legacy_session,
    modern_headers,
    modern_request,
    tool_result,
)

BODY_CAP = 64 * 1024


@pytest.fixture(scope="module", params=["core", "standard", "full"])
def served(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[HttpServer]:
    """One server per profile for the read-mostly tests, with a 64 KiB body cap."""
    repo = tmp_path_factory.mktemp(f"http-{request.param}") / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    Tracker(repo / ".agents" / "pm", author="tester", env={}).init()
    env = {"PM_MCP_MAX_REQUEST_BYTES": str(BODY_CAP), "PM_MCP_PROFILE": request.param}
    server = HttpServer(repo, env=env)
    try:
        yield server
    finally:
        assert server.close() == 0, server.stderr
        assert "Traceback" not in server.stderr


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30) as client:
        yield client


def _json(reply: httpx2.Response) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(reply.text)
    return message


# ------------------------------------------------------------------ both eras


def test_initialize_era_session_lists_tools_calls_one_and_ends(
    served: HttpServer, http: httpx2.Client
) -> None:
    session = legacy_session(http, served.url)
    listed = legacy_request(http, served.url, session, "tools/list")
    assert listed.status_code == 200
    names = {t["name"] for t in _json(listed)["result"]["tools"]}
    assert {"pm_create", "pm_get", "pm_list"} <= names

    created = tool_result(
        legacy_request(
            http,
            served.url,
            session,
            "tools/call",
            {"name": "pm_create", "arguments": {"options": {"title": "Made over HTTP"}}},
        )
    )
    assert not created.get("isError"), created
    item_id = created["structuredContent"]["result"]["id"]
    got = tool_result(
        legacy_request(
            http,
            served.url,
            session,
            "tools/call",
            {"name": "pm_get", "arguments": {"id": item_id}},
        )
    )
    assert got["structuredContent"]["result"]["item"]["title"] == "Made over HTTP"

    ended = http.delete(served.url, headers=legacy_headers(session))
    assert ended.status_code == 200
    after = legacy_request(http, served.url, session, "tools/list")
    assert after.status_code == 404


def test_initialize_era_request_without_session_is_refused(
    served: HttpServer, http: httpx2.Client
) -> None:
    reply = http.post(served.url, json=body("tools/list"), headers={"accept": ACCEPT})
    assert reply.status_code == 400
    assert "session" in reply.text.lower()


def test_modern_single_exchange_answers_without_a_session(
    served: HttpServer, http: httpx2.Client
) -> None:
    listed = modern_request(http, served.url, "tools/list")
    assert listed.status_code == 200, listed.text
    assert "mcp-session-id" not in listed.headers
    assert "pm_list" in {t["name"] for t in _json(listed)["result"]["tools"]}

    called = tool_result(
        modern_request(http, served.url, "tools/call", {"name": "pm_list", "arguments": {}})
    )
    assert not called.get("isError"), called
    assert "items" in called["structuredContent"]["result"]


def test_modern_discover_lists_both_eras(served: HttpServer, http: httpx2.Client) -> None:
    reply = modern_request(http, served.url, "server/discover")
    versions = _json(reply)["result"]["supportedVersions"]
    assert MODERN in versions and HANDSHAKE in versions


@pytest.mark.parametrize(
    ("method", "header_method", "header_name", "params"),
    [
        ("tools/list", "prompts/list", None, {}),
        ("tools/list", None, None, {}),
        ("tools/call", "tools/call", "pm_get", {"name": "pm_list", "arguments": {}}),
        ("tools/call", "tools/call", None, {"name": "pm_list", "arguments": {}}),
    ],
    ids=["method-differs", "method-missing", "name-differs", "name-missing"],
)
def test_modern_headers_that_disagree_with_the_body_are_32020_http_400(
    served: HttpServer,
    http: httpx2.Client,
    method: str,
    header_method: str | None,
    header_name: str | None,
    params: dict[str, Any],
) -> None:
    headers = modern_headers(header_method or method, header_name)
    if header_method is None:
        del headers["mcp-method"]
    reply = http.post(
        served.url, json=body(method, {**params, "_meta": envelope()}), headers=headers
    )
    assert reply.status_code == 400
    assert _json(reply)["error"]["code"] == -32020


def test_unsupported_protocol_version_is_32022_http_400_with_supported_list(
    served: HttpServer, http: httpx2.Client
) -> None:
    reply = http.post(
        served.url,
        json=body("tools/list", {"_meta": envelope("2099-01-01")}),
        headers=modern_headers("tools/list", version="2099-01-01"),
    )
    assert reply.status_code == 400
    error = _json(reply)["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == [MODERN]
    assert error["data"]["requested"] == "2099-01-01"


def test_modern_ping_is_method_not_found(served: HttpServer, http: httpx2.Client) -> None:
    # ping was removed in 2026-07-28; it stays valid inside initialize-era sessions.
    reply = modern_request(http, served.url, "ping")
    assert reply.status_code == 404
    assert _json(reply)["error"]["code"] == -32601
    session = legacy_session(http, served.url)
    assert _json(legacy_request(http, served.url, session, "ping"))["result"] == {}


# ------------------------------------------------------------------ Host / Origin


@pytest.mark.parametrize("era", ["initialize", "modern"])
def test_foreign_origin_is_403(served: HttpServer, http: httpx2.Client, era: str) -> None:
    if era == "modern":
        headers = modern_headers("tools/list")
        message = body("tools/list", {"_meta": envelope()})
    else:
        headers = {"accept": ACCEPT}
        message = body(
            "initialize",
            {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        )
    reply = http.post(
        served.url, json=message, headers={**headers, "origin": "http://evil.example"}
    )
    assert reply.status_code == 403
    assert "Origin" in reply.text


@pytest.mark.parametrize("era", ["initialize", "modern"])
def test_rebound_host_name_is_refused(served: HttpServer, http: httpx2.Client, era: str) -> None:
    # What a DNS-rebinding page sends: our address, the attacker's host name.
    headers = modern_headers("tools/list") if era == "modern" else {"accept": ACCEPT}
    message = body("tools/list", {"_meta": envelope()} if era == "modern" else None)
    reply = http.post(
        served.url, json=message, headers={**headers, "host": f"evil.example:{served.port}"}
    )
    assert reply.status_code == 421
    assert "Host" in reply.text


def test_loopback_origin_on_another_port_is_served(served: HttpServer, http: httpx2.Client) -> None:
    # A page served from this machine (an MCP inspector, say) may call the server.
    headers = {**modern_headers("tools/list"), "origin": "http://localhost:6274"}
    reply = http.post(served.url, json=body("tools/list", {"_meta": envelope()}), headers=headers)
    assert reply.status_code == 200


# ------------------------------------------------------------------ body cap


@pytest.mark.parametrize("era", ["initialize", "modern"])
def test_body_over_the_cap_is_413_and_under_it_is_served(
    served: HttpServer, http: httpx2.Client, era: str
) -> None:
    def call(text: str) -> httpx2.Response:
        params = {"name": "pm_search", "arguments": {"query": text}}
        if era == "modern":
            return modern_request(http, served.url, "tools/call", params)
        session = legacy_session(http, served.url)
        return legacy_request(http, served.url, session, "tools/call", params)

    assert call("x" * (BODY_CAP // 2)).status_code == 200
    refused = call("x" * BODY_CAP)
    assert refused.status_code == 413
    assert "too large" in refused.text


# ------------------------------------------------------------------ bind rules and token


def _run_main(cwd: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "PM_MCP_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main", *args],
        cwd=cwd,
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--http", "0.0.0.0:0"], {}, "refusing to bind 0.0.0.0"),
        (["--http", "0.0.0.0:0", "--allow-remote"], {}, "PM_MCP_TOKEN"),
        (["--http", "0.0.0.0:0", "--allow-remote"], {"PM_MCP_TOKEN": "  "}, "PM_MCP_TOKEN"),
        (["--http", "127.0.0.1:0"], {"PM_MCP_MAX_CONCURRENT": "0"}, "PM_MCP_MAX_CONCURRENT"),
        (["--http", "127.0.0.1:http"], {}, "HOST:PORT"),
    ],
    ids=["remote-without-flag", "flag-without-token", "blank-token", "bad-limit", "bad-port"],
)
def test_unsafe_or_invalid_http_settings_exit_64_with_one_line(
    repo: Path, args: list[str], env: dict[str, str], says: str
) -> None:
    done = _run_main(repo, args, env)
    assert done.returncode == 64, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pm-mcp: ") and says in lines[0], lines
    assert done.stdout == ""


def test_remote_bind_needs_the_bearer_token_on_every_request(repo: Path) -> None:
    # Bound to every interface, but only ever spoken to over loopback.
    with (
        HttpServer(
            repo, env={"PM_MCP_TOKEN": "s3cret"}, args=("--http", "0.0.0.0:0", "--allow-remote")
        ) as server,
        httpx2.Client(timeout=30) as http,
    ):
        url = f"http://127.0.0.1:{server.port}/mcp"
        message = body("tools/list", {"_meta": envelope()})
        for auth in (None, "Bearer wrong", "s3cret", "Bearer s3cret2"):
            headers = modern_headers("tools/list")
            if auth is not None:
                headers["authorization"] = auth
            refused = http.post(url, json=message, headers=headers)
            assert refused.status_code == 401, auth
            assert refused.headers["www-authenticate"] == "Bearer"
        headers = {**modern_headers("tools/list"), "authorization": "Bearer s3cret"}
        served = http.post(url, json=message, headers=headers)
        assert served.status_code == 200
        assert _json(served)["result"]["tools"]


def test_sigterm_stops_the_server_while_a_session_stream_is_open(repo: Path) -> None:
    server = HttpServer(repo)
    with httpx2.Client(timeout=30) as http:
        session = legacy_session(http, server.url)
        with http.stream("GET", server.url, headers=legacy_headers(session)) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert server.close(timeout=15) == 0
    assert "Traceback" not in server.stderr


# ------------------------------------------------------------------ the SDK's own client


@pytest.mark.parametrize(("mode", "version"), [("legacy", HANDSHAKE), ("auto", MODERN)])
def test_sdk_client_over_http_lists_tools(served: HttpServer, mode: str, version: str) -> None:
    import anyio
    from mcp import Client

    async def run() -> tuple[str | None, list[str]]:
        async with Client(served.url, mode=mode) as client:
            tools = await client.list_tools()
            return client.session.protocol_version, [t.name for t in tools.tools]

    negotiated, names = anyio.run(run)
    assert negotiated == version
    assert "pm_get" in names

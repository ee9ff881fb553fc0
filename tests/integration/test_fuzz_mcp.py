"""Property-based fuzzing of ``pm-mcp``'s request layer over a real stdio session.

One long-lived server per protocol era and profile receives hypothesis-generated lines:
known and unknown methods, every tool with wrong-typed values for each of its
arguments, hostile URIs, envelopes of the other era, odd ids, 10,000-level
nesting, lines over the request cap, and bytes that are not JSON. The rules:

- every request with a usable id gets exactly one response under that id;
  a line that is not JSON gets one -32700, an over-long line one -32600;
- stdout carries only JSON-RPC lines (the client fails on anything else);
- the server stays alive, then exits 0 when stdin closes, and its stderr
  holds no Python traceback;
- with command execution off (the default), no sequence of calls runs a
  process: ``pm_test``, ``pm_run`` and writes that set ``tests`` are fuzzed
  too, with canary commands that would create a file, and none may appear.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pm_core.tracker.api import Tracker
from tests.support.mcp_client import MODERN, McpProcess

REQUEST_CAP = 32 * 1024
DEEP = 10_000
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/directory/read",
    "prompts/list",
    "prompts/get",
    "server/discover",
    "skills/list",
    "skills/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
]
#: Tool calls are most of the traffic; "" stands for a random method name.
WEIGHTED_METHODS = ["tools/call"] * 16 + METHODS + [""] * 2
PROFILES = ("core", "standard", "full")
#: Tools that run or link commands: fuzzed with canary commands as well.
COMMAND_TOOLS = frozenset({"pm_test", "pm_run"})
#: The canary file a linked or added command would create if it ran.
CANARY = "canary-ran"
#: ``path`` points a call at another tracker root; tests/unit/test_path_safety.py covers it.
SKIPPED_ARGUMENTS = frozenset({"path"})
DEEP_MARK = "\x01deep\x01"
HUGE_MARK = "\x01huge\x01"


class Session:
    """A pm-mcp process plus the bookkeeping that checks every reply."""

    def __init__(
        self,
        server: McpProcess,
        era: str,
        tools: dict[str, list[str]],
        items: list[str],
        canary: Path,
    ) -> None:
        self.canary = canary
        self.server = server
        self.era = era
        self.tools = tools
        self.items = items
        self.ids = itertools.count(1)
        self.answered: set[Any] = set()
        self.lines_sent = 0

    def sentinel(self) -> dict[str, Any]:
        """A ping that marks the end of one example's replies."""
        rid = f"sentinel-{next(self.ids)}"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": "ping"}
        if self.era == "modern":
            body["params"] = {"_meta": modern_meta()}
        self.server.send_raw(json.dumps(body))
        return {"id": rid}


def modern_meta(version: str = MODERN, caps: Any = None) -> dict[str, Any]:
    """The 2026-07-28 per-request envelope."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {} if caps is None else caps,
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    }


@pytest.fixture(
    scope="module",
    params=[(era, profile) for era in ("initialize", "modern") for profile in PROFILES],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Session]:
    """One server per era and profile, opened the way that era opens, shared by every example."""
    era, profile = request.param
    repo = tmp_path_factory.mktemp(f"mcp-fuzz-{era}-{profile}") / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tracker = Tracker(repo / ".agents" / "pm", author="fuzz", env={})
    tracker.init()
    items = [tracker.create({"title": title})["id"] for title in ("Alpha", "Beta")]
    canary = repo.parent / CANARY
    # Linked and approved on this clone: even so, nothing runs with the switch off.
    tracker.test_add(items[0], canary_command(canary))
    server = McpProcess(
        repo,
        env={"PM_MCP_PROFILE": profile, "PM_MCP_MAX_REQUEST_BYTES": str(REQUEST_CAP)},
        timeout=60,
    )
    if era == "initialize":
        server.initialize()
        listed = server.request("tools/list")["result"]["tools"]
    else:
        listed = server.modern("tools/list")["result"]["tools"]
    tools = {
        t["name"]: sorted(set(t["inputSchema"].get("properties", {})) - SKIPPED_ARGUMENTS)
        for t in listed
    }
    # full serves every command tool; the others serve pm_test (standard) or neither (core)
    assert (set(tools) >= COMMAND_TOOLS) == (profile == "full"), sorted(tools)
    session = Session(server, era, tools, items, canary)
    yield session
    code = server.close()
    assert not canary.exists(), "a command ran through pm-mcp with command execution off"
    stderr = b"".join(server.stderr_lines).decode("utf-8", "replace")
    assert code == 0, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-4000:]
    print(
        f"\nmcp fuzz ({era} era, {profile}): {session.lines_sent} lines, all answered as required"
    )


_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=24),
    st.sampled_from(
        ["", "../../etc/passwd", "/etc/passwd", "a\x00b", "\udcff", "pm-zzzz", DEEP_MARK, HUGE_MARK]
    ),
)
_value = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_uri = st.one_of(
    st.sampled_from(
        [
            "ui://pm/context.html",
            "ui://pm/../../etc/passwd",
            "ui://pm/%2e%2e/%2e%2e/etc/passwd",
            "ui://pm/..%2f..%2fsettings.json",
            "ui://other/x",
            "skill://pm-user/SKILL.md",
            "skill://pm-user/../../etc/passwd",
            "pm://workspace/context",
            "pm://workspace/../../etc",
            "file:///etc/passwd",
            "",
        ]
    ),
    st.text(max_size=30),
)


@st.composite
def arguments(draw: st.DrawFn, names: list[str], items: list[str]) -> Any:
    """Arguments of a tool: its own keys with any values, sometimes extras, sometimes not a dict."""
    if draw(st.integers(0, 9)) == 0:
        return draw(_value)
    chosen = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    args = {name: draw(_value) for name in chosen}
    if draw(st.booleans()) and "id" in names:  # a real item most of the time
        hostile = ["pm-zzzz", "../x", "#1", "", "pm-" + "a" * 200]
        args["id"] = draw(st.sampled_from([*items, *items, *items, *hostile]))
    args.update(draw(st.dictionaries(st.text(max_size=6), _value, max_size=2)))
    return args


def canary_command(canary: Path) -> str:
    """A shell command that leaves ``canary`` behind if it ever runs."""
    return f"touch {canary}"


@st.composite
def command_call(draw: st.DrawFn, session: Session) -> dict[str, Any]:
    """A call that would link or run a command: the gate must refuse each one."""
    item = draw(st.sampled_from(session.items))
    command = canary_command(session.canary)
    tests = [{"command": command, "scope": "project", "timeout_seconds": 5}]
    name, args = draw(
        st.sampled_from(
            [
                ("pm_test", {"id": item, "run": True}),
                ("pm_test", {"id": item, "add": command}),
                ("pm_test", {"id": item, "add": f"{command}; true"}),
                ("pm_run", {"action": "test", "id": item, "run": True}),
                ("pm_run", {"action": "test", "args": [item], "run": True}),
                ("pm_run", {"action": "test", "id": item, "add": command}),
                ("pm_update", {"id": item, "options": {"tests": tests}}),
                ("pm_create", {"options": {"title": "linked", "tests": tests}}),
                (
                    "pm_mutate",
                    {"mutations": [{"op": "update", "id": item, "options": {"tests": tests}}]},
                ),
            ]
        )
    )
    return {"name": name, "arguments": args}


@st.composite
def params_for(draw: st.DrawFn, method: str, session: Session) -> Any:
    """Params shaped for ``method`` (mostly), with hostile contents."""
    if method == "tools/call":
        if draw(st.integers(0, 5)) == 0:
            return draw(command_call(session))
        name = draw(st.sampled_from([*sorted(session.tools) * 4, ""]))
        name = name or draw(st.text(max_size=12))
        args = draw(arguments(session.tools.get(name, []), session.items))
        return {"name": name, "arguments": args}
    if method in ("resources/read", "skills/get", "resources/directory/read"):
        return {"uri": draw(_uri)}
    if method == "prompts/get":
        return {"name": draw(st.text(max_size=12)), "arguments": draw(_value)}
    if method == "initialize":
        return {
            "protocolVersion": draw(st.sampled_from(["2025-11-25", "2025-06-18", MODERN, "x"])),
            "capabilities": draw(_value),
            "clientInfo": draw(_value),
        }
    return draw(st.one_of(st.none(), _value))


@dataclass(frozen=True)
class Line:
    """One line to send and the id a reply must carry (None: no usable id)."""

    text: str
    rid: Any

    def __repr__(self) -> str:  # hypothesis prints failing examples; keep them readable
        shown = (
            self.text if len(self.text) <= 400 else f"{self.text[:400]}... ({len(self.text)} chars)"
        )
        return f"Line({shown!r}, rid={self.rid!r})"


@st.composite
def message(draw: st.DrawFn, session: Session) -> Line:
    """One line to send, and the id it carries (None when it has no usable id)."""
    kind = draw(st.sampled_from(["request"] * 8 + ["garbage", "not-object", "bad-envelope"]))
    if kind == "garbage":
        return Line(
            draw(st.text(max_size=60).filter(lambda t: "\n" not in t and "\r" not in t)), None
        )
    if kind == "not-object":
        return Line(json.dumps(draw(st.lists(_scalar, max_size=3) | _scalar)), None)
    method = draw(st.sampled_from(WEIGHTED_METHODS))
    if method == "":
        method = draw(st.text(max_size=16))
    params = draw(params_for(method, session))
    if draw(st.booleans()):  # the other era's envelope, or this era's, with odd capabilities
        params = params if isinstance(params, dict) else {}
        version = draw(st.sampled_from([MODERN, MODERN, "2099-01-01", ""]))
        params["_meta"] = modern_meta(version, draw(st.one_of(st.just({}), _value)))
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = params
    if kind == "bad-envelope":
        body[draw(st.sampled_from(["jsonrpc", "method"]))] = draw(_scalar)
    id_kind = draw(st.sampled_from(["int", "int", "str", "none", "null", "bool", "float", "list"]))
    rid: Any = None
    if id_kind in ("int", "str"):
        n = next(session.ids)
        rid = n if id_kind == "int" else f"fuzz-{n}"
        body["id"] = rid
    elif id_kind != "none":
        body["id"] = {"null": None, "bool": True, "float": 1.5, "list": [1]}[id_kind]
    text = render(body)
    if len(text.encode("utf-8", "surrogatepass")) > REQUEST_CAP:
        rid = None  # refused unread: its id is never seen
        event("over the request cap")
    event(f"{kind}: {method if method in METHODS else 'unknown method'}")
    if method == "tools/call" and isinstance(params, dict):
        event(f"tool: {params.get('name') if params.get('name') in session.tools else 'unknown'}")
    return Line(text, rid)


def render(body: dict[str, Any]) -> str:
    """JSON text of ``body`` with the deep-nesting and over-cap markers expanded."""
    line = json.dumps(body)
    line = line.replace(json.dumps(DEEP_MARK), "[" * DEEP + "]" * DEEP)
    return line.replace(json.dumps(HUGE_MARK), json.dumps("x" * (REQUEST_CAP + 1)))


def exchange(session: Session, line: str, rid: Any) -> list[dict[str, Any]]:
    """Send ``line`` then a sentinel; return every reply that arrived for this example."""
    server = session.server
    server.send_raw(line)
    session.lines_sent += 1
    sentinel = session.sentinel()["id"]
    replies: list[dict[str, Any]] = []
    seen_sentinel = False
    while not seen_sentinel or (rid is not None and not any(r.get("id") == rid for r in replies)):
        if seen_sentinel:  # a request may finish after the ping; not much later
            try:
                reply = server.read_message(timeout=10)
            except queue.Empty:
                break
        else:
            reply = server.read_message()
        if "method" in reply and "id" not in reply:
            continue  # a server notification
        assert reply.get("id") not in session.answered or reply.get("id") is None, (
            f"a second reply for an earlier request: {reply}"
        )
        if reply.get("id") == sentinel:
            seen_sentinel = True
            continue
        replies.append(reply)
    assert server.proc.poll() is None, "pm-mcp died"
    return replies


def check(line: str, rid: Any, replies: list[dict[str, Any]], session: Session) -> None:
    """The reply rules of the module docstring for one line."""
    for reply in replies:
        assert reply.get("jsonrpc") == "2.0", reply
        assert ("result" in reply) != ("error" in reply), reply
        if "error" in reply:
            assert isinstance(reply["error"].get("code"), int), reply
            # -32603 is what an unexpected exception becomes: a bug, not a verdict.
            assert reply["error"]["code"] != -32603, reply
            assert isinstance(reply["error"].get("message"), str) and reply["error"]["message"]
    if len(line.encode("utf-8", "surrogatepass")) > REQUEST_CAP:
        assert [(r.get("id"), r["error"]["code"]) for r in replies] == [(None, -32600)], replies
        assert str(REQUEST_CAP) in replies[0]["error"]["message"]
        return
    if not line.encode("utf-8", "surrogatepass").strip():
        assert replies == [], replies  # blank lines are skipped, like between frames
        return
    try:
        parsed: Any = json.loads(line)
    except RecursionError:
        parsed = "deep"
    except ValueError:
        assert [(r.get("id"), r["error"]["code"]) for r in replies] == [(None, -32700)], replies
        return
    if rid is not None:
        mine = [r for r in replies if r.get("id") == rid]
        assert len(mine) == 1, replies
        assert [r for r in replies if r.get("id") != rid] == [], replies
        session.answered.add(rid)
        if parsed == "deep":
            assert mine[0]["error"]["code"] == -32600, mine
        return
    # No usable id: at most one reply, an error under a null id.
    assert len(replies) <= 1, replies
    assert all(r.get("id") is None and "error" in r for r in replies), replies


@FUZZ
@given(data=st.data())
def test_every_request_gets_exactly_one_json_rpc_reply_and_the_server_survives(
    session: Session, data: st.DataObject
) -> None:
    line = data.draw(message(session))
    replies = exchange(session, line.text, line.rid)
    check(line.text, line.rid, replies, session)


def test_no_sequence_of_calls_runs_a_command_with_the_switch_off(session: Session) -> None:
    """Link by every door (add, update, create, mutate, pm_run), then run by every door."""
    item = session.items[1]
    command = canary_command(session.canary)
    tests = [{"command": command, "scope": "project", "timeout_seconds": 5}]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("pm_test", {"id": item, "add": command}),
        ("pm_update", {"id": item, "options": {"tests": tests}}),
        ("pm_mutate", {"mutations": [{"op": "update", "id": item, "options": {"tests": tests}}]}),
        ("pm_create", {"options": {"title": "linked", "tests": tests}}),
        ("pm_run", {"action": "test", "id": item, "add": command}),
        ("pm_test", {"id": session.items[0], "run": True}),
        ("pm_run", {"action": "test", "id": session.items[0], "run": True}),
    ]
    for name, args in calls:
        rid = f"gate-{next(session.ids)}"
        params: dict[str, Any] = {"name": name, "arguments": args}
        if session.era == "modern":
            params["_meta"] = modern_meta()
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        [reply] = exchange(session, line, rid)
        if name not in session.tools:  # not in this profile: refused before any handler
            assert reply["error"]["code"] == -32602, (name, reply)
            continue
        result = reply["result"]
        assert result["isError"] is True, (name, result)
        assert "PM_MCP_ALLOW_COMMANDS" in json.dumps(result), (name, result)
    assert not session.canary.exists()


def test_a_request_nested_ten_thousand_deep_is_refused_under_its_own_id(session: Session) -> None:
    inner = "[" * DEEP + "]" * DEEP
    line = (
        '{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":{"name":"pm_get","arguments":{"id":'
        + inner
        + "}}}"
    )
    [reply] = exchange(session, line, "deep-1")
    assert reply["error"] == {
        "code": -32600,
        "message": "Invalid Request: JSON nested too deeply to read",
    }


def test_an_over_long_line_is_refused_unread_and_serving_goes_on(session: Session) -> None:
    line = json.dumps(
        {"jsonrpc": "2.0", "id": "long-1", "method": "ping", "params": {"pad": "x" * REQUEST_CAP}}
    )
    [reply] = exchange(session, line, None)
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": f"request exceeds {REQUEST_CAP} bytes; not read"},
    }


def test_requests_sent_just_before_end_of_input_are_all_answered_then_exit_zero(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tracker = Tracker(repo / ".agents" / "pm", author="fuzz", env={})
    tracker.init()
    item = tracker.create({"title": "Drained"})["id"]
    server = McpProcess(repo, env={"PM_MCP_PROFILE": "full"}, timeout=60)
    server.initialize()
    sent = []
    for n in range(20):
        params: dict[str, Any] = {"name": "pm_comments", "arguments": {"id": item, "add": f"c{n}"}}
        if n % 5 == 4:  # the other era's envelope on this connection: an error, still a reply
            params["_meta"] = modern_meta()
        sent.append(server.send("tools/call", params))
    assert server.close() == 0  # stdin closed at once, replies still pending
    replies: dict[Any, dict[str, Any]] = {}
    while True:
        try:
            reply = server.read_message(timeout=5)
        except (EOFError, queue.Empty):
            break
        assert reply["id"] not in replies, reply
        replies[reply["id"]] = reply
    assert sorted(replies) == sorted(sent)
    answered = [replies[rid] for rid in sent]
    assert [("error" in r) for r in answered] == [n % 5 == 4 for n in range(20)]
    assert all(r["error"]["code"] == -32600 for r in answered if "error" in r)
    comments = [c["text"] for c in tracker.get(item).comments]
    assert sorted(comments) == sorted(f"c{n}" for n in range(20) if n % 5 != 4)

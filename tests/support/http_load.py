"""Load on ``pm-mcp --http``: many clients of both eras mixing reads and writes,
a few hostile ones, then a check that every acknowledged write is on disk and
in history.

``run_load`` drives the clients (asyncio, one connection pool per client) and
returns a :class:`LoadReport`; ``verify`` reads the tracker afterwards and
returns the problems it finds (empty when nothing was lost). The load test in
``tests/integration`` and ``tests/bench/load_http.py`` share both.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx2

from pm_core.tracker.api import Tracker
from pm_core.tracker.storage import history as hist
from tests.support.mcp_http import (
    ACCEPT,
    HANDSHAKE,
    body,
    envelope,
    legacy_headers,
    modern_headers,
)

#: Operation mix of well-behaved clients: (name, weight). Writes are 45%.
MIX = (
    ("comment", 35),
    ("create", 10),
    ("get", 15),
    ("list", 10),
    ("search", 10),
    ("tools_list", 10),
    ("resources_list", 5),
    ("comments_read", 5),
)
WRITES = ("comment", "create")
#: What hostile clients send, each expected to be refused with a 4xx (or, for
#: an abandoned request, to leave nothing half-written).
HOSTILE = (
    "bad_json",
    "method_mismatch",
    "name_mismatch",
    "bad_version",
    "foreign_origin",
    "foreign_host",
    "oversized",
    "unknown_session",
    "abandoned_write",
)


@dataclass
class LoadReport:
    """What the clients saw."""

    clients: int
    seconds: float
    elapsed: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    comments: list[tuple[str, str]] = field(default_factory=list)
    created: list[tuple[str, str]] = field(default_factory=list)
    #: Comments whose request was abandoned: may or may not have landed, never twice.
    maybe_comments: list[tuple[str, str]] = field(default_factory=list)
    hostile: Counter[str] = field(default_factory=Counter)
    hostile_wrong: list[str] = field(default_factory=list)
    sessions: int = 0
    #: Requests answered per well-behaved client.
    served: Counter[str] = field(default_factory=Counter)

    def all_latencies(self, kinds: tuple[str, ...] | None = None) -> list[float]:
        """Latencies (seconds) of the named operation kinds, or of all."""
        return sorted(
            x for k, values in self.latencies.items() if kinds is None or k in kinds for x in values
        )

    @property
    def requests(self) -> int:
        """Requests answered to well-behaved clients."""
        return sum(len(v) for v in self.latencies.values())


def percentile(ordered: list[float], fraction: float) -> float:
    """The nearest-rank percentile of an ascending list (0 when empty)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


class _Client:
    """One well-behaved client: an initialize-era session or modern single exchanges."""

    def __init__(self, url: str, name: str, era: str, items: list[str], report: LoadReport):
        self.url = url
        self.name = name
        self.era = era
        self.items = items
        self.report = report
        self.session: str | None = None
        self.rng = random.Random(name)
        self.count = 0

    async def post(
        self, http: httpx2.AsyncClient, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send one request in this client's era; returns the JSON-RPC message."""
        if self.era == "modern":
            full = {**(params or {}), "_meta": envelope()}
            name = full.get("name") if method == "tools/call" else None
            headers = modern_headers(method, name)
        else:
            assert self.session is not None
            full = dict(params or {})
            headers = legacy_headers(self.session)
        reply = await http.post(self.url, json=body(method, full or None), headers=headers)
        if reply.status_code != 200:
            raise RuntimeError(f"HTTP {reply.status_code}: {reply.text[:200]}")
        message: dict[str, Any] = json.loads(reply.text)
        if "error" in message:
            raise RuntimeError(f"JSON-RPC error {message['error']}")
        return message

    async def open(self, http: httpx2.AsyncClient) -> None:
        """The handshake, for initialize-era clients."""
        if self.era == "modern":
            return
        init = {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": self.name, "version": "1"},
        }
        reply = await http.post(self.url, json=body("initialize", init), headers={"accept": ACCEPT})
        reply.raise_for_status()
        self.session = reply.headers["mcp-session-id"]
        done = await http.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=legacy_headers(self.session),
        )
        if done.status_code != 202:
            raise RuntimeError(f"notifications/initialized: HTTP {done.status_code}")
        self.report.sessions += 1

    async def close(self, http: httpx2.AsyncClient) -> None:
        """End the session (initialize era)."""
        if self.session is not None:
            await http.delete(self.url, headers=legacy_headers(self.session))

    def plan(self) -> tuple[str, str, dict[str, Any]]:
        """The next operation: (kind, method, params)."""
        kinds = [k for k, _ in MIX]
        kind = self.rng.choices(kinds, weights=[w for _, w in MIX])[0]
        self.count += 1
        item = self.rng.choice(self.items)
        text = f"{self.name}-{self.count}"
        calls: dict[str, tuple[str, dict[str, Any]]] = {
            "comment": ("pm_comments", {"id": item, "add": text, "author": self.name}),
            "create": ("pm_create", {"options": {"title": f"Load item {text}"}}),
            "get": ("pm_get", {"id": item}),
            "list": ("pm_list", {"options": {"limit": 20}}),
            "search": ("pm_search", {"query": f"shared {self.rng.randrange(20)}", "limit": 5}),
            "comments_read": ("pm_comments", {"id": item}),
        }
        if kind == "tools_list":
            return kind, "tools/list", {}
        if kind == "resources_list":
            return kind, "resources/list", {}
        tool, arguments = calls[kind]
        return kind, "tools/call", {"name": tool, "arguments": arguments}

    async def run(self, http: httpx2.AsyncClient, deadline: float) -> None:
        """Issue operations until the deadline; record outcomes in the report."""
        while time.monotonic() < deadline:
            kind, method, params = self.plan()
            began = time.monotonic()
            try:
                message = await self.post(http, method, params)
            except Exception as exc:
                self.report.errors.append(f"{self.name} {kind}: {exc!r}"[:300])
                continue
            self.report.latencies.setdefault(kind, []).append(time.monotonic() - began)
            self.report.served[self.name] += 1
            result = message["result"]
            if result.get("isError"):
                self.report.errors.append(f"{self.name} {kind}: {result['content'][0]['text']}")
                continue
            if kind == "comment":
                self.report.comments.append((params["arguments"]["id"], params["arguments"]["add"]))
            elif kind == "create":
                title = params["arguments"]["options"]["title"]
                self.report.created.append((result["structuredContent"]["result"]["id"], title))


class _Hostile:
    """A client that sends what a server must refuse, or gives up mid-write."""

    def __init__(
        self, url: str, port: int, name: str, items: list[str], report: LoadReport, cap: int
    ):
        self.url = url
        self.port = port
        self.oversized = json.dumps(
            body("tools/list", {"_meta": envelope(), "pad": "x" * cap})
        ).encode()
        self.name = name
        self.items = items
        self.report = report
        self.rng = random.Random(name)
        self.count = 0

    async def attempt(self, http: httpx2.AsyncClient, kind: str) -> str | None:
        """Send one hostile input; returns a complaint when the answer is wrong."""
        tools_list = body("tools/list", {"_meta": envelope()})
        ok_headers = modern_headers("tools/list")
        if kind == "bad_json":
            reply = await http.post(
                self.url, content=b'{"jsonrpc": "2.0", "id": 1, "meth', headers=ok_headers
            )
            return _expect(reply, 400, kind)
        if kind == "method_mismatch":
            headers = modern_headers("prompts/list")
            return _expect(await http.post(self.url, json=tools_list, headers=headers), 400, kind)
        if kind == "name_mismatch":
            call = body("tools/call", {"name": "pm_list", "arguments": {}, "_meta": envelope()})
            headers = modern_headers("tools/call", "pm_create")
            return _expect(await http.post(self.url, json=call, headers=headers), 400, kind)
        if kind == "bad_version":
            message = body("tools/list", {"_meta": envelope("2099-01-01")})
            headers = modern_headers("tools/list", version="2099-01-01")
            return _expect(await http.post(self.url, json=message, headers=headers), 400, kind)
        if kind == "foreign_origin":
            headers = {**ok_headers, "origin": "http://evil.example"}
            return _expect(await http.post(self.url, json=tools_list, headers=headers), 403, kind)
        if kind == "foreign_host":
            headers = {**ok_headers, "host": f"evil.example:{self.port}"}
            return _expect(await http.post(self.url, json=tools_list, headers=headers), 421, kind)
        if kind == "oversized":
            reply = await http.post(self.url, content=self.oversized, headers=ok_headers)
            return _expect(reply, 413, kind)
        if kind == "unknown_session":
            headers = legacy_headers("0" * 32)
            return _expect(
                await http.post(self.url, json=body("tools/list"), headers=headers), 404, kind
            )
        # abandoned_write: a comment whose client hangs up before the answer.
        self.count += 1
        item = self.rng.choice(self.items)
        text = f"{self.name}-abandoned-{self.count}"
        call = body(
            "tools/call",
            {"name": "pm_comments", "arguments": {"id": item, "add": text}, "_meta": envelope()},
        )
        self.report.maybe_comments.append((item, text))
        with contextlib.suppress(httpx2.TimeoutException):
            await http.post(
                self.url,
                json=call,
                headers=modern_headers("tools/call", "pm_comments"),
                # Anywhere from before the body is read to mid-write.
                timeout=httpx2.Timeout(self.rng.uniform(0.002, 1.5)),
            )
        return None

    async def run(self, http: httpx2.AsyncClient, deadline: float) -> None:
        """Hostile inputs, one every ~50 ms, until the deadline."""
        while time.monotonic() < deadline:
            kind = self.rng.choice(HOSTILE)
            try:
                complaint = await self.attempt(http, kind)
            except Exception as exc:
                complaint = f"{kind}: {exc!r}"
            self.report.hostile[kind] += 1
            if complaint:
                self.report.hostile_wrong.append(complaint)
            await asyncio.sleep(0.05)


def _expect(reply: httpx2.Response, status: int, kind: str) -> str | None:
    if reply.status_code == status:
        return None
    return f"{kind}: expected HTTP {status}, got {reply.status_code}: {reply.text[:120]}"


async def _drive(
    url: str, port: int, clients: int, hostile: int, seconds: float, items: list[str], cap: int
) -> LoadReport:
    report = LoadReport(clients=clients, seconds=seconds)
    workers = [
        _Client(url, f"c{k}", "modern" if k % 2 else "initialize", items, report)
        for k in range(clients)
    ]
    attackers = [_Hostile(url, port, f"h{k}", items, report, cap) for k in range(hostile)]
    limits = httpx2.Limits(max_connections=2, max_keepalive_connections=2)
    pools = [httpx2.AsyncClient(timeout=60, limits=limits) for _ in workers + attackers]
    try:
        for worker, http in zip(workers, pools, strict=False):
            await worker.open(http)
        started = time.monotonic()
        deadline = started + seconds
        async with asyncio.TaskGroup() as tg:
            for worker, http in zip(workers, pools, strict=False):
                tg.create_task(worker.run(http, deadline))
            for attacker, http in zip(attackers, pools[len(workers) :], strict=True):
                tg.create_task(attacker.run(http, deadline))
        report.elapsed = time.monotonic() - started
        for worker, http in zip(workers, pools, strict=False):
            await worker.close(http)
    finally:
        for http in pools:
            await http.aclose()
    return report


def run_load(
    url: str,
    port: int,
    *,
    clients: int,
    seconds: float,
    items: list[str],
    hostile: int = 0,
    body_cap: int = 4 * 1024 * 1024,
) -> LoadReport:
    """Run ``clients`` well-behaved clients (half of each era) and ``hostile`` others.

    ``body_cap`` is the server's ``PM_MCP_MAX_REQUEST_BYTES``: oversized inputs exceed it.
    """
    return asyncio.run(_drive(url, port, clients, hostile, seconds, items, body_cap))


@dataclass
class Verification:
    """What ``verify`` checked and found."""

    problems: list[str] = field(default_factory=list)
    comments_checked: int = 0
    creates_checked: int = 0
    history_entries: int = 0
    #: Abandoned comments that landed anyway (each at most once).
    abandoned_landed: int = 0


def verify(tracker: Tracker, report: LoadReport) -> Verification:
    """Check the disk: every acknowledged write once in its item and its history,
    abandoned writes at most once, nothing else, and ``pm validate`` passing."""
    out = Verification()
    problems = out.problems
    shared = sorted({i for i, _ in report.comments} | {i for i, _ in report.maybe_comments})
    acknowledged = Counter(report.comments)
    maybe = Counter(report.maybe_comments)
    for item_id in shared:
        on_disk = Counter((item_id, c["text"]) for c in tracker.get(item_id).comments)
        entries = hist.read_entries(tracker.store.history_dir, item_id)
        out.history_entries += len(entries)
        replayed = hist.replay(entries)["metadata"].get("comments") or []
        in_history = Counter((item_id, c["text"]) for c in replayed)
        added = Counter(
            (item_id, text)
            for entry in entries
            for op in entry.patch
            if op.get("op") == "add"
            for text in _texts(op.get("value"))
        )
        for key in set(on_disk) | {k for k in acknowledged if k[0] == item_id}:
            want = acknowledged.get(key, 0)
            if key in maybe and want == 0:
                out.abandoned_landed += on_disk[key]
                if on_disk[key] > 1:
                    problems.append(f"abandoned comment {key} applied {on_disk[key]} times")
                continue
            out.comments_checked += want
            if on_disk[key] != want:
                problems.append(f"comment {key}: acknowledged {want}, on disk {on_disk[key]}")
            if in_history[key] != on_disk[key] or added[key] != on_disk[key]:
                problems.append(
                    f"comment {key}: on disk {on_disk[key]}, replayed history "
                    f"{in_history[key]}, history entries adding it {added[key]}"
                )
    for item_id, title in report.created:
        out.creates_checked += 1
        item = tracker.get(item_id)
        if item.title != title:
            problems.append(f"created {item_id}: title {item.title!r}, expected {title!r}")
        entries = hist.read_entries(tracker.store.history_dir, item_id)
        if not entries or entries[0].op != "create":
            problems.append(f"created {item_id}: history does not start with create")
    checked = tracker.validate()
    if not checked["ok"]:
        failed = [c for c in checked["checks"] if not c["ok"]]
        problems.append(f"pm validate failed: {json.dumps(failed)[:500]}")
    return out


def _texts(value: Any) -> list[str]:
    """Every ``text`` string inside a patch value (a comment, or a list of them)."""
    if isinstance(value, dict):
        own = [value["text"]] if isinstance(value.get("text"), str) else []
        return own + [t for v in value.values() if isinstance(v, dict | list) for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def figures(report: LoadReport, checked: Verification, peak_rss_kib: int) -> str:
    """The run's figures as printable lines."""
    every = report.all_latencies()
    reads = report.all_latencies(tuple(k for k, _ in MIX if k not in WRITES))
    writes = report.all_latencies(WRITES)

    def ms(values: list[float]) -> str:
        p50, p95, p99 = (percentile(values, f) * 1000 for f in (0.5, 0.95, 0.99))
        return f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, p99 {p99:.0f} ms over {len(values)}"

    hostile = ", ".join(f"{k} {n}" for k, n in sorted(report.hostile.items()))
    return "\n".join(
        [
            f"clients: {report.clients} ({report.sessions} initialize-era sessions, "
            f"{report.clients - report.sessions} 2026-07-28) for {report.elapsed:.1f} s "
            f"(target {report.seconds:.0f} s)",
            f"requests answered: {report.requests} ({report.requests / max(report.elapsed, 1e-9):.0f}/s); "
            f"errors: {len(report.errors)}",
            f"latency, all: {ms(every)}",
            f"latency, reads: {ms(reads)}",
            f"latency, writes: {ms(writes)}",
            f"acknowledged writes: {len(report.comments)} comments, {len(report.created)} creates; "
            f"verified on disk and in history: {checked.comments_checked} comments, "
            f"{checked.creates_checked} creates ({checked.history_entries} history entries "
            f"read); problems: {len(checked.problems)}",
            f"hostile inputs: {sum(report.hostile.values())} ({hostile}); wrongly answered: "
            f"{len(report.hostile_wrong)}; abandoned writes that landed anyway: "
            f"{checked.abandoned_landed} of {len(report.maybe_comments)}",
            f"server peak RSS (VmHWM): {peak_rss_kib / 1024:.0f} MiB",
        ]
    )

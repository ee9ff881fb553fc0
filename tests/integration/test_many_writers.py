"""Thirty-two writers, half ``pm`` processes and half ``pm-mcp`` sessions, for 30 s.

They comment on, reprioritise and claim a shared set of items at the same
time. Afterwards every acknowledged comment is present exactly once (no lost
update, nothing applied twice), every item parses, ``pm validate`` passes
(each history chain verifies), and each item every writer tried to claim is
held by exactly one of them while all the others were told "conflict" (4).

``PM_WRITERS_SECONDS`` shortens the run locally (CI uses the default 30 s);
``PM_WRITERS`` changes the number of writers. The figures are printed.
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from tests.support.mcp_client import McpProcess
from tests.support.pm_cli import PmCli, pm_executable

WRITERS = int(os.environ.get("PM_WRITERS", "32"))
SECONDS = float(os.environ.get("PM_WRITERS_SECONDS", "30"))
SHARED_ITEMS = 10
CLAIM_ITEMS = 4
CONFLICT = 4
NO_EFFECT = 6


@dataclass
class Tally:
    """What one writer saw; ``log`` is its own file of acknowledged writes."""

    name: str
    log: Path
    comments: list[tuple[str, str]] = field(default_factory=list)
    updates: int = 0
    unchanged: int = 0
    claims_won: list[str] = field(default_factory=list)
    claim_refused: list[tuple[str, str]] = field(default_factory=list)
    claim_timeouts: list[str] = field(default_factory=list)
    lock_timeouts: int = 0
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    peak_rss_kib: int = 0

    def acknowledge(self, kind: str, item_id: str, text: str) -> None:
        """Record an acknowledged write in memory and in the writer's log file."""
        with self.log.open("a", encoding="utf-8") as fh:
            fh.write(f"{kind}\t{item_id}\t{text}\n")


def _schedule(rng: random.Random, claim_ids: list[str]) -> list[tuple[float, str]]:
    """When (seconds into the run) this writer tries each claim item."""
    return sorted((rng.uniform(0, SECONDS * 0.8), cid) for cid in claim_ids)


def _plan(
    rng: random.Random, shared: list[str], pending: list[tuple[float, str]], elapsed: float
) -> tuple[str, str]:
    """The next operation: a due claim, else a comment (70%) or a priority change."""
    if pending and pending[0][0] <= elapsed:
        return "claim", pending.pop(0)[1]
    return ("comment" if rng.random() < 0.7 else "update"), rng.choice(shared)


def cli_writer(cli: PmCli, tally: Tally, shared: list[str], claims: list[str], seed: int) -> None:
    """Loop ``pm comments --add`` / ``pm update --priority`` / ``pm claim`` until the deadline."""
    rng = random.Random(seed)
    pending = _schedule(rng, claims)
    env = cli.env({"PM_AUTHOR": tally.name})
    start = time.monotonic()
    n = 0
    while (elapsed := time.monotonic() - start) < SECONDS or pending:
        op, item_id = _plan(rng, shared, pending, elapsed)
        text = f"{tally.name}-{n}"
        n += 1
        if op == "comment":
            args = ["comments", item_id, "--add", text]
        elif op == "update":
            args = ["update", item_id, "--priority", str(rng.randrange(5))]
        else:
            args = ["claim", item_id]
        began = time.monotonic()
        code, err, rss = _run_pm(cli, env, [*args, "--json"])
        tally.latencies.append(time.monotonic() - began)
        tally.peak_rss_kib = max(tally.peak_rss_kib, rss)
        _settle(tally, op, item_id, text, code, err)


def _run_pm(cli: PmCli, env: dict[str, str], args: list[str]) -> tuple[int, str, int]:
    """Run ``pm`` and reap it with wait4, so its peak RSS is known."""
    proc = subprocess.Popen(
        [*pm_executable(), *args],
        cwd=cli.repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read()
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    return proc.returncode, err, int(usage.ru_maxrss)


def _settle(tally: Tally, op: str, item_id: str, text: str, code: int, err: str) -> None:
    """Classify one outcome (exit code + error line) into the tally."""
    if code == 0:
        if op == "comment":
            tally.comments.append((item_id, text))
        elif op == "update":
            tally.updates += 1
        else:
            tally.claims_won.append(item_id)
        tally.acknowledge(op, item_id, text)
    elif code == CONFLICT and "is locked by" in err:
        tally.lock_timeouts += 1
        if op == "claim":
            tally.claim_timeouts.append(item_id)
    elif code == CONFLICT and op == "claim":
        tally.claim_refused.append((item_id, err))
    elif code == NO_EFFECT and op == "update":
        tally.unchanged += 1
    else:
        tally.failures.append(f"{op} {item_id}: exit {code}: {err.strip()}")


def mcp_writer(
    server: McpProcess, tally: Tally, shared: list[str], claims: list[str], seed: int
) -> None:
    """Loop ``pm_comments`` / ``pm_update`` / ``pm_claim`` tool calls on one stdio session."""
    rng = random.Random(seed)
    pending = _schedule(rng, claims)
    start = time.monotonic()
    n = 0
    while (elapsed := time.monotonic() - start) < SECONDS or pending:
        op, item_id = _plan(rng, shared, pending, elapsed)
        text = f"{tally.name}-{n}"
        n += 1
        arguments: dict[str, Any] = {"id": item_id, "author": tally.name}
        if op == "comment":
            name, arguments["add"] = "pm_comments", text
        elif op == "update":
            name, arguments["options"] = "pm_update", {"priority": rng.randrange(5)}
        else:
            name = "pm_claim"
        began = time.monotonic()
        reply = server.request("tools/call", {"name": name, "arguments": arguments})
        tally.latencies.append(time.monotonic() - began)
        result = reply.get("result")
        if result is None:
            tally.failures.append(f"{op} {item_id}: JSON-RPC error {reply.get('error')}")
            continue
        body = result["structuredContent"]
        code = 0 if not result.get("isError") else int(body.get("code", 1))
        _settle(tally, op, item_id, text, code, str(body.get("error", "")))


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def _vm_hwm_kib(pid: int) -> int:
    """Peak resident set of a live process (Linux), 0 when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@pytest.mark.slow
def test_thirty_two_cli_and_mcp_writers_lose_nothing_and_claims_have_one_winner(
    tmp_path: Path, repo: Path, tracker: Tracker
) -> None:
    cli = PmCli(repo)
    # Thirty-two writers on two cores can queue behind a lock for seconds; the
    # rules under test are "nothing lost" and "one claim winner", not the wait.
    tracker.config_set("locks.wait_ms", 30000)
    shared = [tracker.create({"title": f"Shared item {n}"})["id"] for n in range(SHARED_ITEMS)]
    claims = [tracker.create({"title": f"Contested item {n}"})["id"] for n in range(CLAIM_ITEMS)]
    logs = tmp_path / "logs"
    logs.mkdir()
    cli_count = WRITERS // 2
    mcp_count = WRITERS - cli_count
    tallies = [Tally(f"cli{k}", logs / f"cli{k}.log") for k in range(cli_count)]
    tallies += [Tally(f"mcp{k}", logs / f"mcp{k}.log") for k in range(mcp_count)]
    servers = [
        McpProcess(cli.repo, env={"PM_MCP_PROFILE": "standard"}, timeout=120)
        for _ in range(mcp_count)
    ]
    try:
        for server in servers:
            server.initialize()
        threads = [
            threading.Thread(target=cli_writer, args=(cli, t, shared, claims, k))
            for k, t in enumerate(tallies[:cli_count])
        ]
        threads += [
            threading.Thread(target=mcp_writer, args=(s, t, shared, claims, 1000 + k))
            for k, (s, t) in enumerate(zip(servers, tallies[cli_count:], strict=True))
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=SECONDS + 300)
            assert not thread.is_alive(), "a writer hung"
        elapsed = time.monotonic() - started
        mcp_rss = [_vm_hwm_kib(s.proc.pid) for s in servers]
    finally:
        codes = [server.close() for server in servers]
    assert codes == [0] * mcp_count
    for server in servers:
        assert b"Traceback" not in b"".join(server.stderr_lines)

    failures = [f for t in tallies for f in t.failures]
    assert failures == []

    # Every item parses and every history chain verifies.
    listed = cli("list", "--all", "--json")
    assert listed.code == 0, listed
    assert sorted(r["id"] for r in listed.json()["items"]) == sorted(shared + claims)
    checked = cli("validate", "--json")
    assert checked.code == 0, checked

    # Every acknowledged comment is there exactly once, and nothing else is.
    acknowledged = Counter((i, text) for t in tallies for i, text in t.comments)
    present = Counter((i, c["text"]) for i in shared for c in tracker.get(i).comments)
    assert present == acknowledged
    # The per-writer log files say the same as the in-memory tallies.
    logged = Counter(
        tuple(line.split("\t")[1:3])
        for t in tallies
        if t.log.exists()
        for line in t.log.read_text(encoding="utf-8").splitlines()
        if line.startswith("comment\t")
    )
    assert logged == acknowledged

    # Claim test-and-set: one winner per contested item; every other writer was
    # refused with a conflict naming the winner (or, rarely, timed out on the lock).
    for cid in claims:
        won = [t.name for t in tallies if cid in t.claims_won]
        assert len(won) == 1, (cid, won)
        item = tracker.get(cid)
        assert (item.claim_principal or item.assignee) == won[0]
        refused = [err for t in tallies for i, err in t.claim_refused if i == cid]
        timed_out = sum(t.claim_timeouts.count(cid) for t in tallies)
        assert 1 + len(refused) + timed_out == WRITERS, (cid, len(refused), timed_out)
        assert all(f"claimed by {won[0]}" in err for err in refused), refused[:3]

    cli_lat = [x for t in tallies[:cli_count] for x in t.latencies]
    mcp_lat = [x for t in tallies[cli_count:] for x in t.latencies]
    writes = sum(len(t.comments) + t.updates + len(t.claims_won) for t in tallies)
    print(
        f"\nmany writers: {WRITERS} writers ({cli_count} pm processes, {mcp_count} pm-mcp "
        f"sessions) for {elapsed:.1f} s (target {SECONDS:.0f} s); "
        f"{writes} acknowledged writes ({sum(acknowledged.values())} comments, "
        f"{sum(t.updates for t in tallies)} updates, {len(claims)} claims won); "
        f"{sum(t.unchanged for t in tallies)} no-effect updates; "
        f"{sum(len(t.claim_refused) for t in tallies)} claim conflicts (code 4); "
        f"{sum(t.lock_timeouts for t in tallies)} lock timeouts; "
        f"p95 write latency: pm {_p95(cli_lat) * 1000:.0f} ms over {len(cli_lat)} runs, "
        f"pm-mcp {_p95(mcp_lat) * 1000:.0f} ms over {len(mcp_lat)} calls; "
        f"peak RSS: pm {max(t.peak_rss_kib for t in tallies[:cli_count]) / 1024:.0f} MiB, "
        f"pm-mcp {max(mcp_rss) / 1024:.0f} MiB"
    )

"""Benchmark the tracker's read and analysis operations; prints figures, asserts nothing.

Run: ``python tests/bench/bench_read_side.py --items 10000``
(or ``--workspace DIR`` for an existing repository with ``.agents/pm``).

Two figures per operation:

* ``cold``: the operation as a command runs it, item files parsed from disk;
* ``warm``: the same with item files already parsed, i.e. the cost of the
  analysis itself (what remains once a read index supplies the items).

Tokens are ``ceil(bytes / 4)`` of the compact JSON result.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import CorruptItemError
from pm_core.tracker.model.item import Item
from pm_core.tracker.storage import history as hist
from pm_core.tracker.storage.store import encode_item

WORDS = tuple(
    [
        "login",
        "cache",
        "index",
        "search",
        "graph",
        "plan",
        "deploy",
        "schema",
        "token",
        "budget",
        "claim",
        "lease",
        "merge",
        "history",
        "parser",
        "encoder",
        "report",
        "metric",
        "alert",
        "queue",
        "worker",
        "retry",
        "timeout",
        "config",
        "agent",
        "review",
        "release",
        "build",
        "test",
        "docs",
        "api",
        "ui",
        "database",
        "migration",
        "backup",
        "audit",
    ]
)


def generate(root: Path, count: int, seed: int = 7) -> Tracker:
    """A deterministic workspace: epics, features, tasks, blockers, half of it closed."""
    tracker = Tracker(root / ".agents" / "pm", author="bench", env={})
    tracker.init()
    rng = random.Random(seed)
    made: list[Item] = []
    for n in range(count):
        kind = "Epic" if n % 20 == 0 else "Feature" if n % 7 == 0 else "Task"
        stamp = f"2026-0{1 + n % 9}-{1 + n % 28:02d}T{n % 24:02d}:00:00.000Z"
        item = Item(
            id=f"pm-{n:05d}",
            title=" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))),
            description=" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25))),
            type=kind,
            status=rng.choice(["open", "open", "in_progress", "closed", "closed", "closed"]),
            priority=rng.randint(0, 4),
            tags=sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 3))}),
            created_at=stamp,
            updated_at=stamp,
            author="bench",
        )
        if item.status == "closed":
            item.closed_at = item.completed_at = stamp
            item.close_reason = "done"
        parents = [p for p in made[-60:] if p.type in ("Epic", "Feature")]
        if kind != "Epic" and parents:
            item.parent = rng.choice(parents).id
        if made and rng.random() < 0.15:
            item.dependencies.append({"id": rng.choice(made[-200:]).id, "kind": "blocked_by"})
        path = tracker.store.item_path(item.id, item.type)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_item(item))
        entry = hist.build_entry(
            ts=stamp,
            author="bench",
            op="create",
            before=hist.item_document(None),
            after=hist.item_document(item),
        )
        hist.append_entry(tracker.store.history_dir, item.id, entry)
        made.append(item)
    return tracker


class PreparsedTracker(Tracker):
    """A tracker whose item scan is served from memory (the 'warm' figures)."""

    def __init__(self, base: Tracker) -> None:
        super().__init__(base.root, author="bench", env={})
        self._scan = list(base.scan())

    def scan(self) -> Iterator[tuple[Path, Item | CorruptItemError]]:
        return iter(self._scan)

    def items(self) -> list[Item]:
        return [item for _, item in self._scan if isinstance(item, Item)]


def measure(fn: Callable[[], Any], repeat: int) -> tuple[list[float], int]:
    times = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    size = len(json.dumps(result, separators=(",", ":"), default=str).encode())
    return times, math.ceil(size / 4)


def operations(t: Tracker, some_id: str) -> dict[str, Callable[[], Any]]:
    return {
        "list --limit 50": lambda: t.list_items(limit=50),
        "search keyword": lambda: t.search("login cache", limit=20),
        "search bm25": lambda: t.search("login cache", mode="bm25", limit=20),
        "search hybrid": lambda: t.search("login cache", mode="hybrid", limit=20),
        "next": lambda: t.next_items(),
        "context brief": lambda: t.context(),
        "context deep": lambda: t.context(depth="deep"),
        "graph cycles": lambda: t.graph("cycles"),
        "graph descendants": lambda: t.graph("descendants", some_id),
        "deps": lambda: t.deps_tree(some_id),
        "validate (no history)": lambda: t.validate(
            ["parse", "metadata", "lifecycle", "dependencies", "duplicates"]
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--workspace", type=Path, help="an existing repository to read")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        if args.workspace:
            cold = Tracker(args.workspace / ".agents" / "pm", author="bench", env={})
        else:
            start = time.perf_counter()
            cold = generate(Path(scratch), args.items)
            print(f"generated {args.items} items in {time.perf_counter() - start:.1f} s")
        warm = PreparsedTracker(cold)
        count = len(warm.items())
        some_id = next((i.id for i in warm.items() if i.type == "Epic"), warm.items()[0].id)
        print(f"{count} items; p50 / max ms over {args.repeat} runs; tokens of the JSON result")
        print(
            f"{'operation':24s} {'cold p50':>9s} {'cold max':>9s} {'warm p50':>9s} {'warm max':>9s} {'tokens':>7s}"
        )
        cold_ops = operations(cold, some_id)
        for name, warm_op in operations(warm, some_id).items():
            cold_times, tokens = measure(cold_ops[name], args.repeat)
            warm_times, _ = measure(warm_op, args.repeat)
            print(
                f"{name:24s} {statistics.median(cold_times):9.0f} {max(cold_times):9.0f} "
                f"{statistics.median(warm_times):9.0f} {max(warm_times):9.0f} {tokens:7d}"
            )
        times, _ = measure(lambda: cold.validate(["history"]), 1)
        print(f"{'validate history':24s} {times[0]:9.0f}")
        times, _ = measure(lambda: cold.events(limit=100), 1)
        print(f"{'events --limit 100':24s} {times[0]:9.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Threads of one process (pm-mcp over HTTP) share item locks fairly."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

from pm_core.tracker.api import Tracker
from pm_core.tracker.storage.locks import item_lock


def test_threads_writing_one_item_all_land(tracker: Tracker) -> None:
    item_id = tracker.create({"title": "busy"})["id"]
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        mine = Tracker(tracker.root, author=f"t{n}", env={})
        for k in range(5):
            try:
                mine.add_log("comments", item_id, f"t{n}-{k}")
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    texts = sorted(c["text"] for c in tracker.logs("comments", item_id))
    assert texts == sorted(f"t{n}-{k}" for n in range(8) for k in range(5))


def test_lock_file_is_complete_whenever_it_exists(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        path = locks / "pm-x.lock"
        while not stop.is_set():
            try:
                seen.append(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue

    watcher = threading.Thread(target=reader)
    watcher.start()
    try:
        # Hold each lock a moment (sleeping lets the reader thread run) and go on
        # until it has read the file a few times: on a loaded machine a reader
        # that never got the GIL while the lock existed would fail the test.
        deadline = time.monotonic() + 10
        for rounds in itertools.count():
            with item_lock(locks, "pm-x", "tester"):
                time.sleep(0.001)
            if rounds >= 50 and (len(seen) >= 3 or time.monotonic() > deadline):
                break
    finally:
        stop.set()
        watcher.join()
    assert seen, "the reader never saw the lock file"
    assert all(json.loads(text)["owner"] == "tester" for text in seen)
    assert not [p.name for p in locks.iterdir() if p.name.endswith(".new")]

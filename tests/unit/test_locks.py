"""Item locks: exclusive create, bounded wait, stale takeover, holder named on conflict."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.clock import now_iso
from pm_core.tracker.model.errors import ConflictError
from pm_core.tracker.storage.locks import item_lock, lock_holder


def _write_lock(locks: Path, item_id: str, **fields: object) -> Path:
    locks.mkdir(parents=True, exist_ok=True)
    record = {
        "id": item_id,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "owner": "someone",
        "created_at": now_iso(),
        "ttl_seconds": 1800,
    }
    record.update(fields)
    path = locks / f"{item_id}.lock"
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has already exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of a process that stays alive for the test."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def test_lock_file_exists_while_held_and_is_removed_after(tmp_path: Path) -> None:
    with item_lock(tmp_path, "pm-a1", "ana", wait_ms=100) as path:
        holder = lock_holder(tmp_path, "pm-a1")
        assert holder is not None and holder["owner"] == "ana" and holder["pid"] == os.getpid()
        assert path.exists()
    assert not (tmp_path / "pm-a1.lock").exists()


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path, dead_pid: int) -> None:
    _write_lock(tmp_path, "pm-a1", pid=dead_pid, owner="crashed")
    start = time.monotonic()
    with item_lock(tmp_path, "pm-a1", "ana", wait_ms=5000):
        holder = lock_holder(tmp_path, "pm-a1")
        assert holder is not None and holder["owner"] == "ana"
    assert time.monotonic() - start < 2  # taken over at once, not after the wait


def test_expired_lock_is_taken_over_even_if_its_process_lives(
    tmp_path: Path, live_pid: int
) -> None:
    _write_lock(tmp_path, "pm-a1", pid=live_pid, created_at="2020-01-01T00:00:00.000Z")
    with item_lock(tmp_path, "pm-a1", "ana", wait_ms=100):
        assert lock_holder(tmp_path, "pm-a1")["owner"] == "ana"  # type: ignore[index]


def test_live_holder_is_a_conflict_naming_it_after_the_wait(tmp_path: Path, live_pid: int) -> None:
    _write_lock(tmp_path, "pm-a1", pid=live_pid, owner="bob")
    start = time.monotonic()
    with (
        pytest.raises(ConflictError, match=rf"pm-a1 is locked by bob \(pid {live_pid}\)"),
        item_lock(tmp_path, "pm-a1", "ana", wait_ms=150),
    ):
        pass
    waited = time.monotonic() - start
    assert 0.1 <= waited < 3
    assert lock_holder(tmp_path, "pm-a1")["owner"] == "bob"  # type: ignore[index]


def test_half_written_lock_older_than_a_few_seconds_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "pm-a1.lock"
    path.write_text("{not json")
    old = time.time() - 60
    os.utime(path, (old, old))
    with item_lock(tmp_path, "pm-a1", "ana", wait_ms=100):
        assert lock_holder(tmp_path, "pm-a1")["owner"] == "ana"  # type: ignore[index]


def test_mutation_under_a_live_lock_changes_nothing(tracker: Tracker, live_pid: int) -> None:
    item_id = str(tracker.create({"title": "Locked"})["id"])
    path = tracker.store.find_path(item_id)
    assert path is not None
    before = path.read_bytes()
    history = tracker.store.history_dir / f"{item_id}.jsonl"
    history_before = history.read_bytes()
    tracker.config_set("locks.wait_ms", 50)
    _write_lock(tracker.store.locks_dir, item_id, pid=live_pid, owner="bob")
    with pytest.raises(ConflictError, match="locked by bob"):
        tracker.add_log("comments", item_id, "will not land")
    assert path.read_bytes() == before
    assert history.read_bytes() == history_before


def test_mutation_after_a_crashed_writer_proceeds(tracker: Tracker, dead_pid: int) -> None:
    item_id = str(tracker.create({"title": "Crashed writer"})["id"])
    _write_lock(tracker.store.locks_dir, item_id, pid=dead_pid, owner="crashed")
    tracker.add_log("comments", item_id, "after the crash")
    assert tracker.get(item_id).comments[-1]["text"] == "after the crash"
    assert not (tracker.store.locks_dir / f"{item_id}.lock").exists()

"""Derived facts (blockers, dependents, containers) stay right as the tracker changes.

Each step changes the workspace (through the SDK, by hand, or by deleting a
file), then checks two things: ``next`` and ``context`` from the index equal
the file scan, and the incrementally settled ``derived`` table equals one
recomputed from scratch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.derived import BULK_DIRTY, Derived
from pm_core.tracker.query.ranking import context, next_items
from tests.unit.test_index import NOW, listed_ids, on, same


def derived_rows(db: sqlite3.Connection) -> list[tuple[object, ...]]:
    return db.execute("SELECT * FROM derived ORDER BY id").fetchall()


def check(root: Path) -> None:
    """Index answers equal the scan, and settled facts equal a full recomputation."""
    same(root, lambda t: next_items(t, now=NOW, limit=60, include_decisions=True))
    same(root, lambda t: context(t, now=NOW, limit=30, token_budget=80_000))
    tracker = on(root)
    index = indexing.fresh(tracker)
    assert index is not None
    db = index.db
    Derived(db, tracker.schema.terminal_statuses).ensure()
    settled = derived_rows(db)
    assert db.execute("SELECT COUNT(*) FROM dirty").fetchone()[0] == 0
    db.execute("UPDATE derived_state SET stale = 1")
    Derived(db, tracker.schema.terminal_statuses).ensure()
    assert derived_rows(db) == settled
    index.close()


def blocked_pair(tracker: Tracker) -> tuple[str, str]:
    """A (dependent, blocker) pair: an open task blocked by another open item."""
    tasks = listed_ids(tracker, type="Task", status="open")
    dependent, blocker = tasks[0], tasks[1]
    tracker.add_dependency(dependent, blocker, allow_unresolved=True)
    return dependent, blocker


STEPS: dict[str, Callable[[Tracker, Path], None]] = {}


def step(fn: Callable[[Tracker, Path], None]) -> Callable[[Tracker, Path], None]:
    STEPS[fn.__name__] = fn
    return fn


@step
def closing_a_blocker_resolves_its_dependent(tracker: Tracker, root: Path) -> None:
    _, blocker = blocked_pair(tracker)
    check(root)
    tracker.close(blocker, "done")


@step
def reopening_a_closed_blocker_blocks_again(tracker: Tracker, root: Path) -> None:
    _, blocker = blocked_pair(tracker)
    tracker.close(blocker, "done")
    check(root)
    tracker.reopen(blocker)


@step
def removing_the_dependency_unblocks(tracker: Tracker, root: Path) -> None:
    dependent, blocker = blocked_pair(tracker)
    check(root)
    tracker.remove_dependency(dependent, blocker)


@step
def deleting_a_blocker_leaves_it_missing_and_unresolved(tracker: Tracker, root: Path) -> None:
    _, blocker = blocked_pair(tracker)
    check(root)
    next(root.glob(f"*/{blocker}.toon")).unlink()


@step
def closing_the_last_open_child_empties_a_container(tracker: Tracker, root: Path) -> None:
    epic = str(tracker.create({"title": "Container", "type": "Epic"})["id"])
    child = str(tracker.create({"title": "Only child", "type": "Task", "parent": epic})["id"])
    check(root)
    tracker.close(child, "done")


@step
def moving_a_child_to_another_parent_moves_the_container_flag(tracker: Tracker, root: Path) -> None:
    first = str(tracker.create({"title": "First", "type": "Epic"})["id"])
    second = str(tracker.create({"title": "Second", "type": "Epic"})["id"])
    child = str(tracker.create({"title": "Mover", "type": "Task", "parent": first})["id"])
    check(root)
    tracker.update(child, {"parent": second})


@step
def hand_edit_of_status_in_place(tracker: Tracker, root: Path) -> None:
    _, blocker = blocked_pair(tracker)
    check(root)
    path = next(root.glob(f"*/{blocker}.toon"))
    text = path.read_text(encoding="utf-8").replace("status: open", "status: closed", 1)
    with path.open("r+", encoding="utf-8") as handle:  # same inode, folder untouched
        handle.write(text)
        handle.truncate()


@pytest.mark.parametrize("name", sorted(STEPS))
def test_derived_facts_follow_each_change(root: Path, name: str) -> None:
    tracker = on(root)
    check(root)  # settles everything once: the change below goes the incremental way
    STEPS[name](tracker, root)
    check(root)


def test_a_large_batch_of_changes_is_recomputed_whole(root: Path) -> None:
    check(root)
    tracker = on(root)
    index = indexing.fresh(tracker)
    assert index is not None
    db = index.db
    db.executemany(
        "INSERT OR IGNORE INTO dirty(id) VALUES (?)",
        [(f"pm-x{n}",) for n in range(BULK_DIRTY + 1)],
    )
    before = derived_rows(db)
    Derived(db, tracker.schema.terminal_statuses).ensure()
    assert derived_rows(db) == before
    assert db.execute("SELECT COUNT(*) FROM dirty").fetchone()[0] == 0
    index.close()


def test_changed_terminal_statuses_recompute_the_facts(root: Path) -> None:
    check(root)
    tracker = on(root)
    index = indexing.fresh(tracker)
    assert index is not None
    db = index.db
    wider = set(tracker.schema.terminal_statuses) | {"blocked"}
    Derived(db, wider).ensure()
    with_blocked_terminal = derived_rows(db)
    Derived(db, tracker.schema.terminal_statuses).ensure()
    assert derived_rows(db) != with_blocked_terminal
    index.close()
    check(root)

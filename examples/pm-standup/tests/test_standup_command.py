"""``standup`` and ``standup-digest`` read the tracker and report by author."""

from __future__ import annotations

from typing import Any

import pytest

from pm_core.sdk import Host, Tracker, UsageError, run_command


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(row["id"] for row in rows)


def test_standup_sorts_what_the_author_did_into_done_changed_in_progress_and_blocked(
    alice: Tracker, bob: Tracker, host: Host
) -> None:
    shipped = alice.create({"title": "Ship the export"})["id"]
    alice.close(shipped, "released")
    working = alice.create({"title": "Fix the importer"})["id"]
    alice.claim(working)
    stuck = alice.create({"title": "Migrate the API"})["id"]
    alice.update(stuck, {"status": "blocked", "assignee": "alice", "blocked_reason": "no key"})
    noted = bob.create({"title": "Bob's item"})["id"]
    alice.add_log("comments", noted, "looked at it")

    report = run_command("standup", alice, host=host)

    assert report["who"] == "alice"
    assert ids(report["done"]) == [shipped]
    assert ids(report["changed"]) == [noted]  # what alice holds is listed once, below
    assert ids(report["in_progress"]) == [working]
    assert report["blocked"] == [
        {"id": stuck, "title": "Migrate the API", "status": "blocked", "blocked_reason": "no key"}
    ]
    assert report["complete"] is True


def test_standup_for_another_author_leaves_out_the_callers_changes(
    alice: Tracker, bob: Tracker, host: Host
) -> None:
    alice.create({"title": "Alice's item"})
    mine = bob.create({"title": "Bob's item"})["id"]

    report = run_command("standup", alice, {"who": "bob"}, host=host)

    assert report["who"] == "bob"
    assert ids(report["changed"]) == [mine]
    assert report["done"] == [] and report["in_progress"] == [] and report["blocked"] == []


def test_standup_window_excludes_older_changes(alice: Tracker, host: Host) -> None:
    alice.create({"title": "Yesterday's work"})

    report = run_command("standup", alice, {"since": "2099-01-01T00:00:00Z"}, host=host)

    assert report["changed"] == [] and report["done"] == []


def test_standup_rejects_an_unreadable_since(alice: Tracker, host: Host) -> None:
    with pytest.raises(UsageError, match="since"):
        run_command("standup", alice, {"since": "last tuesday"}, host=host)


def test_standup_rejects_a_parameter_it_does_not_declare(alice: Tracker, host: Host) -> None:
    with pytest.raises(UsageError, match="no parameter 'mine'"):
        run_command("standup", alice, {"mine": True}, host=host)


def test_digest_counts_changes_items_and_done_per_author(
    alice: Tracker, bob: Tracker, host: Host
) -> None:
    first = alice.create({"title": "One"})["id"]
    alice.update(first, {"priority": 1})
    alice.close(first, "done")
    bob.create({"title": "Two"})

    report = run_command("standup-digest", alice, {"since": "1d"}, host=host)

    assert report["authors"] == [
        {"author": "alice", "changes": 3, "items": 1, "done": 1},
        {"author": "bob", "changes": 1, "items": 1, "done": 0},
    ]
    assert report["complete"] is True

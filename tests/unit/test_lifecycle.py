"""Lifecycle rules: close reasons, auto-unblock, reopen, claim test-and-set, release."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import (
    ConflictError,
    DependencyError,
    UsageError,
)


def _as(repo: Path, author: str) -> Tracker:
    return Tracker(repo / ".agents" / "pm", author=author, env={})


def _new(tracker: Tracker, title: str = "Task", **fields: object) -> str:
    return str(tracker.create({"title": title, **fields})["id"])


def test_close_without_a_reason_is_a_usage_error_and_changes_nothing(tracker: Tracker) -> None:
    item_id = _new(tracker)
    with pytest.raises(UsageError, match="closing requires a reason"):
        tracker.close(item_id)
    assert tracker.get(item_id).status == "open"
    assert [e.op for e in tracker.history(item_id)] == ["create"]


def test_close_stamps_reason_and_times(tracker: Tracker) -> None:
    item_id = _new(tracker)
    receipt = tracker.close(item_id, "shipped; tests pass")
    item = tracker.get(item_id)
    assert item.status == "closed" and item.close_reason == "shipped; tests pass"
    assert item.closed_at and item.completed_at
    assert receipt["status"] == "closed" and "close_reason" in receipt["changed_fields"]


def test_duplicate_of_counts_as_a_reason_and_must_exist(tracker: Tracker) -> None:
    original = _new(tracker, "Original")
    copy = _new(tracker, "Copy")
    with pytest.raises(DependencyError, match="does not exist"):
        tracker.close(copy, duplicate_of="pm-nope")
    tracker.close(copy, duplicate_of=original)
    assert tracker.get(copy).duplicate_of == original


def test_closing_twice_has_no_effect(tracker: Tracker) -> None:
    item_id = _new(tracker)
    tracker.close(item_id, "done")
    receipt = tracker.close(item_id, "again")
    assert receipt["warnings"] == ["noop_already_terminal"] and receipt["changed_field_count"] == 0
    assert "already closed" in receipt["noop"] and tracker.get(item_id).close_reason == "done"


def test_closing_the_last_blocker_unblocks_the_dependent(tracker: Tracker) -> None:
    blocker = _new(tracker, "Blocker")
    waiting = _new(tracker, "Waiting", status="blocked", dependencies=[f"{blocker}:blocked_by"])
    receipt = tracker.close(blocker, "done")
    assert receipt["auto_unblocked"] == [waiting]
    assert tracker.get(waiting).status == "open"
    assert tracker.history(waiting)[-1].message == f"auto-unblocked: {blocker} closed"


def test_dependent_stays_blocked_while_another_blocker_is_open(tracker: Tracker) -> None:
    first = _new(tracker, "First")
    second = _new(tracker, "Second")
    waiting = _new(
        tracker,
        "Waiting",
        status="blocked",
        dependencies=[f"{first}:blocked_by", f"{second}:blocked_by"],
    )
    assert "auto_unblocked" not in tracker.close(first, "done")
    assert tracker.get(waiting).status == "blocked"
    tracker.close(second, "done")
    assert tracker.get(waiting).status == "open"


def test_blocks_link_on_the_blocker_side_also_unblocks(tracker: Tracker) -> None:
    waiting = _new(tracker, "Waiting", status="blocked")
    blocker = _new(tracker, "Blocker", dependencies=[f"{waiting}:blocks"])
    tracker.close(blocker, "done")
    assert tracker.get(waiting).status == "open"


def test_reopen_clears_the_close_reason_and_stamps(tracker: Tracker) -> None:
    item_id = _new(tracker)
    tracker.close(item_id, "done")
    tracker.reopen(item_id)
    item = tracker.get(item_id)
    assert item.status == "open"
    assert item.close_reason is None and item.closed_at is None and item.completed_at is None
    assert tracker.history(item_id)[-1].op == "reopen"


def test_reopen_of_an_open_item_has_no_effect(tracker: Tracker) -> None:
    receipt = tracker.reopen(_new(tracker))
    assert receipt["warnings"] == ["noop_not_terminal"] and receipt["changed_fields"] == []


def test_update_status_closed_is_routed_through_close(tracker: Tracker) -> None:
    item_id = _new(tracker)
    with pytest.raises(UsageError, match="closing requires a reason"):
        tracker.update(item_id, {"status": "closed"})
    tracker.update(item_id, {"status": "closed"}, message="finished in review")
    item = tracker.get(item_id)
    assert item.status == "closed" and item.close_reason == "finished in review"
    assert tracker.history(item_id)[-1].op == "close"


def test_cannot_create_an_item_already_closed(tracker: Tracker) -> None:
    with pytest.raises(UsageError, match="cannot create an item as closed"):
        tracker.create({"title": "x", "status": "closed"})


def test_claim_sets_the_holder_and_starts_the_work(repo: Path) -> None:
    ana = _as(repo, "ana")
    item_id = _new(ana)
    receipt = ana.claim(item_id)
    item = ana.get(item_id)
    assert item.assignee == "ana" and item.claim_principal == "ana"
    assert item.status == "in_progress" and receipt["claimed_by"] == "ana"


def test_claim_of_item_held_by_other_is_conflict(repo: Path) -> None:
    ana, bob = _as(repo, "ana"), _as(repo, "bob")
    item_id = _new(ana)
    ana.claim(item_id)
    with pytest.raises(ConflictError, match="claimed by ana"):
        bob.claim(item_id)
    assert bob.get(item_id).assignee == "ana"


def test_claim_with_force_takes_over_and_says_so(repo: Path) -> None:
    ana, bob = _as(repo, "ana"), _as(repo, "bob")
    item_id = _new(ana)
    ana.claim(item_id)
    receipt = bob.claim(item_id, force=True)
    assert bob.get(item_id).assignee == "bob"
    assert any("claim_takeover" in w for w in receipt["warnings"])


def test_claim_if_available_skips_a_held_item(repo: Path) -> None:
    ana, bob = _as(repo, "ana"), _as(repo, "bob")
    item_id = _new(ana)
    ana.claim(item_id)
    receipt = bob.claim(item_id, if_available=True)
    assert receipt["claimed"] is False and receipt["skipped"] is True
    assert bob.get(item_id).assignee == "ana"


def test_claim_of_a_closed_item_is_a_conflict(tracker: Tracker) -> None:
    item_id = _new(tracker)
    tracker.close(item_id, "done")
    with pytest.raises(ConflictError, match="closed"):
        tracker.claim(item_id)


def test_release_by_non_holder_is_a_conflict(repo: Path) -> None:
    ana, bob = _as(repo, "ana"), _as(repo, "bob")
    item_id = _new(ana)
    ana.claim(item_id)
    with pytest.raises(ConflictError, match="claimed by ana"):
        bob.release(item_id)
    bob.release(item_id, force=True)
    item = bob.get(item_id)
    assert item.assignee is None and item.claim_principal is None


def test_release_by_the_holder_reopens_the_work(repo: Path) -> None:
    ana = _as(repo, "ana")
    item_id = _new(ana)
    ana.claim(item_id)
    ana.release(item_id)
    item = ana.get(item_id)
    assert item.status == "open" and item.assignee is None


def test_release_of_an_unclaimed_item_has_no_effect(tracker: Tracker) -> None:
    item_id = _new(tracker)
    receipt = tracker.release(item_id)
    assert receipt["warnings"] == ["noop_not_claimed"] and "not claimed" in receipt["noop"]
    assert [e.op for e in tracker.history(item_id)] == ["create"]


def test_dependency_cycle_is_rejected_and_nothing_is_written(tracker: Tracker) -> None:
    first = _new(tracker, "First")
    second = _new(tracker, "Second", dependencies=[f"{first}:blocked_by"])
    before = tracker.get(first).to_record()
    with pytest.raises(DependencyError, match="would create a cycle"):
        tracker.add_dependency(first, second, "blocked_by")
    assert tracker.get(first).to_record() == before


def test_dependency_on_a_missing_item_needs_the_escape_hatch(tracker: Tracker) -> None:
    with pytest.raises(DependencyError, match="pm-none does not exist"):
        _new(tracker, "Orphan", dependencies=["pm-none"])
    item_id = str(
        tracker.create(
            {"title": "Orphan", "dependencies": ["pm-none"]}, allow_unresolved_deps=True
        )["id"]
    )
    assert tracker.get(item_id).dependencies[0]["id"] == "pm-none"


def test_written_item_and_settings_files_are_readable_by_others(tracker: Tracker) -> None:
    receipt = tracker.create({"title": "shared"})
    path = tracker.store.find_path(receipt["id"])
    assert path is not None
    assert path.stat().st_mode & 0o777 == 0o644
    assert (tracker.root / "settings.json").stat().st_mode & 0o777 == 0o644

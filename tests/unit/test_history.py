"""Append-only history: hash chain, replay to any version, verification, restore."""

from __future__ import annotations

import itertools
import json

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.model.item import document_hash
from pm_core.tracker.storage import history as hist


def _history_lines(tracker: Tracker, item_id: str) -> list[dict[str, object]]:
    path = hist.history_path(tracker.store.history_dir, item_id)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _made(tracker: Tracker) -> str:
    item_id = str(tracker.create({"title": "Write docs", "priority": 3})["id"])
    tracker.update(item_id, {"status": "in_progress"})
    tracker.add_log("comments", item_id, "half way")
    return item_id


def test_every_mutation_appends_one_entry_with_hashes(tracker: Tracker) -> None:
    item_id = _made(tracker)
    lines = _history_lines(tracker, item_id)
    assert [line["op"] for line in lines] == ["create", "update", "comment_add"]
    assert all(line["author"] == "tester" for line in lines)
    empty = document_hash({"metadata": {}, "body": ""})
    assert lines[0]["before_hash"] == empty
    for earlier, later in itertools.pairwise(lines):
        assert later["before_hash"] == earlier["after_hash"]
    assert lines[-1]["after_hash"] == tracker.get(item_id).content_hash()


def test_replay_rebuilds_each_version(tracker: Tracker) -> None:
    item_id = _made(tracker)
    entries = tracker.history(item_id)
    assert tracker.version(item_id, "1").status == "open"
    assert tracker.version(item_id, "2").status == "in_progress"
    assert tracker.version(item_id, "2").comments == []
    full = hist.replay(entries)
    assert document_hash(full) == tracker.get(item_id).content_hash()


def test_version_by_timestamp_picks_the_last_entry_at_or_before_it(tracker: Tracker) -> None:
    item_id = _made(tracker)
    entries = tracker.history(item_id)
    assert tracker.version(item_id, entries[1].ts).status == "in_progress"


def test_version_outside_the_history_is_a_usage_error(tracker: Tracker) -> None:
    item_id = _made(tracker)
    with pytest.raises(UsageError, match="version 9 does not exist") as caught:
        tracker.version(item_id, "9")
    assert caught.value.hint == "versions run from 1 to 3"
    with pytest.raises(UsageError, match="no version at or before"):
        tracker.version(item_id, "2001-01-01T00:00:00Z")


def test_verify_passes_on_an_untouched_item(tracker: Tracker) -> None:
    item_id = _made(tracker)
    report = hist.verify_item(tracker.store, item_id)
    assert report == {
        "id": item_id,
        "ok": True,
        "entries": 3,
        "problems": [],
        "item_hash_version": 2,
    }


def test_verify_names_a_hand_edit(tracker: Tracker) -> None:
    item_id = _made(tracker)
    path = tracker.store.find_path(item_id)
    assert path is not None
    path.write_text(path.read_text().replace("Write docs", "Edited by hand"))
    report = hist.verify_item(tracker.store, item_id)
    assert not report["ok"]
    assert any("differs from the state its history records" in p for p in report["problems"])


def test_verify_names_a_broken_chain(tracker: Tracker) -> None:
    item_id = _made(tracker)
    path = hist.history_path(tracker.store.history_dir, item_id)
    lines = path.read_text().splitlines()
    del lines[1]  # drop the update entry: the chain no longer links up
    path.write_text("\n".join(lines) + "\n")
    report = hist.verify_item(tracker.store, item_id)
    assert not report["ok"]
    assert any(f"history/{item_id}.jsonl line 2: " in p for p in report["problems"])
    assert report["fixes"][0].startswith("restore history/<id>.jsonl from git")


def test_torn_history_line_is_a_corrupt_error_naming_the_line(tracker: Tracker) -> None:
    item_id = _made(tracker)
    path = hist.history_path(tracker.store.history_dir, item_id)
    with path.open("a") as fh:
        fh.write('{"ts": "2026-01-01T00:00:00Z", "op": "upd')
    with pytest.raises(CorruptItemError, match=rf"history/{item_id}.jsonl line 4"):
        tracker.history(item_id)
    assert not hist.verify_item(tracker.store, item_id)["ok"]


def test_restore_rebuilds_a_version_and_appends_a_restore_entry(tracker: Tracker) -> None:
    item_id = _made(tracker)
    receipt = tracker.restore(item_id, "1")
    item = tracker.get(item_id)
    assert item.status == "open" and item.comments == []
    assert receipt["restored_from"] == "1"
    assert [e.op for e in tracker.history(item_id)][-1] == "restore"
    assert hist.verify_item(tracker.store, item_id)["ok"]


def test_deleted_item_keeps_its_history_and_can_be_restored(tracker: Tracker) -> None:
    item_id = _made(tracker)
    tracker.delete(item_id)
    assert not tracker.exists(item_id)
    assert hist.verify_item(tracker.store, item_id)["ok"]
    tracker.restore(item_id, "3")
    assert tracker.get(item_id).comments[0]["text"] == "half way"
    assert hist.verify_item(tracker.store, item_id)["ok"]


def test_missing_file_without_a_delete_entry_is_a_problem(tracker: Tracker) -> None:
    item_id = _made(tracker)
    path = tracker.store.find_path(item_id)
    assert path is not None
    path.unlink()
    report = hist.verify_item(tracker.store, item_id)
    assert "does not record a delete" in report["problems"][0]


def test_history_of_an_unknown_id_is_not_found(tracker: Tracker) -> None:
    with pytest.raises(NotFoundError, match="pm-zzzz"):
        tracker.history("pm-zzzz")
    with pytest.raises(NotFoundError, match="pm-zzzz"):
        hist.verify_item(tracker.store, "pm-zzzz")

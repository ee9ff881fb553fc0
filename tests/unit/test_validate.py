"""pm validate / pm health / history repair: each check catches what it names, repair keeps the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.item import Item
from pm_core.tracker.query.validate import health, repair_history, validate
from pm_core.tracker.storage import history as hist
from tests.support.trackers import add, hand_edit, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def failures(result: dict[str, Any], check: str) -> list[dict[str, Any]]:
    (entry,) = [c for c in result["checks"] if c["name"] == check]
    found: list[dict[str, Any]] = entry["failures"]
    return found


def test_a_tracker_written_through_the_sdk_validates_clean(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    task = add(t, "Task", parent=epic, tags="a,b")
    t.claim(task)
    t.close(task, "done")
    deleted = add(t, "Gone")
    t.delete(deleted)
    result = validate(t)
    assert result["ok"] is True, result
    assert result["counts"]["items"] == 2


def test_corrupt_item_file_is_named_with_its_path(t: Tracker) -> None:
    add(t, "Fine")
    (t.root / "tasks" / "pm-bad1.toon").write_text("id: pm-bad1\n\x00garbage: [", encoding="utf-8")
    result = validate(t, ["parse"])
    assert result["ok"] is False
    (failure,) = failures(result, "parse")
    assert failure["id"] == "pm-bad1"
    assert failure["path"] == ".agents/pm/tasks/pm-bad1.toon"
    assert failure["fix"]


def test_broken_hash_chain_is_reported(t: Tracker) -> None:
    item = add(t, "Chain")
    t.update(item, {"title": "Chain v2"})
    path = hist.history_path(t.store.history_dir, item)
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["after_hash"] = "0" * 64
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    problems = [f["message"] for f in failures(validate(t, ["history"]), "history")]
    assert any("after_hash does not match" in p for p in problems)


def test_hand_edit_is_caught_and_repair_keeps_the_edited_file(t: Tracker) -> None:
    item = add(t, "Original")
    hand_edit(t, item, title="Edited by hand")
    before = validate(t, ["history"])
    (failure,) = failures(before, "history")
    assert "differs" in failure["message"] and failure["fix"] == "pm validate --repair-history"
    report = repair_history(t)
    assert [r["id"] for r in report["repaired"]] == [item]
    assert t.get(item).title == "Edited by hand"
    assert t.history(item)[-1].op == "history_repair"
    assert validate(t)["ok"] is True
    assert repair_history(t)["counts"]["repaired"] == 0


def test_item_without_history_is_flagged_and_repair_creates_it(t: Tracker) -> None:
    orphan = Item(
        id="pm-orph",
        title="Written by another tool",
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
    )
    t.store.write(orphan, t.store.item_path(orphan.id, "Task"))
    (failure,) = failures(validate(t, ["history"]), "history")
    assert failure == {
        "id": "pm-orph",
        "path": "history/pm-orph.jsonl",
        "message": "item has no history",
        "fix": "pm validate --repair-history",
    }
    repaired = repair_history(t, "pm-orph")["repaired"]
    assert repaired[0]["reason"] == "no history"
    assert validate(t, ["history"])["ok"] is True


def test_history_without_an_item_file_is_ok_only_after_a_delete(t: Tracker) -> None:
    deleted = add(t, "Deleted properly")
    t.delete(deleted)
    vanished = add(t, "Removed with rm")
    t.store.find_path(vanished).unlink()  # type: ignore[union-attr]
    (failure,) = failures(validate(t, ["history"]), "history")
    assert failure["id"] == vanished and "missing" in failure["message"]
    assert failure["fix"] == f"pm restore {vanished} 1"


def test_lifecycle_check_catches_inconsistent_closure(t: Tracker) -> None:
    closed = add(t, "Closed")
    t.close(closed, "done")
    hand_edit(
        t,
        closed,
        close_reason=None,
        claim_principal="bob",
        claim_expires_at="2026-01-01T00:00:00.000Z",
    )
    reopened = add(t, "Open with stamp")
    hand_edit(t, reopened, closed_at="2026-01-01T00:00:00.000Z")
    report = validate(t, ["lifecycle"])
    messages = {(f["id"], f["message"]) for f in failures(report, "lifecycle")}
    assert messages == {
        (closed, "closed but still holds a claim lease (bob until 2026-01-01T00:00:00.000Z)"),
    }
    # What the TypeScript pm accepts is a warning here, never a failure.
    (check,) = report["checks"]
    assert {(w["id"], w["message"]) for w in check["warnings"]} == {
        (closed, "closed without close_reason"),
        (reopened, "open but has closed_at/completed_at"),
    }
    assert report["counts"]["warnings"] == 2


def test_metadata_check_catches_bad_values(t: Tracker) -> None:
    item = add(t, "Meta")
    hand_edit(t, item, priority=9, status="finished", tags=["b", "a"], risk="extreme")
    report = validate(t, ["metadata"])
    messages = [f["message"] for f in failures(report, "metadata")]
    assert "priority 9 is outside 0-4" in messages
    assert "unknown status 'finished'" in messages
    assert "invalid risk 'extreme'" in messages
    (check,) = report["checks"]
    assert [w["message"] for w in check["warnings"]] == ["tags are not sorted and unique"]


def test_dependency_check_catches_missing_targets_and_cycles(t: Tracker) -> None:
    a = add(t, "A")
    b = add(t, "B", dependencies=[f"{a}:blocked_by"])
    t.add_dependency(a, "pm-ghost", "related", allow_unresolved=True)
    item, path = t.store.read(a)
    item.dependencies.append({"id": b, "kind": "blocked_by"})
    t.store.write(item, path)
    messages = [f["message"] for f in failures(validate(t, ["dependencies"]), "dependencies")]
    assert "dependency related target pm-ghost does not exist" in messages
    assert any(m.startswith("blocking cycle:") for m in messages)


def test_duplicate_ids_across_folders_are_reported(t: Tracker) -> None:
    item = add(t, "Twin")
    source = t.store.find_path(item)
    assert source is not None
    (t.root / "chores").mkdir(exist_ok=True)
    shutil.copy(source, t.root / "chores" / source.name)
    (failure,) = failures(validate(t, ["duplicates"]), "duplicates")
    assert failure["id"] == item and "2 files" in failure["message"]


def test_unknown_check_is_a_usage_error(t: Tracker) -> None:
    with pytest.raises(UsageError, match="unknown check"):
        validate(t, ["spelling"])


def test_health_of_a_fresh_tracker_is_ok(t: Tracker) -> None:
    result = health(t)
    assert result["ok"] is True
    assert result["remediation_map"] == {}
    assert {c["name"] for c in result["checks"]} >= {
        "settings",
        "schema",
        "folders",
        "stale_locks",
        "runtime_writable",
        "items",
    }


def test_health_finds_stale_locks_and_broken_settings_with_remedies(t: Tracker) -> None:
    lock = {
        "id": "pm-x",
        "pid": 999999,
        "owner": "ghost",
        "created_at": "2020-01-01T00:00:00.000Z",
        "ttl_seconds": 60,
    }
    (t.root / "locks" / "pm-x.lock").write_text(json.dumps(lock), encoding="utf-8")
    (t.root / "settings.json").write_text("{not json", encoding="utf-8")
    result = health(t)
    assert result["ok"] is False
    assert set(result["remediation_map"]) >= {"stale_locks", "settings"}
    (stale,) = [c for c in result["checks"] if c["name"] == "stale_locks"]
    assert stale["problems"] == ["locks/pm-x.lock is stale (holder ghost)"]

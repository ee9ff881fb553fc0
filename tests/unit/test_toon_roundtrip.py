"""Item files in the TypeScript pm's TOON shapes load unchanged and re-save byte for byte.

The fixtures under ``tests/fixtures/toon`` are written by hand in the shapes
that pm writes: tabular arrays with a field list, quoted strings holding
commas, colons, quotes and newlines, nested objects, list items with nested
tables, and keys this implementation does not know (kept in place).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.storage.itemfile import decode_item, encode_item

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "toon"
FIXTURE_FILES = sorted(FIXTURES.glob("*.toon"))


def _install(tracker: Tracker, name: str, folder: str) -> Path:
    """Copy fixture ``name`` into the tracker as ``<folder>/<its id>.toon``."""
    item_id = decode_item((FIXTURES / name).read_bytes()).id
    target = tracker.root / folder / f"{item_id}.toon"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / name, target)
    return target


def test_there_are_fixtures_to_check() -> None:
    assert len(FIXTURE_FILES) >= 3


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_untouched_item_resaves_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    assert encode_item(decode_item(raw, path.name)) == raw


def test_item_read_through_the_tracker_resaves_byte_for_byte(tracker: Tracker) -> None:
    path = _install(tracker, "task_full.toon", "tasks")
    item = tracker.get("pm-k3v9")
    tracker.store.write(item, path)
    assert path.read_bytes() == (FIXTURES / "task_full.toon").read_bytes()


def test_quoted_strings_keep_commas_colons_quotes_and_newlines() -> None:
    item = decode_item((FIXTURES / "task_full.toon").read_bytes())
    assert item.title == 'Parser splits quoted titles: "a, b" becomes two values'
    assert item.tags == ["area:storage", "parser", "toon"]
    assert item.comments[0]["text"] == 'Reproduced with: pm create --title "a, b"'
    assert item.comments[2]["text"] == "Fixed.\nEvidence: 12 tests pass, 0 fail."
    assert item.body.startswith("## Notes\n\nLine one, with a comma.\n\tIndented: yes")
    assert item.body.endswith("a backslash \\ too.")
    assert item.files[1]["path"] == "docs/notes, drafts.md"


def test_tabular_rows_become_entries_with_nulls_kept() -> None:
    item = decode_item((FIXTURES / "task_full.toon").read_bytes())
    assert item.dependencies == [
        {
            "id": "pm-e1p1",
            "kind": "parent",
            "created_at": "2026-03-02T09:15:00.000Z",
            "author": "maintainer",
            "source_kind": None,
        },
        {
            "id": "pm-q7w2",
            "kind": "blocked_by",
            "created_at": "2026-03-02T09:16:30.000Z",
            "author": "maintainer",
            "source_kind": "manual",
        },
    ]
    assert item.tests[0]["path"] is None and item.tests[0]["timeout_seconds"] == 900


def test_nested_objects_and_nested_rows_decode() -> None:
    item = decode_item((FIXTURES / "event_nested.toon").read_bytes())
    assert item.type_options == {"room": "Blue", "video": "https://meet.example.test/triage"}
    assert item.events[0]["recurrence"] == {"freq": "weekly", "interval": 1}
    run = item.test_runs[0]
    assert run["executions"][1] == {"command": 'pytest -k "lock and not slow"', "exit_code": 0}
    assert item.body == "Agenda:\n- new issues\n- blocked work"


def test_unknown_keys_are_kept_with_their_nested_values() -> None:
    item = decode_item((FIXTURES / "task_full.toon").read_bytes())
    assert item.extra["escape_class"] == "production_defect"
    assert item.extra["gate_evidence"]["hosted_checks"] == [
        "CI / Gates (static)",
        "CI / Run benchmarks (Ubuntu 22.04, Node 24)",
    ]


def test_update_changes_only_the_touched_lines(tracker: Tracker) -> None:
    path = _install(tracker, "task_full.toon", "tasks")
    before = path.read_text(encoding="utf-8").splitlines()
    tracker.update("pm-k3v9", {"goal": "Byte-exact storage"})
    after = path.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert [b.split(":")[0] for _, b in changed] == ["updated_at", "goal"]
    assert after[-8:-1] == before[-8:-1]  # unknown keys still right before the body


def test_closed_issue_fields_decode_with_their_types() -> None:
    item = decode_item((FIXTURES / "issue_closed.toon").read_bytes())
    assert item.status == "closed" and item.regression is False
    assert item.confidence == "high" and item.estimated_minutes == 120
    assert item.repro_steps == "1. start a write\n2. kill -9 the process\n3. run pm update"
    assert (
        item.close_reason
        == "Stale-lock takeover shipped, with a regression test; verified by hand."
    )


@pytest.mark.parametrize("empty", ["tags[0]:", "tags: []"])
def test_both_empty_array_forms_load(empty: str) -> None:
    text = f'id: pm-e0\ntitle: Empty\ndescription: ""\ntype: Task\nstatus: open\npriority: 2\n{empty}\nbody: ""\n'
    assert decode_item(text.encode()).tags == []


def test_history_hash_of_a_loaded_item_is_stable_across_resave(tracker: Tracker) -> None:
    path = _install(tracker, "issue_closed.toon", "issues")
    first = tracker.get("pm-x0c4").content_hash()
    tracker.store.write(tracker.get("pm-x0c4"), path)
    assert tracker.get("pm-x0c4").content_hash() == first

"""Collection entries are checked with cattrs and reported precisely."""

from __future__ import annotations

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.entries import entry_problems
from pm_core.tracker.model.item import item_from_record
from pm_core.tracker.query.validate import validate


def test_well_formed_entries_have_no_problems() -> None:
    item = item_from_record(
        {
            "id": "pm-1",
            "title": "t",
            "dependencies": [{"id": "pm-2", "kind": "blocks", "created_at": "x", "extra": 1}],
            "comments": [{"created_at": "x", "author": "a", "text": "hi"}],
            "files": [{"path": "src/a.py", "scope": "project"}],
            "tests": [{"command": "pytest -q", "scope": "project", "timeout_seconds": 60}],
        }
    )
    assert entry_problems(item) == []


def test_malformed_entries_name_field_index_and_problem() -> None:
    item = item_from_record(
        {
            "id": "pm-1",
            "title": "t",
            "dependencies": [{"id": "pm-2", "kind": "bogus"}, {"kind": "related"}],
            "comments": [{"text": "no author"}],
            "tests": [{"scope": "project"}],
        }
    )
    problems = entry_problems(item)
    assert problems[0] == "dependencies[0]: unknown kind 'bogus'"
    assert problems[1].startswith("dependencies[1]: missing 'id'")
    assert "comments[0]: missing 'created_at'" in problems[2]
    assert problems[3] == "tests[0]: needs a command or a path"


def test_validate_reports_a_malformed_entry_in_the_metadata_check(tracker: Tracker) -> None:
    receipt = tracker.create({"title": "holder"})
    path = tracker.store.find_path(receipt["id"])
    assert path is not None
    text = path.read_text(encoding="utf-8").replace(
        'body: ""', 'comments[1]{text}:\n  "no author or time"\nbody: ""'
    )
    path.write_text(text, encoding="utf-8")
    report = validate(tracker, ["metadata"])
    assert report["ok"] is False
    failures = report["checks"][0]["failures"]
    assert any(
        f["id"] == receipt["id"] and "comments[0]: missing 'created_at'" in f["message"]
        for f in failures
    )

"""``pm validate`` checks ``history/_workspace.jsonl``: its chain, and the governed files against it.

The stream records every settings and schema change made through pm (the
TypeScript pm's shape and rules): a broken chain fails like an item's; a
governed file changed outside pm is a warning naming the file and the fix.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pm_core.tracker.api import Tracker
from pm_core.tracker.query.validate import validate
from pm_core.tracker.storage import history as hist
from tests.support.trackers import make_tracker

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ts" / "basic" / ".agents" / "pm"


def history_check(result: dict[str, Any]) -> dict[str, Any]:
    (check,) = [c for c in result["checks"] if c["name"] == "history"]
    return check


def workspace_findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    check = history_check(result)
    found = [*check["failures"], *check.get("warnings", [])]
    return [f for f in found if f["id"] == "_workspace"]


def changed_tracker(tmp_path: Path) -> Tracker:
    tracker = make_tracker(tmp_path)
    tracker.config_set("locks.wait_ms", 5000)
    tracker.schema_add("status", "wontfix", roles=["terminal"])
    assert (tracker.root / "history" / "_workspace.jsonl").is_file()
    return tracker


def test_changes_made_through_pm_verify_and_agree_with_the_files(tmp_path: Path) -> None:
    result = validate(changed_tracker(tmp_path), ["history"])
    assert result["ok"] is True
    assert workspace_findings(result) == []


def test_a_hand_edited_settings_file_is_a_warning_naming_it(tmp_path: Path) -> None:
    tracker = changed_tracker(tmp_path)
    settings = tracker.root / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["locks"]["wait_ms"] = 1
    settings.write_text(json.dumps(data), encoding="utf-8")
    result = validate(tracker, ["history"])
    assert result["ok"] is True  # a warning, as the TypeScript pm has it
    (finding,) = workspace_findings(result)
    assert finding["path"] == "settings.json"
    assert "differs from the state history/_workspace.jsonl records" in finding["message"]
    assert "pm config set" in finding["fix"]


def test_a_missing_governed_file_is_a_warning(tmp_path: Path) -> None:
    tracker = changed_tracker(tmp_path)
    state = hist.replay(hist.read_entries(tracker.store.history_dir, "_workspace"))
    recorded = sorted(p for p in state["metadata"]["documents"] if p.startswith("schema/"))
    assert recorded, state["metadata"]["documents"].keys()
    (tracker.root / recorded[0]).unlink()
    (finding,) = workspace_findings(validate(tracker, ["history"]))
    assert finding["path"] == recorded[0]
    assert finding["message"] == f"{recorded[0]} is missing but its history records it"


def test_a_tampered_workspace_entry_fails_with_its_line(tmp_path: Path) -> None:
    tracker = changed_tracker(tmp_path)
    stream = tracker.root / "history" / "_workspace.jsonl"
    lines = stream.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["after_hash"] = "0" * 64
    lines[0] = json.dumps(first, separators=(",", ":"))
    stream.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = validate(tracker, ["history"])
    assert result["ok"] is False
    (finding, *_) = history_check(result)["failures"]
    assert finding["id"] == "_workspace" and finding["path"] == "history/_workspace.jsonl"
    assert finding["message"].startswith("line 1: ")


def test_the_typescript_pms_workspace_stream_verifies(tmp_path: Path) -> None:
    root = tmp_path / ".agents" / "pm"
    shutil.copytree(FIXTURE, root)
    assert (root / "history" / "_workspace.jsonl").is_file()
    result = validate(Tracker(root, author="test"), ["history"])
    assert result["ok"] is True
    assert workspace_findings(result) == []

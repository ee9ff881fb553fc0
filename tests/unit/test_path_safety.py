"""Nothing a caller names escapes its root: item ids, linked paths, tracker roots, views, guides.

Ids are refused before they become file names; ``files``/``docs`` links are
resolved (symlinks included) and must stay inside the repository unless the
scope is ``global``; ``ui://`` views come from a fixed table; the agent guide
is served only when it is a regular file inside the repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pm_plugins.apps_ui.apps import APP_CONTRACTS, read_app_resource
from pm_plugins.workspace_resources.resources import guide_text

from pm_core.contracts import ProtocolError
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.storage.store import MAX_ID_LENGTH

HOSTILE_IDS = [
    "../x",
    "../../etc/passwd",
    "pm-a/../../b",
    "/etc/passwd",
    "pm-a\x00b",
    "pm-a\\..\\b",
    "..",
    ".hidden",
    "pm-..",
    "pm-é",
    "pm-中文",
    "pm-a b",
    "pm-a:b",
    "pm-" + "a" * (MAX_ID_LENGTH + 1),
    "",
    "   ",
]


def files_under(root: Path) -> set[Path]:
    """Every path below ``root`` (to show nothing was created)."""
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("raw", HOSTILE_IDS)
def test_hostile_item_ids_are_usage_errors_before_any_file_is_touched(
    tmp_path: Path, repo: Path, tracker: Tracker, raw: str
) -> None:
    before = files_under(tmp_path)
    attempts = [
        lambda: tracker.get(raw),
        lambda: tracker.update(raw, {"priority": 1}),
        lambda: tracker.add_log("comments", raw, "x"),
        lambda: tracker.history(raw),
    ]
    if raw.strip():  # an empty parent means "no parent"
        attempts.append(lambda: tracker.create({"title": "t", "parent": raw}))
    for attempt in attempts:
        with pytest.raises(UsageError) as caught:
            attempt()
        assert caught.value.code == 2
        assert len(caught.value.message) < 200  # a huge id is not echoed back whole
    assert files_under(tmp_path) == before


def test_an_id_at_the_length_limit_is_merely_not_found(tracker: Tracker) -> None:
    with pytest.raises(NotFoundError):
        tracker.get("pm-" + "a" * (MAX_ID_LENGTH - 3))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file next to (not inside) the repository."""
    path = tmp_path / "outside.txt"
    path.write_text("not yours")
    return path


@pytest.mark.parametrize("kind", ["files", "docs"])
def test_links_that_leave_the_repository_are_refused_unless_global(
    repo: Path, tracker: Tracker, outside: Path, kind: str
) -> None:
    item = tracker.create({"title": "Linker"})["id"]
    (repo / "docs").mkdir()
    (repo / "docs" / "escape").symlink_to(outside.parent)
    (repo / "loop").symlink_to(repo / "loop")
    for raw in (
        "..",
        "../outside.txt",
        "docs/../../outside.txt",
        str(outside),
        "/etc/passwd",
        "docs/escape/outside.txt",
        "a\x00b",
        "loop/x",
        "",
    ):
        with pytest.raises(UsageError):
            tracker.link(kind, item, raw)
    assert getattr(tracker.get(item), kind) == []
    tracker.link(kind, item, str(outside), scope="global")
    with pytest.raises(UsageError):
        tracker.link(kind, item, "a\x00b", scope="global")
    assert [e["path"] for e in getattr(tracker.get(item), kind)] == [str(outside)]


def test_links_inside_the_repository_are_stored_relative_and_resolved(
    repo: Path, tracker: Tracker
) -> None:
    item = tracker.create({"title": "Linker"})["id"]
    (repo / "src").mkdir()
    (repo / "src" / "real.py").write_text("")
    (repo / "alias").symlink_to(repo / "src")
    tracker.link("files", item, "src/../src/real.py")
    tracker.link("files", item, str(repo / "README.md"))
    assert [e["path"] for e in tracker.get(item).files] == ["src/real.py", "README.md"]
    # A symlink inside the repository is resolved to where it points.
    again = tracker.link("files", item, "alias/real.py")
    assert again["warnings"] == ["noop_already_linked"] and "src/real.py" in again["noop"]


@pytest.mark.parametrize(
    "root",
    ["a\x00b", "does/not/exist"],
)
def test_a_bad_tracker_root_is_a_clear_error(tmp_path: Path, root: str) -> None:
    with pytest.raises((UsageError, NotFoundError)) as caught:
        Tracker(tmp_path / root if "\x00" not in root else root, env={}).settings  # noqa: B018
    assert caught.value.message


def test_a_tracker_root_that_is_a_file_or_a_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotFoundError, match="no tracker at"):
        Tracker(tmp_path / "file", env={}).settings  # noqa: B018
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UsageError, match="cannot be resolved"):
        Tracker(tmp_path / "loop", env={})


@pytest.mark.parametrize(
    "uri",
    [
        "ui://pm/../../etc/passwd",
        "ui://pm/%2e%2e/%2e%2e/etc/passwd",
        "ui://pm/..%2f..%2fsettings.json",
        "ui://pm/context.html/../../../pyproject.toml",
        "ui://pm/_runtime.html",
        "ui://pm/context",
        "ui://pm/CONTEXT.HTML",
        "ui://pm/context.html\x00",
        "ui://pm//etc/passwd",
        "ui://pm/",
    ],
)
def test_ui_uris_outside_the_fixed_view_table_are_not_found(uri: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        read_app_resource(None, uri)  # type: ignore[arg-type]
    assert caught.value.code == -32602
    assert "resource not found" in caught.value.message


def test_every_listed_view_is_served_from_the_table() -> None:
    for contract in APP_CONTRACTS:
        content = read_app_resource(None, contract.uri)  # type: ignore[arg-type]
        assert content.uri == contract.uri and (content.text or "").startswith("<!")


def test_agent_guide_that_points_outside_the_repository_is_not_served(
    repo: Path, outside: Path
) -> None:
    (repo / "AGENTS.md").symlink_to(outside)
    text = guide_text(repo)
    assert "not yours" not in text
    assert text == "AGENTS.md points outside the repository, so it is not served."


def test_agent_guide_that_is_a_fifo_or_a_loop_is_not_read(repo: Path) -> None:
    os.mkfifo(repo / "AGENTS.md")  # reading it would block forever
    assert guide_text(repo) == "AGENTS.md is not a regular file, so it is not served."
    (repo / "AGENTS.md").unlink()
    (repo / "AGENTS.md").symlink_to(repo / "AGENTS.md")
    assert "not served" in guide_text(repo)


def test_agent_guide_inside_the_repository_is_served(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("Be kind to the tracker.")
    (repo / "AGENTS.md").symlink_to(repo / "docs" / "guide.md")
    assert guide_text(repo) == "Be kind to the tracker."


@pytest.mark.parametrize(
    "folder", ["../../../outside", "/tmp/abs", "a/b", "..", ".hidden", "x\x00"]
)
def test_a_committed_schema_cannot_point_a_type_folder_outside_the_tracker(
    tmp_path: Path, repo: Path, tracker: Tracker, folder: str
) -> None:
    (tracker.root / "schema" / "types.json").write_text(
        json.dumps({"types": [{"name": "Evil", "folder": folder}]}), encoding="utf-8"
    )
    before = files_under(tmp_path)
    fresh = Tracker(tracker.root, env={})
    with pytest.raises(UsageError, match=r"schema/types\.json: type 'Evil' has folder"):
        fresh.create({"title": "x", "type": "Evil"})
    assert files_under(tmp_path) == before
    report = fresh.health()
    assert report["ok"] is False and "schema" in report["remediation_map"]


def test_a_plain_custom_folder_still_works(tracker: Tracker) -> None:
    (tracker.root / "schema" / "types.json").write_text(
        json.dumps({"types": [{"name": "Bug", "folder": "bugs"}]}), encoding="utf-8"
    )
    fresh = Tracker(tracker.root, env={})
    item = fresh.create({"title": "x", "type": "Bug"})["id"]
    assert (tracker.root / "bugs" / f"{item}.toon").is_file()


def test_a_history_file_that_is_a_symlink_is_never_written_through(
    tracker: Tracker, outside: Path
) -> None:
    item = tracker.create({"title": "Victim"})["id"]
    history = tracker.root / "history" / f"{item}.jsonl"
    history.unlink()
    history.symlink_to(outside)
    item_file = tracker.store.find_path(item)
    assert item_file is not None
    before = item_file.read_bytes()
    with pytest.raises(CorruptItemError, match="is a symbolic link; pm does not write through"):
        tracker.update(item, {"priority": 0})
    assert outside.read_text() == "not yours"
    assert item_file.read_bytes() == before  # refused before the item changed

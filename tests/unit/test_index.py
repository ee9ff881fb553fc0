"""The read index: incremental refresh from stat data, recovery, and equal answers.

Every comparison runs the same call twice on one workspace: with the index
(``env={}``) and with it switched off (``PM_INDEX=off``, the file scan that is
the reference). A generated 300-item workspace of every type, with a
hierarchy, blocking links, claims, deadlines, comments and tags, feeds them.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.db import ReadIndex
from pm_core.tracker.query.listing import list_items
from pm_core.tracker.query.ranking import context, next_items
from pm_core.tracker.query.search import search

NOW = datetime(2026, 6, 1, tzinfo=UTC)
AUTHOR = "alice"


def on(root: Path) -> Tracker:
    return Tracker(root, author=AUTHOR, env={})


def off(root: Path) -> Tracker:
    return Tracker(root, author=AUTHOR, env={"PM_INDEX": "off"})


def fresh(tracker: Tracker) -> ReadIndex:
    index = indexing.fresh(tracker)
    assert index is not None, "the index should be available"
    return index


def same(root: Path, call: Callable[[Tracker], Any]) -> Any:
    """Run ``call`` with and without the index; they must agree; return the indexed answer."""
    indexed = call(on(root))
    scanned = call(off(root))
    assert json.dumps(indexed, sort_keys=True, default=str) == json.dumps(
        scanned, sort_keys=True, default=str
    )
    return indexed


def first_file(root: Path, folder: str = "tasks") -> Path:
    return sorted((root / folder).glob("*.toon"))[0]


def listed_ids(tracker: Tracker, **kwargs: Any) -> list[str]:
    return [row["id"] for row in list_items(tracker, include_terminal=True, **kwargs)["items"]]


# ---------------------------------------------------------------- equal answers


READS: dict[str, Callable[[Tracker], Any]] = {
    "list default": lambda t: list_items(t),
    "list all by title": lambda t: list_items(t, include_terminal=True, sort="title", limit=40),
    "list deadline sort, tag": lambda t: list_items(t, tags=["api"], sort="deadline"),
    "list unassigned": lambda t: list_items(t, assignee="none", sort="updated", offset=5),
    "list by holder": lambda t: list_items(t, assignee="bob", sort="created"),
    "list status and priority": lambda t: list_items(
        t, status=["blocked", "open"], priority=[1, 2]
    ),
    "list with fields": lambda t: list_items(t, fields=["title", "body", "comments"], limit=15),
    "search one word": lambda t: search(t, "deadlock"),
    "search two words": lambda t: search(t, "login timeout", limit=20),
    "search and": lambda t: search(t, "cache index", match="and"),
    "search exact": lambda t: search(t, "cache index", match="exact"),
    "search bm25": lambda t: search(t, "replica backup", mode="bm25"),
    "search hybrid": lambda t: search(t, "replica", mode="hybrid"),
    "search short token": lambda t: search(t, "db", limit=10),
    "search filters only": lambda t: search(t, "tag:api status:open"),
    "search open tasks": lambda t: search(
        t, "rollback", include_terminal=False, filters={"type": "Task"}
    ),
    "next": lambda t: next_items(t, now=NOW),
    "next wide with decisions": lambda t: next_items(t, now=NOW, limit=40, include_decisions=True),
    "next ready only": lambda t: next_items(t, now=NOW, ready_only=True, limit=3),
    "context": lambda t: context(t, now=NOW),
    "context wide": lambda t: context(t, now=NOW, limit=25, token_budget=50_000),
    # Counts past SQLite's 64-bit integers mean "all" or "none left", as in the scan.
    "list past 2**63": lambda t: list_items(t, limit=10**23, offset=3),
    "list offset past 2**63": lambda t: list_items(t, offset=10**23),
    "search past 2**63": lambda t: search(t, "replica", limit=10**23),
    "next past 2**63": lambda t: next_items(t, now=NOW, limit=10**23),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_index_answers_equal_file_scan(root: Path, name: str) -> None:
    same(root, READS[name])


def test_parent_scoped_reads_and_pinned_ids_equal_file_scan(root: Path) -> None:
    epic = first_file(root, "epics").stem
    feature = first_file(root, "features").stem
    same(root, lambda t: list_items(t, parent=feature, include_terminal=True))
    same(root, lambda t: next_items(t, now=NOW, parent=epic, limit=20))
    same(root, lambda t: context(t, now=NOW, parent=epic))
    same(root, lambda t: search(t, f"{feature} cache"))
    same(root, lambda t: search(t, feature.removeprefix("pm-")))


def test_the_index_itself_answers_parent_scoped_next_and_context(root: Path) -> None:
    # ``same`` cannot tell an index answer from the file scan it falls back to.
    from pm_core.tracker.index import rank as indexrank

    epic = first_file(root, "epics").stem
    options: dict[str, Any] = {"limit": 10, "parent": epic, "token_budget": None, "now": NOW}
    tracker = on(root)
    brief = indexrank.context(tracker, depth="brief", section=None, **options)
    assert brief is not None and brief["summary"]["total"] > 0
    scanned = context(off(root), **options)
    assert json.dumps(brief, sort_keys=True, default=str) == json.dumps(
        scanned, sort_keys=True, default=str
    )
    ready = indexrank.next_items(tracker, ready_only=False, include_decisions=False, **options)
    assert ready is not None


def test_next_and_context_when_closed_is_not_terminal(root: Path) -> None:
    # The pool index ranks closed and canceled last, which is the baseline
    # order only while they are terminal; otherwise the pool is sorted.
    (root / "schema").mkdir(exist_ok=True)
    (root / "schema" / "statuses.json").write_text(
        json.dumps({"definitions": [{"name": "closed", "roles": ["active"]}]})
    )
    assert "closed" not in off(root).schema.terminal_statuses
    shown = same(root, lambda t: next_items(t, now=NOW, limit=40))
    assert any(row["status"] == "closed" for name in ("ready", "blocked") for row in shown[name])
    same(root, lambda t: context(t, now=NOW, limit=25))


def test_focus_and_claims_shape_next_the_same_way(root: Path) -> None:
    tracker = on(root)
    task = listed_ids(tracker, type="Task", status="open")[0]
    tracker.claim(task)
    from pm_core.tracker.ops.focus import set_focus

    set_focus(tracker, task)
    result = same(root, lambda t: next_items(t, now=NOW, limit=20))
    assert any("claimed by you" in " ".join(r["reasons"]) for r in result["ready"])
    same(root, lambda t: context(t, now=NOW))
    # An expired lease holds nothing: both paths let the item go back to the pool.
    other = listed_ids(tracker, type="Task", status="open")[1]
    tracker.claim(other)
    path = next(root.glob(f"*/{other}.toon"))
    text = path.read_text(encoding="utf-8")
    assert "claim_expires_at: " in text
    lines = [
        'claim_expires_at: "2020-01-01T00:00:00.000Z"'
        if ln.startswith("claim_expires_at: ")
        else ln
        for ln in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    same(root, lambda t: next_items(t, now=NOW, limit=40))


def test_index_scan_gives_the_items_a_file_scan_gives(root: Path) -> None:
    indexed = list(on(root).scan())
    scanned = list(off(root).scan())
    assert [p for p, _ in indexed] == [p for p, _ in scanned]
    for (_, a), (_, b) in zip(indexed, scanned, strict=True):
        assert a == b
        assert a.to_record() == b.to_record()  # type: ignore[union-attr]


# ---------------------------------------------------------------- incremental refresh


def test_hand_edit_in_place_is_picked_up(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    path = first_file(root)
    text = path.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as fh:  # same inode, as many editors write
        fh.write(text.replace("\ntitle: ", "\ntitle: Zanzibar ", 1))
    index = fresh(tracker)
    assert index.last_refresh is not None and index.last_refresh.parsed == 1
    hits = search(tracker, "zanzibar")["hits"]
    assert [h["id"] for h in hits] == [path.stem]


def test_edit_with_same_size_and_mtime_is_caught_while_racy(root: Path) -> None:
    tracker = on(root)
    path = first_file(root)
    os.utime(path, ns=(path.stat().st_atime_ns, 2_000_000_000_000_000_000))  # far future
    fresh(tracker)
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("title: "))
    swapped = "title: " + title[len("title: ") :][::-1]
    path.write_text(text.replace(title, swapped, 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    fresh(tracker)
    assert on(root).get(path.stem).title == swapped[len("title: ") :]
    rows = list_items(tracker, include_terminal=True)["items"]
    assert next(r for r in rows if r["id"] == path.stem)["title"] == swapped[len("title: ") :]


def test_a_written_row_has_no_digest_and_is_parsed_again_to_confirm(root: Path) -> None:
    """A write records its row unhashed; an edit in the same tick is still caught."""
    tracker = on(root)
    fresh(tracker)
    item_id = tracker.create({"title": "Written through", "type": "Task"})["id"]
    path = next(root.glob(f"*/{item_id}.toon"))
    rel = f"{path.parent.name}/{path.name}"
    with sqlite3.connect(root / "runtime" / "index.sqlite") as db:
        assert db.execute("SELECT digest FROM entries WHERE path = ?", (rel,)).fetchone() == (None,)
        assert db.execute("SELECT 1 FROM racy WHERE path = ?", (rel,)).fetchone() == (1,)
    # Another writer, in the same clock tick: same size, same mtime, other bytes.
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Written through", "Through written", 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert fresh(tracker).last_refresh is not None
    assert on(root).get(item_id).title == "Through written"
    hits = search(tracker, "through written")["hits"]
    assert [h["id"] for h in hits][:1] == [item_id]
    # Once its mtime is safely past, a read confirms it: hashed, and no longer racy.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10_000_000_000))
    fresh(tracker)
    fresh(tracker)
    with sqlite3.connect(root / "runtime" / "index.sqlite") as db:
        (digest,) = db.execute("SELECT digest FROM entries WHERE path = ?", (rel,)).fetchone()
        assert isinstance(digest, bytes) and len(digest) == 16
        assert db.execute("SELECT 1 FROM racy WHERE path = ?", (rel,)).fetchone() is None


def _doc_stats(root: Path) -> tuple[tuple[int, int], tuple[int, int]]:
    with sqlite3.connect(root / "runtime" / "index.sqlite") as db:
        kept = db.execute("SELECT documents, tokens FROM doc_stats").fetchone()
        counted = db.execute("SELECT COUNT(*), COALESCE(SUM(ntokens), 0) FROM docs").fetchone()
        lengths = db.execute(
            "SELECT COUNT(*) FROM docs d JOIN entries e ON e.rid = d.rid "
            "WHERE e.live = 1 AND e.ntokens = d.ntokens"
        ).fetchone()
    assert lengths == (counted[0],)  # each live entry carries its document's length
    return kept, counted


def test_the_bm25_totals_follow_every_kind_of_change(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    kept, counted = _doc_stats(root)
    assert kept == counted and counted[0] > 0
    made = tracker.create({"title": "Totals kept by triggers", "type": "Task", "body": "a b c d"})
    tracker.update(made["id"], {"body": "a much longer body than it had before, word after word"})
    tracker.close(first_file(root).stem, "done")
    tracker.delete(sorted((root / "tasks").glob("*.toon"))[1].stem)
    sorted((root / "tasks").glob("*.toon"))[2].unlink()  # behind the index's back
    fresh(tracker)
    kept, counted = _doc_stats(root)
    assert kept == counted
    # What BM25 reads is what the file scan counts.
    same(root, lambda t: search(t, "word body totals", limit=20))


def test_new_file_dropped_in_like_a_checkout_is_picked_up(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    source = first_file(root)
    text = source.read_text(encoding="utf-8").replace(f"id: {source.stem}", "id: pm-zz99", 1)
    (root / "tasks" / "pm-zz99.toon").write_text(text, encoding="utf-8")
    assert "pm-zz99" in listed_ids(tracker)
    same(root, lambda t: list_items(t, include_terminal=True, sort="id"))


def test_deleted_file_disappears(root: Path) -> None:
    tracker = on(root)
    path = first_file(root)
    assert path.stem in listed_ids(tracker)
    path.unlink()
    assert path.stem not in listed_ids(tracker)
    same(root, lambda t: next_items(t, now=NOW, limit=30))


def test_file_moved_to_another_type_folder_is_followed(root: Path) -> None:
    tracker = on(root)
    path = first_file(root)
    fresh(tracker)
    target = root / "chores" / path.name
    path.rename(target)
    index = fresh(tracker)
    assert index.path_of(path.stem) == target
    same(root, lambda t: list_items(t, include_terminal=True, sort="id"))


def test_corrupt_file_is_skipped_and_named_then_recovers(root: Path) -> None:
    tracker = on(root)
    path = first_file(root)
    good = path.read_bytes()
    path.write_text("id: [broken\n", encoding="utf-8")
    result = same(root, lambda t: list_items(t, include_terminal=True))
    assert result["skipped_corrupt"] == [path.relative_to(root.parent.parent).as_posix()]
    assert path.stem not in [r["id"] for r in result["items"]]
    assert [p for p, _ in fresh(tracker).corrupt()] == [path]
    path.write_bytes(good)
    assert path.stem in listed_ids(tracker)
    assert fresh(tracker).corrupt() == []


def test_deleting_runtime_folder_rebuilds(root: Path) -> None:
    tracker = on(root)
    before = listed_ids(tracker)
    shutil.rmtree(root / "runtime")
    assert listed_ids(on(root)) == before
    assert (root / "runtime" / "index.sqlite").exists()


def test_damaged_database_file_is_rebuilt(root: Path) -> None:
    tracker = on(root)
    before = listed_ids(tracker)
    database = root / "runtime" / "index.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    database.write_bytes(b"this is not a database" * 100)
    assert listed_ids(on(root)) == before


def test_database_of_another_layout_is_rebuilt(root: Path) -> None:
    before = listed_ids(on(root))
    with sqlite3.connect(root / "runtime" / "index.sqlite") as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'version'")
    assert listed_ids(on(root)) == before


def test_index_off_reads_files_and_creates_nothing(root: Path) -> None:
    tracker = off(root)
    assert listed_ids(tracker)
    assert not (root / "runtime" / "index.sqlite").exists()


# ---------------------------------------------------------------- writes


def test_write_through_tracker_updates_index_without_parsing(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    receipt = tracker.create({"title": "Quixotic gearbox", "type": "Chore", "tags": ["infra"]})
    row = (
        fresh(tracker)
        .db.execute("SELECT title, live FROM entries WHERE id = ?", (receipt["id"],))
        .fetchone()
    )
    assert row == ("Quixotic gearbox", 1)
    assert fresh(tracker).last_refresh.parsed == 0  # type: ignore[union-attr]
    assert [h["id"] for h in search(tracker, "quixotic")["hits"]] == [receipt["id"]]
    tracker.close(receipt["id"], "done in the test")
    assert receipt["id"] not in [r["id"] for r in list_items(tracker)["items"]]
    tracker.delete(receipt["id"])
    assert receipt["id"] not in listed_ids(tracker)


def test_type_change_moves_the_row_to_the_new_folder(root: Path) -> None:
    tracker = on(root)
    task = listed_ids(tracker, type="Task")[0]
    tracker.update(task, {"type": "Issue"})
    assert fresh(tracker).path_of(task) == root / "issues" / f"{task}.toon"
    same(root, lambda t: list_items(t, type="Issue", include_terminal=True))


# ---------------------------------------------------------------- odd workspaces


def test_duplicate_id_in_two_folders_uses_the_first_as_a_scan_does(root: Path) -> None:
    path = first_file(root, "chores")
    shutil.copy(path, root / "tasks" / path.name)
    (root / "chores" / path.name).write_text(
        path.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: Shadow ", 1),
        encoding="utf-8",
    )
    same(root, lambda t: list_items(t, include_terminal=True, sort="id"))
    same(root, lambda t: next_items(t, now=NOW, limit=40))


def test_parent_cycle_gives_the_same_next(root: Path) -> None:
    tracker = off(root)
    a, b = listed_ids(tracker, type="Task", status="open")[:2]
    for child, parent in ((a, b), (b, a)):
        path = next(root.glob(f"*/{child}.toon"))
        lines = [
            ln
            for ln in path.read_text(encoding="utf-8").splitlines()
            if not ln.startswith("parent: ")
        ]
        lines.insert(
            lines.index(next(ln for ln in lines if ln.startswith("author: "))) + 1,
            f"parent: {parent}",
        )
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    same(root, lambda t: next_items(t, now=NOW, limit=40))
    same(root, lambda t: context(t, now=NOW))


def test_schema_with_new_type_folder_is_indexed(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    types = json.loads((root / "schema" / "types.json").read_text(encoding="utf-8"))
    types["definitions"] = [{"name": "Spike", "folder": "spikes"}]
    (root / "schema" / "types.json").write_text(json.dumps(types), encoding="utf-8")
    (root / "spikes").mkdir()
    source = first_file(root)
    text = source.read_text(encoding="utf-8")
    (root / "spikes" / "pm-sp01.toon").write_text(
        text.replace(f"id: {source.stem}", "id: pm-sp01", 1).replace(
            "type: Task", "type: Spike", 1
        ),
        encoding="utf-8",
    )
    same(root, lambda t: list_items(t, type="Spike", include_terminal=True))
    assert listed_ids(on(root), type="Spike") == ["pm-sp01"]


def test_concurrent_trackers_share_one_index(root: Path) -> None:
    first, second = on(root), on(root)
    fresh(first)
    receipt = second.create({"title": "Made by the second process"})
    assert receipt["id"] in listed_ids(first)


def _all_files(root: Path) -> Iterator[Path]:
    yield from sorted(root.glob("*/*.toon"))


def test_fast_reader_decodes_every_generated_file_like_the_full_decoder(root: Path) -> None:
    import toon_format

    from pm_core.tracker.storage.fastread import read_record

    for path in _all_files(root):
        text = path.read_text(encoding="utf-8")
        record = read_record(text)
        assert record is not None, f"{path.name} fell back to the full decoder"
        expected = toon_format.decode(text)
        assert list(record.items()) == list(expected.items())
        assert [type(v) for v in record.values()] == [type(v) for v in expected.values()]


# ---------------------------------------------------------------- folders mode


def _settings(root: Path, **index: Any) -> None:
    path = root / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["index"] = index
    path.write_text(json.dumps(settings), encoding="utf-8")


def test_folders_mode_sees_added_and_removed_files_at_once(root: Path) -> None:
    _settings(root, verify="folders", full_check_seconds=3600)
    tracker = on(root)
    fresh(tracker)
    fresh(tracker)  # the full check is stamped; from now on only folders are stat-ed
    source = first_file(root)
    text = source.read_text(encoding="utf-8").replace(f"id: {source.stem}", "id: pm-zz98", 1)
    (root / "chores" / "pm-zz98.toon").write_text(text, encoding="utf-8")
    source.unlink()
    ids = listed_ids(tracker)
    assert "pm-zz98" in ids
    assert source.stem not in ids


def test_folders_mode_sees_in_place_edits_at_the_next_full_check(root: Path) -> None:
    _settings(root, verify="folders", full_check_seconds=3600)
    tracker = on(root)
    fresh(tracker)
    fresh(tracker)
    path = first_file(root)
    text = path.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace("\ntitle: ", "\ntitle: Marmalade ", 1))
    # Within the window the folder is unchanged, so the edit is not seen yet...
    assert search(tracker, "marmalade")["hits"] == []
    _settings(root, verify="folders", full_check_seconds=0)
    # ...and a full check (here: every read) finds it.
    assert [h["id"] for h in search(on(root), "marmalade")["hits"]] == [path.stem]


def test_unknown_verify_mode_is_a_clear_error(root: Path) -> None:
    from pm_core.tracker.model.errors import UsageError

    _settings(root, verify="sometimes")
    with pytest.raises(UsageError, match="verify mode 'sometimes'"):
        list_items(on(root))


def _vocabulary(root: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(root / "runtime" / "index.sqlite") as db:
        return sorted(db.execute("SELECT term, doc FROM fts_vocab").fetchall())


def test_search_index_after_changes_equals_a_fresh_build(root: Path) -> None:
    tracker = on(root)
    fresh(tracker)
    made = tracker.create({"title": "Gondola pulley", "description": "cable car"})["id"]
    tracker.update(made, {"title": "Gondola winch"})
    task = listed_ids(tracker, type="Task", status="open")[0]
    tracker.add_log("comments", task, "xylophone tuning")
    gone = listed_ids(tracker, type="Chore")[0]
    tracker.delete(gone)
    dup = first_file(root, "issues")
    shutil.copy(dup, root / "chores" / dup.name)  # a duplicate appears after the build
    edited = first_file(root, "features")
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: Quokka ", 1),
        encoding="utf-8",
    )
    fresh(tracker)
    incremental = _vocabulary(root)
    shutil.rmtree(root / "runtime")
    fresh(on(root))
    assert incremental == _vocabulary(root)
    same(root, lambda t: list_items(t, include_terminal=True, sort="id"))
    # A file scan scores duplicate files as separate documents; the index, like
    # list and next, takes the first. Without the duplicate, the scores agree.
    (root / "chores" / dup.name).unlink()
    same(root, lambda t: search(t, "gondola quokka xylophone", mode="bm25"))


def test_first_build_with_progress_draws_a_line_on_stderr(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pm_core.tracker.index.access import config

    built = ReadIndex(root, config(on(root)), progress=True)
    try:
        built.refresh()
    finally:
        built.close()
    err = capsys.readouterr().err
    assert "indexing 300/300 items" in err
    assert "indexed 300 items in " in err
    assert err.endswith(" s\n")


def test_index_busy_with_another_writer_falls_back_and_keeps_the_database(root: Path) -> None:
    before = listed_ids(on(root))
    _settings(root, wait_seconds=0.1)
    database = root / "runtime" / "index.sqlite"
    source = first_file(root)
    (root / "tasks" / "pm-zz97.toon").write_text(
        source.read_text(encoding="utf-8").replace(f"id: {source.stem}", "id: pm-zz97", 1),
        encoding="utf-8",
    )
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # as a long first build would
    try:
        # The refresh cannot write: this read scans the files instead...
        during = listed_ids(on(root))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert database.exists()  # ...and leaves the other writer's database alone
    assert set(during) == set(listed_ids(off(root)))
    assert set(listed_ids(on(root))) == set(during)
    assert len(during) == len(before) + 1


def test_bad_index_wait_setting_is_a_clear_error(root: Path) -> None:
    from pm_core.tracker.model.errors import UsageError

    _settings(root, wait_seconds="soon")
    with pytest.raises(UsageError, match=r"index\.wait_seconds must be a number"):
        list_items(on(root))


def test_write_does_not_wait_for_a_busy_index_and_the_next_read_catches_up(root: Path) -> None:
    import time

    tracker = on(root)
    fresh(tracker)
    holder = sqlite3.connect(root / "runtime" / "index.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        made = tracker.create({"title": "Written while the index was busy"})["id"]
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert made in listed_ids(on(root))


def test_context_without_a_second_connection_reads_everything_on_the_first(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pm_core.tracker.index import rank as indexrank
    from pm_core.tracker.index import score as indexscore

    options: dict[str, Any] = {"limit": 10, "parent": None, "token_budget": None, "now": NOW}
    both = indexrank.context(on(root), depth="brief", section=None, **options)
    assert both is not None and both["summary"]["total"] > 0

    asked: list[Path] = []

    def refused(path: Path) -> Any:
        asked.append(path)
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(indexscore, "reader", refused)
    assert indexrank.context(on(root), depth="brief", section=None, **options) == both
    assert asked, "the second connection should have been tried"


def test_a_failure_beside_the_main_connection_reaches_the_caller(root: Path) -> None:
    from pm_core.tracker.index.rank import beside
    from pm_core.tracker.index.source import Source

    tracker = on(root)
    index = indexing.fresh(tracker)
    assert index is not None

    def broken(source: Source) -> int:
        raise LookupError("side work failed")

    with Source(tracker, index, NOW) as source:
        assert beside(source, lambda other: other.summary(None)["total"])() > 0
        wait = beside(source, broken)
        with pytest.raises(LookupError, match="side work failed"):
            wait()

"""Building the read index: worker processes, row ids, and what a bulk load puts back."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from pm_core.tracker.api import Tracker
from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.parse import Context, Rows, parse_rows, parsed_batches
from pm_core.tracker.index.schema import STATEMENTS
from pm_core.tracker.index.write import GUARDED_TRIGGERS, STALE_GUARD


def _listing(root: Path) -> tuple[list[str], list[tuple[int, int, int]]]:
    rels = sorted(
        f"{folder.name}/{path.name}"
        for folder in root.iterdir()
        if folder.is_dir()
        for path in folder.glob("*.toon")
    )
    stats = [os.stat(root / rel) for rel in rels]
    return rels, [(st.st_size, st.st_mtime_ns, st.st_ino) for st in stats]


def _context(root: Path) -> Context:
    folders = sorted({rel.partition("/")[0] for rel in _listing(root)[0]})
    return Context({f: n for n, f in enumerate(folders)}, (), True, 0)


def test_worker_processes_give_the_rows_one_process_gives(root: Path) -> None:
    rels, stats = _listing(root)
    context = _context(root)
    serial = parse_rows(str(root), rels, stats, 7, context)
    batches = list(parsed_batches(str(root), rels, stats, 7, context, parallel=True, job_files=37))
    assert len(batches) == -(-len(rels) // 37)
    merged = Rows()
    for rows in batches:
        for name in ("entries", "records", "edges", "docs", "fts", "racy", "ids"):
            getattr(merged, name).extend(getattr(rows, name))
    for name in ("entries", "records", "edges", "docs", "fts", "racy", "ids"):
        assert getattr(merged, name) == getattr(serial, name), name
    # Row ids follow the sorted file list from the first id on.
    assert [row[0] for row in merged.entries] == list(range(7, 7 + len(rels)))


def test_a_vanished_file_is_skipped_and_keeps_the_other_row_ids(root: Path) -> None:
    rels, stats = _listing(root)
    (root / rels[1]).unlink()
    rows = Rows.load(parse_rows(str(root), rels[:3], stats[:3], 1, _context(root)).dump())
    assert [row[0] for row in rows.entries] == [1, 3]
    assert rows.parsed == 2


def test_a_corrupt_file_becomes_a_row_with_its_error(root: Path) -> None:
    rels, _ = _listing(root)
    (root / rels[0]).write_text("title: no id here\n", encoding="utf-8")
    _, stats = _listing(root)
    rows = parse_rows(str(root), rels[:2], stats[:2], 1, _context(root))
    assert rows.corrupt == 1
    assert rows.entries[0][10] is not None and "id" in rows.entries[0][10]
    assert len(rows.records) == 1


def test_a_pipe_under_an_item_name_is_a_corrupt_row_not_a_hang(root: Path) -> None:
    rels, _ = _listing(root)
    (root / rels[0]).unlink()
    os.mkfifo(root / rels[0])  # opening it for reading would wait for a writer
    _, stats = _listing(root)
    rows = parse_rows(str(root), rels[:2], stats[:2], 1, _context(root))
    assert rows.corrupt == 1
    assert rows.entries[0][10] is not None
    assert len(rows.records) == 1


def test_first_build_puts_back_every_index_and_trigger_of_the_schema(root: Path) -> None:
    index = indexing.fresh(Tracker(root, author="alice", env={}))
    assert index is not None
    db = sqlite3.connect(index.path)
    try:
        stored = dict(
            db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') "
                "AND sql IS NOT NULL"
            ).fetchall()
        )
    finally:
        db.close()
    expected = {
        statement.split()[2]: statement
        for statement in STATEMENTS
        if statement.startswith(("CREATE INDEX", "CREATE TRIGGER"))
    }
    assert stored == expected


def test_every_trigger_guarded_by_stale_facts_is_dropped_for_a_bulk_load() -> None:
    guarded = {
        statement.split()[2]
        for statement in STATEMENTS
        if statement.startswith("CREATE TRIGGER") and f"{STALE_GUARD} BEGIN" in statement
    }
    assert guarded
    assert {name for name, _ in GUARDED_TRIGGERS} == guarded

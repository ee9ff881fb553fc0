"""Applying file changes to the read index, inside one write transaction.

A :class:`Writer` drops rows of vanished or changed files, parses new ones, then
re-derives what spans files (live ids, documents, parents, parent cycles).
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pm_core.tracker.index.db import PARALLEL_MIN, RACY_NS
from pm_core.tracker.index.derived import STALE_GUARD
from pm_core.tracker.index.parse import Context, Rows
from pm_core.tracker.index.rows import (
    DOC_COLUMNS,
    GROUPS,
    ITEM_COLUMNS,
    digest16,
    doc_values,
    fts_row,
    unpack_item,
)
from pm_core.tracker.index.schema import FTS_COLUMNS, SECONDARY_INDEXES, STATEMENTS
from pm_core.tracker.model.item import Item

if TYPE_CHECKING:
    from pm_core.tracker.index.db import Listing, ReadIndex

#: A trigger whose WHEN clause ends in ``AND STALE_GUARD`` (no OR): it records
#: nothing while the derived facts (:mod:`pm_core.tracker.index.derived`) are stale.
_GUARDED = re.compile(
    r"CREATE TRIGGER (\w+) (?:(?!\bWHEN\b)[^;])*? WHEN (?:(?:(?!\bOR\b)[^;])*? AND )?"
    + re.escape(STALE_GUARD)
    + r" BEGIN ",
    re.DOTALL,
)
#: ``(name, CREATE TRIGGER statement)`` of the schema's triggers whose WHEN clause
#: is ``... AND STALE_GUARD`` (no OR): inert while the facts are stale.
GUARDED_TRIGGERS: tuple[tuple[str, str], ...] = tuple(
    (match.group(1), statement)
    for statement in STATEMENTS
    if (match := _GUARDED.match(statement)) is not None
)

#: FTS5's own default: later writes merge segments as they go.
FTS_AUTOMERGE = 4
#: Past this many changed rows, derived tables are rebuilt in bulk.
BULK_MIN = 1500

_ENTRY_COLUMNS = (
    "rid",
    "live",
    "path",
    "folder",
    "name",
    "frank",
    "size",
    "mtime_ns",
    "ino",
    "digest",
    "error",
    "hint",
    "ntokens",
    *ITEM_COLUMNS,
)
_INSERT_ENTRY = (
    f"INSERT INTO entries({', '.join(_ENTRY_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_ENTRY_COLUMNS))})"
)
_INSERT_DOC = f"INSERT INTO docs(rid, {', '.join(DOC_COLUMNS)}) VALUES ({', '.join('?' * (1 + len(DOC_COLUMNS)))})"
_INSERT_FTS = f"INSERT INTO fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES ({', '.join('?' * (1 + len(FTS_COLUMNS)))})"
#: A contentless FTS row is deleted by giving the tokens it was inserted with.
_DELETE_FTS = f"INSERT INTO fts(fts, rowid, {', '.join(FTS_COLUMNS)}) VALUES ('delete', {', '.join('?' * (1 + len(FTS_COLUMNS)))})"
_GROUP_LIST = ", ".join(f"g_{g}" for g in GROUPS)


class Writer:
    """One refresh's (or one write's) changes to the index."""

    def __init__(self, index: ReadIndex, now_ns: int) -> None:
        self.index = index
        self.db = index.db
        self.root = index.root
        self.folders = index.config.folders
        self.searchable = index.config.searchable
        self.frank = {folder: n for n, folder in enumerate(self.folders)}
        self.now_ns = now_ns
        self.parsed = 0
        self.removed = 0
        self.corrupt = 0
        self.touched_ids: set[str] = set()
        self.sources: set[str] = set()
        self.pending_docs: dict[int, tuple[Any, ...]] = {}
        self.bulk = False
        self.next_rid: int | None = None
        #: Whether a progress line is open on stderr (the refresh closes it).
        self.showed_progress = False
        if not self.db.in_transaction:
            # A first build (into an empty index) is not synced to disk: the item
            # files are the truth, and a build lost to a power cut is redone.
            # Every other write syncs as the connection was opened (the WAL
            # checkpoint at the end of a 100,000-item build is most of a second).
            empty = self.db.execute("SELECT 1 FROM entries LIMIT 1").fetchone() is None
            self.db.execute(f"PRAGMA synchronous={'OFF' if empty else 'NORMAL'}")

    # ------------------------------------------------------------ refresh

    def apply(
        self,
        sweep: dict[str, Listing],
        changed: Sequence[str],
        stale_folders: Sequence[str],
        racy: Sequence[str],
        digests: dict[str, bytes],
        dirs: dict[str, tuple[int, int]],
    ) -> None:
        """Bring rows in line with ``sweep`` for the ``changed`` folders and racy files."""
        db = self.db
        order = json.dumps(list(self.folders))
        row = db.execute("SELECT value FROM meta WHERE key = 'folders'").fetchone()
        reorder = row is not None and row[0] != order
        if reorder:
            for folder, rank in self.frank.items():
                db.execute("UPDATE entries SET frank = ? WHERE folder = ?", (rank, folder))
        removes: list[int] = []
        parses: dict[str, tuple[int, int, int]] = {}
        for folder in stale_folders:
            removes.extend(
                r[0] for r in db.execute("SELECT rid FROM entries WHERE folder = ?", (folder,))
            )
        for folder in changed:
            old = {
                name: (size, mtime, ino, rid)
                for name, size, mtime, ino, rid in db.execute(
                    "SELECT name, size, mtime_ns, ino, rid FROM entries WHERE folder = ?",
                    (folder,),
                )
            }
            for name, size, mtime, ino in sweep[folder]:
                prev = old.pop(name, None)
                if prev is None or prev[:3] != (size, mtime, ino):
                    parses[f"{folder}/{name}"] = (size, mtime, ino)
            removes.extend(prev[3] for prev in old.values())
        self.recheck_racy(racy, parses, sweep)
        # Changed files are replaced: their old rows go, new rows come.
        if parses:
            removes.extend(self.rids_of(list(parses)))
        self.bulk = reorder or not digests or len(parses) + len(removes) >= BULK_MIN
        if row is None:
            self.bulk = True
        self.remove_rows(sorted(set(removes)))
        # Filling an empty index: build the secondary indexes once, after the rows.
        empty = self.bulk and db.execute("SELECT 1 FROM entries LIMIT 1").fetchone() is None
        inert = self._inert_triggers() if empty else ()
        if empty:
            for name, _ in SECONDARY_INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
            # No incremental merging of FTS segments while it fills (~15% of
            # its insert time); SQLite still merges a level grown too deep.
            db.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
        for name, _ in inert:
            db.execute(f"DROP TRIGGER IF EXISTS {name}")
        try:
            try:
                self.parse_and_store(parses)
            finally:
                if empty:
                    for _, create in SECONDARY_INDEXES:
                        db.execute(create)
                    db.execute(f"INSERT INTO fts(fts, rank) VALUES ('automerge', {FTS_AUTOMERGE})")
            if self.bulk:
                self.derive_all()
            else:
                self.derive(self.touched_ids)
        finally:
            for _, create in inert:
                db.execute(create)
        db.executemany(
            "INSERT OR REPLACE INTO folders(folder, digest, dir_mtime, dir_ino) VALUES (?,?,?,?)",
            [(folder, digests[folder], *dirs[folder]) for folder in changed],
        )
        db.executemany("DELETE FROM folders WHERE folder = ?", [(f,) for f in stale_folders])
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('folders', ?)", (order,))

    def _inert_triggers(self) -> tuple[tuple[str, str], ...]:
        """Triggers that do nothing now: each is guarded by :data:`STALE_GUARD`, and it holds.

        A bulk load into an empty index drops them and creates them again
        after its rows are in (same transaction), rather than testing the
        guard once per inserted row.
        """
        try:
            row = self.db.execute("SELECT stale FROM derived_state").fetchone()
        except sqlite3.OperationalError:
            return ()  # no such table: nothing is guarded by it
        if row is None or row[0] == 0:
            return ()
        return GUARDED_TRIGGERS

    def recheck_racy(
        self,
        racy: Sequence[str],
        parses: dict[str, tuple[int, int, int]],
        sweep: dict[str, Listing],
    ) -> None:
        """Re-read files indexed too soon after their last change; parse those that differ."""
        if not racy:
            return
        current = {
            f"{folder}/{name}": (size, mtime, ino)
            for folder, listing in sweep.items()
            for name, size, mtime, ino in listing
        }
        for rel in racy:
            stat = current.get(rel)
            if stat is None or rel in parses:
                continue  # gone (the folder diff removes it) or already queued
            row = self.db.execute("SELECT digest FROM entries WHERE path = ?", (rel,)).fetchone()
            if row is None or row[0] is None:
                parses[rel] = stat  # nothing to compare with (a write-through row): parse it
                continue
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            if digest16(data) != row[0]:
                parses[rel] = stat
            elif stat[1] < self.now_ns - self.index_racy_ns():
                self.db.execute("DELETE FROM racy WHERE path = ?", (rel,))

    @staticmethod
    def index_racy_ns() -> int:
        """How recent an mtime must be for its file to count as racy."""

        return RACY_NS

    def rids_of(self, rels: Sequence[str]) -> list[int]:
        """The row ids of the files ``rels`` (relative paths), in batches."""
        out: list[int] = []
        for start in range(0, len(rels), 500):
            chunk = rels[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.extend(
                r[0]
                for r in self.db.execute(f"SELECT rid FROM entries WHERE path IN ({marks})", chunk)
            )
        return out

    # ------------------------------------------------------------ rows

    def remove_rows(self, rids: Sequence[int]) -> None:
        """Delete rows (and, row by row, their FTS entries and parent sources)."""
        if not rids:
            return
        db = self.db
        self.removed += len(rids)
        for start in range(0, len(rids), 500):
            chunk = list(rids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT rid, id, live, path FROM entries WHERE rid IN ({marks})", chunk
            ).fetchall()
            for rid, item_id, live, _ in rows:
                if item_id is not None:
                    self.touched_ids.add(item_id)
                if live:
                    self._unlive(rid)
            db.execute(f"DELETE FROM edges WHERE owner IN ({marks})", chunk)
            db.execute(f"DELETE FROM records WHERE rid IN ({marks})", chunk)
            db.execute(f"DELETE FROM entries WHERE rid IN ({marks})", chunk)
            db.executemany("DELETE FROM racy WHERE path = ?", [(r[3],) for r in rows])

    def parse_and_store(self, parses: dict[str, tuple[int, int, int]]) -> None:
        """Parse the files ``parses`` names (path -> stat triple) and insert their rows."""
        if not parses:
            return
        from pm_core.tracker.index.parse import parsed_batches

        rels = sorted(parses)
        progress = self.index.show_progress(len(rels))
        first = self._take_rids(len(rels))
        batches = parsed_batches(
            str(self.root),
            rels,
            [parses[rel] for rel in rels],
            first,
            self._context(),
            parallel=len(rels) >= PARALLEL_MIN,
        )
        done = 0
        for rows in batches:
            self._store_rows(rows)
            done += rows.parsed
            if progress:
                sys.stderr.write(f"\rindexing {done:,}/{len(rels):,} items")
                sys.stderr.flush()
        if progress:
            # The caller ends the line once links and search terms are in too.
            sys.stderr.write(f"\rindexed {len(rels):,} items, finishing...")
            sys.stderr.flush()
            self.showed_progress = True

    def _context(self) -> Context:
        return Context(self.frank, self.searchable, self.bulk, self.now_ns - self.index_racy_ns())

    def _take_rids(self, count: int) -> int:
        """Reserve ``count`` row ids; the first is returned."""
        if self.next_rid is None:
            row = self.db.execute("SELECT COALESCE(MAX(rid), 0) FROM entries").fetchone()
            self.next_rid = int(row[0]) + 1
        first = self.next_rid
        self.next_rid += count
        return first

    def _store_rows(self, rows: Rows) -> None:
        """Insert parsed files (rows, edges, and in bulk mode their search documents)."""
        db = self.db
        self.parsed += rows.parsed
        self.corrupt += rows.corrupt
        self.touched_ids.update(rows.ids)
        db.executemany(_INSERT_ENTRY, rows.entries)
        db.executemany("INSERT INTO records(rid, record) VALUES (?, ?)", rows.records)
        db.executemany(
            "INSERT INTO edges(owner, phase, seq, source, target, kind) VALUES (?,?,?,?,?,?)",
            rows.edges,
        )
        if self.bulk:
            db.executemany(_INSERT_DOC, rows.docs)
            db.executemany(_INSERT_FTS, rows.fts)
        else:
            for doc, fts in zip(rows.docs, rows.fts, strict=True):
                self.pending_docs[doc[0]] = (*doc[1:], fts[1:])
        db.executemany("INSERT OR IGNORE INTO racy(path) VALUES (?)", rows.racy)

    def record_one(self, rel: str, item: Item | None) -> None:
        """Replace one file's row with what the SDK just wrote (``None``: removed)."""
        rids = self.rids_of([rel])
        self.remove_rows(rids)
        # The folder's stored listing digest no longer describes the rows: the
        # next refresh compares that folder file by file (no parsing needed).
        self.db.execute("DELETE FROM folders WHERE folder = ?", (rel.partition("/")[0],))
        if item is not None:
            path = self.root / rel
            try:
                st = path.stat()
            except OSError:
                st = None
            if st is not None:
                stat = (st.st_size, st.st_mtime_ns, st.st_ino)
                # Written this moment: racy until its mtime is safely in the past.
                self.now_ns = max(self.now_ns, st.st_mtime_ns)
                rows = Rows()
                # No content digest: a racy row without one is parsed again, not
                # compared, when a later read confirms it; a write need not hash.
                rows.add(self._take_rids(1), rel, stat, None, item, self._context())
                self._store_rows(rows)
        self.derive(self.touched_ids)

    # ------------------------------------------------------------ derived state

    def _unlive(self, rid: int) -> None:
        """Take a live row out of the search index and queue its parent sources."""
        self._drop_doc(rid)
        self._queue_sources(rid)

    def _drop_doc(self, rid: int) -> None:
        # The FTS table keeps no text: deleting a row needs the tokens it was
        # given, recomputed from the stored groups by the same rule.
        db = self.db
        row = db.execute(f"SELECT {_GROUP_LIST} FROM docs WHERE rid = ?", (rid,)).fetchone()
        if row is not None:
            db.execute(_DELETE_FTS, (rid, *fts_row(row)))
            db.execute("DELETE FROM docs WHERE rid = ?", (rid,))

    def _add_doc(self, rid: int) -> None:
        doc = self._doc_for(rid)
        if doc is not None:
            self.db.execute(_INSERT_DOC, (rid, *doc[:-1]))
            self.db.execute(_INSERT_FTS, (rid, *doc[-1]))
            self.db.executemany(
                "INSERT OR IGNORE INTO vocab(term) VALUES (?)",
                [(t,) for t in {t for tokens in doc[-1] if tokens for t in tokens.split()}],
            )

    def _queue_sources(self, rid: int) -> None:
        self.sources.update(
            r[0]
            for r in self.db.execute(
                "SELECT source FROM edges WHERE owner = ? AND kind = 'parent'", (rid,)
            )
        )

    def _doc_for(self, rid: int) -> tuple[Any, ...] | None:
        doc = self.pending_docs.get(rid)
        if doc is not None:
            return doc
        row = self.db.execute("SELECT record FROM records WHERE rid = ?", (rid,)).fetchone()
        if row is None or row[0] is None:
            return None
        return doc_values(unpack_item(row[0]), self.searchable)

    def derive(self, ids: set[str]) -> None:
        """Re-pick the live file of each id; keep docs, FTS and parents in step."""
        db = self.db
        for item_id in sorted(ids):
            rows = db.execute(
                "SELECT rid, live, error FROM entries WHERE id = ? ORDER BY frank, name",
                (item_id,),
            ).fetchall()
            winner = next((rid for rid, _, error in rows if error is None), None)
            for rid, live, _ in rows:
                should = rid == winner
                if should == bool(live):
                    continue
                db.execute("UPDATE entries SET live = ? WHERE rid = ?", (int(should), rid))
                if should:
                    self._add_doc(rid)
                    self._queue_sources(rid)
                else:
                    self._unlive(rid)
        self._derive_parents(self.sources)
        self.sources = set()

    def _derive_parents(self, sources: set[str]) -> None:
        db = self.db
        for source in sorted(sources):
            row = db.execute(
                "SELECT e.target FROM edges e JOIN entries o ON o.rid = e.owner "
                "WHERE e.source = ? AND e.kind = 'parent' AND o.live = 1 "
                "ORDER BY e.phase, o.id, e.seq LIMIT 1",
                (source,),
            ).fetchone()
            if row is None:
                db.execute("DELETE FROM parents WHERE source = ?", (source,))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO parents(source, target) VALUES (?, ?)", (source, row[0])
                )
        if sources:
            known = {r[0] for r in db.execute("SELECT node FROM hier_cycle")}
            self._mark_cycles(sources | known, self._parent_lookup)

    def _parent_lookup(self, node: str) -> str | None:
        row = self.db.execute("SELECT target FROM parents WHERE source = ?", (node,)).fetchone()
        return None if row is None else str(row[0])

    def _mark_cycles(self, nodes: set[str], parent_of: Any) -> None:
        """Record which of ``nodes`` sit on a parent cycle (and forget the others).

        Each id has at most one parent, so following parents from a node either
        ends or enters a cycle; a walk stops at the first node an earlier walk
        already settled, which keeps the whole pass linear.
        """
        on_cycle: set[str] = set()
        settled: set[str] = set()
        for node in nodes:
            path: list[str] = []
            index: dict[str, int] = {}
            current: str | None = node
            while current is not None and current not in settled and current not in index:
                index[current] = len(path)
                path.append(current)
                current = parent_of(current)
            if current is not None and current in index:
                on_cycle.update(path[index[current] :])
            settled.update(path)
        self.db.executemany("DELETE FROM hier_cycle WHERE node = ?", [(n,) for n in nodes])
        self.db.executemany(
            "INSERT OR IGNORE INTO hier_cycle(node) VALUES (?)", [(n,) for n in sorted(on_cycle)]
        )

    def derive_all(self) -> None:
        """Bulk re-derivation: live flags, docs, FTS, parents and cycles."""
        db = self.db
        # Rows went in live when readable; only ids with several files (or a
        # row set that is not exactly one live file) need their winner picked.
        doubtful = [
            r[0]
            for r in db.execute(
                "SELECT id FROM entries WHERE error IS NULL GROUP BY id "
                "HAVING COUNT(*) > 1 OR SUM(live) != 1"
            )
        ]
        for item_id in doubtful:
            rows = db.execute(
                "SELECT rid, live FROM entries WHERE id = ? AND error IS NULL ORDER BY frank, name",
                (item_id,),
            ).fetchall()
            for n, (rid, live) in enumerate(rows):
                should = n == 0
                if should != bool(live):
                    db.execute("UPDATE entries SET live = ? WHERE rid = ?", (int(should), rid))
                if not should:
                    self._drop_doc(rid)
                elif db.execute("SELECT 1 FROM docs WHERE rid = ?", (rid,)).fetchone() is None:
                    self._add_doc(rid)
        db.execute("DELETE FROM vocab")
        db.execute("INSERT INTO vocab(term) SELECT term FROM fts_vocab")
        db.execute("DELETE FROM parents")
        db.execute(
            "INSERT INTO parents(source, target) SELECT source, target FROM ("
            "SELECT e.source AS source, e.target AS target, ROW_NUMBER() OVER ("
            "PARTITION BY e.source ORDER BY e.phase, o.id, e.seq) AS n "
            "FROM edges e JOIN entries o ON o.rid = e.owner "
            "WHERE e.kind = 'parent' AND o.live = 1) WHERE n = 1"
        )
        parents = dict(db.execute("SELECT source, target FROM parents").fetchall())
        db.execute("DELETE FROM hier_cycle")
        self._mark_cycles(set(parents), parents.get)

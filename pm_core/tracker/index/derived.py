"""Whole-tracker facts ``next`` and ``context`` need, kept in the index as rows.

Open blockers, open dependents and containers depend on other items; triggers mark
the ids a change touches and a ranking read recomputes only those.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pm_core.tracker.index.batch import chunks

if TYPE_CHECKING:
    import sqlite3

#: Past this many dirty ids, recomputing everything is cheaper than one id at a time.
BULK_DIRTY = 2000

#: Ends the WHEN clause of every trigger: a trigger records nothing while the facts
#: are stale (a first build leaves such triggers out altogether, see indexwrite).
STALE_GUARD = "(SELECT stale FROM derived_state) = 0"
_GUARD = STALE_GUARD


def _trigger(name: str, when: str, table: str, condition: str, body: Sequence[str]) -> str:
    cond = f"WHEN {condition} AND {_GUARD}" if condition else f"WHEN {_GUARD}"
    statements = " ".join(f"{s};" for s in body)
    return f"CREATE TRIGGER {name} {when} ON {table} {cond} BEGIN {statements} END"


def _mark(*exprs: str) -> str:
    selects = " UNION ".join(f"SELECT {e} WHERE {e} IS NOT NULL" for e in exprs)
    return f"INSERT OR IGNORE INTO dirty(id) {selects}"


def _mark_owned(rid: str) -> str:
    return (
        "INSERT OR IGNORE INTO dirty(id) "
        f"SELECT source FROM edges WHERE owner = {rid} AND kind = 'blocked_by' "
        f"UNION SELECT target FROM edges WHERE owner = {rid} AND kind = 'blocked_by'"
    )


#: Tables and triggers, appended to the index schema (statements with their own ``;``).
STATEMENTS: tuple[str, ...] = (
    "CREATE TABLE derived(id TEXT PRIMARY KEY, unresolved INTEGER NOT NULL DEFAULT 0, "
    "unblocks INTEGER NOT NULL DEFAULT 0, container INTEGER NOT NULL DEFAULT 0, "
    "has_children INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID",
    "CREATE TABLE derived_state(one INTEGER PRIMARY KEY CHECK (one = 1), "
    "stale INTEGER NOT NULL, terminal TEXT NOT NULL)",
    "INSERT INTO derived_state(one, stale, terminal) VALUES (1, 1, '')",
    "CREATE TABLE dirty(id TEXT PRIMARY KEY) WITHOUT ROWID",
    _trigger("entries_ins", "AFTER INSERT", "entries", "new.id IS NOT NULL", [_mark("new.id")]),
    _trigger("entries_del", "AFTER DELETE", "entries", "old.id IS NOT NULL", [_mark("old.id")]),
    _trigger(
        "entries_upd",
        "AFTER UPDATE OF live, status, id",
        "entries",
        "",
        [_mark("old.id", "new.id"), _mark_owned("new.rid")],
    ),
    _trigger(
        "edges_ins",
        "AFTER INSERT",
        "edges",
        "new.kind = 'blocked_by'",
        [_mark("new.source", "new.target")],
    ),
    _trigger(
        "edges_del",
        "AFTER DELETE",
        "edges",
        "old.kind = 'blocked_by'",
        [_mark("old.source", "old.target")],
    ),
    # INSERT OR REPLACE removes the old row without a delete trigger: record the
    # old parent before the insert.
    _trigger(
        "parents_ins",
        "BEFORE INSERT",
        "parents",
        "",
        [
            _mark("new.source", "new.target"),
            "INSERT OR IGNORE INTO dirty(id) SELECT target FROM parents WHERE source = new.source",
        ],
    ),
    _trigger("parents_del", "AFTER DELETE", "parents", "", [_mark("old.source", "old.target")]),
    _trigger(
        "parents_upd",
        "AFTER UPDATE",
        "parents",
        "",
        [_mark("old.source", "old.target", "new.source", "new.target")],
    ),
)

_LIVE_BLOCKING = (
    "edges b CROSS JOIN entries o ON o.rid = b.owner AND o.live = 1 AND b.kind = 'blocked_by'"
)


class Derived:
    """Settles ``dirty`` into ``derived`` for one terminal-status set."""

    def __init__(self, db: sqlite3.Connection, terminal: Iterable[str]) -> None:
        self.db = db
        self.term = sorted(terminal)
        self.marks = ",".join("?" * len(self.term))
        self.key = json.dumps(self.term)

    def _pending(self) -> bool:
        row = self.db.execute("SELECT stale, terminal FROM derived_state").fetchone()
        if row is None or row[0] or row[1] != self.key:
            return True
        return self.db.execute("SELECT 1 FROM dirty LIMIT 1").fetchone() is not None

    def ensure(self) -> None:
        """Bring ``derived`` up to date (a no-op when nothing changed since the last read)."""
        if not self._pending():
            return
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT stale, terminal FROM derived_state").fetchone()
            dirty = [r[0] for r in db.execute("SELECT id FROM dirty")]
            if row is None or row[0] or row[1] != self.key or len(dirty) > BULK_DIRTY:
                self._recompute_all()
            elif dirty:
                self._settle(set(dirty))
            db.execute("DELETE FROM dirty")
            db.execute(
                "INSERT OR REPLACE INTO derived_state(one, stale, terminal) VALUES (1, 0, ?)",
                (self.key,),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ everything

    def _recompute_all(self) -> None:
        db = self.db
        term = self.term
        db.execute("DELETE FROM derived")
        db.execute(
            "INSERT INTO derived(id, unresolved) "
            f"SELECT DISTINCT b.source, 1 FROM {_LIVE_BLOCKING} "
            "LEFT JOIN entries t ON t.id = b.target AND t.live = 1 "
            f"WHERE t.rid IS NULL OR t.status NOT IN ({self.marks})",
            term,
        )
        db.execute(
            "INSERT INTO derived(id, unblocks) "
            f"SELECT b.target, COUNT(DISTINCT b.source) FROM {_LIVE_BLOCKING} "
            "JOIN entries s ON s.id = b.source AND s.live = 1 "
            f"WHERE s.status NOT IN ({self.marks}) GROUP BY b.target "
            "ON CONFLICT(id) DO UPDATE SET unblocks = excluded.unblocks",
            term,
        )
        self._store_containers(self._all_containers())
        db.execute(
            "INSERT INTO derived(id, has_children) SELECT DISTINCT target, 1 FROM parents WHERE 1 "
            "ON CONFLICT(id) DO UPDATE SET has_children = 1"
        )

    def _all_containers(self) -> set[str]:
        db = self.db
        if db.execute("SELECT 1 FROM hier_cycle LIMIT 1").fetchone() is None:
            rows = db.execute(
                "WITH RECURSIVE a(id) AS (SELECT p.target FROM entries i JOIN parents p "
                f"ON p.source = i.id WHERE i.live = 1 AND i.status NOT IN ({self.marks}) "
                "UNION SELECT p.target FROM a JOIN parents p ON p.source = a.id) SELECT id FROM a",
                self.term,
            )
            return {r[0] for r in rows}
        # A parent cycle: walk each chain as the reference does (an item is
        # never its own ancestor), which the recursive query cannot express.
        parent_of = dict(db.execute("SELECT source, target FROM parents").fetchall())
        out: set[str] = set()
        for (item_id,) in db.execute(
            f"SELECT id FROM entries WHERE live = 1 AND status NOT IN ({self.marks})", self.term
        ):
            seen = {item_id}
            current = parent_of.get(item_id)
            while current and current not in seen:
                out.add(current)
                seen.add(current)
                current = parent_of.get(current)
        return out

    def _store_containers(self, ids: Iterable[str]) -> None:
        self.db.executemany(
            "INSERT INTO derived(id, container) VALUES (?, 1) "
            "ON CONFLICT(id) DO UPDATE SET container = 1",
            [(i,) for i in ids],
        )

    # ------------------------------------------------------------ a few ids

    def _settle(self, dirty: set[str]) -> None:
        db = self.db
        sources = set(dirty)
        targets = set(dirty)
        for chunk in chunks(sorted(dirty), 400):
            marks = ",".join("?" * len(chunk))
            sources.update(
                r[0]
                for r in db.execute(
                    f"SELECT source FROM edges WHERE kind = 'blocked_by' AND target IN ({marks})",
                    chunk,
                )
            )
            targets.update(
                r[0]
                for r in db.execute(
                    f"SELECT target FROM edges WHERE kind = 'blocked_by' AND source IN ({marks})",
                    chunk,
                )
            )
        for item_id in sorted(sources):
            row = db.execute(
                f"SELECT 1 FROM {_LIVE_BLOCKING} LEFT JOIN entries t ON t.id = b.target "
                f"AND t.live = 1 WHERE b.source = ? AND (t.rid IS NULL OR t.status NOT IN "
                f"({self.marks})) LIMIT 1",
                [item_id, *self.term],
            ).fetchone()
            self._set(item_id, "unresolved", int(row is not None))
        for item_id in sorted(targets):
            (count,) = db.execute(
                f"SELECT COUNT(DISTINCT b.source) FROM {_LIVE_BLOCKING} "
                "JOIN entries s ON s.id = b.source AND s.live = 1 "
                f"WHERE b.target = ? AND s.status NOT IN ({self.marks})",
                [item_id, *self.term],
            ).fetchone()
            self._set(item_id, "unblocks", int(count))
        for item_id in sorted(dirty):
            row = db.execute(
                "SELECT 1 FROM parents WHERE target = ? LIMIT 1", (item_id,)
            ).fetchone()
            self._set(item_id, "has_children", int(row is not None))
        if db.execute("SELECT 1 FROM hier_cycle LIMIT 1").fetchone() is not None:
            db.execute("UPDATE derived SET container = 0")
            self._store_containers(self._all_containers())
        else:
            self._walk_up(dirty)
        db.execute(
            "DELETE FROM derived WHERE unresolved = 0 AND unblocks = 0 AND container = 0 "
            "AND has_children = 0"
        )

    def _walk_up(self, dirty: set[str]) -> None:
        """Recompute container flags from the dirty ids upward while they change."""
        db = self.db
        queue = set(dirty)
        for item_id in sorted(dirty):
            parent = self._parent(item_id)
            if parent is not None:
                queue.add(parent)
        while queue:
            item_id = queue.pop()
            row = db.execute(
                "SELECT 1 FROM parents p LEFT JOIN entries c ON c.id = p.source AND c.live = 1 "
                "LEFT JOIN derived d ON d.id = p.source WHERE p.target = ? AND "
                f"((c.rid IS NOT NULL AND c.status NOT IN ({self.marks})) OR d.container = 1) "
                "LIMIT 1",
                [item_id, *self.term],
            ).fetchone()
            value = int(row is not None)
            if self._set(item_id, "container", value):
                parent = self._parent(item_id)
                if parent is not None:
                    queue.add(parent)

    def _parent(self, item_id: str) -> str | None:
        row = self.db.execute("SELECT target FROM parents WHERE source = ?", (item_id,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, item_id: str, column: str, value: int) -> bool:
        """Store one fact; whether it changed."""
        row = self.db.execute(f"SELECT {column} FROM derived WHERE id = ?", (item_id,)).fetchone()
        old = 0 if row is None else int(row[0])
        if old == value:
            return False
        self.db.execute(
            f"INSERT INTO derived(id, {column}) VALUES (?, ?) "
            f"ON CONFLICT(id) DO UPDATE SET {column} = excluded.{column}",
            (item_id, value),
        )
        return True

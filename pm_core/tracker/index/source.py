"""Read-index queries for ``next`` and ``context``: candidates, structure, presentation.

Answers with SQL what :mod:`pm_core.tracker.query.ranking` computes by walking a
:class:`~pm_core.tracker.query.view.TrackerView`.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pm_core.tracker.claims.leases import ClaimsConfig, holder_overrides, read_cache
from pm_core.tracker.index.batch import chunks
from pm_core.tracker.index.derived import Derived
from pm_core.tracker.model.item import Item
from pm_core.tracker.model.order import (
    HIGH_LEVEL_TYPES,
    LAST_RANK,
    LAST_STATUSES,
    baseline_sql,
    status_rank_sql,
)
from pm_core.tracker.query.ranking import deadline_pressure_of
from pm_core.tracker.query.rules import ACTIVE_ROLE, BLOCKED_ROLE, statuses_with_role
from pm_core.tracker.query.view import TrackerView
from pm_core.tracker.storage.workspace import tracker_relpath

if TYPE_CHECKING:
    import sqlite3

    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index.db import ReadIndex

#: What a pool row holds, filled from ``entries_baseline`` in baseline order; ``k``
#: (the rowid) is the 1-based position. The holder is the claim principal, else
#: the assignee; :meth:`Source.pool_table` then applies live lease holders.
#: ``held``: someone other than the author holds it; ``blocked_status``: its
#: status has the blocked role; ``decision`` and ``high``: its type.
_POOL_TABLE = (
    "k INTEGER PRIMARY KEY, id TEXT, type TEXT, status TEXT, priority INTEGER, deadline TEXT, "
    "updated_epoch REAL, activity INTEGER, knowledge INTEGER, holder TEXT, expires TEXT, "
    "risk_value REAL, affinity INTEGER, unresolved INTEGER, unblocks INTEGER, dist INTEGER, "
    "held INTEGER, blocked_status INTEGER, decision INTEGER, high INTEGER"
)
_HOLDER = "COALESCE(NULLIF(e.claim_principal, ''), NULLIF(e.assignee, ''))"
#: Whether a holder value names someone other than the author (``?``).
HELD = "(COALESCE({holder}, '') != '' AND {holder} != ?)"
#: Edges of live items. CROSS JOIN keeps SQLite scanning edges first (then one
#: rowid lookup each) instead of walking every live entry for its edges.
_LIVE_EDGES = "edges b CROSS JOIN entries o ON o.rid = b.owner AND o.live = 1"

_TEMP_NAMES = itertools.count()


class Source:
    """One read's access to the index: statuses by role, author, temp tables, the queries.

    Use it as a context manager: entering settles the derived facts and
    registers the reference's deadline function; leaving drops this read's
    temp tables.
    """

    def __init__(
        self,
        tracker: Tracker,
        index: ReadIndex,
        now: datetime,
        db: sqlite3.Connection | None = None,
    ) -> None:
        schema = tracker.schema
        self.tracker = tracker
        self.index = index
        #: ``db``: another connection to the index, whose derived facts a source
        #: on the index's own connection has settled (:meth:`sibling`).
        self._settles = db is None
        self.db = index.db if db is None else db
        self.now = now
        self.author = tracker.author
        self.terminal = schema.terminal_statuses
        self.blocked_statuses = statuses_with_role(schema.statuses, BLOCKED_ROLE)
        self.active_statuses = statuses_with_role(schema.statuses, ACTIVE_ROLE)
        self.term = sorted(self.terminal)
        self.term_marks = ",".join("?" * len(self.term))
        self._temps: list[str] = []

    def __enter__(self) -> Source:
        if self._settles:
            Derived(self.db, self.terminal).ensure()
        now = self.now
        self.db.create_function("pm_deadline_pressure", 1, lambda d: deadline_pressure_of(d, now))
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self._temps:
            self.db.execute(f"DROP TABLE IF EXISTS {name}")
        self._temps.clear()

    @contextlib.contextmanager
    def sibling(self) -> Iterator[Source]:
        """This read on a second, read-only connection, for work on another thread.

        Open it in the thread that uses it, once this source is entered (the
        derived facts are settled then). Each statement reads the latest
        commit, as on the first connection. Raises ``sqlite3.OperationalError``
        when no second connection can be opened.
        """
        from pm_core.tracker.index.score import reader

        db = reader(self.index.path)
        try:
            with Source(self.tracker, self.index, self.now, db) as other:
                yield other
        finally:
            db.close()

    def _temp(self, columns: str) -> str:
        name = f"temp.pm_src_{next(_TEMP_NAMES)}"
        self.db.execute(f"CREATE TABLE {name}({columns})")
        self._temps.append(name)
        return name

    # ------------------------------------------------------------ structure

    def is_live(self, item_id: str) -> bool:
        """Whether ``item_id`` is a readable item."""
        row = self.db.execute(
            "SELECT 1 FROM entries WHERE id = ? AND live = 1", (item_id,)
        ).fetchone()
        return row is not None

    def scope_table(self, item_id: str) -> str:
        """A temp table of every id below ``item_id`` (the item itself excluded, cycle safe)."""
        name = self._temp("id TEXT PRIMARY KEY")
        self.db.execute(
            f"INSERT INTO {name}(id) WITH RECURSIVE d(id) AS (SELECT source FROM parents "
            "WHERE target = ? UNION SELECT p.source FROM parents p JOIN d ON p.target = d.id) "
            "SELECT id FROM d WHERE id != ?",
            (item_id, item_id),
        )
        return name

    def distance_table(self, start: str, max_depth: int) -> str:
        """A temp table of undirected hop distances over hierarchy and blocking edges."""
        name = self._temp("id TEXT PRIMARY KEY, d INTEGER")
        self.db.executemany(
            f"INSERT INTO {name}(id, d) VALUES (?, ?)",
            self.distances(start, max_depth).items(),
        )
        return name

    def distances(self, start: str, max_depth: int) -> dict[str, int]:
        """Undirected hop distance over hierarchy and blocking edges (as the view computes)."""
        distance = {start: 0}
        frontier = [start]
        for depth in range(1, max_depth + 1):
            if not frontier:
                break
            found: set[str] = set()
            for chunk in chunks(frontier, 400):
                marks = ",".join("?" * len(chunk))
                for source, target in self.db.execute(
                    f"SELECT b.source, b.target FROM {_LIVE_EDGES} "
                    "WHERE b.kind IN ('parent', 'blocked_by') "
                    f"AND (b.source IN ({marks}) OR b.target IN ({marks}))",
                    [*chunk, *chunk],
                ):
                    found.add(source)
                    found.add(target)
            frontier = sorted(found - set(distance))
            for other in frontier:
                distance[other] = depth
        return distance

    @contextlib.contextmanager
    def pool_table(
        self,
        where: str,
        params: Sequence[Any],
        *,
        done_first: bool,
        skip_containers: bool,
        scope: str | None,
        dist: str | None,
        index: str = "entries_baseline",
    ) -> Iterator[str]:
        """A temp table of the open live items matching ``where``, in baseline order.

        Rows go in as ``entries_baseline`` yields them, so the rowid ``k`` is
        the baseline position and nothing is sorted. ``done_first``: items
        without children first, then those with children (the reference puts
        completed containers last). ``skip_containers``: leave out items with
        an open item below them. ``index``: the index to read (another than
        ``entries_baseline`` is sorted; ``entries_high`` needs ``where`` to
        state its condition).
        """
        name = self._temp(_POOL_TABLE)
        filters = [f"e.live = 1 AND e.status NOT IN ({self.term_marks}) AND {where}"]
        # When the statuses the index ranks last are terminal, no pool row has
        # one: the index key orders the pool as the baseline does, and a scan
        # of the index stops where they begin. Otherwise the pool is sorted.
        last = self.terminal >= LAST_STATUSES
        scan: list[str] = []
        if last and index == "entries_baseline":
            scan.append(f"{status_rank_sql('e', last=True)} < {LAST_RANK}")
        if scope:
            filters.append(f"e.id IN (SELECT id FROM {scope})")
        if skip_containers:
            filters.append("COALESCE(dv.container, 0) = 0")
        distance = f"(SELECT d FROM {dist} WHERE {dist}.id = e.id)" if dist else "NULL"
        # Items with children are few and listed in ``derived``: the second pass
        # reads them from there (and sorts them) instead of scanning the index again.
        passes = [(f"entries e INDEXED BY {index} LEFT JOIN derived dv ON dv.id = e.id", scan)]
        if done_first:
            passes = [
                (passes[0][0], [*scan, "COALESCE(dv.has_children, 0) = 0"]),
                ("derived dv CROSS JOIN entries e ON e.id = dv.id", ["dv.has_children = 1"]),
            ]
        blocked = sorted(self.blocked_statuses)
        high = sorted(HIGH_LEVEL_TYPES)
        columns = (
            "e.id, e.type, e.status, e.priority, e.deadline, e.updated_epoch, e.activity, "
            f"e.knowledge, {_HOLDER}, e.claim_expires_at, e.risk_value, "
            "COALESCE(e.author = ? OR e.reviewer = ?, 0), COALESCE(dv.unresolved, 0), "
            f"COALESCE(dv.unblocks, 0), {distance}, {HELD.format(holder=_HOLDER)}, "
            f"e.status IN ({','.join('?' * len(blocked))}), e.type = 'Decision', "
            f"e.type IN ({','.join('?' * len(high))})"
        )
        selected = [self.author, self.author, self.author, *blocked, *high]
        for source, extra in passes:
            condition = " AND ".join([*filters, *extra])
            self.db.execute(
                f"INSERT INTO {name}(id, type, status, priority, deadline, updated_epoch, "
                "activity, knowledge, holder, expires, risk_value, affinity, unresolved, unblocks, "
                f"dist, held, blocked_status, decision, high) SELECT {columns} FROM {source} "
                f"WHERE {condition} ORDER BY {baseline_sql('e', last=last)}",
                [*selected, *self.term, *params],
            )
        self._live_holders(name)
        try:
            yield name
        finally:
            self.db.execute(f"DROP TABLE IF EXISTS {name}")
            self._temps.remove(name)

    def _live_holders(self, pool: str) -> None:
        """Expired claims hold nothing; in remote mode cached leases win (as in the view).

        Only a row held with an expiry, or one with a cached lease, can change,
        so only those go through the leases module.
        """

        try:
            remote = ClaimsConfig.from_settings(self.tracker.settings).is_remote
        except Exception:
            remote = False
        rows = self.db.execute(
            f"SELECT id, holder, expires FROM {pool} "
            "WHERE holder IS NOT NULL AND COALESCE(expires, '') != ''"
        ).fetchall()
        leased = sorted(read_cache(self.tracker.root).leases) if remote else []
        for chunk in chunks(leased, 500):
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(
                f"SELECT id, holder, expires FROM {pool} WHERE id IN ({marks})", chunk
            ).fetchall()
        if not rows:
            return
        # A stand-in item with the row's holder as principal holds what the file holds.
        stand_ins = {
            item_id: Item(
                id=item_id, title=item_id, claim_principal=holder, claim_expires_at=expires
            )
            for item_id, holder, expires in rows
        }
        overrides = holder_overrides(self.tracker, stand_ins.values())
        self.db.executemany(
            f"UPDATE {pool} SET holder = ?1, held = {HELD.format(holder='?1')} WHERE id = ?3",
            [(holder, self.author, item_id) for item_id, holder in sorted(overrides.items())],
        )

    def containers_matching(self, where: str, params: Sequence[Any], scope: str | None) -> int:
        """Open live containers matching ``where`` (and ``scope``): the candidates skipped."""
        within = f" AND e.id IN (SELECT id FROM {scope})" if scope else ""
        row = self.db.execute(
            "SELECT COUNT(*) FROM derived dv CROSS JOIN entries e ON e.id = dv.id AND e.live = 1 "
            f"WHERE dv.container = 1 AND e.status NOT IN ({self.term_marks}) AND {where}{within}",
            [*self.term, *params],
        ).fetchone()
        return int(row[0])

    # ------------------------------------------------------------ presentation

    def view_for(self, ids: Iterable[str], focus: str | None) -> TrackerView:
        """A view holding the shown items and what their rows mention."""

        shown = sorted(set(ids) | ({focus} if focus else set()))
        blockers = {i: self._ordered(i, "source", "target") for i in shown}
        dependents = {i: self._ordered(i, "target", "source") for i in shown}
        parent_of: dict[str, str] = {}
        for chunk in chunks(shown, 500):
            marks = ",".join("?" * len(chunk))
            parent_of.update(
                self.db.execute(
                    f"SELECT source, target FROM parents WHERE source IN ({marks})", chunk
                ).fetchall()
            )
        wanted = set(shown) | set(parent_of.values())
        for group in (*blockers.values(), *dependents.values()):
            wanted.update(group)
        by_id = self.index.items_by_id(wanted)
        present = [by_id[i] for i in shown if i in by_id]
        return TrackerView(
            root=self.tracker.root,
            author=self.author,
            terminal=self.terminal,
            blocked_statuses=self.blocked_statuses,
            active_statuses=self.active_statuses,
            by_id=by_id,
            paths={},
            corrupt=[],
            parent_of=parent_of,
            children={},
            blockers={k: v for k, v in blockers.items() if v},
            dependents={k: v for k, v in dependents.items() if v},
            edges=[],
            lease_holders=holder_overrides(self.tracker, present),
        )

    def _ordered(self, item_id: str, side: str, other: str) -> list[str]:
        # Edge order of the view: owners by id, then position in the owner's file.
        rows = self.db.execute(
            f"SELECT b.{other} FROM {_LIVE_EDGES} WHERE b.{side} = ? AND b.kind = 'blocked_by' "
            "ORDER BY o.id, b.seq",
            (item_id,),
        )
        return list(dict.fromkeys(r[0] for r in rows))

    def corrupt_paths(self) -> list[str]:
        """Unreadable files as users see their paths, in scan order."""

        return [tracker_relpath(self.tracker.root, path) for path, _ in self.index.corrupt()]

    def summary(self, scope: str | None) -> dict[str, Any]:
        """Counts by status and type (terminal included), as the reference summary."""
        status: Counter[str] = Counter()
        types: Counter[str] = Counter()
        total = 0
        within = f" AND id IN (SELECT id FROM {scope})" if scope else ""
        for s, t, n in self.db.execute(
            f"SELECT status, type, COUNT(*) FROM entries WHERE live = 1{within} "
            "GROUP BY status, type"
        ):
            status[s] += n
            types[t] += n
            total += n
        return {
            "total": total,
            "by_status": dict(sorted(status.items())),
            "by_type": dict(sorted(types.items())),
        }

    def agenda(self, scope: str | None, limit: int) -> list[dict[str, Any]]:
        """Deadlines, reminders and events of open items, soonest first.

        Each item's moments are stored soonest first and items are indexed by
        their first moment, so the walk stops once no later item can place.
        """
        import json

        rows: list[tuple[float, str, dict[str, Any]]] = []
        now = self.now.timestamp()
        within = f" AND id IN (SELECT id FROM {scope})" if scope else ""
        cursor = self.db.execute(
            "SELECT id, title, agenda FROM entries INDEXED BY entries_agenda "
            "WHERE agenda IS NOT NULL AND live = 1 "
            f"AND status NOT IN ({self.term_marks}){within} "
            "ORDER BY json_extract(agenda, '$[0][0]'), id",
            self.term,
        )
        for item_id, title, agenda in cursor:
            moments = json.loads(agenda)
            if len(rows) >= limit and moments[0][0] > rows[limit - 1][0]:
                break
            for stamp, kind, when, text in moments:
                entry: dict[str, Any] = {"id": item_id, "title": title, "kind": kind, "at": when}
                if text:
                    entry["text"] = text
                if stamp < now:
                    entry["overdue"] = True
                rows.append((stamp, item_id, entry))
            rows.sort(key=lambda r: (r[0], r[1]))
            del rows[limit:]
        return [r[2] for r in rows]


# ---------------------------------------------------------------- ranking


# ---------------------------------------------------------------- commands

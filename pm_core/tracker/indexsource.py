"""Read-index queries for ``next`` and ``context``: candidates, structure, presentation.

A :class:`Source` answers, with SQL over the index, what the reference
(:mod:`pm_core.tracker.ranking` over a :class:`~pm_core.tracker.view.TrackerView`)
computes by walking every item: which ids are containers, the candidate pool
in baseline order, unresolved blockers and dependents, hop distances around
the focus, counts and the agenda; and it builds the small view the
reference's row and reason builders need for the rows shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model import Item
from pm_core.tracker.view import STATUS_RANK, TrackerView

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index import ReadIndex

#: Candidate columns, in the order of the ``ID``.. constants below. The holder is
#: the claim principal, else the assignee (empty values hold nothing), as in the view.
_POOL_SQL = (
    "SELECT id, type, status, priority, ord, deadline, deadline_epoch, updated_epoch, "
    "activity, knowledge, COALESCE(NULLIF(claim_principal, ''), NULLIF(assignee, '')), "
    "claim_expires_at, risk_value, COALESCE(author = ? OR reviewer = ?, 0), "
    "EXISTS(SELECT 1 FROM parents p WHERE p.target = e.id) AS has_children "
    "FROM entries e WHERE live = 1 AND status NOT IN ({terminal}) AND {where} "
    "ORDER BY {order}"
)
(
    ID,
    TYPE,
    STATUS,
    PRIORITY,
    ORD,
    DEADLINE,
    DEADLINE_EPOCH,
    UPDATED_EPOCH,
    ACTIVITY,
    KNOWLEDGE,
    HOLDER,
    EXPIRES,
    RISK,
    AFFINITY,
    HAS_CHILDREN,
) = range(15)
#: Edges of live items. CROSS JOIN keeps SQLite scanning edges first (then one
#: rowid lookup each) instead of walking every live entry for its edges.
_LIVE_EDGES = "edges b CROSS JOIN entries o ON o.rid = b.owner AND o.live = 1"

#: A candidate: a tuple of the ``_POOL_SQL`` columns (a lease override replaces
#: the tuple with one naming the live holder).
Row = tuple[Any, ...]


def _baseline_order(done_first: bool) -> str:
    """The reference baseline key as ``ORDER BY``: same values, same comparisons.

    ``done_first`` puts leaves before completed containers (candidates of
    ``next``); the high-level pool of ``context`` ranks without it.
    """
    ranks = " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in STATUS_RANK.items())
    keys = [
        f"CASE status {ranks} ELSE 1 END",
        "priority",
        "ord IS NULL",
        "COALESCE(ord, 0)",
        "deadline IS NULL",
        "deadline_epoch",
        "-updated_epoch",
        "id",
    ]
    if done_first:
        keys.insert(0, "has_children")
    return ", ".join(keys)


class Source:
    """One read's access to the index: statuses by role, author, and the queries."""

    def __init__(self, tracker: Tracker, index: ReadIndex, now: datetime) -> None:
        schema = tracker.schema
        self.tracker = tracker
        self.index = index
        self.db = index.db
        self.now = now
        self.author = tracker.author
        self.terminal = schema.terminal_statuses
        self.blocked_statuses = frozenset(s.name for s in schema.statuses if "blocked" in s.roles)
        self.active_statuses = frozenset(s.name for s in schema.statuses if "active" in s.roles)
        self.term = sorted(self.terminal)
        self.term_marks = ",".join("?" * len(self.term))

    # ------------------------------------------------------------ structure

    def is_live(self, item_id: str) -> bool:
        """Whether ``item_id`` is a readable item."""
        row = self.db.execute(
            "SELECT 1 FROM entries WHERE id = ? AND live = 1", (item_id,)
        ).fetchone()
        return row is not None

    def descendants(self, item_id: str) -> set[str]:
        """Every id below ``item_id`` (the item itself excluded, cycle safe)."""
        rows = self.db.execute(
            "WITH RECURSIVE d(id) AS (SELECT source FROM parents WHERE target = ? "
            "UNION SELECT p.source FROM parents p JOIN d ON p.target = d.id) SELECT id FROM d",
            (item_id,),
        )
        return {r[0] for r in rows} - {item_id}

    def containers(self) -> set[str]:
        """Ids with a non-terminal item anywhere below them."""
        if self.db.execute("SELECT 1 FROM hier_cycle LIMIT 1").fetchone() is not None:
            return self._containers_walk()
        rows = self.db.execute(
            "WITH RECURSIVE a(id) AS (SELECT p.target FROM entries i JOIN parents p "
            f"ON p.source = i.id WHERE i.live = 1 AND i.status NOT IN ({self.term_marks}) "
            "UNION SELECT p.target FROM a JOIN parents p ON p.source = a.id) SELECT id FROM a",
            self.term,
        )
        return {r[0] for r in rows}

    def _containers_walk(self) -> set[str]:
        # A parent cycle: walk each chain as the view does (an item is never
        # its own ancestor), which the recursive query cannot express.
        parent_of = dict(self.db.execute("SELECT source, target FROM parents").fetchall())
        open_ids = [
            r[0]
            for r in self.db.execute(
                f"SELECT id FROM entries WHERE live = 1 AND status NOT IN ({self.term_marks})",
                self.term,
            )
        ]
        out: set[str] = set()
        for item_id in open_ids:
            seen = {item_id}
            current = parent_of.get(item_id)
            while current and current not in seen:
                out.add(current)
                seen.add(current)
                current = parent_of.get(current)
        return out

    def blocking(self) -> tuple[set[str], dict[str, int]]:
        """Ids with an unresolved blocker, and per id how many open items it blocks.

        One pass over the blocking edges of live items: a blocker is unresolved
        when it is missing or not terminal; a dependent counts when it is a
        live, non-terminal item (each dependent once).
        """
        unresolved: set[str] = set()
        dependents: dict[str, set[str]] = {}
        terminal = self.terminal
        for source, target, source_status, target_status, target_live in self.db.execute(
            f"SELECT b.source, b.target, s.status, t.status, t.rid IS NOT NULL FROM {_LIVE_EDGES} "
            "LEFT JOIN entries s ON s.id = b.source AND s.live = 1 "
            "LEFT JOIN entries t ON t.id = b.target AND t.live = 1 "
            "WHERE b.kind = 'blocked_by'"
        ):
            if not target_live or target_status not in terminal:
                unresolved.add(source)
            if source_status is not None and source_status not in terminal:
                dependents.setdefault(target, set()).add(source)
        return unresolved, {k: len(v) for k, v in dependents.items()}

    def distances(self, start: str, max_depth: int) -> dict[str, int]:
        """Undirected hop distance over hierarchy and blocking edges (as the view computes)."""
        distance = {start: 0}
        frontier = [start]
        for depth in range(1, max_depth + 1):
            if not frontier:
                break
            found: set[str] = set()
            for chunk in _chunks(frontier, 400):
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

    def pool(self, where: str, params: Sequence[Any], *, done_first: bool) -> list[Row]:
        """Non-terminal live items matching ``where``, in the reference baseline order."""
        sql = _POOL_SQL.format(
            terminal=self.term_marks, where=where, order=_baseline_order(done_first)
        )
        rows: list[Row] = self.db.execute(
            sql, [self.author, self.author, *self.term, *params]
        ).fetchall()
        self._apply_leases(rows)
        return rows

    def _apply_leases(self, rows: list[Row]) -> None:
        """Expired claims hold nothing; in remote mode cached leases win (as in the view).

        Only a held row with an expiry, or one with a cached lease, can change,
        so only those go through the leases module.
        """
        from pm_core.tracker.leases import ClaimsConfig, holder_overrides, read_cache

        try:
            remote = ClaimsConfig.from_settings(self.tracker.settings).is_remote
        except Exception:
            remote = False
        leased: set[str] = set(read_cache(self.tracker.root).leases) if remote else set()
        check = {
            r[ID]: k for k, r in enumerate(rows) if (r[HOLDER] and r[EXPIRES]) or r[ID] in leased
        }
        if not check:
            return
        stand_ins = [
            Item(
                id=item_id,
                title=item_id,
                claim_principal=principal,
                assignee=assignee,
                claim_expires_at=expires,
            )
            for item_id, principal, assignee, expires in self._holder_columns(check)
        ]
        for item_id, holder in holder_overrides(self.tracker, stand_ins).items():
            k = check[item_id]
            rows[k] = (*rows[k][:HOLDER], holder, *rows[k][HOLDER + 1 :])

    def _holder_columns(self, ids: Iterable[str]) -> list[tuple[str, Any, Any, Any]]:
        out: list[tuple[str, Any, Any, Any]] = []
        for chunk in _chunks(sorted(ids), 500):
            marks = ",".join("?" * len(chunk))
            out.extend(
                self.db.execute(
                    "SELECT id, claim_principal, assignee, claim_expires_at FROM entries "
                    f"WHERE live = 1 AND id IN ({marks})",
                    chunk,
                ).fetchall()
            )
        return out

    # ------------------------------------------------------------ presentation

    def view_for(self, ids: Iterable[str], focus: str | None) -> TrackerView:
        """A view holding the shown items and what their rows mention."""
        from pm_core.tracker.leases import holder_overrides

        shown = sorted(set(ids) | ({focus} if focus else set()))
        blockers = {i: self._ordered(i, "source", "target") for i in shown}
        dependents = {i: self._ordered(i, "target", "source") for i in shown}
        parent_of: dict[str, str] = {}
        for chunk in _chunks(shown, 500):
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
        from pm_core.tracker.workspace import tracker_relpath

        return [tracker_relpath(self.tracker.root, path) for path, _ in self.index.corrupt()]

    def summary(self, scope: set[str] | None) -> dict[str, Any]:
        """Counts by status and type (terminal included), as the reference summary."""
        status: Counter[str] = Counter()
        types: Counter[str] = Counter()
        total = 0
        if scope is None:
            rows: Iterable[tuple[Any, ...]] = self.db.execute(
                "SELECT status, type, COUNT(*) FROM entries WHERE live = 1 GROUP BY status, type"
            )
        else:
            rows = (
                (s, t, 1)
                for chunk in _chunks(sorted(scope), 500)
                for s, t in self.db.execute(
                    "SELECT status, type FROM entries WHERE live = 1 AND id IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        for s, t, n in rows:
            status[s] += n
            types[t] += n
            total += n
        return {
            "total": total,
            "by_status": dict(sorted(status.items())),
            "by_type": dict(sorted(types.items())),
        }

    def agenda(self, scope: set[str] | None, limit: int) -> list[dict[str, Any]]:
        """Deadlines, reminders and events of open items, soonest first."""
        import json

        rows: list[tuple[float, str, dict[str, Any]]] = []
        now = self.now.timestamp()
        for item_id, title, agenda in self.db.execute(
            "SELECT id, title, agenda FROM entries WHERE live = 1 AND agenda IS NOT NULL "
            f"AND status NOT IN ({self.term_marks}) ORDER BY id",
            self.term,
        ):
            if scope is not None and item_id not in scope:
                continue
            for stamp, kind, when, text in json.loads(agenda):
                entry: dict[str, Any] = {"id": item_id, "title": title, "kind": kind, "at": when}
                if text:
                    entry["text"] = text
                if stamp < now:
                    entry["overdue"] = True
                rows.append((stamp, item_id, entry))
        rows.sort(key=lambda r: (r[0], r[1]))
        return [r[2] for r in rows[:limit]]


# ---------------------------------------------------------------- ranking


def _chunks(values: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


# ---------------------------------------------------------------- commands

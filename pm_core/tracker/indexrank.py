"""``pm next`` and ``pm context`` (brief) answered from the read index.

:mod:`pm_core.tracker.ranking` is the reference: it builds a view of every
item and ranks in Python. Here SQL does the whole-tracker work (containers,
the candidate pool, blockers, dependents, counts) and Python ranks the pool
column by column with the same arithmetic, in the same order, so scores and
orderings are identical. Only the rows shown are loaded as items, and the
reference's own row and reason builders format them from a small view.
``tests/unit/test_index.py`` checks both paths give equal results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model import Item
from pm_core.tracker.view import HIGH_LEVEL_TYPES, STATUS_RANK, TrackerView

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index import ReadIndex

#: Pool columns fetched per candidate.
_POOL_SQL = (
    "SELECT id, type, status, priority, ord, deadline, deadline_epoch, updated_epoch, "
    "activity, knowledge, claim_principal, assignee, claim_expires_at, risk_value, author, "
    "reviewer, EXISTS(SELECT 1 FROM parents p WHERE p.target = e.id) "
    "FROM entries e WHERE live = 1 AND status NOT IN ({terminal}) AND {where} ORDER BY id"
)
_LIVE_EDGES = "edges b JOIN entries o ON o.rid = b.owner AND o.live = 1"


class Row:
    """One ranked candidate: the columns ranking needs, no item."""

    __slots__ = (
        "activity",
        "author",
        "deadline",
        "deadline_epoch",
        "has_children",
        "holder",
        "id",
        "knowledge",
        "ord",
        "priority",
        "reviewer",
        "risk",
        "status",
        "type",
        "updated_epoch",
    )

    def __init__(self, values: Sequence[Any]) -> None:
        (
            self.id,
            self.type,
            self.status,
            self.priority,
            self.ord,
            self.deadline,
            self.deadline_epoch,
            self.updated_epoch,
            self.activity,
            self.knowledge,
            principal,
            assignee,
            _expires,
            self.risk,
            self.author,
            self.reviewer,
            self.has_children,
        ) = values
        self.holder: str | None = principal or assignee or None


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

    def unresolved(self) -> set[str]:
        """Ids with at least one blocker that is missing or not terminal."""
        rows = self.db.execute(
            f"SELECT DISTINCT b.source FROM {_LIVE_EDGES} "
            "LEFT JOIN entries t ON t.id = b.target AND t.live = 1 "
            f"WHERE b.kind = 'blocked_by' AND (t.rid IS NULL OR t.status NOT IN ({self.term_marks}))",
            self.term,
        )
        return {r[0] for r in rows}

    def unblocks(self) -> dict[str, int]:
        """Per id, how many non-terminal items it blocks."""
        rows = self.db.execute(
            f"SELECT b.target, COUNT(DISTINCT b.source) FROM {_LIVE_EDGES} "
            "JOIN entries s ON s.id = b.source AND s.live = 1 "
            f"WHERE b.kind = 'blocked_by' AND s.status NOT IN ({self.term_marks}) "
            "GROUP BY b.target",
            self.term,
        )
        return dict(rows.fetchall())

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

    def pool(self, where: str, params: Sequence[Any]) -> list[Row]:
        """Non-terminal live items matching ``where``, in id order."""
        sql = _POOL_SQL.format(terminal=self.term_marks, where=where)
        rows = [Row(r) for r in self.db.execute(sql, [*self.term, *params])]
        self._apply_leases(rows)
        return rows

    def _apply_leases(self, rows: list[Row]) -> None:
        """Expired claims hold nothing; in remote mode cached leases win (as in the view)."""
        from pm_core.tracker.leases import ClaimsConfig, holder_overrides, read_cache

        try:
            remote = ClaimsConfig.from_settings(self.tracker.settings).is_remote
        except Exception:
            remote = False
        leased: set[str] = set(read_cache(self.tracker.root).leases) if remote else set()
        wanted = {r.id for r in rows if r.holder or r.id in leased}
        if not wanted:
            return
        stand_ins = []
        marks_rows = self._holder_columns(wanted)
        for item_id, principal, assignee, expires in marks_rows:
            stand_ins.append(
                Item(
                    id=item_id,
                    title=item_id,
                    claim_principal=principal,
                    assignee=assignee,
                    claim_expires_at=expires,
                )
            )
        overrides = holder_overrides(self.tracker, stand_ins)
        for row in rows:
            if row.id in overrides:
                row.holder = overrides[row.id]

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


def rank_rows(
    source: Source,
    ordered_pool: list[Row],
    *,
    focus: str | None,
    done: set[str],
    unblocks: dict[str, int] | None,
) -> dict[str, float]:
    """Relevance per id, keys in baseline order: the reference ``rank`` over columns."""
    from pm_core.tracker.ranking import SIGNAL_WEIGHTS, _deadline_pressure

    def key(r: Row) -> tuple[Any, ...]:
        return (
            r.id in done,
            STATUS_RANK.get(r.status, 1),
            r.priority,
            r.ord is None,
            r.ord if r.ord is not None else 0,
            r.deadline is None,
            r.deadline_epoch if r.deadline else 0.0,
            -r.updated_epoch,
            r.id,
        )

    ordered = sorted(ordered_pool, key=key)
    n = len(ordered)
    if not n:
        return {}
    me = source.author
    signals: list[tuple[str, list[float]]] = [
        ("structural", [1.0 - (k / (n - 1) if n > 1 else 0.0) for k in range(n)]),
        ("priority_pressure", [(4 - max(0, min(4, r.priority))) / 4 for r in ordered]),
    ]
    updated = [r.updated_epoch for r in ordered]
    low, high = min(updated), max(updated)
    if high > low:
        signals.append(("recency", [(v - low) / (high - low) for v in updated]))
    _relative(signals, "activity_density", [r.activity for r in ordered])
    _relative(signals, "knowledge_density", [r.knowledge for r in ordered])
    if focus and source.is_live(focus):
        distance = source.distances(focus, 4)
        signals.append(
            (
                "graph_proximity",
                [1 / (1 + distance[r.id]) if r.id in distance else 0.0 for r in ordered],
            )
        )
    else:
        counts = unblocks if unblocks is not None else source.unblocks()
        _relative(signals, "graph_proximity", [counts.get(r.id, 0) for r in ordered])
    claim = [1.0 if (r.holder == me or r.id == focus) else 0.0 for r in ordered]
    if any(claim):
        signals.append(("claim_focus", claim))
    risk = [r.risk for r in ordered]
    if any(risk):
        signals.append(("risk_pressure", risk))
    if any(r.deadline for r in ordered):
        signals.append(
            ("deadline_pressure", [_deadline_pressure(r.deadline, source.now) for r in ordered])
        )
    affinity = [1.0 if me in (r.author, r.reviewer) else 0.0 for r in ordered]
    if any(affinity):
        signals.append(("author_affinity", affinity))
    # The reference adds signals in the order compute_signals builds its mapping.
    order = {name: k for k, name in enumerate(_SIGNAL_ORDER)}
    signals.sort(key=lambda s: order[s[0]])
    weights = [SIGNAL_WEIGHTS[name] for name, _ in signals]
    weight = 0.0
    for w in weights:
        weight += w
    columns = [values for _, values in signals]
    scores: dict[str, float] = {}
    for k, r in enumerate(ordered):
        total = 0.0
        for values, w in zip(columns, weights, strict=True):
            total += values[k] * w
        scores[r.id] = round(total / weight, 4) if weight else 0.0
    return scores


_SIGNAL_ORDER = (
    "structural",
    "priority_pressure",
    "recency",
    "activity_density",
    "knowledge_density",
    "graph_proximity",
    "claim_focus",
    "risk_pressure",
    "deadline_pressure",
    "author_affinity",
)


def _relative(signals: list[tuple[str, list[float]]], name: str, counts: list[int]) -> None:
    top = max(counts, default=0)
    if top > 0:
        signals.append((name, [v / top for v in counts]))


def by_score(rows: list[Row], scores: dict[str, float]) -> list[Row]:
    """Rows by score desc; ties keep the baseline order."""
    position = {item_id: n for n, item_id in enumerate(scores)}
    return sorted(rows, key=lambda r: (-scores[r.id], position[r.id]))


def _chunks(values: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


# ---------------------------------------------------------------- commands


class _Pipe:
    """Candidates in their buckets, each in ranked order (rows, not items)."""

    def __init__(self) -> None:
        self.ready: list[Row] = []
        self.blocked: list[Row] = []
        self.decisions: list[Row] = []
        self.held: list[Row] = []
        self.scores: dict[str, float] = {}
        self.candidates = 0
        self.containers_skipped = 0
        self.unblocks: dict[str, int] | None = None


def _pipeline(
    source: Source, parent_id: str | None, include_decisions: bool, focus: str | None
) -> _Pipe:
    """The reference ``run_pipeline`` over index rows."""
    pipe = _Pipe()
    containers = source.containers()
    scope = source.descendants(parent_id) if parent_id else None
    eligible = sorted(source.active_statuses | source.blocked_statuses)
    rows = source.pool(f"status IN ({','.join('?' * len(eligible))})", eligible)
    pool: list[Row] = []
    done: set[str] = set()
    for r in rows:
        if scope is not None and r.id not in scope:
            continue
        pipe.candidates += 1
        if r.id in containers:
            pipe.containers_skipped += 1
            continue
        if r.has_children:
            done.add(r.id)
        pool.append(r)
    if not (focus and source.is_live(focus)):
        pipe.unblocks = source.unblocks()
    pipe.scores = rank_rows(source, pool, focus=focus, done=done, unblocks=pipe.unblocks)
    unresolved = source.unresolved() if pool else set()
    for r in by_score(pool, pipe.scores):
        if r.type == "Decision":
            pipe.decisions.append(r)
            if not include_decisions:
                continue
        if r.holder and r.holder != source.author:
            pipe.held.append(r)
        elif r.status in source.blocked_statuses or r.id in unresolved:
            pipe.blocked.append(r)
        else:
            pipe.ready.append(r)
    return pipe


def _require_parent(tracker: Tracker, source: Source, parent: str | None) -> str | None:
    if not parent:
        return None
    from pm_core.tracker.errors import NotFoundError

    parent_id = tracker.normalize_id(parent)
    if not source.is_live(parent_id):
        raise NotFoundError(f"parent {parent_id} not found", hint="pass an existing item id")
    return parent_id


def _formatter(source: Source, shown: Iterable[Row], focus: str | None) -> Any:
    """A function turning (rows, scores, count) into the reference's row dicts."""
    from pm_core.tracker.ranking import row

    view = source.view_for((r.id for r in shown), focus)

    def rows(items: Sequence[Row], scores: dict[str, float], count: int) -> list[dict[str, Any]]:
        return [
            row(view, view.by_id[r.id], scores.get(r.id, 0.0), focus=focus, now=source.now)
            for r in items[:count]
        ]

    return view, rows


def next_items(
    tracker: Tracker,
    *,
    limit: int,
    parent: str | None,
    ready_only: bool,
    include_decisions: bool,
    token_budget: int | None,
    now: datetime,
) -> dict[str, Any] | None:
    """``ranking.next_items`` from the index; None when the index cannot answer."""
    from pm_core.tracker import indexing
    from pm_core.tracker.focus import focus_id
    from pm_core.tracker.ranking import next_result

    def compute(index: ReadIndex) -> dict[str, Any]:
        source = Source(tracker, index, now)
        parent_id = _require_parent(tracker, source, parent)
        return _next(source, parent_id, focus_id(tracker))

    def _next(source: Source, parent_id: str | None, focus: str | None) -> dict[str, Any]:
        pipe = _pipeline(source, parent_id, include_decisions, focus)
        lists = (
            [pipe.ready] if ready_only else [pipe.ready, pipe.blocked, pipe.decisions, pipe.held]
        )
        _, rows = _formatter(source, [r for group in lists for r in group[:limit]], focus)
        return next_result(
            ready=rows(pipe.ready, pipe.scores, limit),
            blocked=[] if ready_only else rows(pipe.blocked, pipe.scores, limit),
            decisions=[] if ready_only else rows(pipe.decisions, pipe.scores, limit),
            held=[] if ready_only else rows(pipe.held, pipe.scores, limit),
            counts={
                "candidates": pipe.candidates,
                "ready": len(pipe.ready),
                "blocked": len(pipe.blocked),
                "decision_needed": len(pipe.decisions),
                "held_by_others": len(pipe.held),
                "containers_skipped": pipe.containers_skipped,
            },
            parent_id=parent_id,
            corrupt=source.corrupt_paths(),
            limit=limit,
            token_budget=token_budget,
        )

    return indexing.answer(tracker, compute)


def context(
    tracker: Tracker,
    *,
    depth: str,
    limit: int,
    parent: str | None,
    token_budget: int | None,
    section: str | None,
    now: datetime,
) -> dict[str, Any] | None:
    """``ranking.context`` at brief depth from the index; None: use the reference.

    Deeper depths and single sections read every item anyway, so they stay
    with the reference (whose scan is itself served by the index).
    """
    if depth != "brief" or section is not None:
        return None
    from pm_core.tracker import indexing
    from pm_core.tracker import sections as sec
    from pm_core.tracker.focus import focus_id
    from pm_core.tracker.ranking import context_result

    def compute(index: ReadIndex) -> dict[str, Any]:
        source = Source(tracker, index, now)
        parent_id = _require_parent(tracker, source, parent)
        return _context(source, parent_id, focus_id(tracker))

    def _context(source: Source, parent_id: str | None, focus: str | None) -> dict[str, Any]:
        pipe = _pipeline(source, parent_id, False, focus)
        scope = source.descendants(parent_id) if parent_id else None
        high_types = sorted(HIGH_LEVEL_TYPES)
        high_pool = [
            r
            for r in source.pool(f"type IN ({','.join('?' * len(high_types))})", high_types)
            if scope is None or r.id in scope
        ]
        high_scores = rank_rows(source, high_pool, focus=focus, done=set(), unblocks=pipe.unblocks)
        high = by_score(high_pool, high_scores)[:limit]
        low_items = [r for r in pipe.ready if r.type not in HIGH_LEVEL_TYPES][:limit]
        blocked = pipe.blocked[: max(0, limit - len(low_items))]
        view, rows = _formatter(source, [*high, *low_items, *blocked], focus)
        return context_result(
            summary=source.summary(scope),
            focus=sec.brief_node(view, focus) if focus else None,
            high=rows(high, high_scores, limit),
            low=rows(low_items, pipe.scores, limit),
            blocked=rows(blocked, pipe.scores, limit),
            agenda=source.agenda(scope, limit),
            sections={},
            corrupt=source.corrupt_paths(),
            depth=depth,
            limit=limit,
            token_budget=token_budget,
        )

    return indexing.answer(tracker, compute)

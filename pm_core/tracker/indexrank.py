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

#: Candidate columns, in the order of the ``_ID``.. constants below. The holder is
#: the claim principal, else the assignee (empty values hold nothing), as in the view.
_POOL_SQL = (
    "SELECT id, type, status, priority, ord, deadline, deadline_epoch, updated_epoch, "
    "activity, knowledge, COALESCE(NULLIF(claim_principal, ''), NULLIF(assignee, '')), "
    "claim_expires_at, risk_value, COALESCE(author = ? OR reviewer = ?, 0), "
    "EXISTS(SELECT 1 FROM parents p WHERE p.target = e.id) "
    "FROM entries e WHERE live = 1 AND status NOT IN ({terminal}) AND {where} "
    "ORDER BY {order}"
)
(
    _ID,
    _TYPE,
    _STATUS,
    _PRIORITY,
    _ORD,
    _DEADLINE,
    _DEADLINE_EPOCH,
    _UPDATED_EPOCH,
    _ACTIVITY,
    _KNOWLEDGE,
    _HOLDER,
    _EXPIRES,
    _RISK,
    _AFFINITY,
    _HAS_CHILDREN,
) = range(15)
_LIVE_EDGES = "edges b JOIN entries o ON o.rid = b.owner AND o.live = 1"

#: A candidate: a tuple of the ``_POOL_SQL`` columns (the holder may be replaced
#: by a lease override).
Row = list[Any]


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
        keys.insert(0, "EXISTS(SELECT 1 FROM parents p WHERE p.target = e.id)")
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
        rows = [
            list(r) for r in self.db.execute(sql, [self.author, self.author, *self.term, *params])
        ]
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
        check = [r for r in rows if (r[_HOLDER] and r[_EXPIRES]) or r[_ID] in leased]
        if not check:
            return
        by_id = {r[_ID]: r for r in check}
        stand_ins = [
            Item(
                id=item_id,
                title=item_id,
                claim_principal=principal,
                assignee=assignee,
                claim_expires_at=expires,
            )
            for item_id, principal, assignee, expires in self._holder_columns(by_id)
        ]
        for item_id, holder in holder_overrides(self.tracker, stand_ins).items():
            by_id[item_id][_HOLDER] = holder

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
    ordered: list[Row],
    *,
    focus: str | None,
    unblocks: dict[str, int] | None,
) -> list[float]:
    """Relevance of each row (rows in baseline order): the reference ``rank`` by columns.

    Signals are computed and summed in the reference's order with the same
    float operations, so every score is bit-for-bit the reference's.
    """
    from pm_core.tracker.ranking import SIGNAL_WEIGHTS, _deadline_pressure

    n = len(ordered)
    if not n:
        return []
    me = source.author
    signals: list[tuple[str, list[float]]] = [
        ("structural", [1.0 - (k / (n - 1) if n > 1 else 0.0) for k in range(n)]),
        ("priority_pressure", [(4 - max(0, min(4, r[_PRIORITY]))) / 4 for r in ordered]),
    ]
    updated = [r[_UPDATED_EPOCH] for r in ordered]
    low, high = min(updated), max(updated)
    if high > low:
        span = high - low
        signals.append(("recency", [(v - low) / span for v in updated]))
    _relative(signals, "activity_density", [r[_ACTIVITY] for r in ordered])
    _relative(signals, "knowledge_density", [r[_KNOWLEDGE] for r in ordered])
    if focus and source.is_live(focus):
        distance = source.distances(focus, 4)
        signals.append(
            (
                "graph_proximity",
                [1 / (1 + distance[r[_ID]]) if r[_ID] in distance else 0.0 for r in ordered],
            )
        )
    else:
        counts = unblocks if unblocks is not None else source.blocking()[1]
        _relative(signals, "graph_proximity", [counts.get(r[_ID], 0) for r in ordered])
    claim = [1.0 if (r[_HOLDER] == me or r[_ID] == focus) else 0.0 for r in ordered]
    if any(claim):
        signals.append(("claim_focus", claim))
    risk = [r[_RISK] for r in ordered]
    if any(risk):
        signals.append(("risk_pressure", risk))
    if any(r[_DEADLINE] for r in ordered):
        now = source.now
        signals.append(
            ("deadline_pressure", [_deadline_pressure(r[_DEADLINE], now) for r in ordered])
        )
    affinity = [1.0 if r[_AFFINITY] else 0.0 for r in ordered]
    if any(affinity):
        signals.append(("author_affinity", affinity))
    weight = 0.0
    total = [0.0] * n
    for name, values in signals:
        w = SIGNAL_WEIGHTS[name]
        weight += w
        total = [t + v * w for t, v in zip(total, values, strict=True)]
    if not weight:
        return [0.0] * n
    return [round(t / weight, 4) for t in total]


def _relative(signals: list[tuple[str, list[float]]], name: str, counts: list[int]) -> None:
    top = max(counts, default=0)
    if top > 0:
        signals.append((name, [v / top for v in counts]))


def by_score(rows: list[Row], scores: list[float]) -> list[int]:
    """Positions by score desc; ties keep the baseline order."""
    return sorted(range(len(rows)), key=lambda k: (-scores[k], k))


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
    rows = source.pool(f"status IN ({','.join('?' * len(eligible))})", eligible, done_first=True)
    pool: list[Row] = []
    for r in rows:
        if scope is not None and r[_ID] not in scope:
            continue
        pipe.candidates += 1
        if r[_ID] in containers:
            pipe.containers_skipped += 1
            continue
        pool.append(r)
    unresolved, unblocks = source.blocking()
    if not (focus and source.is_live(focus)):
        pipe.unblocks = unblocks
    scores = rank_rows(source, pool, focus=focus, unblocks=unblocks)
    pipe.scores = {r[_ID]: score for r, score in zip(pool, scores, strict=True)}
    blocked_statuses = source.blocked_statuses
    me = source.author
    for k in by_score(pool, scores):
        r = pool[k]
        if r[_TYPE] == "Decision":
            pipe.decisions.append(r)
            if not include_decisions:
                continue
        holder = r[_HOLDER]
        if holder and holder != me:
            pipe.held.append(r)
        elif r[_STATUS] in blocked_statuses or r[_ID] in unresolved:
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
    """A view of the shown rows, and a function turning rows into the reference's dicts."""
    from pm_core.tracker.ranking import row

    view = source.view_for((r[_ID] for r in shown), focus)

    def rows(items: Sequence[Row], scores: dict[str, float], count: int) -> list[dict[str, Any]]:
        return [
            row(view, view.by_id[r[_ID]], scores.get(r[_ID], 0.0), focus=focus, now=source.now)
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
            for r in source.pool(
                f"type IN ({','.join('?' * len(high_types))})", high_types, done_first=False
            )
            if scope is None or r[_ID] in scope
        ]
        ranked = rank_rows(source, high_pool, focus=focus, unblocks=pipe.unblocks)
        high_scores = {r[_ID]: score for r, score in zip(high_pool, ranked, strict=True)}
        high = [high_pool[k] for k in by_score(high_pool, ranked)[:limit]]
        low_items = [r for r in pipe.ready if r[_TYPE] not in HIGH_LEVEL_TYPES][:limit]
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

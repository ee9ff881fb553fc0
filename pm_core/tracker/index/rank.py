"""``pm next`` and ``pm context`` (brief) answered from the read index.

SQLite builds the pool and scores it with the reference's arithmetic
(:mod:`pm_core.tracker.query.ranking`, whose rule tables it reads); Python
formats only the rows shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.schema import HIGH_TYPES_SQL
from pm_core.tracker.index.source import Source
from pm_core.tracker.model.errors import NotFoundError
from pm_core.tracker.query.ranking import context_result, next_result, row
from pm_core.tracker.query.rules import (
    FOCUS_MAX_HOPS,
    SIGNAL_ORDER,
    SIGNAL_WEIGHTS,
    priority_pressure_sql,
)
from pm_core.tracker.storage.session import focus_id

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index.db import ReadIndex


T = TypeVar("T")


class Ranked:
    """One pool scored in SQL: counts per bucket, the top ids of each, their scores."""

    def __init__(self) -> None:
        self.candidates = 0
        self.containers_skipped = 0
        self.counts: dict[str, int] = {}
        self.top: dict[str, list[str]] = {}
        self.scores: dict[str, float] = {}


Signal = tuple[str, str, list[Any]]


def _signals(
    source: Source, table: str, focus_live: bool, focus: str | None, conditions: Sequence[str]
) -> tuple[list[Signal], list[int]]:
    """The available signals over ``table`` and its row counts (all, then per condition).

    Signals are ``[(name, SQL expression, its parameters)]``, mirroring
    :func:`pm_core.tracker.query.ranking.compute_signals`: a signal the reference
    leaves out is left out here too, so the weight sum matches. One scan of
    the pool gives both.
    """
    me = source.author
    sums = "".join(f", COALESCE(SUM({c}), 0)" for c in conditions)
    row = source.db.execute(
        "SELECT COUNT(*), MIN(updated_epoch), MAX(updated_epoch), MAX(activity), "
        "MAX(knowledge), MAX(unblocks), MAX(COALESCE(holder = ?, 0) OR id IS ?), "
        "MAX(COALESCE(risk_value, 0.0) != 0), MAX(COALESCE(deadline, '') != ''), "
        f"MAX(affinity){sums} FROM {table}",
        (me, focus),
    ).fetchone()
    n, low, high, activity, knowledge, unblocks, claim, risk, deadline, affinity = row[:10]
    counts = [int(n), *(int(c) for c in row[10:])]
    if not n:
        return [], counts
    signals: list[Signal] = [
        (
            "structural",
            "(1.0 - (CAST(k - 1 AS REAL) / ?))" if n > 1 else "1.0",
            [float(n - 1)] if n > 1 else [],
        ),
        ("priority_pressure", priority_pressure_sql("priority"), []),
    ]
    if high > low:
        signals.append(("recency", "((updated_epoch - ?) / ?)", [low, high - low]))
    if activity:
        signals.append(("activity_density", "(CAST(activity AS REAL) / ?)", [activity]))
    if knowledge:
        signals.append(("knowledge_density", "(CAST(knowledge AS REAL) / ?)", [knowledge]))
    if focus_live:
        proximity = "(CASE WHEN dist IS NULL THEN 0.0 ELSE 1.0 / (1 + dist) END)"
        signals.append(("graph_proximity", proximity, []))
    elif unblocks:
        signals.append(("graph_proximity", "(CAST(unblocks AS REAL) / ?)", [unblocks]))
    if claim:
        claimed = "(CASE WHEN COALESCE(holder = ?, 0) OR id IS ? THEN 1.0 ELSE 0.0 END)"
        signals.append(("claim_focus", claimed, [me, focus]))
    if risk:
        signals.append(("risk_pressure", "COALESCE(risk_value, 0.0)", []))
    if deadline:
        # Most items have no deadline: their 0.0 needs no call into Python.
        pressure = "(CASE WHEN COALESCE(deadline, '') = '' THEN 0.0 ELSE pm_deadline_pressure(deadline) END)"
        signals.append(("deadline_pressure", pressure, []))
    if affinity:
        signals.append(("author_affinity", "(CASE WHEN affinity THEN 1.0 ELSE 0.0 END)", []))
    return signals, counts


def _total_sql(signals: Sequence[Signal]) -> tuple[str, list[Any], float]:
    """``sum(value * weight)`` in the reference's order, its parameters, and the weight sum.

    Weights are bound as parameters (never printed and parsed back), so every
    operand is the very float the reference multiplies by.
    """

    total = "0.0"
    weight = 0.0
    params: list[Any] = []
    for name, expr, values in sorted(signals, key=lambda s: SIGNAL_ORDER.index(s[0])):
        w = SIGNAL_WEIGHTS[name]
        weight += w
        total = f"({total} + ({expr} * ?))"
        params += [*values, w]
    return total, params, weight


def rank_pool(
    source: Source,
    *,
    where: str,
    params: Sequence[Any],
    done_first: bool,
    skip_containers: bool,
    scope: str | None,
    focus: str | None,
    buckets: Iterable[tuple[str, str, int]],
    index: str = "entries_baseline",
    skipped: Callable[[], int] | None = None,
) -> Ranked:
    """Score the non-terminal live items matching ``where`` and take each bucket's top.

    ``buckets``: ``(name, SQL condition over the pool, how many)``; ``scope``:
    a temp table of ids to keep (a parent's descendants), or None.
    ``skipped``: gives the number of containers left out (default: counted
    here, after the pool).
    """
    out = Ranked()
    focus_live = bool(focus) and source.is_live(focus or "")
    dist = source.distance_table(focus or "", FOCUS_MAX_HOPS) if focus_live else None
    with source.pool_table(
        where,
        params,
        done_first=done_first,
        skip_containers=skip_containers,
        scope=scope,
        dist=dist,
        index=index,
    ) as pool:
        buckets = list(buckets)
        signals, counts = _signals(source, pool, focus_live, focus, [c for _, c, _ in buckets])
        out.candidates = sum(counts[:1])
        if skip_containers:
            out.containers_skipped = (
                skipped() if skipped else source.containers_matching(where, params, scope)
            )
            out.candidates += out.containers_skipped
        if not signals:
            return out
        total, total_params, weight = _total_sql(signals)
        for (name, condition, count), found in zip(buckets, counts[1:], strict=True):
            out.counts[name] = found
            top = _top(source, pool, condition, count, total, total_params, weight)
            out.top[name] = [item_id for item_id, _ in top]
            out.scores.update(top)
    return out


def _top(
    source: Source,
    pool: str,
    condition: str,
    count: int,
    total: str,
    params: Sequence[Any],
    weight: float,
) -> list[tuple[str, float]]:
    """The ``count`` best rows by rounded score, ties in baseline order: ``[(id, score)]``.

    SQLite orders by the unrounded total; Python rounds exactly as the
    reference does. Rounding can only merge neighbours, so rows are read
    until the rounded score drops below the last place's, then sorted again.
    """
    from pm_core.tracker.index.access import bounded

    if count <= 0:
        return []
    fetch = bounded(count + 16)
    while True:
        rows = source.db.execute(
            f"SELECT id, {total} AS total, k FROM {pool} WHERE {condition} "
            "ORDER BY total DESC, k LIMIT ?",
            [*params, fetch],
        ).fetchall()
        scored = [(item_id, round(t / weight, 4), k) for item_id, t, k in rows]
        if len(rows) < fetch or (len(scored) > count and scored[-1][1] < scored[count - 1][1]):
            break
        fetch = bounded(fetch * 4)
    scored.sort(key=lambda r: (-r[1], r[2]))
    return [(item_id, score) for item_id, score, _ in scored[:count]]


def next_buckets(include_decisions: bool, limit: int) -> list[tuple[str, str, int]]:
    """The reference's buckets over pool columns: decisions, then held, blocked, ready."""
    blocked = "(blocked_status OR unresolved)"
    keep = "1" if include_decisions else "NOT decision"
    return [
        ("decisions", "decision", limit),
        ("held", f"{keep} AND held", limit),
        ("blocked", f"{keep} AND NOT held AND {blocked}", limit),
        ("ready", f"{keep} AND NOT held AND NOT {blocked}", limit),
    ]


class _Work:
    """The work pool of ``next`` and ``context``: active or blocked leaves, under a parent."""

    def __init__(self, tracker: Tracker, source: Source, parent: str | None) -> None:
        self.source = source
        self.parent_id = _require_parent(tracker, source, parent)
        self.scope = source.scope_table(self.parent_id) if self.parent_id else None
        self.focus = focus_id(tracker)

    def rank(self, buckets: Iterable[tuple[str, str, int]]) -> Ranked:
        """The pool ranked in baseline order with completed containers last."""
        eligible = sorted(self.source.active_statuses | self.source.blocked_statuses)
        where = f"e.status IN ({','.join('?' * len(eligible))})"
        parent_id = self.parent_id

        def containers(other: Source) -> int:
            scope = other.scope_table(parent_id) if parent_id else None
            return other.containers_matching(where, eligible, scope)

        return rank_pool(
            self.source,
            where=where,
            params=eligible,
            done_first=True,
            skip_containers=True,
            scope=self.scope,
            focus=self.focus,
            buckets=buckets,
            # Counted on a second connection while this one builds the pool.
            skipped=beside(self.source, containers),
        )


def _require_parent(tracker: Tracker, source: Source, parent: str | None) -> str | None:
    if not parent:
        return None

    parent_id = tracker.normalize_id(parent)
    if not source.is_live(parent_id):
        raise NotFoundError(f"parent {parent_id} not found", hint="pass an existing item id")
    return parent_id


def _overview(
    source: Source, parent_id: str | None, focus: str | None, limit: int
) -> tuple[Ranked, dict[str, Any], list[dict[str, Any]]]:
    """The high-level pool, the summary and the agenda of ``context`` (under ``parent_id``)."""
    scope = source.scope_table(parent_id) if parent_id else None
    high_pool = rank_pool(
        source,
        where=f"e.type IN {HIGH_TYPES_SQL}",
        params=(),
        index="entries_high",
        done_first=False,
        skip_containers=False,
        scope=scope,
        focus=focus,
        buckets=[("high", "1", limit)],
    )
    return high_pool, source.summary(scope), source.agenda(scope, limit)


def beside(source: Source, work: Callable[[Source], T]) -> Callable[[], T]:
    """Start ``work`` on a sibling of ``source`` in another thread; the call returned waits.

    SQLite runs statements without Python's global lock, so the two
    connections read at once. When no second connection opens, the call
    returned runs ``work`` on ``source`` itself; any other failure is raised
    by it.
    """
    import sqlite3
    import threading

    # Loaded here, not by both threads at once.
    source.tracker.settings  # noqa: B018
    outcome: list[Any] = []

    def run() -> None:
        try:
            with source.sibling() as other:
                outcome.append((True, work(other)))
        except sqlite3.OperationalError as exc:
            outcome.append((False, exc))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((None, exc))

    thread = threading.Thread(target=run, name="pm-index-beside")
    thread.start()

    def wait() -> T:
        thread.join()
        done, value = outcome[0]
        if done:
            return cast("T", value)
        if done is False:
            return work(source)  # no second connection: this one does it
        raise value

    return wait


def _formatter(source: Source, shown: Iterable[str], focus: str | None) -> Any:
    """A view of the shown ids, and a function turning ids into the reference's dicts."""

    view = source.view_for(shown, focus)

    def rows(ids: Sequence[str], scores: dict[str, float], count: int) -> list[dict[str, Any]]:
        return [
            row(view, view.by_id[i], scores.get(i, 0.0), focus=focus, now=source.now)
            for i in ids[:count]
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

    def compute(index: ReadIndex) -> dict[str, Any]:
        with Source(tracker, index, now) as source:
            work = _Work(tracker, source, parent)
            parent_id, focus = work.parent_id, work.focus
            ranked = work.rank(next_buckets(include_decisions, limit))
            top = ranked.top
            lists = ["ready"] if ready_only else ["ready", "blocked", "decisions", "held"]
            _, rows = _formatter(source, [i for name in lists for i in top.get(name, [])], focus)

            def shown(name: str) -> list[dict[str, Any]]:
                if ready_only and name != "ready":
                    return []
                out: list[dict[str, Any]] = rows(top.get(name, []), ranked.scores, limit)
                return out

            return next_result(
                ready=shown("ready"),
                blocked=shown("blocked"),
                decisions=shown("decisions"),
                held=shown("held"),
                counts={
                    "candidates": ranked.candidates,
                    "ready": ranked.counts.get("ready", 0),
                    "blocked": ranked.counts.get("blocked", 0),
                    "decision_needed": ranked.counts.get("decisions", 0),
                    "held_by_others": ranked.counts.get("held", 0),
                    "containers_skipped": ranked.containers_skipped,
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

    # Lazy: only ``context`` needs the sections, and ``next`` starts without them.
    from pm_core.tracker.query import sections as sec

    def compute(index: ReadIndex) -> dict[str, Any]:
        with Source(tracker, index, now) as source:
            work = _Work(tracker, source, parent)
            parent_id, focus = work.parent_id, work.focus
            # The high-level pool, the summary and the agenda do not depend on
            # the work pool: a second connection reads them meanwhile.
            side = beside(source, lambda other: _overview(other, parent_id, focus, limit))
            buckets = next_buckets(False, limit)
            pipe = work.rank([("low", f"{buckets[-1][1]} AND NOT high", limit), buckets[2]])
            high_pool, summary, agenda = side()
            high = high_pool.top.get("high", [])
            low_ids = pipe.top.get("low", [])
            blocked = pipe.top.get("blocked", [])[: max(0, limit - len(low_ids))]
            view, rows = _formatter(source, [*high, *low_ids, *blocked], focus)
            return context_result(
                summary=summary,
                focus=sec.brief_node(view, focus) if focus else None,
                high=rows(high, high_pool.scores, limit),
                low=rows(low_ids, pipe.scores, limit),
                blocked=rows(blocked, pipe.scores, limit),
                agenda=agenda,
                sections={},
                corrupt=source.corrupt_paths(),
                depth=depth,
                limit=limit,
                token_budget=token_budget,
            )

    return indexing.answer(tracker, compute)

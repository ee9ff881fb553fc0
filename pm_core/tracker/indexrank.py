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

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pm_core.tracker.indexsource import (
    ACTIVITY,
    AFFINITY,
    DEADLINE,
    HOLDER,
    ID,
    KNOWLEDGE,
    PRIORITY,
    RISK,
    STATUS,
    TYPE,
    UPDATED_EPOCH,
    Row,
    Source,
)
from pm_core.tracker.view import HIGH_LEVEL_TYPES

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index import ReadIndex


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
        ("priority_pressure", [(4 - max(0, min(4, r[PRIORITY]))) / 4 for r in ordered]),
    ]
    updated = [r[UPDATED_EPOCH] for r in ordered]
    low, high = min(updated), max(updated)
    if high > low:
        span = high - low
        signals.append(("recency", [(v - low) / span for v in updated]))
    _relative(signals, "activity_density", [r[ACTIVITY] for r in ordered])
    _relative(signals, "knowledge_density", [r[KNOWLEDGE] for r in ordered])
    if focus and source.is_live(focus):
        distance = source.distances(focus, 4)
        signals.append(
            (
                "graph_proximity",
                [1 / (1 + distance[r[ID]]) if r[ID] in distance else 0.0 for r in ordered],
            )
        )
    else:
        counts = unblocks if unblocks is not None else source.blocking()[1]
        _relative(signals, "graph_proximity", [counts.get(r[ID], 0) for r in ordered])
    claim = [1.0 if (r[HOLDER] == me or r[ID] == focus) else 0.0 for r in ordered]
    if any(claim):
        signals.append(("claim_focus", claim))
    risk = [r[RISK] for r in ordered]
    if any(risk):
        signals.append(("risk_pressure", risk))
    if any(r[DEADLINE] for r in ordered):
        now = source.now
        signals.append(
            ("deadline_pressure", [_deadline_pressure(r[DEADLINE], now) for r in ordered])
        )
    affinity = [1.0 if r[AFFINITY] else 0.0 for r in ordered]
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
    # A stable sort keeps equal scores in baseline order, also when reversed.
    return sorted(range(len(rows)), key=scores.__getitem__, reverse=True)


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
        if scope is not None and r[ID] not in scope:
            continue
        pipe.candidates += 1
        if r[ID] in containers:
            pipe.containers_skipped += 1
            continue
        pool.append(r)
    unresolved, unblocks = source.blocking()
    if not (focus and source.is_live(focus)):
        pipe.unblocks = unblocks
    scores = rank_rows(source, pool, focus=focus, unblocks=unblocks)
    pipe.scores = {r[ID]: score for r, score in zip(pool, scores, strict=True)}
    blocked_statuses = source.blocked_statuses
    me = source.author
    for k in by_score(pool, scores):
        r = pool[k]
        if r[TYPE] == "Decision":
            pipe.decisions.append(r)
            if not include_decisions:
                continue
        holder = r[HOLDER]
        if holder and holder != me:
            pipe.held.append(r)
        elif r[STATUS] in blocked_statuses or r[ID] in unresolved:
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

    view = source.view_for((r[ID] for r in shown), focus)

    def rows(items: Sequence[Row], scores: dict[str, float], count: int) -> list[dict[str, Any]]:
        return [
            row(view, view.by_id[r[ID]], scores.get(r[ID], 0.0), focus=focus, now=source.now)
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
            if scope is None or r[ID] in scope
        ]
        ranked = rank_rows(source, high_pool, focus=focus, unblocks=pipe.unblocks)
        high_scores = {r[ID]: score for r, score in zip(high_pool, ranked, strict=True)}
        high = [high_pool[k] for k in by_score(high_pool, ranked)[:limit]]
        low_items = [r for r in pipe.ready if r[TYPE] not in HIGH_LEVEL_TYPES][:limit]
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

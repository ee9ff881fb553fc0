"""``pm next`` and ``pm context``: readiness, a baseline order, weighted relevance.

The reference implementation over a :class:`~pm_core.tracker.query.view.TrackerView`;
the read index answers the same from SQL (:mod:`pm_core.tracker.index.rank`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import epoch, parse_iso
from pm_core.tracker.model.errors import NotFoundError, UsageError
from pm_core.tracker.model.item import PRIORITY_NAMES, RISK_VALUES, Item
from pm_core.tracker.model.order import HIGH_LEVEL_TYPES, STATUS_RANK
from pm_core.tracker.query.rules import (
    DEADLINE_HORIZON_DAYS,
    FOCUS_MAX_HOPS,
    SIGNAL_ORDER,
    SIGNAL_WEIGHTS,
    priority_pressure,
)
from pm_core.tracker.query.shrink import check_budget, drop_key_in_rows, fit_to_budget, pop_last
from pm_core.tracker.query.view import TrackerView, build_view
from pm_core.tracker.storage.session import focus_id

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

DEPTHS = ("brief", "standard", "deep", "full")


def next_budget(limit: int) -> int:
    """Default token budget of ``pm next``."""
    return max(192, limit * 128)


def context_budget(limit: int) -> int:
    """Default token budget of ``pm context``."""
    return max(256, limit * 160)


# ---------------------------------------------------------------- pipeline


class Pipeline:
    """Candidates sorted into their buckets, each in ranked order."""

    __slots__ = (
        "blocked",
        "candidates",
        "completed_containers",
        "containers_skipped",
        "decisions",
        "focus",
        "held",
        "ready",
        "scores",
        "view",
    )

    def __init__(self, view: TrackerView, focus: str | None) -> None:
        self.view = view
        self.focus = focus
        self.ready: list[Item] = []
        self.blocked: list[Item] = []
        self.decisions: list[Item] = []
        self.held: list[Item] = []
        self.containers_skipped = 0
        self.candidates = 0
        self.completed_containers: set[str] = set()
        self.scores: dict[str, float] = {}


def run_pipeline(
    view: TrackerView,
    *,
    parent: str | None = None,
    include_decisions: bool = False,
    focus: str | None = None,
    now: datetime | None = None,
) -> Pipeline:
    """Classify and rank the candidates of ``view``."""
    moment = now or datetime.now(UTC)
    result = Pipeline(view=view, focus=focus)
    # Every ancestor of a non-terminal item is a container: one pass, O(n x depth).
    containers: set[str] = set()
    with_children: set[str] = set(view.children)
    for item in view.by_id.values():
        if not view.is_terminal(item):
            containers.update(view.ancestors(item.id))
    scope = set(view.descendants(parent)) if parent else None
    eligible = view.active_statuses | view.blocked_statuses
    pool: list[Item] = []
    for item in view.item_list():
        if view.is_terminal(item) or item.status not in eligible:
            continue
        if scope is not None and item.id not in scope:
            continue
        result.candidates += 1
        if item.id in containers:
            result.containers_skipped += 1
            continue
        if item.id in with_children:
            result.completed_containers.add(item.id)
        pool.append(item)
    ranked = rank(view, pool, focus=focus, now=moment, done=result.completed_containers)
    result.scores = ranked
    for item in by_score(pool, ranked):
        if item.type == "Decision":
            result.decisions.append(item)
            if not include_decisions:
                continue
        if view.held_by_other(item):
            result.held.append(item)
        elif item.status in view.blocked_statuses or view.unresolved_blockers(item.id):
            result.blocked.append(item)
        else:
            result.ready.append(item)
    return result


def by_score(items: Sequence[Item], scores: dict[str, float]) -> list[Item]:
    """Items by score desc; ties keep the baseline order ``rank`` recorded."""
    position = {item_id: n for n, item_id in enumerate(scores)}
    return sorted(items, key=lambda i: (-scores[i.id], position[i.id]))


def baseline_key(done: set[str]) -> Callable[[Item], Any]:
    """The baseline sort key (before relevance)."""

    def key(item: Item) -> Any:
        return (
            item.id in done,
            STATUS_RANK.get(item.status, 1),
            item.priority,
            item.order is None,
            item.order if item.order is not None else 0,
            item.deadline is None,
            epoch(item.deadline) if item.deadline else 0.0,
            -epoch(item.updated_at),
            item.id,
        )

    return key


def rank(
    view: TrackerView,
    pool: Sequence[Item],
    *,
    focus: str | None,
    now: datetime,
    done: set[str] | None = None,
) -> dict[str, float]:
    """Relevance score per id, keys in baseline order (ties resolve by it)."""
    ordered = sorted(pool, key=baseline_key(done or set()))
    if not ordered:
        return {}
    signals = compute_signals(view, ordered, focus=focus, now=now)
    present = [name for name in SIGNAL_ORDER if name in signals]
    scores: dict[str, float] = {}
    for item in ordered:
        total = 0.0
        weight = 0.0
        for name in present:
            total += signals[name][item.id] * SIGNAL_WEIGHTS[name]
            weight += SIGNAL_WEIGHTS[name]
        scores[item.id] = round(total / weight, 4) if weight else 0.0
    return scores


def compute_signals(
    view: TrackerView, ordered: Sequence[Item], *, focus: str | None, now: datetime
) -> dict[str, dict[str, float]]:
    """Each available signal's value (0..1) per id; unavailable signals are absent."""
    n = len(ordered)
    me = view.author
    out: dict[str, dict[str, float]] = {
        "structural": {i.id: 1.0 - (k / (n - 1) if n > 1 else 0.0) for k, i in enumerate(ordered)},
        "priority_pressure": {i.id: priority_pressure(i.priority) for i in ordered},
    }
    updated = {i.id: epoch(i.updated_at) for i in ordered}
    low, high = min(updated.values()), max(updated.values())
    if high > low:
        out["recency"] = {k: (v - low) / (high - low) for k, v in updated.items()}
    _relative(out, "activity_density", {i.id: len(i.comments) + len(i.test_runs) for i in ordered})
    _relative(
        out,
        "knowledge_density",
        {i.id: len(i.notes) + len(i.learnings) + len(i.docs) + len(i.files) for i in ordered},
    )
    if focus and focus in view.by_id:
        distance = _distances(view, focus, max_depth=FOCUS_MAX_HOPS)
        out["graph_proximity"] = {
            i.id: 1 / (1 + distance[i.id]) if i.id in distance else 0.0 for i in ordered
        }
    else:
        _relative(out, "graph_proximity", {i.id: _unblocks(view, i.id) for i in ordered})
    claim = {i.id: 1.0 if (view.holder(i) == me or i.id == focus) else 0.0 for i in ordered}
    if any(claim.values()):
        out["claim_focus"] = claim
    risk = {i.id: RISK_VALUES.get(str(i.risk or "").lower(), 0.0) for i in ordered}
    if any(risk.values()):
        out["risk_pressure"] = risk
    if any(i.deadline for i in ordered):
        out["deadline_pressure"] = {i.id: deadline_pressure_of(i.deadline, now) for i in ordered}
    affinity = {i.id: 1.0 if me in (i.author, i.reviewer) else 0.0 for i in ordered}
    if any(affinity.values()):
        out["author_affinity"] = affinity
    return out


def _relative(out: dict[str, dict[str, float]], name: str, counts: dict[str, int]) -> None:
    top = max(counts.values(), default=0)
    if top > 0:
        out[name] = {k: v / top for k, v in counts.items()}


def _unblocks(view: TrackerView, item_id: str) -> int:
    count = 0
    for dependent in view.dependents.get(item_id, ()):
        other = view.by_id.get(dependent)
        if other is not None and not view.is_terminal(other):
            count += 1
    return count


def deadline_pressure_of(deadline: str | None, now: datetime) -> float:
    """The ``deadline_pressure`` signal of one deadline at ``now`` (0 without one)."""
    if not deadline:
        return 0.0
    try:
        days = (parse_iso(deadline) - now).total_seconds() / 86400
    except ValueError:
        return 0.0
    if days <= 0:
        return 1.0
    return max(0.0, 1.0 - days / DEADLINE_HORIZON_DAYS)


def _distances(view: TrackerView, start: str, *, max_depth: int) -> dict[str, int]:
    """Undirected hop distance over hierarchy and blocking edges."""
    neighbours: dict[str, set[str]] = {}
    for edge in view.edges:
        if edge.kind in ("parent", "blocked_by"):
            neighbours.setdefault(edge.source, set()).add(edge.target)
            neighbours.setdefault(edge.target, set()).add(edge.source)
    distance = {start: 0}
    frontier = [start]
    for depth in range(1, max_depth + 1):
        nxt = []
        for current in frontier:
            for other in sorted(neighbours.get(current, ())):
                if other not in distance:
                    distance[other] = depth
                    nxt.append(other)
        frontier = nxt
    return distance


# ---------------------------------------------------------------- rows


def reasons_for(view: TrackerView, item: Item, *, focus: str | None, now: datetime) -> list[str]:
    """Why an item is where it is, in a few short phrases."""
    out: list[str] = [f"status {item.status}"]
    name = PRIORITY_NAMES[item.priority] if 0 <= item.priority < len(PRIORITY_NAMES) else "?"
    out.append(f"priority {item.priority} ({name})")
    if item.deadline:
        pressure = deadline_pressure_of(item.deadline, now)
        out.append(f"overdue since {item.deadline}" if pressure >= 1 else f"due {item.deadline}")
    blockers = view.blockers.get(item.id, [])
    unresolved = view.unresolved_blockers(item.id)
    for blocker in unresolved:
        target = view.by_id.get(blocker)
        out.append(f"blocked by {blocker} ({target.status if target else 'missing'})")
    if blockers and not unresolved:
        out.append(f"blockers cleared: {', '.join(blockers)}")
    if item.status in view.blocked_statuses and not unresolved:
        out.append("status is blocked but no blocker is open: unblock it")
    holder = view.holder(item)
    if holder == view.author:
        out.append("claimed by you")
    elif holder:
        out.append(f"claimed by {holder}")
    if item.id == focus:
        out.append("focus item")
    parent = view.parent_of.get(item.id)
    if parent:
        target = view.by_id.get(parent)
        out.append(f"under {parent}" + (f" ({target.title})" if target else ""))
    unblocks = _unblocks(view, item.id)
    if unblocks:
        out.append(f"unblocks {unblocks} item" + ("s" if unblocks != 1 else ""))
    return out


def row(
    view: TrackerView,
    item: Item,
    score: float,
    *,
    focus: str | None,
    now: datetime,
    reasons: bool = True,
) -> dict[str, Any]:
    """``{id, title, type, status, priority, score, reasons, parent?}``."""
    out: dict[str, Any] = {
        "id": item.id,
        "title": item.title,
        "type": item.type,
        "status": item.status,
        "priority": item.priority,
        "score": score,
    }
    if reasons:
        out["reasons"] = reasons_for(view, item, focus=focus, now=now)
    parent = view.parent_of.get(item.id)
    if parent:
        out["parent"] = parent
    return out


# ---------------------------------------------------------------- next


def next_items(
    tracker: Tracker,
    *,
    limit: int = 5,
    parent: str | None = None,
    ready_only: bool = False,
    include_decisions: bool = False,
    token_budget: int | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """What to work on next: a recommendation with reasons, then the rest by bucket.

    Returns ``{recommended, ready, blocked, decision_needed, held_by_others,
    counts, token_cost, omissions}``; the result never exceeds the token
    budget (``max(192, limit*128)`` unless given): reasons go first, then rows,
    each cut named in ``omissions``.
    """

    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    check_budget(token_budget)
    moment = now or datetime.now(UTC)
    indexed = tracker.index_reads.next_items(
        limit=limit,
        parent=parent,
        ready_only=ready_only,
        include_decisions=include_decisions,
        token_budget=token_budget,
        now=moment,
    )
    if indexed is not None:
        return indexed
    view = build_view(tracker)
    parent_id = _require_parent(tracker, view, parent)
    focus = focus_id(tracker)
    pipe = run_pipeline(
        view, parent=parent_id, include_decisions=include_decisions, focus=focus, now=moment
    )

    def rows(items: list[Item]) -> list[dict[str, Any]]:
        return [row(view, i, pipe.scores[i.id], focus=focus, now=moment) for i in items[:limit]]

    return next_result(
        ready=rows(pipe.ready),
        blocked=[] if ready_only else rows(pipe.blocked),
        decisions=[] if ready_only else rows(pipe.decisions),
        held=[] if ready_only else rows(pipe.held),
        counts={
            "candidates": pipe.candidates,
            "ready": len(pipe.ready),
            "blocked": len(pipe.blocked),
            "decision_needed": len(pipe.decisions),
            "held_by_others": len(pipe.held),
            "containers_skipped": pipe.containers_skipped,
        },
        parent_id=parent_id,
        corrupt=[view.relpath(p) for p, _ in view.corrupt],
        limit=limit,
        token_budget=token_budget,
    )


def next_result(
    *,
    ready: list[dict[str, Any]],
    blocked: list[dict[str, Any]],
    decisions: list[dict[str, Any]],
    held: list[dict[str, Any]],
    counts: dict[str, int],
    parent_id: str | None,
    corrupt: list[str],
    limit: int,
    token_budget: int | None,
) -> dict[str, Any]:
    """Assemble and budget the ``next`` result from its rows (shared with the index path)."""
    result: dict[str, Any] = {
        "recommended": dict(ready[0]) if ready else None,
        "ready": ready,
        "blocked": blocked,
        "decision_needed": decisions,
        "held_by_others": held,
        "counts": counts,
        "omissions": [],
    }
    if parent_id:
        result["parent"] = parent_id
    if corrupt:
        result["skipped_corrupt"] = corrupt
    budget = token_budget or next_budget(limit)
    others = ["blocked", "decision_needed", "held_by_others"]
    steps = [
        ("reasons", "token_budget", "pm next --limit 1", drop_key_in_rows(others, "reasons")),
        (
            "reasons",
            "token_budget",
            "pm next --limit 1",
            drop_key_in_rows(["ready"], "reasons", True),
        ),
        *[
            (
                key,
                "token_budget",
                f"pm next --limit {limit} --token-budget {budget * 2}",
                pop_last(key),
            )
            for key in ("held_by_others", "decision_needed", "blocked")
        ],
        (
            "ready",
            "token_budget",
            f"pm next --ready-only --token-budget {budget * 2}",
            pop_last("ready", 1),
        ),
    ]
    return fit_to_budget(result, budget, steps)


def _require_parent(tracker: Tracker, view: TrackerView, parent: str | None) -> str | None:
    if not parent:
        return None

    parent_id = tracker.normalize_id(parent)
    if parent_id not in view.by_id:
        raise NotFoundError(f"parent {parent_id} not found", hint="pass an existing item id")
    return parent_id


# ---------------------------------------------------------------- context


def context(
    tracker: Tracker,
    *,
    depth: str = "brief",
    limit: int = 10,
    parent: str | None = None,
    token_budget: int | None = None,
    section: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Ranked working context: summary, focus, high- and low-level work, agenda, sections.

    ``depth`` chooses the sections (brief: none; standard: hierarchy,
    activity, progress, recently_created, unparented, workload; deep: plus
    blockers, files, staleness, tests; full: all, uncapped and unbudgeted
    unless ``token_budget`` is given). ``section`` asks for one section at
    any depth. Over budget, sections go first, then reasons, then rows, each
    named in ``omissions``.
    """
    from pm_core.tracker.query import sections as sec

    if depth not in DEPTHS:
        raise UsageError(f"unknown depth {depth!r}", hint=f"use one of: {', '.join(DEPTHS)}")
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    if section is not None and section not in sec.ALL_SECTIONS:
        raise UsageError(
            f"unknown section {section!r}", hint=f"use one of: {', '.join(sec.ALL_SECTIONS)}"
        )
    check_budget(token_budget)
    moment = now or datetime.now(UTC)
    indexed = tracker.index_reads.context(
        depth=depth,
        limit=limit,
        parent=parent,
        token_budget=token_budget,
        section=section,
        now=moment,
    )
    if indexed is not None:
        return indexed
    view = build_view(tracker)
    parent_id = _require_parent(tracker, view, parent)
    focus = focus_id(tracker)
    pipe = run_pipeline(view, parent=parent_id, focus=focus, now=moment)
    scope = set(view.descendants(parent_id)) if parent_id else None

    def in_scope(item: Item) -> bool:
        return scope is None or item.id in scope

    def rows(items: list[Item], scores: dict[str, float], count: int) -> list[dict[str, Any]]:
        return [row(view, i, scores.get(i.id, 0.0), focus=focus, now=moment) for i in items[:count]]

    high_pool = [
        i
        for i in view.item_list()
        if i.type in HIGH_LEVEL_TYPES and not view.is_terminal(i) and in_scope(i)
    ]
    high_scores = rank(view, high_pool, focus=focus, now=moment)
    high = by_score(high_pool, high_scores)
    low_items = [i for i in pipe.ready if i.type not in HIGH_LEVEL_TYPES]
    low = rows(low_items, pipe.scores, limit)
    chosen = [section] if section else sec.sections_for(depth)
    cap = None if depth == "full" else sec.SECTION_CAP[depth if depth != "brief" else "standard"]
    return context_result(
        summary=sec.summary(view, scope),
        focus=sec.brief_node(view, focus) if focus else None,
        high=rows(high, high_scores, limit),
        low=low,
        blocked=rows(pipe.blocked, pipe.scores, max(0, limit - len(low))),
        agenda=sec.agenda(view, scope, moment, limit),
        sections={name: sec.build(name, view, scope, moment, cap) for name in chosen},
        corrupt=[view.relpath(p) for p, _ in view.corrupt],
        depth=depth,
        limit=limit,
        token_budget=token_budget,
    )


def context_result(
    *,
    summary: dict[str, Any],
    focus: dict[str, Any] | None,
    high: list[dict[str, Any]],
    low: list[dict[str, Any]],
    blocked: list[dict[str, Any]],
    agenda: list[dict[str, Any]],
    sections: dict[str, Any],
    corrupt: list[str],
    depth: str,
    limit: int,
    token_budget: int | None,
) -> dict[str, Any]:
    """Assemble and budget the ``context`` result from its parts (shared with the index path)."""
    from pm_core.tracker.query import sections as sec

    result: dict[str, Any] = {"summary": summary}
    if focus is not None:
        result["focus"] = {**focus, "reasons": ["focus item"]}
    result["high_level"] = high
    result["low_level"] = low
    result["blocked_fallback"] = blocked
    result["agenda"] = agenda
    chosen = list(sections)
    result["sections"] = sections
    result["omissions"] = []
    if corrupt:
        result["skipped_corrupt"] = corrupt
    budget = token_budget if token_budget else None if depth == "full" else context_budget(limit)
    dropped: list[str] = []
    steps: list[tuple[Any, ...]] = [
        (
            "sections",
            "token_budget",
            "pm context --section NAME",
            sec.drop_sections(chosen, dropped),
            {"names": dropped},
        )
    ]
    lists = ["high_level", "blocked_fallback"]
    more = f"pm context --depth {depth} --token-budget {(budget or 0) * 2}"
    steps += [
        ("reasons", "token_budget", "pm next --limit 1", drop_key_in_rows(lists, "reasons")),
        (
            "reasons",
            "token_budget",
            "pm next --limit 1",
            drop_key_in_rows(["low_level"], "reasons", True),
        ),
        ("agenda", "token_budget", more, pop_last("agenda")),
        ("blocked_fallback", "token_budget", "pm next", pop_last("blocked_fallback")),
        ("high_level", "token_budget", "pm list --type Epic,Feature", pop_last("high_level", 1)),
        ("low_level", "token_budget", "pm next --limit 10", pop_last("low_level", 1)),
        ("high_level", "token_budget", "pm list --type Epic,Feature", pop_last("high_level")),
    ]
    return fit_to_budget(result, budget, steps)

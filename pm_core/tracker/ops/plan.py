"""Plans: an item of type Plan holding ordered steps and the decisions taken.

Every change goes through :meth:`Tracker.edit` with a ``plan_*`` op; ``plan_status``
is derived from the steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import now_iso
from pm_core.tracker.model.errors import DependencyError, NoEffectError, NotFoundError, UsageError
from pm_core.tracker.model.item import Item

if TYPE_CHECKING:
    from pm_core.tracker.api import Receipt, Tracker

PLAN_TYPE = "Plan"
STEP_STATUSES = ("pending", "in_progress", "done", "skipped")
FINISHED = frozenset({"done", "skipped"})
PLAN_STATUSES = ("draft", "active", "completed")
_STEP_ALIASES = {"todo": "pending", "doing": "in_progress", "in-progress": "in_progress"}


def derive_status(steps: Sequence[Mapping[str, Any]]) -> str:
    """draft while nothing has started, completed when every step is finished, else active."""
    states = [str(s.get("status", "pending")) for s in steps]
    if states and all(s in FINISHED for s in states):
        return "completed"
    if any(s != "pending" for s in states):
        return "active"
    return "draft"


def _normalize_step_status(value: str) -> str:
    key = value.strip().lower().replace(" ", "_")
    key = _STEP_ALIASES.get(key, key)
    if key not in STEP_STATUSES:
        raise UsageError(
            f"unknown step status {value!r}", hint=f"use one of: {', '.join(STEP_STATUSES)}"
        )
    return key


def _next_step_id(steps: Sequence[Mapping[str, Any]]) -> str:
    numbers = [
        int(str(s.get("id"))[1:])
        for s in steps
        if str(s.get("id", "")).startswith("s") and str(s.get("id"))[1:].isdigit()
    ]
    return f"s{max(numbers, default=0) + 1}"


def find_step(steps: Sequence[Mapping[str, Any]], ref: str) -> int:
    """Index of the step named by ``ref``: its id (``s2``), position (``2``) or exact title."""
    text = ref.strip()
    for index, step in enumerate(steps):
        if str(step.get("id")) == text:
            return index
    if text.isdigit() and 1 <= int(text) <= len(steps):
        return int(text) - 1
    for index, step in enumerate(steps):
        if str(step.get("title", "")).strip().lower() == text.lower():
            return index
    raise NotFoundError(
        f"plan has no step {ref!r}",
        hint="name a step by id (s1), position (1) or title; `pm plan show` lists them",
    )


def _require_plan(item: Item) -> None:
    if item.type != PLAN_TYPE:
        raise UsageError(
            f"{item.id} is a {item.type}, not a Plan",
            hint="create one with `pm plan create`",
        )


def _clean_titles(steps: Sequence[str]) -> list[str]:
    titles = [str(s).strip() for s in steps]
    empty = [n for n, t in enumerate(titles, start=1) if not t]
    if empty:
        raise UsageError(f"step {empty[0]} has an empty title", hint="give every step a title")
    return titles


def plan_create(
    tracker: Tracker,
    title: str,
    steps: Sequence[str],
    *,
    parent: str | None = None,
    description: str = "",
) -> Receipt:
    """Create a Plan item with ``steps`` (titles, in order) all pending."""
    entries = [
        {"id": f"s{n}", "title": t, "status": "pending"}
        for n, t in enumerate(_clean_titles(steps), start=1)
    ]
    values: dict[str, Any] = {
        "title": title,
        "type": PLAN_TYPE,
        "plan_status": derive_status(entries),
    }
    if entries:
        values["plan_steps"] = entries
    if description:
        values["description"] = description
    if parent:
        values["parent"] = parent
    receipt = tracker.create(values, message="plan created")
    receipt["steps"] = len(entries)
    return receipt


def plan_show(tracker: Tracker, plan_id: str) -> dict[str, Any]:
    """The plan, its steps, its decisions, and what is wrong with it."""
    item = tracker.get(plan_id)
    _require_plan(item)
    steps = [dict(s) for s in item.plan_steps]
    problems = validate_steps(steps)
    stored = item.plan_status
    derived = derive_status(steps)
    if stored and stored != derived:
        problems.append(f"plan_status is {stored} but the steps say {derived}")
    counts = {s: sum(1 for x in steps if x.get("status", "pending") == s) for s in STEP_STATUSES}
    return {
        "plan": {
            "id": item.id,
            "title": item.title,
            "status": item.status,
            "plan_status": stored or derived,
        },
        "steps": steps,
        "decisions": [dict(d) for d in item.plan_decisions],
        "counts": counts,
        "next_step": _next_actionable(steps),
        "validation": {"ok": not problems, "problems": problems},
    }


def _next_actionable(steps: Sequence[Mapping[str, Any]]) -> str | None:
    """The first unfinished step whose dependencies are all finished."""
    state = {str(s.get("id")): str(s.get("status", "pending")) for s in steps}
    for step in steps:
        if state[str(step.get("id"))] in FINISHED:
            continue
        if all(state.get(str(d)) in FINISHED for d in step.get("depends_on") or ()):
            return str(step.get("id"))
    return None


def validate_steps(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """Problems with a step list: ids, statuses, unknown or cyclic dependencies."""
    problems: list[str] = []
    ids = [str(s.get("id", "")) for s in steps]
    seen: set[str] = set()
    for step_id in ids:
        if not step_id:
            problems.append("a step has no id")
        elif step_id in seen:
            problems.append(f"step id {step_id} is used twice")
        seen.add(step_id)
    state = dict(zip(ids, (str(s.get("status", "pending")) for s in steps), strict=True))
    graph: dict[str, list[str]] = {}
    for step in steps:
        step_id = str(step.get("id", ""))
        if not str(step.get("title", "")).strip():
            problems.append(f"step {step_id} has no title")
        if state[step_id] not in STEP_STATUSES:
            problems.append(f"step {step_id} has unknown status {state[step_id]!r}")
        deps = [str(d) for d in step.get("depends_on") or ()]
        # Merge on duplicate ids so a cycle through either copy is still seen.
        graph.setdefault(step_id, []).extend(deps)
        for dep in deps:
            if dep not in state:
                problems.append(f"step {step_id} depends on unknown step {dep}")
            elif state[step_id] == "done" and state[dep] not in FINISHED:
                problems.append(f"step {step_id} is done but its dependency {dep} is not")
    cycle = _step_cycle(graph)
    if cycle:
        problems.append(f"steps depend on each other in a cycle: {' -> '.join(cycle)}")
    return problems


def _step_cycle(graph: Mapping[str, Sequence[str]]) -> list[str]:
    colour: dict[str, int] = {}
    for start in graph:
        if colour.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            current, pos = stack.pop()
            if pos == 0:
                colour[current] = 1
                path.append(current)
            deps = graph.get(current, ())
            if pos < len(deps):
                stack.append((current, pos + 1))
                dep = deps[pos]
                if colour.get(dep) == 1:
                    return [*path[path.index(dep) :], dep]
                if not colour.get(dep) and dep in graph:
                    stack.append((dep, 0))
                continue
            colour[current] = 2
            path.pop()
    return []


def plan_step(
    tracker: Tracker, plan_id: str, step_ref: str, status: str, *, note: str | None = None
) -> Receipt:
    """Move one step to ``status``; starting or finishing needs its dependencies finished."""
    wanted = _normalize_step_status(status)
    moved: dict[str, Any] = {}

    def change(item: Item) -> None:
        _require_plan(item)
        index = find_step(item.plan_steps, step_ref)
        step = item.plan_steps[index]
        if step.get("status") == wanted and note is None:
            raise NoEffectError(
                f"step {step.get('id')} is already {wanted}", warning="noop_step_unchanged"
            )
        if wanted in ("in_progress", "done"):
            state = {str(s.get("id")): s.get("status") for s in item.plan_steps}
            waiting = [d for d in step.get("depends_on") or () if state.get(str(d)) not in FINISHED]
            if waiting:
                raise DependencyError(
                    f"step {step.get('id')} waits on {', '.join(map(str, waiting))}",
                    hint="finish or skip those steps first",
                )
        step["status"] = wanted
        if note:
            step["note"] = note
        item.plan_status = derive_status(item.plan_steps)
        moved.update(step=step.get("id"), plan_status=item.plan_status)

    receipt = tracker.edit(plan_id, "plan_step", change, message=f"step {step_ref} -> {wanted}")
    receipt.update(moved)
    return receipt


def plan_add_step(
    tracker: Tracker,
    plan_id: str,
    title: str,
    *,
    depends_on: Sequence[str] = (),
    note: str | None = None,
    after: str | None = None,
) -> Receipt:
    """Append a pending step (or insert it after step ``after``)."""
    (clean,) = _clean_titles([title])
    added: dict[str, Any] = {}

    def change(item: Item) -> None:
        _require_plan(item)
        steps = item.plan_steps
        deps = [str(steps[find_step(steps, d)]["id"]) for d in depends_on]
        entry: dict[str, Any] = {"id": _next_step_id(steps), "title": clean, "status": "pending"}
        if deps:
            entry["depends_on"] = deps
        if note:
            entry["note"] = note
        position = find_step(steps, after) + 1 if after else len(steps)
        steps.insert(position, entry)
        item.plan_status = derive_status(steps)
        added.update(step=entry["id"], plan_status=item.plan_status)

    receipt = tracker.edit(plan_id, "plan_step_add", change, message=f"step added: {clean}")
    receipt.update(added)
    return receipt


def plan_decision(tracker: Tracker, plan_id: str, text: str) -> Receipt:
    """Record a decision taken on the plan."""
    if not text or not text.strip():
        raise UsageError("empty decision", hint="say what was decided and why")

    count: dict[str, int] = {}

    def change(item: Item) -> None:
        _require_plan(item)
        item.plan_decisions.append(
            {"created_at": now_iso(), "author": tracker.author, "text": text.strip()}
        )
        count["decisions"] = len(item.plan_decisions)

    receipt = tracker.edit(plan_id, "plan_decision", change)
    receipt.update(count)
    return receipt

"""``pm graph`` and ``pm deps``: bounded, read-only analyses of the item graph.

Counts first, bounded by depth, nodes and edges, with ``truncated`` when a bound cuts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from pm_core.tracker.model.errors import NotFoundError, UsageError
from pm_core.tracker.query.budget import json_measure
from pm_core.tracker.query.view import Edge, TrackerView, build_view, node

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

SUBCOMMANDS = ("ancestors", "descendants", "blockers", "dependents", "path", "cycles")
DEFAULT_DEPTH = 32
DEFAULT_MAX_NODES = 200
DEFAULT_MAX_EDGES = 400
#: How an edge reads from its target's side.
INVERSE_KIND = {"blocked_by": "blocks", "parent": "child"}


@attrs.define(slots=True)
class _Collector:
    """Nodes and edges gathered under the node and edge bounds."""

    view: TrackerView
    max_nodes: int
    max_edges: int
    nodes: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    edges: list[Edge] = attrs.field(factory=list)
    edge_set: set[Edge] = attrs.field(factory=set)
    truncated: bool = False

    def add_node(self, item_id: str) -> bool:
        if item_id in self.nodes:
            return True
        if len(self.nodes) >= self.max_nodes:
            self.truncated = True
            return False
        self.nodes[item_id] = node(self.view, item_id)
        return True

    def add_edge(self, edge: Edge) -> bool:
        if edge in self.edge_set:
            return True
        if len(self.edges) >= self.max_edges:
            self.truncated = True
            return False
        if not (self.add_node(edge.source) and self.add_node(edge.target)):
            return False
        self.edges.append(edge)
        self.edge_set.add(edge)
        return True

    def result(self, subcommand: str, root: str | None, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subcommand": subcommand,
            "root": root,
            "counts": {"nodes": len(self.nodes), "edges": len(self.edges)},
            "truncated": self.truncated,
            "nodes": list(self.nodes.values()),
            "edges": [e.to_json() for e in self.edges],
        }
        out.update(extra)
        return out


def _check_bounds(depth: int, max_nodes: int, max_edges: int) -> None:
    for name, value in (("depth", depth), ("max_nodes", max_nodes), ("max_edges", max_edges)):
        if value < 1:
            raise UsageError(f"{name} must be at least 1, got {value}")


def _walk(
    collector: _Collector,
    root: str,
    step: Mapping[str, Sequence[str]],
    make_edge: Any,
    depth: int,
) -> None:
    """Breadth-first from ``root`` over ``step`` for ``depth`` levels."""
    seen = {root}
    frontier = [root]
    for level in range(depth):
        nxt: list[str] = []
        for current in frontier:
            for other in step.get(current, ()):
                if not collector.add_edge(make_edge(current, other)):
                    return
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
        frontier = nxt
        if not frontier:
            return
        if level == depth - 1 and any(step.get(c) for c in frontier):
            collector.truncated = True


def graph(
    tracker: Tracker,
    subcommand: str,
    item_id: str | None = None,
    target: str | None = None,
    *,
    depth: int = DEFAULT_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> dict[str, Any]:
    """Run one graph analysis.

    ``ancestors``/``descendants`` follow the hierarchy, ``blockers`` what the
    item waits on (transitively), ``dependents`` what waits on it, ``path``
    the shortest chain of typed edges from ``item_id`` to ``target`` (either
    direction), ``cycles`` every blocking or hierarchy cycle in the tracker.
    """
    if subcommand not in SUBCOMMANDS:
        raise UsageError(
            f"unknown graph subcommand {subcommand!r}", hint=f"use one of: {', '.join(SUBCOMMANDS)}"
        )
    _check_bounds(depth, max_nodes, max_edges)
    view = build_view(tracker)
    collector = _Collector(view, max_nodes, max_edges)
    if subcommand == "cycles":
        cycles = find_cycles(view.edges)
        for cycle, kind in cycles:
            for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
                collector.add_edge(Edge(a, b, kind))
        return collector.result(subcommand, None, cycles=[c for c, _ in cycles])
    root = _require(tracker, view, item_id, "an item id")
    collector.add_node(root)
    if subcommand == "ancestors":
        up = {k: [v] for k, v in view.parent_of.items()}
        _walk(collector, root, up, lambda a, b: Edge(a, b, "parent"), depth)
    elif subcommand == "descendants":
        _walk(collector, root, view.children, lambda a, b: Edge(b, a, "parent"), depth)
    elif subcommand == "blockers":
        _walk(collector, root, view.blockers, lambda a, b: Edge(a, b, "blocked_by"), depth)
    elif subcommand == "dependents":
        _walk(collector, root, view.dependents, lambda a, b: Edge(b, a, "blocked_by"), depth)
    else:
        goal = _require(tracker, view, target, "a target id", must_exist=False)
        path, path_edges = shortest_path(view.edges, root, goal, depth)
        for edge in path_edges:
            collector.add_edge(edge)
        collector.add_node(goal)
        return collector.result(subcommand, root, target=goal, paths=[path] if path else [])
    return collector.result(subcommand, root)


def _require(
    tracker: Tracker, view: TrackerView, raw: str | None, what: str, *, must_exist: bool = True
) -> str:
    if not raw:
        raise UsageError(f"this graph analysis needs {what}", hint="pass the id")
    item_id = tracker.normalize_id(raw)
    known = item_id in view.by_id or any(item_id in (e.source, e.target) for e in view.edges)
    if item_id not in view.by_id and (must_exist or not known):
        raise NotFoundError(f"item {item_id} not found", hint="list ids with `pm list --all`")
    return item_id


def shortest_path(
    edges: Iterable[Edge], start: str, goal: str, depth: int = DEFAULT_DEPTH
) -> tuple[list[str], list[Edge]]:
    """The shortest chain of typed edges between two ids (edges walked either way)."""
    adjacency: dict[str, list[tuple[str, Edge]]] = {}
    for edge in edges:
        adjacency.setdefault(edge.source, []).append((edge.target, edge))
        adjacency.setdefault(edge.target, []).append((edge.source, edge))
    for links in adjacency.values():
        links.sort(key=lambda link: (link[0], link[1].kind))
    previous: dict[str, tuple[str, Edge] | None] = {start: None}
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    while queue:
        current, hops = queue.popleft()
        if current == goal:
            break
        if hops >= depth:
            continue
        for other, edge in adjacency.get(current, ()):
            if other not in previous:
                previous[other] = (current, edge)
                queue.append((other, hops + 1))
    if goal not in previous:
        return [], []
    path = [goal]
    used: list[Edge] = []
    step = previous[goal]
    while step is not None:
        before, edge = step
        used.append(edge)
        path.append(before)
        step = previous[before]
    path.reverse()
    used.reverse()
    return path, used


def find_cycles(edges: Iterable[Edge]) -> list[tuple[list[str], str]]:
    """One cycle per strongly connected group, for blocking and hierarchy edges.

    Each cycle starts at its smallest id; the list is sorted. Iterative
    Tarjan, so deep chains do not hit the recursion limit.
    """
    found: list[tuple[list[str], str]] = []
    for kind in ("blocked_by", "parent"):
        graph_map: dict[str, list[str]] = {}
        for edge in edges:
            if edge.kind == kind:
                graph_map.setdefault(edge.source, []).append(edge.target)
        for targets in graph_map.values():
            targets.sort()
        for group in _strong_components(graph_map):
            if len(group) > 1:
                found.append((_cycle_in(graph_map, set(group)), kind))
    found.sort(key=lambda c: (c[1], c[0]))
    return found


def _strong_components(graph_map: Mapping[str, Sequence[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph_map):
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            current, child_pos = work.pop()
            if child_pos == 0:
                index[current] = low[current] = counter
                counter += 1
                stack.append(current)
                on_stack.add(current)
            targets = graph_map.get(current, ())
            advanced = False
            for pos in range(child_pos, len(targets)):
                other = targets[pos]
                if other not in index:
                    work.append((current, pos + 1))
                    work.append((other, 0))
                    advanced = True
                    break
                if other in on_stack:
                    low[current] = min(low[current], index[other])
            if advanced:
                continue
            if low[current] == index[current]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == current:
                        break
                groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[current])
    return groups


def _cycle_in(graph_map: Mapping[str, Sequence[str]], members: set[str]) -> list[str]:
    """A concrete cycle through the smallest member of a strongly connected group."""
    start = min(members)
    previous: dict[str, str | None] = {start: None}
    queue: deque[str] = deque([start])
    while queue:
        current = queue.popleft()
        for other in graph_map.get(current, ()):
            if other not in members:
                continue
            if other == start:
                path = [current]
                step = previous[current]
                while step is not None:
                    path.append(step)
                    step = previous[step]
                return list(reversed(path))
            if other not in previous:
                previous[other] = current
                queue.append(other)
    return sorted(members)


# ---------------------------------------------------------------- deps packet


def deps_tree(
    tracker: Tracker,
    item_id: str,
    depth: int = DEFAULT_DEPTH,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> dict[str, Any]:
    """The bounded packet of ``pm deps <id>``: links, blockers, ancestors, child tree."""
    _check_bounds(depth, max_nodes, max_edges)
    view = build_view(tracker)
    root = _require(tracker, view, item_id, "an item id")
    links: list[dict[str, Any]] = []
    for edge in view.edges:
        if edge.source == root:
            links.append({**node(view, edge.target), "kind": edge.kind, "direction": "out"})
        elif edge.target == root:
            kind = INVERSE_KIND.get(edge.kind, edge.kind)
            links.append({**node(view, edge.source), "kind": kind, "direction": "in"})
    links = links[:max_edges]
    unresolved = set(view.unresolved_blockers(root))
    blocked_by = [
        {**node(view, b), "resolved": b not in unresolved} for b in view.blockers.get(root, ())
    ]
    blocks = [node(view, d) for d in view.dependents.get(root, ())]
    budget = {"nodes": max_nodes, "truncated": False}

    def tree(current: str, level: int, seen: frozenset[str]) -> dict[str, Any]:
        out = node(view, current)
        kids = [k for k in view.children.get(current, ()) if k not in seen]
        if not kids:
            return out
        if level >= depth or budget["nodes"] <= 0:
            out["children_omitted"] = len(kids)
            budget["truncated"] = True
            return out
        out["children"] = []
        for kid in kids:
            if budget["nodes"] <= 0:
                out["children_omitted"] = len(kids) - len(out["children"])
                budget["truncated"] = True
                break
            budget["nodes"] = int(budget["nodes"]) - 1
            out["children"].append(tree(kid, level + 1, seen | {kid}))
        return out

    packet: dict[str, Any] = {
        "id": root,
        "item": node(view, root),
        "ancestors": [node(view, a) for a in view.ancestors(root)[:depth]],
        "blocked_by": blocked_by,
        "blocks": blocks,
        "links": links,
        "tree": tree(root, 0, frozenset({root})),
    }
    packet["counts"] = {
        "links": len(links),
        "blocked_by": len(blocked_by),
        "unresolved_blockers": sum(1 for b in blocked_by if not b["resolved"]),
        "blocks": len(blocks),
        "descendants": max_nodes - int(budget["nodes"]),
    }
    packet["truncated"] = bool(budget["truncated"])
    packet["token_cost"] = {"estimated_tokens": json_measure(packet)}
    return packet

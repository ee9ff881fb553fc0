"""A read-only view of every item, with the relation maps built once per call.

Edges are kept in one canonical direction: ``child -> parent``, ``waiter ->
blocker``, and ``owner -> target`` for every other kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.claims.leases import holder_overrides
from pm_core.tracker.model.errors import CorruptItemError
from pm_core.tracker.model.item import Item
from pm_core.tracker.query.rules import ACTIVE_ROLE, BLOCKED_ROLE, statuses_with_role
from pm_core.tracker.storage.workspace import tracker_relpath

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


class Edge(NamedTuple):
    """One typed edge in canonical direction."""

    source: str
    target: str
    kind: str

    def to_json(self) -> dict[str, str]:
        """``{from, to, kind}``."""
        return {"from": self.source, "to": self.target, "kind": self.kind}


class TrackerView(NamedTuple):
    """Every readable item plus hierarchy and blocking maps (built whole, never changed)."""

    root: Path
    author: str
    terminal: frozenset[str]
    blocked_statuses: frozenset[str]
    active_statuses: frozenset[str]
    by_id: dict[str, Item]
    #: Every file per id (more than one means a duplicate id across folders).
    paths: dict[str, list[Path]]
    corrupt: list[tuple[Path, CorruptItemError]]
    parent_of: dict[str, str]
    children: dict[str, list[str]]
    blockers: dict[str, list[str]]
    dependents: dict[str, list[str]]
    edges: list[Edge]
    #: Holders that differ from the item files: expired leases hold nothing, and in
    #: remote mode the last fetched leases win (see ``leases.holder_overrides``).
    lease_holders: Mapping[str, str | None] = MappingProxyType({})

    # ------------------------------------------------------------ questions

    def is_terminal(self, item: Item) -> bool:
        """Closed or canceled (by status role)."""
        return item.status in self.terminal

    def holder(self, item: Item) -> str | None:
        """Who holds the item's claim (principal first, then assignee; leases applied)."""
        if item.id in self.lease_holders:
            return self.lease_holders[item.id]
        return item.claim_principal or item.assignee or None

    def held_by_other(self, item: Item) -> bool:
        """Claimed or assigned to someone other than the view's author."""
        holder = self.holder(item)
        return bool(holder) and holder != self.author

    def unresolved_blockers(self, item_id: str) -> list[str]:
        """Blockers that are missing or not terminal."""
        out = []
        for blocker in self.blockers.get(item_id, ()):
            target = self.by_id.get(blocker)
            if target is None or not self.is_terminal(target):
                out.append(blocker)
        return out

    def descendants(self, item_id: str) -> Iterable[str]:
        """Every id below ``item_id`` (breadth first, each once, cycle safe)."""
        seen = {item_id}
        queue = list(self.children.get(item_id, ()))
        while queue:
            nxt: list[str] = []
            for child in queue:
                if child in seen:
                    continue
                seen.add(child)
                yield child
                nxt.extend(self.children.get(child, ()))
            queue = nxt

    def ancestors(self, item_id: str) -> list[str]:
        """Parents from nearest to the root (cycle safe)."""
        out: list[str] = []
        seen = {item_id}
        current = self.parent_of.get(item_id)
        while current and current not in seen:
            out.append(current)
            seen.add(current)
            current = self.parent_of.get(current)
        return out

    def relpath(self, path: Path) -> str:
        """A path as shown to users (relative to the repository)."""
        return tracker_relpath(self.root, path)

    def item_list(self) -> list[Item]:
        """Items in id order."""
        return [self.by_id[k] for k in sorted(self.by_id)]


def build_view(tracker: Tracker, *, files: bool = False) -> TrackerView:
    """Scan the tracker once and build every relation map.

    ``files``: read the item files themselves, never the read index (which a
    first read would build: seconds on a large tracker, for a caller such as
    ``validate`` that reads every file and history anyway).
    """
    schema = tracker.schema
    by_id: dict[str, Item] = {}
    paths: dict[str, list[Path]] = {}
    corrupt: list[tuple[Path, CorruptItemError]] = []
    for path, loaded in tracker.store.scan() if files else tracker.scan():
        if isinstance(loaded, Item):
            paths.setdefault(loaded.id, []).append(path)
            # The first file wins, as in find_path (folders in schema order).
            by_id.setdefault(loaded.id, loaded)
        else:
            corrupt.append((path, loaded))
    edges = collect_edges(by_id.values())
    parent_of: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    blockers: dict[str, list[str]] = {}
    dependents: dict[str, list[str]] = {}
    for edge in edges:
        if edge.kind == "parent":
            # The explicit field is collected first and wins over dependency links.
            if edge.source not in parent_of:
                parent_of[edge.source] = edge.target
        elif edge.kind == "blocked_by":
            # collect_edges de-duplicates, so each pair arrives once: a plain
            # append keeps this linear even when one item blocks thousands.
            blockers.setdefault(edge.source, []).append(edge.target)
            dependents.setdefault(edge.target, []).append(edge.source)
    for child, parent in parent_of.items():
        children.setdefault(parent, []).append(child)
    for kids in children.values():
        kids.sort()
    statuses = schema.statuses
    return TrackerView(
        root=tracker.root,
        author=tracker.author,
        terminal=schema.terminal_statuses,
        blocked_statuses=statuses_with_role(statuses, BLOCKED_ROLE),
        active_statuses=statuses_with_role(statuses, ACTIVE_ROLE),
        by_id=by_id,
        paths=paths,
        corrupt=corrupt,
        parent_of=parent_of,
        children=children,
        blockers=blockers,
        dependents=dependents,
        edges=edges,
        lease_holders=holder_overrides(tracker, by_id.values()),
    )


def collect_edges(items: Iterable[Item]) -> list[Edge]:
    """Every typed edge of ``items`` in canonical direction, de-duplicated, in stable order."""
    seen: set[Edge] = set()
    out: list[Edge] = []

    def add(edge: Edge) -> None:
        if edge.source != edge.target and edge not in seen:
            seen.add(edge)
            out.append(edge)

    ordered = sorted(items, key=lambda i: i.id)
    # Parent fields first so they take precedence over dependency-derived parents.
    for item in ordered:
        if item.parent:
            add(Edge(item.id, item.parent, "parent"))
    for item in ordered:
        if item.blocked_by:
            add(Edge(item.id, item.blocked_by, "blocked_by"))
        for dep in item.dependencies:
            target = str(dep.get("id") or "")
            kind = str(dep.get("kind") or "")
            if not target or not kind:
                continue
            if kind == "blocks":
                add(Edge(target, item.id, "blocked_by"))
            elif kind == "child":
                add(Edge(target, item.id, "parent"))
            else:
                add(Edge(item.id, target, kind))
    return out


def node(view: TrackerView, item_id: str) -> dict[str, Any]:
    """``{id, title, type, status}``; a missing target has status ``missing``."""
    item = view.by_id.get(item_id)
    if item is None:
        return {"id": item_id, "title": "", "type": "", "status": "missing"}
    return {"id": item.id, "title": item.title, "type": item.type, "status": item.status}

"""What the read index stores for one item, derived from the item alone.

Uses the functions of the file-scan path, so a query over these rows gives the
answer a scan of the files would.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from pm_core.tracker.model.clock import epoch, parse_iso
from pm_core.tracker.model.item import ITEM_FIELDS, RISK_VALUES, Item

#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder per call.
_to_json = json.JSONEncoder(ensure_ascii=False).encode


def digest16(data: bytes) -> bytes:
    """A 16-byte BLAKE2b digest (file contents, folder listings)."""
    # Imported here: hashlib loads OpenSSL (~4 ms), and a read the watcher vouches for hashes nothing.
    from hashlib import blake2b

    return blake2b(data, digest_size=16).digest()


_ALL_VALUES = attrgetter(*ITEM_FIELDS)

#: Search field groups, in the order :func:`search.document_for` builds them.
GROUPS: tuple[str, ...] = (
    "title",
    "description",
    "tags",
    "status",
    "body",
    "comments",
    "notes",
    "learnings",
    "reminders",
    "events",
    "dependencies",
    "linked",
    "other",
)

#: Scalar columns of the ``entries`` table filled from an item, in order.
ITEM_COLUMNS: tuple[str, ...] = (
    "id",
    "type",
    "status",
    "priority",
    "tags",
    "assignee",
    "claim_principal",
    "claim_expires_at",
    "author",
    "reviewer",
    "parent_field",
    "deadline",
    "ord",
    "created_at",
    "updated_at",
    "title",
    "title_lower",
    "updated_epoch",
    "deadline_epoch",
    "risk_value",
    "activity",
    "knowledge",
    "agenda",
)
DOC_COLUMNS: tuple[str, ...] = (*(f"g_{g}" for g in GROUPS), "ntokens", "title_tokens")


def pack_item(item: Item) -> bytes | None:
    """The item's complete state as bytes, or None when a value cannot be stored."""
    try:
        return marshal.dumps(_ALL_VALUES(item), 4)
    except ValueError:
        return None


def unpack_item(blob: bytes) -> Item:
    """The item :func:`pack_item` stored (a fresh object, safe to change)."""
    return Item(*marshal.loads(blob))


def agenda_moments(item: Item) -> list[list[Any]]:
    """``[stamp, kind, when, text]`` for the item's deadline, reminders and events."""
    moments: list[tuple[str, str, str]] = []
    if item.deadline:
        moments.append(("deadline", item.deadline, ""))
    for reminder in item.reminders:
        moments.append(("reminder", str(reminder.get("at") or ""), str(reminder.get("text") or "")))
    for event in item.events:
        moments.append(("event", str(event.get("start_at") or ""), str(event.get("title") or "")))
    out: list[list[Any]] = []
    for kind, when, text in moments:
        try:
            stamp = parse_iso(when).timestamp()
        except ValueError:
            continue
        out.append([stamp, kind, when, text])
    # Soonest first (a stable sort: equal moments keep their order), so readers can
    # order items by their first moment and stop early (``Source.agenda``).
    out.sort(key=lambda moment: moment[0])
    return out


def item_values(item: Item) -> tuple[Any, ...]:
    """Values for :data:`ITEM_COLUMNS`."""
    agenda = agenda_moments(item)
    return (
        item.id,
        item.type,
        item.status,
        item.priority,
        _to_json(item.tags),
        item.assignee,
        item.claim_principal,
        item.claim_expires_at,
        item.author,
        item.reviewer,
        item.parent,
        item.deadline,
        item.order,
        item.created_at,
        item.updated_at,
        item.title,
        item.title.lower(),
        epoch(item.updated_at),
        epoch(item.deadline) if item.deadline else 0.0,
        RISK_VALUES.get(str(item.risk or "").lower(), 0.0),
        len(item.comments) + len(item.test_runs),
        len(item.notes) + len(item.learnings) + len(item.docs) + len(item.files),
        _to_json(agenda) if agenda else None,
    )


def item_edges(item: Item) -> list[tuple[int, int, str, str, str]]:
    """``(phase, seq, source, target, kind)`` in canonical direction.

    Phase 0 is the ``parent`` field (collected before every other edge);
    phase 1 holds the ``blocked_by`` field (seq -1) and the dependencies in
    file order. Self-edges are dropped, as the view drops them.
    """
    out: list[tuple[int, int, str, str, str]] = []
    if item.parent and item.parent != item.id:
        out.append((0, 0, item.id, item.parent, "parent"))
    if item.blocked_by and item.blocked_by != item.id:
        out.append((1, -1, item.id, item.blocked_by, "blocked_by"))
    for seq, dep in enumerate(item.dependencies):
        target = str(dep.get("id") or "")
        kind = str(dep.get("kind") or "")
        if not target or not kind:
            continue
        if kind == "blocks":
            edge = (target, item.id, "blocked_by")
        elif kind == "child":
            edge = (target, item.id, "parent")
        else:
            edge = (item.id, target, kind)
        if edge[0] != edge[1]:
            out.append((1, seq, *edge))
    return out


def doc_values(item: Item, searchable: Sequence[str]) -> tuple[Any, ...]:
    """Values for :data:`DOC_COLUMNS`, then the FTS row (:func:`group_tokens`).

    The tokens are not stored: :func:`group_tokens` recomputes them from the
    stored groups exactly as :func:`search.document_for` computes them.
    """
    from pm_core.tracker.query.search import document_for, tokenize

    doc = document_for(item, "", searchable, with_tokens=False)
    # Token streams (search.stream): no NUL, which would stop SQLite's LIKE.
    groups = tuple(map(doc.fields.get, GROUPS))
    per_group = group_tokens(groups)
    count = sum(len(tokens) for tokens in per_group if tokens)
    title_tokens = " " + " ".join(sorted(set(tokenize(doc.title)))) + " "
    return (*groups, count, title_tokens, tuple(_joined(tokens) for tokens in per_group))


def _joined(tokens: list[str] | None) -> str | None:
    return " ".join(tokens) if tokens else None


def group_tokens(groups: Sequence[str | None]) -> list[list[str] | None]:
    """Each field group's tokens (None when it has none), in :data:`GROUPS` order.

    Together, in order, they are the document's tokens (:func:`doc_tokens`):
    tokens never span the space that joins two groups.
    """
    return [text.split() if text else None for text in groups]


def fts_row(groups: Sequence[str | None]) -> tuple[str | None, ...]:
    """The FTS columns of a document with these stored groups (as :func:`doc_values` gives)."""
    return tuple(_joined(tokens) for tokens in group_tokens(groups))


def doc_tokens(groups: Sequence[str | None]) -> tuple[str, ...]:
    """A document's tokens from its stored field groups (in :data:`GROUPS` order)."""
    return tuple(t for text in groups if text for t in text.split())

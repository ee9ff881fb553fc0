"""``pm list``: filtered, sorted, paged rows of items.

Terminal items are left out unless asked for (``include_terminal``, or a
status filter that names a terminal status). A corrupt item file never stops
a list: it is skipped and named in ``skipped_corrupt``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.item import KNOWN_FIELDS, Item, normalize_priority, normalize_status
from pm_core.tracker.query.view import build_view

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.query.budget import Elided

DEFAULT_ROW_FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "type",
    "status",
    "priority",
    "tags",
    "assignee",
    "parent",
    "updated_at",
)
#: Optional keys left out of a default row when unset.
_OPTIONAL_ROW_FIELDS = frozenset({"assignee", "parent"})

SortKey = Callable[[Item], Any]


def _default_key(item: Item) -> Any:
    return (item.priority, _desc(item.updated_at), item.id)


def _desc(text: str) -> tuple[int, ...]:
    # Newest first without parsing: invert each character code of the ISO string.
    return tuple(-ord(c) for c in text)


SORTS: Mapping[str, SortKey] = {
    "default": _default_key,
    "priority": _default_key,
    "updated": lambda i: (_desc(i.updated_at), i.id),
    "created": lambda i: (_desc(i.created_at), i.id),
    "id": lambda i: i.id,
    "title": lambda i: (i.title.lower(), i.id),
    "status": lambda i: (i.status, i.priority, i.id),
    "deadline": lambda i: (i.deadline is None, i.deadline or "", i.priority, i.id),
}


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    raw = [value] if isinstance(value, str) else list(value)
    return [p.strip() for v in raw for p in str(v).split(",") if p.strip()]


def list_items(
    tracker: Tracker,
    *,
    status: str | Sequence[str] | None = None,
    type: str | Sequence[str] | None = None,
    tags: Sequence[str] = (),
    assignee: str | None = None,
    parent: str | None = None,
    include_terminal: bool = False,
    priority: int | str | Sequence[int | str] | None = None,
    fields: Sequence[str] | None = None,
    limit: int | None = None,
    offset: int = 0,
    sort: str = "default",
    field_filters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Items matching every filter given, as rows.

    ``status``/``type``/``priority`` take one value or several (any matches);
    ``tags`` must all be present; ``assignee`` ``none`` matches unassigned
    items; ``field_filters`` match custom fields declared for ``list``.
    Returns ``{items, total, returned, has_more, next_offset?, filters,
    skipped_corrupt?}``.
    """
    return _list(
        tracker,
        None,
        status=status,
        type=type,
        tags=tags,
        assignee=assignee,
        parent=parent,
        include_terminal=include_terminal,
        priority=priority,
        fields=fields,
        limit=limit,
        offset=offset,
        sort=sort,
        field_filters=field_filters,
    )[0]


def list_head(tracker: Tracker, head: int, **options: Any) -> tuple[dict[str, Any], Elided | None]:
    """:func:`list_items` with at most ``head`` rows built when no ``limit`` is given.

    A caller that prints under a token ceiling never shows more than
    :func:`pm_core.tracker.query.budget.row_cap` rows, so building the others is
    waste. ``returned``/``has_more`` still count every row; the rows left out
    come back as an :class:`~pm_core.tracker.query.budget.Elided` (None: all built).
    """
    if head < 1:
        raise UsageError(f"head must be at least 1, got {head}")
    return _list(tracker, head, **options)


def _list(
    tracker: Tracker,
    head: int | None,
    *,
    status: str | Sequence[str] | None = None,
    type: str | Sequence[str] | None = None,
    tags: Sequence[str] = (),
    assignee: str | None = None,
    parent: str | None = None,
    include_terminal: bool = False,
    priority: int | str | Sequence[int | str] | None = None,
    fields: Sequence[str] | None = None,
    limit: int | None = None,
    offset: int = 0,
    sort: str = "default",
    field_filters: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], Elided | None]:
    schema = tracker.schema
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}", hint=f"use one of: {', '.join(SORTS)}")
    if offset < 0:
        raise UsageError(f"offset must be 0 or more, got {offset}")
    if limit is not None and limit < 0:
        raise UsageError(f"limit must be 0 or more, got {limit}")
    try:
        statuses = {normalize_status(s, schema.status_names) for s in _as_list(status)}
        priorities = {
            normalize_priority(p)
            for p in (
                []
                if priority is None
                else [priority]
                if isinstance(priority, int | str)
                else list(priority)
            )
        }
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    types = {schema.type_by_name(t).name for t in _as_list(type)}
    wanted_tags = {t.strip() for t in tags if t and t.strip()}
    parent_id = tracker.normalize_id(parent) if parent else None
    custom = _custom_filters(tracker, field_filters or {})
    row_fields = _row_fields(tracker, fields)
    with_terminal = include_terminal or bool(statuses & schema.terminal_statuses)

    page = None
    if not custom:
        page = tracker.index_reads.list_page(
            statuses=statuses,
            types=types,
            priorities=priorities,
            tags=wanted_tags,
            assignee=assignee,
            parent_id=parent_id,
            with_terminal=with_terminal,
            sort=sort,
            offset=offset,
            limit=limit,
            row_fields=row_fields,
            head=head,
        )
    rest: tuple[int, int] | None = None
    if page is not None:
        rows, total, corrupt, rest = page
    else:
        rows, total, corrupt = _scan_page(
            tracker,
            statuses=statuses,
            types=types,
            priorities=priorities,
            tags=wanted_tags,
            assignee=assignee,
            parent_id=parent_id,
            with_terminal=with_terminal,
            custom=custom,
            sort=sort,
            offset=offset,
            limit=limit,
            row_fields=row_fields,
        )
    if rest is None and head is not None and len(rows) > head:
        rest = _rest_of(rows[head:])
        rows = rows[:head]
    unbuilt = rest[0] if rest else 0
    end = offset + len(rows) + unbuilt
    result: dict[str, Any] = {
        "items": rows,
        "total": total,
        "returned": len(rows) + unbuilt,
        "has_more": end < total,
    }
    if end < total:
        result["next_offset"] = end
    result["filters"] = _echo_filters(
        statuses=sorted(statuses),
        types=sorted(types),
        tags=sorted(wanted_tags),
        assignee=assignee,
        parent=parent_id,
        priority=sorted(priorities),
        include_terminal=with_terminal,
        fields=dict(sorted((field_filters or {}).items())),
        sort=sort,
        limit=limit,
        offset=offset,
    )
    if corrupt:
        result["skipped_corrupt"] = corrupt
    if not rest or not rest[0]:
        return result, None
    from pm_core.tracker.query.budget import Elided

    return result, Elided("items", rest[0], rest[1])


def _rest_of(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """``(count, bytes)`` of rows: their compact JSON, each with a comma."""
    import json

    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    # "[a,b]" holds one comma fewer than rows, and two brackets.
    return len(rows), len(text.encode("utf-8")) - 1


def _scan_page(
    tracker: Tracker,
    *,
    statuses: set[str],
    types: set[str],
    priorities: set[int],
    tags: set[str],
    assignee: str | None,
    parent_id: str | None,
    with_terminal: bool,
    custom: list[Callable[[Item], bool]],
    sort: str,
    offset: int,
    limit: int | None,
    row_fields: tuple[str, ...] | None,
) -> tuple[list[dict[str, Any]], int, list[str]]:
    """``(rows, total, skipped_corrupt)`` from a scan of every item."""
    wanted_tags = tags
    view = build_view(tracker)
    matched: list[Item] = []
    for item in view.by_id.values():
        if not with_terminal and view.is_terminal(item):
            continue
        if statuses and item.status not in statuses:
            continue
        if types and item.type not in types:
            continue
        if priorities and item.priority not in priorities:
            continue
        if wanted_tags and not wanted_tags <= set(item.tags):
            continue
        if assignee is not None and not _assignee_matches(item, assignee):
            continue
        if parent_id is not None and view.parent_of.get(item.id) != parent_id:
            continue
        if custom and not all(match(item) for match in custom):
            continue
        matched.append(item)
    matched.sort(key=SORTS[sort])
    total = len(matched)
    page = matched[offset:] if limit is None else matched[offset : offset + limit]
    rows = [item_row(item, row_fields, view.parent_of.get(item.id)) for item in page]
    return rows, total, [view.relpath(path) for path, _ in view.corrupt]


def _assignee_matches(item: Item, wanted: str) -> bool:
    holder = item.assignee or item.claim_principal
    if wanted.strip().lower() in ("none", "unassigned", ""):
        return not holder
    return holder == wanted.strip()


def _row_fields(tracker: Tracker, fields: Sequence[str] | None) -> tuple[str, ...] | None:
    if fields is None:
        return None
    names = _as_list(list(fields))
    if not names:
        raise UsageError("fields is empty", hint="name at least one field, e.g. id,title")
    unknown = [n for n in names if n not in KNOWN_FIELDS and tracker.schema.field(n) is None]
    if unknown:
        raise UsageError(
            f"unknown field(s): {', '.join(unknown)}",
            hint="use item field names such as id,title,status,priority,tags",
        )
    # The id always comes first: a row without it cannot be acted on.
    return tuple(dict.fromkeys(["id", *names]))


def item_row(item: Item, fields: tuple[str, ...] | None, parent: str | None) -> dict[str, Any]:
    """One ``pm list`` row: ``fields`` of ``item`` (the default columns when None)."""
    if fields is None:
        row: dict[str, Any] = {}
        for key in DEFAULT_ROW_FIELDS:
            value = parent if key == "parent" else item.get_field(key)
            if key in _OPTIONAL_ROW_FIELDS and not value:
                continue
            row[key] = value
        return row
    out: dict[str, Any] = {}
    for key in fields:
        value = parent if key == "parent" else item.get_field(key)
        if value is not None:
            out[key] = value
    return out


def _custom_filters(tracker: Tracker, filters: Mapping[str, str]) -> list[Callable[[Item], bool]]:
    matchers: list[Callable[[Item], bool]] = []
    for key, wanted in sorted(filters.items()):
        declared = tracker.schema.field(key)
        if declared is None:
            raise UsageError(
                f"unknown custom field {key!r}",
                hint=f"declare it with `pm schema add field {key} --commands list`",
            )
        if declared.commands and "list" not in declared.commands:
            raise UsageError(
                f"custom field {key!r} is not declared for list",
                hint=f"it is declared for: {', '.join(declared.commands)}",
            )
        matchers.append(_field_matcher(key, declared.type, str(wanted)))
    return matchers


def _field_matcher(key: str, kind: str, wanted: str) -> Callable[[Item], bool]:
    text = wanted.strip()

    def matches(item: Item) -> bool:
        value = item.extra.get(key)
        if value is None:
            return text.lower() in ("none", "")
        if isinstance(value, list):
            return any(str(v).lower() == text.lower() for v in value)
        if kind == "boolean" or isinstance(value, bool):
            return str(value).lower() == text.lower()
        if kind == "number" or isinstance(value, int | float):
            try:
                return float(value) == float(text)
            except ValueError:
                return False
        return str(value).lower() == text.lower()

    return matches


def _echo_filters(**values: Any) -> dict[str, Any]:
    """Only the filters that were applied (keeps the echo short)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value in (None, [], {}, ()) or (key == "offset" and value == 0):
            continue
        if key == "include_terminal" and not value:
            continue
        out[key] = value
    return out

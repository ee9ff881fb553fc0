"""Three-way merge of one item document, field by field.

Git calls the item driver with the common ancestor and both sides of a file
that both branches changed. Each field is merged on its own:

* append-like collections (comments, notes, learnings, files, docs, tests,
  dependencies, tags, ...) take the union of what each side added, minus what
  either side removed;
* ``updated_at`` takes the latest timestamp;
* the body merges when each side only appended to the common text;
* any other field takes the side that changed it. When both sides set it to
  different values, the value kept is chosen from the values alone (the most
  recently updated side, then the larger canonical JSON), so merging ``a`` into
  ``b`` and ``b`` into ``a`` write the same bytes. Such a field is a *decision*:
  the driver exits non-zero so git leaves the path conflicted for review, and
  a receipt records what was discarded.

Fields that only mean something together (status with its close fields and
the claim) move as a group: when one of them conflicts, the whole group
comes from the side that wins it, so a merge never writes an open item with a
close reason or an assignee without its claim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pm_core.tracker.model.item import COLLECTION_FIELDS


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON: how the merge compares and orders values (not a hash rule)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


#: Collections of strings merged as sets.
STRING_SETS: tuple[str, ...] = ("tags",)
#: Fields whose values move together when one of them conflicts.
#: Status, its close fields and the claim are one group: a close ends the lease,
#: so a status from one side and a lease from the other would be a closed item
#: still claimed.
GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "status",
        "closed_at",
        "completed_at",
        "close_reason",
        "resolution",
        "duplicate_of",
        "assignee",
        "claim_principal",
        "claim_expires_at",
    ),
)
#: Timestamp keys that order collection entries added on both sides.
_ENTRY_TIME_KEYS: tuple[str, ...] = ("created_at", "ts", "at", "timestamp", "date")
_MISSING: Any = object()


class Decision(NamedTuple):
    """One field both sides set differently: the value kept and the one discarded."""

    field: str
    retained: Any
    discarded: Any
    #: Which side the retained value came from ("ours"/"theirs"), for the receipt.
    retained_side: str


class ItemMerge(NamedTuple):
    """The merged record and how each field was decided."""

    record: dict[str, Any]
    decisions: tuple[Decision, ...]
    union_fields: tuple[str, ...]
    fields_from_theirs: tuple[str, ...]
    #: True when both sides created an item under one id (no common ancestor, different items).
    id_collision: bool


def merge_records(
    base: Mapping[str, Any] | None, ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> ItemMerge:
    """Merge two item records against their ancestor (None: both sides added the file)."""
    ancestor: Mapping[str, Any] = base or {}
    keys = _ordered_keys(ancestor, ours, theirs)
    out: dict[str, Any] = {}
    decisions: list[Decision] = []
    unions: list[str] = []
    from_theirs: list[str] = []
    conflicted: dict[str, tuple[Any, Any]] = {}
    for key in keys:
        b = ancestor.get(key, _MISSING)
        o = ours.get(key, _MISSING)
        t = theirs.get(key, _MISSING)
        if _same(o, t):
            value = o
        elif _same(o, b):
            value = t
            from_theirs.append(key)
        elif _same(t, b):
            value = o
        elif key == "updated_at":
            value = max(str(x) for x in (o, t) if x is not _MISSING)
            if value == t:
                from_theirs.append(key)
        elif key in COLLECTION_FIELDS and _is_list(o, t):
            value = union_entries(_as_list(b), _as_list(o), _as_list(t))
            unions.append(key)
        elif key in STRING_SETS and _is_list(o, t):
            value = union_strings(_as_list(b), _as_list(o), _as_list(t))
            unions.append(key)
        elif key == "body" and isinstance(o, str) and isinstance(t, str):
            appended = merge_appended_text(b if isinstance(b, str) else "", o, t)
            if appended is None:
                conflicted[key] = (o, t)
                continue
            value = appended
            unions.append(key)
        else:
            conflicted[key] = (o, t)
            continue
        if value is not _MISSING:
            out[key] = value
    winner = _winning_side(ours, theirs)
    for key in keys:
        if key in conflicted:
            continue
        group = _group_of(key)
        if (
            group
            and any(g in conflicted for g in group)
            and not _same(ours.get(key, _MISSING), theirs.get(key, _MISSING))
        ):
            # A group member that only one side changed still moves with its group.
            conflicted[key] = (ours.get(key, _MISSING), theirs.get(key, _MISSING))
    for key, (o, t) in conflicted.items():
        side = _group_winner(key, o, t, ours, theirs, winner)
        kept, lost = (o, t) if side == "ours" else (t, o)
        if not _same(o, t) and not _same(lost, ancestor.get(key, _MISSING)):
            decisions.append(Decision(key, _plain(kept), _plain(lost), side))
        if side == "theirs":
            from_theirs.append(key)
        if kept is _MISSING:
            out.pop(key, None)
        else:
            out[key] = kept
    record = {key: out[key] for key in keys if key in out}
    collision = base is None and ours.get("created_at") != theirs.get("created_at")
    return ItemMerge(
        record,
        tuple(sorted(decisions, key=lambda d: d.field)),
        tuple(unions),
        tuple(sorted(set(from_theirs))),
        collision,
    )


def _plain(value: Any) -> Any:
    return None if value is _MISSING else value


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return bool(a == b) and type(a) is type(b)


def _is_list(*values: Any) -> bool:
    return all(v is _MISSING or isinstance(v, list) for v in values)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _ordered_keys(*records: Mapping[str, Any]) -> list[str]:
    # Ours' order first, then keys only the others have; the encoder puts
    # known fields in canonical order anyway, so only unknown keys care.
    keys: dict[str, None] = {}
    for record in (records[1], records[2], records[0]):
        keys.update(dict.fromkeys(record))
    return list(keys)


def _group_of(key: str) -> tuple[str, ...]:
    for group in GROUPS:
        if key in group:
            return group
    return ()


def _side_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return (str(record.get("updated_at", "")), canonical_json(dict(record)))


def _winning_side(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """The side whose values win grouped conflicts: the later edit, then the larger JSON."""
    return "theirs" if _side_key(theirs) > _side_key(ours) else "ours"


def _group_winner(
    key: str, o: Any, t: Any, ours: Mapping[str, Any], theirs: Mapping[str, Any], winner: str
) -> str:
    if _group_of(key):
        return winner
    # An ungrouped scalar: the larger canonical value, whichever side it is on.
    if o is _MISSING:
        return "theirs"
    if t is _MISSING:
        return "ours"
    return "theirs" if canonical_json(t) > canonical_json(o) else "ours"


def _entry_key(entry: Any) -> tuple[str, str]:
    stamp = ""
    if isinstance(entry, Mapping):
        for name in _ENTRY_TIME_KEYS:
            if isinstance(entry.get(name), str):
                stamp = entry[name]
                break
    return (stamp, canonical_json(entry))


def union_entries(base: Sequence[Any], ours: Sequence[Any], theirs: Sequence[Any]) -> list[Any]:
    """Entries kept by both sides in ours' order, then each side's additions.

    Additions from one side keep that side's order; additions from both are
    ordered by their timestamp and canonical JSON, so the result does not
    depend on which side is ours.
    """
    base_keys = {canonical_json(e) for e in base}
    ours_keys = {canonical_json(e) for e in ours}
    theirs_keys = {canonical_json(e) for e in theirs}
    removed = {k for k in base_keys if k not in ours_keys or k not in theirs_keys}
    kept = [e for e in base if canonical_json(e) not in removed]
    seen = {canonical_json(e) for e in kept}
    added_ours = [e for e in ours if canonical_json(e) not in base_keys]
    added_theirs = [e for e in theirs if canonical_json(e) not in base_keys]
    if added_ours and added_theirs:
        added = sorted(added_ours + added_theirs, key=_entry_key)
    else:
        added = added_ours or added_theirs
    out = list(kept)
    for entry in added:
        key = canonical_json(entry)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def union_strings(base: Sequence[Any], ours: Sequence[Any], theirs: Sequence[Any]) -> list[Any]:
    """A set merge of string lists; sorted when both sides were sorted."""
    merged = union_entries(base, ours, theirs)
    if list(ours) == sorted(ours) and list(theirs) == sorted(theirs):
        return sorted(merged, key=canonical_json)
    return merged


def merge_appended_text(base: str, ours: str, theirs: str) -> str | None:
    """Both sides' appended paragraphs after the common text, or None when either rewrote it."""
    if not (ours.startswith(base) and theirs.startswith(base)):
        return None
    tails = sorted({ours[len(base) :], theirs[len(base) :]} - {""})
    if len(tails) == 2 and (tails[0].startswith(tails[1]) or tails[1].startswith(tails[0])):
        return None
    return base + "".join(tails)


class ItemFileMerge(NamedTuple):
    """A merged item file's bytes and the field accounting behind them."""

    data: bytes
    merge: ItemMerge


def decode_record(data: bytes, source: str) -> dict[str, Any]:
    """An item file's record (CorruptItemError naming ``source`` when it is not an item)."""
    from pm_core.tracker.storage.itemfile import decode_item

    return decode_item(data, source).to_record()


def merge_item_files(base: bytes, ours: bytes, theirs: bytes, source: str) -> ItemFileMerge:
    """Merge three versions of an item file; the result is canonical TOON.

    An empty ``base`` means git found no common version (both sides added the
    file). Raises CorruptItemError when a side is not a readable item.
    """
    from pm_core.tracker.model.item import item_from_record
    from pm_core.tracker.storage.itemfile import encode_item

    ancestor = decode_record(base, f"{source} (base)") if base.strip() else None
    merged = merge_records(
        ancestor,
        decode_record(ours, f"{source} (ours)"),
        decode_record(theirs, f"{source} (theirs)"),
    )
    return ItemFileMerge(encode_item(item_from_record(merged.record)), merged)

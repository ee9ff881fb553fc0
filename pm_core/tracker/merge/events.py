"""Merge of append-only event stores other than history (tracker ``**/*.jsonl``).

The TypeScript ``pm`` keeps relationship events in JSONL stores that carry an
``eventId`` and a strict ``sequence``; its fence maps every tracker JSONL file
to the ``pm-relationship`` driver. Both sides' entries after the common
prefix are kept once each (by ``eventId``, else by canonical JSON), ordered by
timestamp then canonical JSON, and ``sequence`` is renumbered consecutively
when the entries carry one.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pm_core.tracker.merge.items import canonical_json
from pm_core.tracker.merge.streams import MergeInputError

_TIME_KEYS = ("timestamp", "ts", "created_at", "at")


class EventMerge(NamedTuple):
    """The merged store and its accounting."""

    text: str
    common: int
    from_ours: int
    from_theirs: int


def _parse(text: str, side: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise MergeInputError(f"{side} line {number} is not JSON") from None
        if not isinstance(value, dict):
            raise MergeInputError(f"{side} line {number} is not a JSON object")
        out.append((line, value))
    return out


def _identity(event: dict[str, Any]) -> str:
    ident = event.get("eventId")
    return f"id:{ident}" if isinstance(ident, str) else canonical_json(event)


def _key(event: dict[str, Any]) -> tuple[str, str]:
    stamp = next((str(event[k]) for k in _TIME_KEYS if k in event), "")
    without_sequence = {k: v for k, v in event.items() if k != "sequence"}
    return (stamp, canonical_json(without_sequence))


def merge_event_text(base: str, ours: str, theirs: str) -> EventMerge:
    """Merge two event stores that share a prefix; MergeInputError on a bad side."""
    del base
    mine = _parse(ours, "ours")
    other = _parse(theirs, "theirs")
    common = 0
    for (a, _), (b, _) in zip(mine, other, strict=False):
        if a != b:
            break
        common += 1
    events = [event for _, event in mine[:common]]
    seen = {_identity(e) for e in events}
    tail: list[dict[str, Any]] = []
    for _, event in [*mine[common:], *other[common:]]:
        ident = _identity(event)
        if ident not in seen:
            seen.add(ident)
            tail.append(event)
    events.extend(sorted(tail, key=_key))
    if any("sequence" in e for e in events):
        first = events[0].get("sequence", 1) if events else 1
        start = first if isinstance(first, int) else 1
        events = [
            {**e, "sequence": start + n} if "sequence" in e else e for n, e in enumerate(events)
        ]
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
    return EventMerge(
        "".join(line + "\n" for line in lines), common, len(mine) - common, len(other) - common
    )

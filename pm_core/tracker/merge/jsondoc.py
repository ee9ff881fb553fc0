"""Recursive three-way merge of JSON documents (``settings.json``, ``schema/*.json``).

Objects merge key by key, recursively. Arrays compose when both sides only
added entries to the ancestor's (both additions are kept, each once); any
other difference in an array, or two different values for one leaf, is a
conflict. A conflicted leaf keeps the larger canonical JSON value, so the
result does not depend on which side git calls ours, and the driver exits
non-zero so git leaves the path for review.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pm_core.tracker.merge.items import canonical_json

_MISSING: Any = object()


class JsonMerge(NamedTuple):
    """The merged value and the dotted paths of conflicted leaves."""

    value: Any
    conflicts: tuple[str, ...]


def merge_json(base: Any, ours: Any, theirs: Any) -> JsonMerge:
    """Merge two JSON values against their ancestor (``_MISSING``-free plain values)."""
    conflicts: list[str] = []
    value = _merge(base, ours, theirs, "", conflicts)
    return JsonMerge(value, tuple(conflicts))


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return bool(canonical_json(a) == canonical_json(b))


def _merge(base: Any, ours: Any, theirs: Any, path: str, conflicts: list[str]) -> Any:
    if _same(ours, theirs):
        return ours
    if _same(base, ours):
        return theirs
    if _same(base, theirs):
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        ancestor = base if isinstance(base, dict) else {}
        out: dict[str, Any] = {}
        for key in dict.fromkeys([*ours, *theirs]):
            value = _merge(
                ancestor.get(key, _MISSING),
                ours.get(key, _MISSING),
                theirs.get(key, _MISSING),
                f"{path}.{key}" if path else key,
                conflicts,
            )
            if value is not _MISSING:
                out[key] = value
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        composed = _compose(base if isinstance(base, list) else [], ours, theirs)
        if composed is not None:
            return composed
    conflicts.append(path or "(document)")
    if ours is _MISSING:
        return theirs
    if theirs is _MISSING:
        return ours
    return theirs if canonical_json(theirs) > canonical_json(ours) else ours


def _compose(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any] | None:
    """Base entries then both sides' additions, when each side kept the base in order."""
    keys = [canonical_json(v) for v in base]
    for side in (ours, theirs):
        if [canonical_json(v) for v in side[: len(base)]] != keys:
            return None
    added_ours = ours[len(base) :]
    added_theirs = theirs[len(base) :]
    out = list(base)
    seen = set(keys)
    extra = added_ours + added_theirs
    if added_ours and added_theirs:
        extra = sorted(extra, key=canonical_json)
    for value in extra:
        key = canonical_json(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def parse_json(text: str, side: str) -> Any:
    """A side's JSON value; ValueError naming the side when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{side} is not JSON ({exc})") from None


def dump_json(value: Any) -> str:
    """The text tracker JSON files are written as (two-space indent, newline at end)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

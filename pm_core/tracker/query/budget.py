"""Token ceilings for command output: shrink a payload instead of flooding.

:func:`fit` degrades an over-budget payload step by step and names what it left
out; :func:`estimate_tokens` is the one token estimate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

#: Degradation levels, in order.
LEVELS: tuple[str, ...] = ("full", "compact", "brief", "summary", "counts")

#: Default ceilings in estimated tokens: kind -> (TOON, JSON).
DEFAULT_CEILINGS: Mapping[str, tuple[int, int]] = {
    "read": (4000, 6000),
    "mutation": (2000, 3000),
    "governance": (6000, 9000),
}

#: Keys kept for list entries at the ``brief`` level.
BRIEF_KEYS: tuple[str, ...] = (
    "id",
    "title",
    "type",
    "status",
    "priority",
    "assignee",
    "parent",
    "score",
    "reason",
    "reasons",
    "ts",
    "op",
    "author",
    "name",
    "ok",
    "problems",
)

#: Receipt key added to a shrunk payload.
OMITTED_KEY = "omitted"

Measure = Callable[[Any], int]


class Elided(NamedTuple):
    """Rows at the end of a payload's list that were never built.

    A caller that builds only the first :func:`row_cap` rows of a long list (no
    row past them can fit) passes the rest as a count and a size, and
    :func:`fit` shrinks the payload exactly as it would the whole list.
    """

    #: The payload's key holding the list (its primary list).
    key: str
    #: How many rows follow the ones present.
    rows: int
    #: Compact-JSON bytes those rows add to the list, each with its comma.
    size: int


def estimate_tokens(text: str | bytes | int) -> int:
    """Estimated tokens of encoded output: ``ceil(bytes / 4)``.

    ``text`` is the output itself, or its size in bytes where only that is known.
    """
    if isinstance(text, int):
        size = text
    else:
        size = len(text.encode("utf-8")) if isinstance(text, str) else len(text)
    return math.ceil(size / 4)


def json_measure(payload: Any) -> int:
    """Estimated tokens of ``payload`` as compact JSON (the default measure)."""
    return estimate_tokens(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


def ceiling(kind: str, fmt: str = "toon", settings: Mapping[str, Any] | None = None) -> int:
    """The token ceiling for output ``kind`` (read, mutation, governance) in ``fmt``.

    ``settings["output"]["token_budgets"][kind][fmt]`` overrides the default.
    """
    toon, js = DEFAULT_CEILINGS.get(kind, DEFAULT_CEILINGS["read"])
    default = js if fmt == "json" else toon
    override: Any = None
    if settings:
        budgets = (settings.get("output") or {}).get("token_budgets") or {}
        override = (budgets.get(kind) or {}).get(fmt)
    if isinstance(override, int) and not isinstance(override, bool) and override > 0:
        return override
    return default


def fit(
    payload: Mapping[str, Any],
    budget_tokens: int | None,
    *,
    kind: str = "read",
    measure: Measure | None = None,
    recover: str | None = None,
    full_size: int | None = None,
    elided: Elided | None = None,
) -> dict[str, Any]:
    """``payload`` if it fits ``budget_tokens``, else the fullest smaller form that does.

    Returns a new mapping; the input is never changed. A shrunk result carries
    ``omitted: {reason, level, omitted_count (rows left out), trimmed_values
    (fields dropped or shortened), budget_tokens, estimated_tokens, recover}``.
    ``budget_tokens`` None means unbounded (an explicit ``--limit`` or ``--json``
    asks for exactly what it names). ``full_size``: the caller's measure of the
    whole payload when it already has one (saves encoding it again), required
    with ``elided``: rows of the primary list left out, when the list holds at
    least :func:`row_cap` rows (the answer is the one the whole list gives).

    ``measure`` is only ever compared with the budget, so it may stop counting
    once past it (any figure above the budget will do).
    """
    measure = measure or json_measure
    result = dict(payload)
    if elided is not None and (budget_tokens is None or full_size is None):
        raise ValueError("elided rows need a token budget and the full size")
    if budget_tokens is None:
        return result
    if full_size is None:
        full_size = measure(result)
    if full_size <= budget_tokens:
        return result
    hint = recover or _default_recover(kind)
    extra = 0
    if elided is not None and elided.rows:
        extra = elided.rows
        primary: str | None = _primary_list_key(result, elided.key, extra)
        if primary != elided.key or len(result[primary]) + extra <= row_cap(budget_tokens):
            raise ValueError(
                f"elided rows need {elided.key!r} as the list with its first rows, "
                "and more rows in all than can ever fit"
            )
    else:
        primary = _primary_list_key(result)
    cut = 0
    whole_fits = True
    if primary is not None:
        # No row is smaller than MIN_ROW_BYTES, so rows past this cap can never
        # fit: drop them before shrinking, keeping the work bounded by the budget
        # rather than by the size of the tracker.
        cap = row_cap(budget_tokens)
        present = len(result[primary])
        if present + extra > cap:
            whole_fits = False
            keep = min(present, cap)
            cut = present + extra - keep
            result[primary] = result[primary][:keep]
    last: dict[str, Any] = result
    for level in LEVELS[1:]:
        if not whole_fits and level in ("compact", "brief"):
            # These levels keep every row, and a list past the cap cannot fit
            # whole (that is what the cap means): skip shrinking it to learn so.
            continue
        counter = _Counter()
        counter.rows = cut
        if level == "summary" and primary is not None:
            candidate, counter = _fit_summary(
                result, primary, budget_tokens, measure, cut, hint, full_size
            )
        else:
            candidate = _shrink(result, level, primary, counter)
        if level != "summary" and cut and primary is not None:
            if level == "counts":
                candidate[f"{primary}_count"] = cut + len(result[primary])
            else:
                candidate[f"{primary}_omitted"] = cut
        candidate[OMITTED_KEY] = _receipt(level, counter, budget_tokens, full_size, hint)
        last = candidate
        if measure(candidate) <= budget_tokens:
            return candidate
    return last


class _Counter:
    """What a shrinking step left out: whole rows, and values dropped or shortened."""

    def __init__(self) -> None:
        self.rows = 0
        self.count = 0


def _receipt(level: str, counter: _Counter, budget: int, size: int, recover: str) -> dict[str, Any]:
    return {
        "reason": "token_budget",
        "level": level,
        "omitted_count": counter.rows,
        "trimmed_values": counter.count,
        "budget_tokens": budget,
        "estimated_tokens": size,
        "recover": recover,
    }


def _default_recover(kind: str) -> str:
    if kind == "mutation":
        return "pass --json for the full receipt"
    return "pass --limit N / --json / --fields a,b for exactly what you need"


def _primary_list_key(
    payload: Mapping[str, Any], longer: str | None = None, extra: int = 0
) -> str | None:
    """The longest top-level list of objects (items, hits, entries...).

    ``longer``: a list that holds ``extra`` rows more than are present.
    """
    best: str | None = None
    best_len = -1
    for key, value in payload.items():
        is_rows = isinstance(value, list) and all(isinstance(v, Mapping) for v in value)
        length = len(value) + extra if key == longer else len(value) if is_rows else 0
        if is_rows and value and length > best_len:
            best, best_len = key, length
    return best


#: The smallest a row can be on the wire (``{"id":"pm-xxxx"}``).
MIN_ROW_BYTES = 16


def row_cap(budget_tokens: int) -> int:
    """How many rows of a list can matter under ``budget_tokens``: more never fit."""
    return budget_tokens * 4 // MIN_ROW_BYTES + 1


_LIMITS = {"compact": (240, 5), "brief": (120, 3), "summary": (120, 3), "counts": (80, 0)}


def _shrink(
    payload: Mapping[str, Any], level: str, primary: str | None, counter: _Counter
) -> dict[str, Any]:
    max_chars, keep = _LIMITS[level]
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if key == primary and isinstance(value, list):
            if level == "counts":
                out[key] = []
                out[f"{key}_count"] = len(value)
                counter.rows += len(value)
                continue
            entries = [_entry(e, level, max_chars, keep, counter) for e in value]
            out[key] = entries
        else:
            out[key] = _value(value, level, max_chars, keep, counter, depth=0)
    return out


def _entry(
    entry: Mapping[str, Any], level: str, max_chars: int, keep: int, counter: _Counter
) -> dict[str, Any]:
    if level in ("brief", "summary") and "id" in entry:
        kept = {k: entry[k] for k in BRIEF_KEYS if k in entry}
        counter.count += len(entry) - len(kept)
        entry = kept
    return {k: _value(v, level, max_chars, keep, counter, depth=1) for k, v in entry.items()}


def _value(value: Any, level: str, max_chars: int, keep: int, counter: _Counter, depth: int) -> Any:
    if isinstance(value, str):
        if len(value) > max_chars:
            counter.count += 1
            return value[:max_chars] + f"… (+{len(value) - max_chars} chars)"
        return value
    if isinstance(value, list):
        if level == "counts" and value:
            counter.count += len(value)
            return {"count": len(value)}
        if len(value) > keep and value and all(isinstance(v, Mapping) for v in value):
            # Logs grow at the end: the most recent entries matter most.
            counter.count += len(value) - keep
            value = value[-keep:] if keep else []
        return [_value(v, level, max_chars, keep, counter, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {k: _value(v, level, max_chars, keep, counter, depth + 1) for k, v in value.items()}
    return value


def _fit_summary(
    payload: Mapping[str, Any],
    key: str,
    budget: int,
    measure: Measure,
    cut: int,
    recover: str,
    full_size: int,
) -> tuple[dict[str, Any], _Counter]:
    """The summary level: the longest prefix of the primary list that fits.

    Rows are shrunk only as far as the search reaches (it doubles from 16
    rows, then halves), so the work follows what fits, not the list. Each
    trial is measured in its final form (the ``<key>_omitted`` count and the
    receipt with its real figures), so the answer still fits once they are
    added. ``trimmed_values`` counts values shortened or dropped in what is
    shown; rows left out are counted once, as rows.
    """
    max_chars, keep = _LIMITS["summary"]
    base = _Counter()
    others = _shrink({k: v for k, v in payload.items() if k != key}, "summary", None, base)
    rows: list[Any] = payload[key]
    shrunk: list[dict[str, Any]] = []
    trims: list[int] = []

    def shaped(count: int) -> tuple[dict[str, Any], _Counter]:
        while len(shrunk) < count:
            row_counter = _Counter()
            shrunk.append(_entry(rows[len(shrunk)], "summary", max_chars, keep, row_counter))
            trims.append(row_counter.count)
        out = {k: shrunk[:count] if k == key else others[k] for k in payload}
        trial = _Counter()
        trial.rows = cut + len(rows) - count
        trial.count = base.count + sum(trims[:count])
        if trial.rows:
            out[f"{key}_omitted"] = trial.rows
        return out, trial

    def fits(count: int) -> bool:
        out, trial = shaped(count)
        out[OMITTED_KEY] = _receipt("summary", trial, budget, full_size, recover)
        return measure(out) <= budget

    low, high = 0, len(rows)
    step = 16
    while step < high:
        if not fits(step):
            high = step - 1
            break
        low, step = step, step * 2
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return shaped(low)


def project(record: Mapping[str, Any], fields: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Only ``fields`` of ``record`` (``id`` always kept), in the order asked."""
    out: dict[str, Any] = {}
    if "id" in record:
        out["id"] = record["id"]
    for name in fields:
        if name in record:
            out[name] = record[name]
    return out

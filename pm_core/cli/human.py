"""Output for a person at a terminal: one aligned line per item, colour when supported.

Only when standard output is a terminal and no format was asked for (no
``--json``, ``output.default_format`` not ``json``): piped output stays TOON,
so scripts and agents read the same bytes as before. Colour follows the
terminal: none when ``NO_COLOR`` is set (any value), when ``TERM`` is ``dumb``,
or when ``PM_COLOR=0``; ``PM_COLOR=1`` forces it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

#: ANSI styles by status (and for ids, scores and the dim parts).
_STYLE = {
    "open": "32",
    "in_progress": "33",
    "blocked": "31",
    "draft": "2",
    "closed": "2",
    "canceled": "2",
    "id": "36",
    "dim": "2",
}
_PRIORITY = ("P0", "P1", "P2", "P3", "P4")
_TITLE_WIDTH = 72


def wanted(state_json: bool, fmt: str) -> bool:
    """Whether to print lines for a person: a terminal, and no format asked for."""
    if state_json or fmt != "toon":
        return False
    forced = os.environ.get("PM_HUMAN")
    if forced is not None:
        return forced not in ("", "0")
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def colour_on() -> bool:
    """Colour on a terminal, unless ``NO_COLOR``/``TERM=dumb``/``PM_COLOR=0`` say no."""
    forced = os.environ.get("PM_COLOR")
    if forced is not None:
        return forced not in ("", "0")
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _paint(text: str, style: str | None, on: bool) -> str:
    """``text`` in ``style`` (a name of :data:`_STYLE` or an SGR code) when colour is on."""
    code = _STYLE.get(style, style) if style else None
    return f"\x1b[{code}m{text}\x1b[0m" if on and code else text


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: Sequence[Sequence[tuple[str, str | None]]], on: bool) -> str:
    """Cells ``(text, style)`` in aligned columns (the last one ragged)."""
    if not rows:
        return ""
    widths = [max(len(r[i][0]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [_paint(t.ljust(w), s, on) for (t, s), w in zip(row, widths, strict=False)]
        last_text, last_style = row[-1]
        cells.append(_paint(last_text, last_style, on))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _item_row(row: Mapping[str, Any], extra: str = "") -> list[tuple[str, str | None]]:
    status = str(row.get("status", ""))
    priority = row.get("priority")
    shown_priority = (
        _PRIORITY[priority] if isinstance(priority, int) and 0 <= priority < 5 else "  "
    )
    cells: list[tuple[str, str | None]] = [
        (str(row.get("id", "")), "id"),
        (status, status if status in _STYLE else None),
        (shown_priority, "dim"),
        (str(row.get("type", "")), "dim"),
    ]
    if extra:
        cells.append((extra, "dim"))
    cells.append((_cut(str(row.get("title", "")), _TITLE_WIDTH), None))
    return cells


def _footer(text: str, on: bool) -> str:
    return _paint(text, "dim", on) + "\n"


def list_lines(payload: Mapping[str, Any]) -> str:
    """``pm list``: one line per item, then how many of how many."""
    on = colour_on()
    items = payload.get("items") or []
    out = table([_item_row(r) for r in items], on)
    total = payload.get("total", len(items))
    more = " (more: --offset / --limit)" if payload.get("has_more") else ""
    return out + _footer(f"{len(items)} of {total} items{more}", on)


def search_lines(payload: Mapping[str, Any]) -> str:
    """``pm search``: one line per hit with its score."""
    on = colour_on()
    hits = payload.get("hits") or []
    out = table([_item_row(h, f"{float(h.get('score', 0)):.1f}") for h in hits], on)
    return out + _footer(f"{len(hits)} of {payload.get('total', len(hits))} hits", on)


def next_lines(payload: Mapping[str, Any]) -> str:
    """``pm next``: the recommendation and its reasons, then the ready and blocked rows."""
    on = colour_on()
    parts: list[str] = []
    recommended = payload.get("recommended")
    claimed = payload.get("claimed")
    if isinstance(recommended, Mapping):
        parts.append(_paint("next:", "1", on) + " " + table([_item_row(recommended)], on))
        for reason in recommended.get("reasons") or ():
            text = reason if isinstance(reason, str) else reason.get("text") or str(reason)
            parts.append(f"  - {text}\n")
    else:
        parts.append(_footer("nothing ready to work on", on))
    if isinstance(claimed, Mapping):
        parts.append(_footer(f"claimed {claimed.get('id')} for {claimed.get('claimed_by')}", on))
    for bucket in ("ready", "blocked", "held_by_others", "decision_needed"):
        rows = [r for r in payload.get(bucket) or () if isinstance(r, Mapping)]
        if rows:
            parts.append(_paint(bucket.replace("_", " ") + ":", "1", on) + "\n")
            parts.append(table([_item_row(r) for r in rows], on))
    return "".join(parts)


def test_lines(payload: Mapping[str, Any]) -> str:
    """``pm test --run``: each command's verdict, then its output as lines."""
    on = colour_on()
    parts: list[str] = []
    for run in payload.get("runs") or ():
        verdict = "pass" if run.get("passed") else ("timeout" if run.get("timed_out") else "FAIL")
        style = "32" if run.get("passed") else "31"
        head = f"{_paint(verdict, style, on)}  {run.get('command')}  "
        head += _paint(f"exit {run.get('exit_code')}  {run.get('duration_ms')} ms", "dim", on)
        parts.append(head + "\n")
        for line in str(run.get("output_tail") or "").splitlines():
            parts.append(f"    {line}\n")
    summary = payload.get("summary") or {}
    parts.append(
        _footer(f"{summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed", on)
    )
    return "".join(parts)

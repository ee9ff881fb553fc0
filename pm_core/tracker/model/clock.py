"""Timestamps in the on-disk format: ISO 8601 UTC with milliseconds and ``Z``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_RELATIVE = re.compile(r"^\+(\d+)([mhdw])$")


def now_iso() -> str:
    """The current time as ``2026-01-31T12:00:00.000Z``."""
    return format_iso(datetime.now(UTC))


def format_iso(moment: datetime) -> str:
    """Format an aware datetime in the on-disk form."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    """Parse an ISO timestamp (``Z`` or offset; date-only means midnight UTC)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def epoch(text: str | None) -> float:
    """Seconds since the epoch of an ISO time; 0.0 when absent or unparseable.

    Ranking sorts and scores by it, and the read index stores it: one rule, so
    stored values order exactly as values computed from the file do.
    """
    if not text:
        return 0.0
    try:
        return parse_iso(text).timestamp()
    except ValueError:
        return 0.0


def resolve_when(text: str) -> str:
    """A relative (``+1d``, ``+2h``, ``+30m``, ``+1w``) or absolute time, as ISO.

    Raises ValueError naming the accepted forms.
    """
    match = _RELATIVE.match(text.strip())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        delta = {
            "m": timedelta(minutes=amount),
            "h": timedelta(hours=amount),
            "d": timedelta(days=amount),
            "w": timedelta(weeks=amount),
        }[unit]
        return format_iso(datetime.now(UTC) + delta)
    try:
        return format_iso(parse_iso(text))
    except ValueError:
        raise ValueError(
            f"invalid time {text!r}; use ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z) "
            "or a relative offset like +1d, +4h, +30m, +2w"
        ) from None

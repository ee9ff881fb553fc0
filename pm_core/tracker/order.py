"""The baseline order of work items, as Python constants and as SQL.

``next`` and ``context`` rank candidates, and ties keep this order: status
(in progress, open, blocked, draft; any other status sorts with open), then
priority, then explicit order (items without one last), then deadline
(items without one last), then most recently updated, then id. The read
index keeps an index in exactly this order (:data:`BASELINE_SQL`), so a pool
comes out sorted without a sort.
"""

from __future__ import annotations

#: Status rank used by every baseline ordering (unknown statuses sort with open).
STATUS_RANK: dict[str, int] = {"in_progress": 0, "open": 1, "blocked": 2, "draft": 3}
HIGH_LEVEL_TYPES: frozenset[str] = frozenset({"Epic", "Feature"})

_RANKS = " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in STATUS_RANK.items())


def baseline_sql(table: str = "") -> str:
    """The baseline key over ``entries`` columns (of alias ``table``), as an ``ORDER BY`` list.

    The index ``entries_baseline`` is built from the same expressions: SQLite
    reads an expression index in order only for identical expressions.
    """
    t = f"{table}." if table else ""
    return (
        f"CASE {t}status {_RANKS} ELSE 1 END, {t}priority, {t}ord IS NULL, "
        f"COALESCE({t}ord, 0), {t}deadline IS NULL, {t}deadline_epoch, -{t}updated_epoch, {t}id"
    )


#: The baseline key over unqualified ``entries`` columns (the index definition).
BASELINE_SQL = baseline_sql()

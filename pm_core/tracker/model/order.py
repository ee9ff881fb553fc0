"""The baseline order of work items, as Python constants and as SQL.

Ties in ``next`` and ``context`` keep this order; the read index keeps an SQL
index in it (:data:`BASELINE_SQL`).
"""

from __future__ import annotations

#: Status rank used by every baseline ordering (unknown statuses sort with open).
STATUS_RANK: dict[str, int] = {"in_progress": 0, "open": 1, "blocked": 2, "draft": 3}
HIGH_LEVEL_TYPES: frozenset[str] = frozenset({"Epic", "Feature"})

_RANKS = " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in STATUS_RANK.items())


#: Statuses the pool index puts after every other (the built-in terminal ones),
#: with this rank: a scan of open items stops before them.
LAST_STATUSES: frozenset[str] = frozenset({"canceled", "closed"})
LAST_RANK = 9


def status_rank_sql(table: str = "", *, last: bool = False) -> str:
    """The status rank of the baseline key; ``last``: :data:`LAST_STATUSES` rank last."""
    t = f"{table}." if table else ""
    ranks = [_RANKS, *(f"WHEN '{s}' THEN {LAST_RANK}" for s in sorted(LAST_STATUSES) if last)]
    return f"CASE {t}status {' '.join(ranks)} ELSE 1 END"


def baseline_sql(table: str = "", *, last: bool = False) -> str:
    """The baseline key over ``entries`` columns (of alias ``table``), as an ``ORDER BY`` list.

    ``last``: the key of the index ``entries_baseline``, which ranks
    :data:`LAST_STATUSES` after the rest. Over rows without those statuses
    (open items, when they are terminal) both keys give the same order; SQLite
    reads an expression index in order only for identical expressions.
    """
    t = f"{table}." if table else ""
    return (
        f"{status_rank_sql(table, last=last)}, {t}priority, {t}ord IS NULL, "
        f"COALESCE({t}ord, 0), {t}deadline IS NULL, {t}deadline_epoch, -{t}updated_epoch, {t}id"
    )


#: The key of the pool index over unqualified ``entries`` columns (its definition).
BASELINE_SQL = baseline_sql(last=True)

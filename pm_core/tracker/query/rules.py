"""The ranking rules of ``pm next`` and ``pm context``, defined once for both paths.

The file-scan path (:mod:`pm_core.tracker.query.ranking`) computes with these
values; the read index (:mod:`pm_core.tracker.index.rank`) binds them into its
SQL or builds its SQL from them, so a change here changes both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pm_core.tracker.storage.workspace import StatusDef

#: Weight of each relevance signal. The score is the weighted mean of the signals
#: that carry information for the pool (an absent signal adds no weight).
SIGNAL_WEIGHTS: dict[str, float] = {
    "structural": 0.4,
    "recency": 0.35,
    "activity_density": 0.25,
    "graph_proximity": 0.15,
    "claim_focus": 0.6,
    "priority_pressure": 0.35,
    "risk_pressure": 0.2,
    "deadline_pressure": 0.45,
    "knowledge_density": 0.25,
    "author_affinity": 0.2,
}
#: The order the weighted signals are added in. Floating-point addition is not
#: associative, so both paths add in this order to give the same score to the bit.
SIGNAL_ORDER: tuple[str, ...] = (
    "structural",
    "priority_pressure",
    "recency",
    "activity_density",
    "knowledge_density",
    "graph_proximity",
    "claim_focus",
    "risk_pressure",
    "deadline_pressure",
    "author_affinity",
)
#: Priorities run 0 (highest) to this value (lowest); pressure is (scale - p) / scale.
PRIORITY_SCALE = 4
#: Hops (hierarchy and blocking edges, either direction) the focus reaches.
FOCUS_MAX_HOPS = 4
#: Days ahead at which a deadline starts to press.
DEADLINE_HORIZON_DAYS = 14.0
#: A status with this role is work in hand or ready to take.
ACTIVE_ROLE = "active"
#: A status with this role makes an item blocked whatever its blockers.
BLOCKED_ROLE = "blocked"
#: A candidate's status has one of these roles (drafts wait for triage).
CANDIDATE_ROLES = (ACTIVE_ROLE, BLOCKED_ROLE)

if set(SIGNAL_ORDER) != set(SIGNAL_WEIGHTS):  # pragma: no cover - a definition error
    raise AssertionError("SIGNAL_ORDER and SIGNAL_WEIGHTS must name the same signals")


def priority_pressure(priority: int) -> float:
    """The ``priority_pressure`` signal of one priority (clamped to the scale)."""
    return (PRIORITY_SCALE - max(0, min(PRIORITY_SCALE, priority))) / PRIORITY_SCALE


def priority_pressure_sql(column: str) -> str:
    """:func:`priority_pressure` as an SQL expression over ``column`` (same operations)."""
    scale = PRIORITY_SCALE
    return f"(({scale} - MAX(0, MIN({scale}, {column}))) / {float(scale)!r})"


def statuses_with_role(statuses: Iterable[StatusDef], role: str) -> frozenset[str]:
    """The names of the statuses that have ``role``."""
    return frozenset(s.name for s in statuses if role in s.roles)

"""The public ranking policy's constants: signals, weights, priors, entry catalog.

Kept apart from the code that applies them so the index (which precomputes
the query-free part of every score) and the ranking share one definition.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Tools an agent starts from: the negotiated ``tools/list``, in this order.
ENTRY_CATALOG: tuple[str, ...] = ("pm_discover", "pm_next", "pm_context", "pm_search", "pm_get")

SIGNALS: tuple[str, ...] = ("lexical", "semantic", "graph", "permission", "freshness", "usage")
WEIGHTS: Mapping[str, float] = {
    "lexical": 0.4,
    "semantic": 0.2,
    "permission": 0.15,
    "graph": 0.1,
    "usage": 0.1,
    "freshness": 0.05,
}
#: Signals a host may supply values for.
HOST_SIGNALS: frozenset[str] = frozenset({"semantic", "graph", "freshness", "usage"})
#: Signals that need a query (unless a host supplies a value).
QUERY_SIGNALS: tuple[str, ...] = ("lexical", "semantic", "graph")
FORMULA = (
    "score = sum(value*weight for available signals) / sum(weight for available signals), "
    "rounded to 4 places; ties by name"
)
#: Bumped whenever a fallback or weight changes, so old cursors go stale.
POLICY_VERSION = "1"

# Fallback "usage" prior when the host supplies no usage data: the entry
# catalog is what every session starts from; below it, narrower tiers hold the
# everyday commands.
USAGE_PRIOR: Mapping[str, float] = {"core": 0.7, "standard": 0.5, "full": 0.3}
USAGE_PRIOR_ENTRY = 1.0
#: Fallback freshness: a server's own catalog is current.
FRESHNESS_FALLBACK = 1.0
PERMISSION_VALUE = 1.0


def usage_prior(name: str, tier: str) -> float:
    """The usage fallback of one tool."""
    return USAGE_PRIOR_ENTRY if name in ENTRY_CATALOG else USAGE_PRIOR.get(tier, 0.3)


def query_free_sum(usage: float) -> float:
    """Weighted sum of the signals every tool has without a query or host data."""
    return (
        WEIGHTS["permission"] * PERMISSION_VALUE
        + WEIGHTS["freshness"] * FRESHNESS_FALLBACK
        + WEIGHTS["usage"] * usage
    )


QUERY_FREE_WEIGHT = WEIGHTS["permission"] + WEIGHTS["freshness"] + WEIGHTS["usage"]

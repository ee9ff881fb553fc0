"""The discovery result: frozen objects whose ``to_json()`` is the wire shape.

The SDK returns a :class:`DiscoveryResult`; the ``pm_discover`` tool returns
its ``to_json()``. Nothing here depends on the transport.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

CACHE_TTL_SECONDS = 30
#: What makes a cached discovery result (and its cursor) stale.
INVALIDATED_BY: tuple[str, ...] = (
    "tool_definitions",
    "workspace_extensions",
    "profile",
    "authorization",
    "ranking_signals",
)


def json_bytes(payload: Any) -> int:
    """Bytes of the compact UTF-8 JSON of a value (the form token costs are taken of)."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


@attrs.frozen(slots=True)
class Signal:
    """One ranking signal of one row."""

    value: float
    weight: float
    available: bool
    source: str

    def to_json(self) -> dict[str, Any]:
        """``{value, weight, available, source}``."""
        return {
            "value": self.value,
            "weight": self.weight,
            "available": self.available,
            "source": self.source,
        }


@attrs.frozen(slots=True)
class DiscoveredTool:
    """One ranked row. ``command`` is what the row runs (for ``pm_run:<x>``, ``x``)."""

    name: str
    command: str
    tier: str
    family: str
    score: float
    signals: Mapping[str, Signal]
    input_schema: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The row; ``input_schema`` only when it was projected."""
        row: dict[str, Any] = {
            "name": self.name,
            "command": self.command,
            "tier": self.tier,
            "family": self.family,
            "score": self.score,
            "signals": {k: v.to_json() for k, v in self.signals.items()},
        }
        if self.input_schema is not None:
            row["input_schema"] = self.input_schema
        return row


@attrs.frozen(slots=True)
class TokenCost:
    """Estimated size of the whole result against the caller's budget."""

    estimated_tokens: int
    budget: int | None
    within_budget: bool

    def to_json(self) -> dict[str, Any]:
        """``{estimated_tokens, budget, within_budget}``."""
        return {
            "estimated_tokens": self.estimated_tokens,
            "budget": self.budget,
            "within_budget": self.within_budget,
        }


@attrs.frozen(slots=True)
class RankingPolicy:
    """The public weights and formula the scores were computed with."""

    weights: Mapping[str, float]
    formula: str

    def to_json(self) -> dict[str, Any]:
        """``{weights, formula}``."""
        return {"weights": dict(self.weights), "formula": self.formula}


@attrs.frozen(slots=True)
class CacheHint:
    """How long, and for whom, the result may be reused."""

    key: str
    ttl_seconds: int = CACHE_TTL_SECONDS
    scope: str = "private"
    invalidated_by: tuple[str, ...] = INVALIDATED_BY

    def to_json(self) -> dict[str, Any]:
        """``{key, ttl_seconds, scope, invalidated_by}``."""
        return {
            "key": self.key,
            "ttl_seconds": self.ttl_seconds,
            "scope": self.scope,
            "invalidated_by": list(self.invalidated_by),
        }


@attrs.frozen(slots=True)
class Omission:
    """One thing left out: what, why, how many, and how to get it."""

    what: str
    reason: str
    count: int
    recover: str

    def to_json(self) -> dict[str, Any]:
        """``{what, reason, count, recover}``."""
        return {
            "what": self.what,
            "reason": self.reason,
            "count": self.count,
            "recover": self.recover,
        }


@attrs.frozen(slots=True)
class OmissionReceipt:
    """Everything the result left out; empty ``omitted`` means nothing was."""

    omitted: tuple[Omission, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{omitted: [...]}``."""
        return {"omitted": [o.to_json() for o in self.omitted]}


@attrs.frozen(slots=True)
class DiscoveryResult:
    """What ``pm_discover`` returns: ranked rows, paging, cost, policy, cache, receipt."""

    tools: tuple[DiscoveredTool, ...]
    total: int
    returned: int
    has_more: bool
    next_cursor: str | None
    token_cost: TokenCost
    ranking_policy: RankingPolicy
    cache: CacheHint
    omission_receipt: OmissionReceipt

    def to_json(self) -> dict[str, Any]:
        """The wire shape, with keys in a fixed order."""
        return {
            "tools": [t.to_json() for t in self.tools],
            "total": self.total,
            "returned": self.returned,
            "has_more": self.has_more,
            "next_cursor": self.next_cursor,
            "token_cost": self.token_cost.to_json(),
            "ranking_policy": self.ranking_policy.to_json(),
            "cache": self.cache.to_json(),
            "omission_receipt": self.omission_receipt.to_json(),
        }

"""``discover_tools``: rank, filter, page and budget a tool catalog for an intent.

Pure; the ``pm_discover`` tool and ``pm_core.sdk.discover_tools`` both call it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from pm_plugins.progressive_discovery import cursor as cursors
from pm_plugins.progressive_discovery import policy, ranking
from pm_plugins.progressive_discovery.errors import DiscoveryError
from pm_plugins.progressive_discovery.index import IndexCache
from pm_plugins.progressive_discovery.result import (
    CacheHint,
    DiscoveredTool,
    DiscoveryResult,
    Omission,
    OmissionReceipt,
    RankingPolicy,
    Signal,
    TokenCost,
    json_bytes,
)

from pm_core.contracts import FAMILIES, ToolDescriptor
from pm_core.tracker.query import budget

MAX_QUERY_LENGTH = 4096
MAX_LIMIT = 100
DEFAULT_LIMIT = 10
DEFAULT_OUTPUT_BUDGET = 1200
FILTER_TIERS: tuple[str, ...] = ("core", "standard", "full")

_CACHE = IndexCache()
_POLICY = RankingPolicy(weights=dict(policy.WEIGHTS), formula=policy.FORMULA)


def _usage_error(message: str, field: str, **details: Any) -> DiscoveryError:
    return DiscoveryError(message, details={"field": field, **details})


def _check_inputs(
    query: str | None,
    tier: str,
    limit: int,
    include_schema: bool,
    output_budget: int | None,
    cursor: str | None,
) -> None:
    if query is not None and not isinstance(query, str):
        raise _usage_error(f"query must be text, got {type(query).__name__}", "query")
    if query is not None and len(query) > MAX_QUERY_LENGTH:
        raise _usage_error(
            f"query is {len(query)} characters long; the limit is {MAX_QUERY_LENGTH}",
            "query",
            length=len(query),
            max_length=MAX_QUERY_LENGTH,
        )
    if tier not in FILTER_TIERS:
        raise _usage_error(
            f"tier must be one of {', '.join(FILTER_TIERS)}, got {tier!r}",
            "tier",
            value=tier,
            allowed=list(FILTER_TIERS),
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise _usage_error(
            f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}",
            "limit",
            value=limit,
            minimum=1,
            maximum=MAX_LIMIT,
        )
    if not isinstance(include_schema, bool):
        raise _usage_error(
            f"includeSchema must be true or false, got {include_schema!r}", "includeSchema"
        )
    if output_budget is not None and (
        isinstance(output_budget, bool) or not isinstance(output_budget, int) or output_budget < 1
    ):
        raise _usage_error(
            f"outputBudget must be a positive integer (tokens), got {output_budget!r}",
            "outputBudget",
            value=output_budget,
        )
    if cursor is not None and (not isinstance(cursor, str) or not cursor):
        raise _usage_error(f"cursor must be a non-empty string, got {cursor!r}", "cursor")


def _row(
    ranked: ranking.Ranked,
    i: int,
    score: float,
    host: Mapping[str, Mapping[str, float]],
    include_schema: bool,
) -> DiscoveredTool:
    tool = ranked.index.tools[i]
    w = policy.WEIGHTS

    def pick(signal: str, fallback: float, source: str, available: bool) -> Signal:
        supplied = host.get(signal, {})
        if tool.name in supplied:
            return Signal(round(supplied[tool.name], 4), w[signal], True, "host")
        if not available:
            return Signal(0.0, w[signal], False, "no-query")
        return Signal(round(fallback, 4), w[signal], True, source)

    q = ranked.has_query
    signals = {
        "lexical": pick("lexical", ranked.lexical.get(i, 0.0), "query", q),
        "semantic": pick("semantic", ranked.semantic.get(i, 0.0), "thesaurus", q),
        "graph": pick("graph", ranked.graph.get(i, 0.0), "catalog", q),
        "permission": Signal(policy.PERMISSION_VALUE, w["permission"], True, "profile"),
        "freshness": pick("freshness", policy.FRESHNESS_FALLBACK, "static", True),
        "usage": pick(
            "usage", ranked.index.usage_prior[i], ranking.fallback_usage_source(tool.name), True
        ),
    }
    return DiscoveredTool(
        name=tool.name,
        command=tool.command,
        tier=tool.tier,
        family=tool.family,
        score=score,
        signals=signals,
        input_schema=tool.input_schema if include_schema else None,
    )


@attrs.frozen(slots=True)
class _Pager:
    """Assembles a result for the first ``n`` rows of a page, at a fixed budget."""

    rows: tuple[DiscoveredTool, ...]
    row_bytes: tuple[int, ...]
    total: int
    offset: int
    include_schema: bool
    searched: bool
    budget: int | None
    secret: bytes
    binding: bytes
    cache_key: str

    def omissions(self, n: int, whole_page_tokens: int | None) -> tuple[Omission, ...]:
        out: list[Omission] = []
        if n and not self.include_schema:
            out.append(
                Omission(
                    "input_schema",
                    "compact_projection",
                    n,
                    "pass includeSchema: true (with a small limit) to get input schemas",
                )
            )
        past_limit = self.total - self.offset - len(self.rows)
        if past_limit > 0:
            out.append(
                Omission(
                    "tools",
                    "limit",
                    past_limit,
                    "pass next_cursor to continue, or narrow the query",
                )
            )
        past_budget = len(self.rows) - n
        if past_budget > 0:
            need = f" to {whole_page_tokens}" if whole_page_tokens else ""
            out.append(
                Omission(
                    "tools",
                    "token_budget",
                    past_budget,
                    f"pass next_cursor to continue, raise outputBudget{need} for the whole page, "
                    "or narrow the query",
                )
            )
        if self.total == 0 and self.searched:
            out.append(
                Omission(
                    "tools",
                    "no_match",
                    0,
                    "no tool matched: use other words, a family filter, or no query to list all",
                )
            )
        return tuple(out)

    def build(self, n: int, whole_page_tokens: int | None = None) -> DiscoveryResult:
        """The result for ``n`` rows, with a token estimate that covers itself."""
        has_more = self.offset + n < self.total
        next_cursor = (
            cursors.encode(self.secret, self.binding, self.offset + n) if has_more else None
        )
        # Compact JSON of a list is "[" + ",".join(items) + "]", so the rows'
        # bytes add to the envelope's exactly; only the envelope is re-encoded.
        row_bytes = sum(self.row_bytes[:n]) + max(n - 1, 0)
        estimated = 0
        while True:
            result = DiscoveryResult(
                tools=(),
                total=self.total,
                returned=n,
                has_more=has_more,
                next_cursor=next_cursor,
                token_cost=TokenCost(
                    estimated, self.budget, self.budget is None or estimated <= self.budget
                ),
                ranking_policy=_POLICY,
                cache=CacheHint(key=self.cache_key),
                omission_receipt=OmissionReceipt(self.omissions(n, whole_page_tokens)),
            )
            # The estimate is part of what it measures; grow it until it covers itself.
            actual = budget.estimate_tokens(json_bytes(result.to_json()) + row_bytes)
            if actual <= estimated:
                return attrs.evolve(result, tools=self.rows[:n])
            estimated = actual

    def fit(self) -> DiscoveryResult:
        """The longest prefix of the page that fits the budget, or a usage error."""
        whole = self.build(len(self.rows))
        if self.budget is None or whole.token_cost.within_budget:
            return whole
        need = whole.token_cost.estimated_tokens
        n = len(self.rows)
        while n > 0:
            result = self.build(n, need)
            over = (result.token_cost.estimated_tokens - self.budget) * 4
            if over <= 0:
                return result
            # Drop enough trailing rows to cover the overshoot, at least one.
            while n > 0 and over > 0:
                n -= 1
                over -= self.row_bytes[n] + 1
        minimum = self._minimum(need)
        raise DiscoveryError(
            f"outputBudget {self.budget} is too small for even one row; "
            f"the smallest budget that fits one is {minimum}",
            details={"field": "outputBudget", "budget": self.budget, "minimum": minimum},
        )

    def _minimum(self, need: int) -> int:
        n = min(1, len(self.rows))
        floor = self.budget or 1
        while True:
            pager = attrs.evolve(self, budget=floor)
            cost = pager.build(n, need if n < len(self.rows) else None).token_cost
            if cost.within_budget:
                return floor
            floor = cost.estimated_tokens


def discover_tools(
    candidates: Sequence[ToolDescriptor],
    *,
    query: str | None = None,
    family: str | None = None,
    tier: str = "full",
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
    include_schema: bool = False,
    profile: str = "core",
    output_budget: int | None = DEFAULT_OUTPUT_BUDGET,
    signals: ranking.HostSignals | None = None,
    secret: bytes | None = None,
) -> DiscoveryResult:
    """Rank ``candidates`` for an intent and return one budgeted page.

    :param candidates: the authorization- and profile-filtered tools (and
        extension commands as ``pm_run:<command>`` descriptors). ``internal``
        tools are never advertised and are skipped.
    :param query: intent text (at most 4,096 characters); without it, tools
        are ordered by the query-free signals (usage, permission, freshness).
    :param family: keep one capability family. :param tier: keep tools at this
        tier or narrower (``core``, ``standard``, ``full``).
    :param limit: rows per page, 1..100. :param cursor: ``next_cursor`` of a
        previous call with the same query, filters and catalog.
    :param include_schema: add each row's ``input_schema``.
    :param profile: the selected profile's name, bound into cursors.
    :param output_budget: token ceiling for the whole result (``None``: none);
        rows past it are left out and listed in the omission receipt.
    :param signals: host-supplied values, ``{signal: {tool name: 0..1}}``, for
        ``semantic``, ``graph``, ``freshness`` and ``usage``.
    :param secret: cursor key; defaults to a per-process random key.
    :raises DiscoveryError: bad input (code 64), naming the field.
    """
    _check_inputs(query, tier, limit, include_schema, output_budget, cursor)
    advertised = [c for c in candidates if c.tier != "internal"]
    index = _CACHE.get(advertised)
    if family is not None and family not in FAMILIES and family not in index.by_family:
        allowed = sorted(set(FAMILIES) | set(index.by_family))
        raise _usage_error(
            f"unknown family {family!r}; families are {', '.join(allowed)}",
            "family",
            value=family,
            allowed=allowed,
        )
    host = ranking.validate_host_signals(signals)
    ranked = ranking.rank(index, query or "", family, tier, host)
    key = secret if secret is not None else cursors.process_key()
    binding = cursors.binding_digest(
        [
            policy.POLICY_VERSION,
            query or "",
            family or "",
            tier,
            "schema" if include_schema else "compact",
            profile,
            index.fingerprint,
            ranking.signals_fingerprint(host),
        ]
    )
    offset = cursors.decode(key, binding, cursor) if cursor is not None else 0
    total = ranked.total
    if cursor is not None and offset >= total:
        raise _usage_error(
            f"cursor points past the end of the results; {cursors.RESTART_HINT}",
            "cursor",
            reason="stale",
        )
    page = ranked.page(offset, limit)
    cache_key = hashlib.sha256(binding + f"|{offset}|{limit}|{output_budget}".encode()).hexdigest()[
        :32
    ]
    rows = tuple(_row(ranked, i, score, host, include_schema) for i, score in page)
    pager = _Pager(
        rows=rows,
        row_bytes=tuple(json_bytes(r.to_json()) for r in rows),
        total=total,
        offset=offset,
        include_schema=include_schema,
        searched=ranked.has_query,
        budget=output_budget,
        secret=key,
        binding=binding,
        cache_key=cache_key,
    )
    return pager.fit()

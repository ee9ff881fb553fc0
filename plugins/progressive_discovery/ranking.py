"""The public discovery ranking: six signals, fixed weights, deterministic order.

The score is the weighted mean of the available signals (weights in
:mod:`pm_plugins.progressive_discovery.policy`), ties broken by tool name;
``docs/discovery.md`` describes each signal.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Mapping

import attrs
from pm_plugins.progressive_discovery import text
from pm_plugins.progressive_discovery.errors import DiscoveryError
from pm_plugins.progressive_discovery.index import PREFIX_MIN, CatalogIndex, canonical_json
from pm_plugins.progressive_discovery.policy import (
    ENTRY_CATALOG,
    FRESHNESS_FALLBACK,
    HOST_SIGNALS,
    PERMISSION_VALUE,
    POLICY_VERSION,
    QUERY_FREE_WEIGHT,
    SIGNALS,
    WEIGHTS,
)

from pm_core.contracts import TIER_RANK

_FAMILY_CREDIT, _DESCRIPTION_CREDIT = 0.8, 0.7
_PHRASE_BONUS = 0.25
_SYNONYM_CREDIT = 0.8
_PREFIX_CREDIT = 0.5
_GRAPH_COMMAND, _GRAPH_FAMILY, _GRAPH_RELATED, _GRAPH_ABOUT = 1.0, 0.6, 0.4, 0.3

HostSignals = Mapping[str, Mapping[str, float]]


def validate_host_signals(signals: HostSignals | None) -> dict[str, dict[str, float]]:
    """Check host-supplied values: known signal names, numbers in 0..1."""
    if not signals:
        return {}
    clean: dict[str, dict[str, float]] = {}
    for name, values in signals.items():
        if name not in HOST_SIGNALS:
            raise DiscoveryError(
                f"host signal {name!r} cannot be supplied; suppliable signals are "
                f"{', '.join(sorted(HOST_SIGNALS))}",
                details={"field": "signals", "signal": name, "allowed": sorted(HOST_SIGNALS)},
            )
        row: dict[str, float] = {}
        for tool, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise DiscoveryError(
                    f"host signal {name!r} for {tool!r} must be a number from 0 to 1, got {value!r}",
                    details={"field": "signals", "signal": name, "tool": tool, "value": value},
                )
            row[str(tool)] = float(value)
        clean[name] = row
    return clean


def signals_fingerprint(signals: Mapping[str, Mapping[str, float]]) -> str:
    """A digest of host-supplied values, bound into cursors."""
    body = canonical_json({"policy": POLICY_VERSION, "weights": WEIGHTS, "host": signals})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@attrs.frozen(slots=True)
class QueryPlan:
    """A query prepared once per call: weighted words and what it names."""

    words: tuple[tuple[str, float], ...]
    phrase: str
    commands: frozenset[str]
    families: frozenset[str]
    concepts: frozenset[str]

    @property
    def has_query(self) -> bool:
        """Whether the query has any words that carry intent."""
        return bool(self.words)


def _ngrams(words: list[str], longest: int = 3) -> set[str]:
    grams: set[str] = set()
    for size in range(1, longest + 1):
        for start in range(len(words) - size + 1):
            grams.add(" ".join(words[start : start + size]))
    return grams


def plan_query(index: CatalogIndex, query: str) -> QueryPlan:
    """Split ``query`` into intent words weighted by rarity in the catalog."""
    words = text.content_tokens(query)
    weighted = tuple((w, index.token_weight(w)) for w in words)
    every = text.tokens(query)
    # A command or family is "named" when some run of query words spells it,
    # literally or stem by stem ("closing" names close, "kanban board" names
    # kanban-board). Stopwords count here: commands may contain them.
    grams = _ngrams(every) | _ngrams([text.stem(w) for w in every])
    commands = {c for g in grams for c in index.command_keys.get(g, ())}
    families = {f for g in grams for f in index.family_keys.get(g, ())}
    phrase = " ".join(every) if len(words) > 1 else ""
    concepts = frozenset(c for w in words for c in text.concepts(text.stem(w)))
    return QueryPlan(weighted, phrase, frozenset(commands), frozenset(families), concepts)


def _coverage(
    plan: QueryPlan, per_word: Iterable[tuple[float, Iterable[tuple[frozenset[int], float]]]]
) -> dict[int, float]:
    """Sum, per tool, each word's weight times the best credit it earned there.

    ``per_word`` lists, for each query word, its weight and the (positions,
    credit) pairs it matched, best credit first.
    """
    total = sum(w for _, w in plan.words) or 1.0
    acc: dict[int, float] = {}
    get = acc.get
    for weight, tiers in per_word:
        seen: frozenset[int] | set[int] = frozenset()
        for positions, credit in tiers:
            fresh = positions - seen if seen else positions
            if not fresh:
                continue
            gain = weight * credit / total
            for i in fresh:
                acc[i] = get(i, 0.0) + gain
            seen = seen | fresh
    return acc


def lexical(index: CatalogIndex, plan: QueryPlan) -> dict[int, float]:
    """Lexical values (0..1) for tools with any literal match (plurals included)."""
    empty: frozenset[int] = frozenset()
    fields = (
        (index.name_tokens, 1.0),
        (index.family_tokens, _FAMILY_CREDIT),
        (index.description_tokens, _DESCRIPTION_CREDIT),
    )
    per_word = []
    for word, weight in plan.words:
        tiers = []
        for field, credit in fields:
            for variant in text.lexical_variants(word):
                positions = field.get(variant, empty)
                if positions:
                    tiers.append((positions, credit))
        per_word.append((weight, tiers))
    values = _coverage(plan, per_word)
    if plan.phrase:
        # Only a tool that has every word can contain the phrase: test those.
        having: set[int] | None = None
        for word, _ in plan.words:
            holders = index.name_tokens.get(word, empty) | index.description_tokens.get(word, empty)
            having = set(holders) if having is None else having & holders
        for i in sorted(having or ()):
            if plan.phrase in index.phrase_text[i]:
                values[i] = min(1.0, values[i] + _PHRASE_BONUS)
    return values


def semantic(index: CatalogIndex, plan: QueryPlan) -> dict[int, float]:
    """Semantic fallback values: stem, synonym and prefix matches."""
    empty: frozenset[int] = frozenset()
    per_word = []
    for word, weight in plan.words:
        s = text.stem(word)
        tiers: list[tuple[frozenset[int], float]] = [(index.stems.get(s, empty), 1.0)]
        for concept in sorted(text.concepts(s)):
            tiers.append((index.concepts.get(concept, empty), _SYNONYM_CREDIT))
        if len(s) >= PREFIX_MIN:
            for other in index.stem_prefixes.get(s[:PREFIX_MIN], ()):
                if other != s and (other.startswith(s) or s.startswith(other)):
                    tiers.append((index.stems[other], _PREFIX_CREDIT))
        per_word.append((weight, tiers))
    return _coverage(plan, per_word)


def graph(index: CatalogIndex, plan: QueryPlan) -> dict[int, float]:
    """Graph fallback values: the query names the command, its family, or a sibling.

    Weakest of all, a query whose words belong to a family's vocabulary
    (``blocks`` -> graph) is about that family.
    """
    values: dict[int, float] = {}
    about = {
        family
        for family, family_concepts in text.FAMILY_CONCEPTS.items()
        if not plan.concepts.isdisjoint(family_concepts)
    }
    related = {index.tools[i].family for c in plan.commands for i in index.by_command[c]}
    for credit, families in ((_GRAPH_ABOUT, about), (_GRAPH_RELATED, related)):
        for family in sorted(families):
            values.update(dict.fromkeys(index.by_family.get(family, ()), credit))
    for family in sorted(plan.families):
        values.update(dict.fromkeys(index.by_family.get(family, ()), _GRAPH_FAMILY))
    for command in sorted(plan.commands):
        values.update(dict.fromkeys(index.by_command[command], _GRAPH_COMMAND))
    return values


def fallback_usage_source(name: str) -> str:
    """The source label of the usage fallback for ``name``."""
    return "entry-catalog" if name in ENTRY_CATALOG else "tier-prior"


_SCALE = 10_000  # scores are kept to four places


@attrs.frozen(slots=True)
class Ranked:
    """The filtered, scored rows of one query, and the values behind each score.

    ``keys`` encode (score descending, name ascending) as one integer per row,
    so ordering is a plain integer sort and a page needs only the smallest
    few keys.
    """

    index: CatalogIndex
    keys: list[int]
    lexical: dict[int, float]
    semantic: dict[int, float]
    graph: dict[int, float]
    has_query: bool

    @property
    def total(self) -> int:
        """How many rows matched."""
        return len(self.keys)

    def page(self, offset: int, limit: int) -> list[tuple[int, float]]:
        """``(position, score)`` of rows ``offset`` .. ``offset + limit``, in order."""
        wanted = offset + limit
        if wanted * 8 < len(self.keys):
            chosen = heapq.nsmallest(wanted, self.keys)[offset:]
        else:
            chosen = sorted(self.keys)[offset:wanted]
        n = len(self.index.tools)
        return [(self.index.by_name_rank[k % n], (_SCALE - k // n) / _SCALE) for k in chosen]


def rank(
    index: CatalogIndex,
    query: str,
    family: str | None,
    tier: str,
    host: Mapping[str, Mapping[str, float]],
) -> Ranked:
    """Score every candidate that matches ``query`` and passes the filters."""
    plan = plan_query(index, query)
    tools = index.tools
    host_sem, host_graph = host.get("semantic", {}), host.get("graph", {})
    if plan.has_query:
        lex, sem, gra = lexical(index, plan), semantic(index, plan), graph(index, plan)
        relevant = set(lex).union(sem, gra)
        if host_sem or host_graph:
            # A host value replaces the fallback: it can add a tool or drop one.
            for supplied in (host_sem, host_graph):
                relevant.update(index.positions[n] for n in supplied if n in index.positions)
            relevant = {
                i
                for i in relevant
                if lex.get(i, 0.0) > 0
                or host_sem.get(tools[i].name, sem.get(i, 0.0)) > 0
                or host_graph.get(tools[i].name, gra.get(i, 0.0)) > 0
            }
    else:
        lex, sem, gra = {}, {}, {}
        relevant = set(index.up_to_tier[2])
    within_tier = index.up_to_tier[TIER_RANK[tier]]
    if len(within_tier) < len(tools):
        relevant &= within_tier
    if family is not None:
        relevant &= index.by_family.get(family, frozenset())
    n = len(tools)
    name_rank = index.name_rank
    if host:
        scorer = _host_scorer(index, plan, lex, sem, gra, host)
        keys = [(_SCALE - round(scorer(i) * _SCALE)) * n + name_rank[i] for i in relevant]
    elif plan.has_query:
        # Every signal is available: the weights sum to 1, no division needed.
        base, wl, ws, wg = (
            index.query_free,
            WEIGHTS["lexical"],
            WEIGHTS["semantic"],
            WEIGHTS["graph"],
        )
        lg, sg, gg = lex.get, sem.get, gra.get
        keys = [
            (
                _SCALE
                - round((base[i] + wl * lg(i, 0.0) + ws * sg(i, 0.0) + wg * gg(i, 0.0)) * _SCALE)
            )
            * n
            + name_rank[i]
            for i in relevant
        ]
    else:
        base = index.query_free
        keys = [
            (_SCALE - round(base[i] / QUERY_FREE_WEIGHT * _SCALE)) * n + name_rank[i]
            for i in relevant
        ]
    return Ranked(index, keys, lex, sem, gra, plan.has_query)


def _host_scorer(
    index: CatalogIndex,
    plan: QueryPlan,
    lex: Mapping[int, float],
    sem: Mapping[int, float],
    gra: Mapping[int, float],
    host: Mapping[str, Mapping[str, float]],
) -> Callable[[int], float]:
    """The general formula, for when a host supplied some values."""
    fresh, usage = host.get("freshness", {}), host.get("usage", {})
    host_sem, host_graph = host.get("semantic", {}), host.get("graph", {})

    def score(i: int) -> float:
        name = index.tools[i].name
        values = {
            "lexical": lex.get(i, 0.0),
            "semantic": host_sem.get(name, sem.get(i, 0.0)),
            "graph": host_graph.get(name, gra.get(i, 0.0)),
            "permission": PERMISSION_VALUE,
            "freshness": fresh.get(name, FRESHNESS_FALLBACK),
            "usage": usage.get(name, index.usage_prior[i]),
        }
        available = {
            "lexical": plan.has_query,
            "semantic": plan.has_query or name in host_sem,
            "graph": plan.has_query or name in host_graph,
            "permission": True,
            "freshness": True,
            "usage": True,
        }
        return combine(values, available)

    return score


def combine(values: Mapping[str, float], available: Mapping[str, bool]) -> float:
    """The policy formula over one tool's signal values."""
    num = sum(values[s] * WEIGHTS[s] for s in SIGNALS if available[s])
    den = sum(WEIGHTS[s] for s in SIGNALS if available[s])
    return num / den if den else 0.0

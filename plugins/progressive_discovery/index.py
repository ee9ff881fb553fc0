"""Per-catalog precomputation for discovery: fingerprints, token sets, inverted indexes.

Everything that depends only on the candidates is computed once per catalog and
cached, by object identity first and by content fingerprint second.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from pm_plugins.progressive_discovery import policy, text

from pm_core.contracts import TIER_RANK, ToolDescriptor

_CACHE_SIZE = 8
#: Shortest stem that takes part in prefix matching ("depend" ~ "dependency").
PREFIX_MIN = 4


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: the one serialization digests are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def descriptor_digest(tool: ToolDescriptor) -> bytes:
    """SHA-256 of everything about a tool that ranking or a schema row shows."""
    body = canonical_json(
        [tool.name, tool.description, tool.command, tool.tier, tool.family, tool.input_schema]
    )
    return hashlib.sha256(body.encode("utf-8")).digest()


@attrs.frozen(slots=True)
class CatalogIndex:
    """Everything ranking needs about one catalog, computed once.

    Index lists are parallel: position ``i`` describes ``tools[i]``. The
    inverted indexes map a token (or stem, or concept) to the positions of
    tools that contain it, per field, so a query only touches matching tools.
    """

    tools: tuple[ToolDescriptor, ...]
    fingerprint: str
    positions: Mapping[str, int]
    tier_rank: tuple[int, ...]
    #: Positions of tools at each tier rank or narrower (0 core .. 2 full).
    up_to_tier: Mapping[int, frozenset[int]]
    #: ``name_rank[i]``: place of ``tools[i]`` in name order; ``by_name_rank`` inverts it.
    name_rank: tuple[int, ...]
    by_name_rank: tuple[int, ...]
    usage_prior: tuple[float, ...]
    #: Per tool, the weighted sum of the fallbacks that need no query.
    query_free: tuple[float, ...]
    phrase_text: tuple[str, ...]
    name_tokens: Mapping[str, frozenset[int]]
    family_tokens: Mapping[str, frozenset[int]]
    description_tokens: Mapping[str, frozenset[int]]
    stems: Mapping[str, frozenset[int]]
    #: Stems of four letters or more, grouped by their first four letters.
    stem_prefixes: Mapping[str, tuple[str, ...]]
    concepts: Mapping[str, frozenset[int]]
    by_command: Mapping[str, frozenset[int]]
    by_family: Mapping[str, frozenset[int]]
    command_keys: Mapping[str, frozenset[str]]
    family_keys: Mapping[str, frozenset[str]]
    idf: Mapping[str, float]
    stem_idf: Mapping[str, float]
    max_idf: float

    def token_weight(self, token: str) -> float:
        """Inverse document frequency of a query token (unknown tokens weigh most)."""
        return self.idf.get(token) or self.stem_idf.get(text.stem(token)) or self.max_idf


def _invert(rows: Sequence[frozenset[str]]) -> dict[str, frozenset[int]]:
    acc: dict[str, set[int]] = {}
    for i, keys in enumerate(rows):
        for key in keys:
            acc.setdefault(key, set()).add(i)
    return {k: frozenset(v) for k, v in acc.items()}


def bm25_idf(df: int, n: int) -> float:
    """Okapi BM25's inverse document frequency: words most tools share weigh little."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _idf(index: Mapping[str, frozenset[int]], n: int) -> dict[str, float]:
    return {k: bm25_idf(len(v), n) for k, v in index.items()}


def name_keys(name: str) -> set[str]:
    """Ways a query can name ``name``: its words joined by spaces, and their stems."""
    words = text.tokens(name)
    return {" ".join(words), " ".join(text.stem(w) for w in words)}


def _keys(names: Sequence[str]) -> dict[str, frozenset[str]]:
    acc: dict[str, set[str]] = {}
    for name in names:
        for key in name_keys(name):
            acc.setdefault(key, set()).add(name)
    return {k: frozenset(v) for k, v in acc.items()}


def build_index(tools: Sequence[ToolDescriptor], fingerprint: str) -> CatalogIndex:
    """Precompute token sets and inverted indexes for ``tools``."""
    ordered = tuple(tools)
    name_rows: list[frozenset[str]] = []
    family_rows: list[frozenset[str]] = []
    desc_rows: list[frozenset[str]] = []
    stem_rows: list[frozenset[str]] = []
    concept_rows: list[frozenset[str]] = []
    doc_rows: list[frozenset[str]] = []
    phrases: list[str] = []
    positions: dict[str, int] = {}
    for i, tool in enumerate(ordered):
        if tool.name in positions:
            raise ValueError(f"duplicate candidate tool name {tool.name!r}")
        positions[tool.name] = i
        name = frozenset(text.tokens(tool.name) + text.tokens(tool.command)) - text.STOPWORDS
        family = frozenset(text.tokens(tool.family))
        desc = frozenset(text.content_tokens(tool.description))
        words = name | family | desc
        # Numbers (ids, versions) match literally only; stems and synonyms skip them.
        stems = frozenset(text.stem(w) for w in words if not w.isdigit())
        concepts: set[str] = set()
        for s in stems:
            concepts |= text.concepts(s)
        name_rows.append(name)
        family_rows.append(family)
        desc_rows.append(desc)
        stem_rows.append(stems)
        concept_rows.append(frozenset(concepts))
        doc_rows.append(words)
        phrases.append(" ".join(text.tokens(f"{tool.name} {tool.description}")))
    n = len(ordered)
    doc_index = _invert(doc_rows)
    stems_index = _invert(stem_rows)
    idf = _idf(doc_index, n)
    stem_idf = _idf(stems_index, n)
    tier_rank = tuple(TIER_RANK.get(t.tier, 99) for t in ordered)
    usage = tuple(policy.usage_prior(t.name, t.tier) for t in ordered)
    by_name_rank = tuple(sorted(range(n), key=lambda i: ordered[i].name))
    name_rank = [0] * n
    for rank, i in enumerate(by_name_rank):
        name_rank[i] = rank
    prefixes: dict[str, list[str]] = {}
    for s in sorted(stems_index):
        if len(s) >= PREFIX_MIN:
            prefixes.setdefault(s[:PREFIX_MIN], []).append(s)
    return CatalogIndex(
        tools=ordered,
        fingerprint=fingerprint,
        positions=positions,
        tier_rank=tier_rank,
        up_to_tier={
            rank: frozenset(i for i, r in enumerate(tier_rank) if r <= rank) for rank in (0, 1, 2)
        },
        name_rank=tuple(name_rank),
        by_name_rank=by_name_rank,
        usage_prior=usage,
        query_free=tuple(policy.query_free_sum(u) for u in usage),
        phrase_text=tuple(phrases),
        name_tokens=_invert(name_rows),
        family_tokens=_invert(family_rows),
        description_tokens=_invert(desc_rows),
        stems=stems_index,
        stem_prefixes={k: tuple(v) for k, v in prefixes.items()},
        concepts=_invert(concept_rows),
        by_command=_invert([frozenset([t.command]) for t in ordered]),
        by_family=_invert([frozenset([t.family]) for t in ordered]),
        command_keys=_keys(sorted({t.command for t in ordered})),
        family_keys=_keys(sorted({t.family for t in ordered})),
        idf=idf,
        stem_idf=stem_idf,
        max_idf=bm25_idf(0, n),
    )


class IndexCache:
    """Two small LRU caches of :class:`CatalogIndex`: by identity, then by content.

    The identity cache keeps the candidate tuple alive, so the ``id()`` values
    in its key cannot be reused by other objects while the entry exists.
    Descriptors are frozen; their schemas are treated as immutable too.
    """

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._by_identity: OrderedDict[tuple[int, ...], CatalogIndex] = OrderedDict()
        self._by_fingerprint: OrderedDict[str, CatalogIndex] = OrderedDict()

    def get(self, tools: Sequence[ToolDescriptor]) -> CatalogIndex:
        """The index for ``tools``, building it when neither cache has it."""
        key = tuple(map(id, tools))
        with self._lock:
            hit = self._by_identity.get(key)
            if hit is not None:
                self._by_identity.move_to_end(key)
                return hit
        digest = hashlib.sha256()
        for tool in tools:
            digest.update(descriptor_digest(tool))
        fingerprint = digest.hexdigest()
        with self._lock:
            index = self._by_fingerprint.get(fingerprint)
        if index is None or len(index.tools) != len(tools):
            index = build_index(tools, fingerprint)
        elif any(a is not b for a, b in zip(index.tools, tools, strict=True)):
            # Same content, new objects: keep the work, point at the new objects.
            index = attrs.evolve(index, tools=tuple(tools))
        with self._lock:
            self._remember(self._by_fingerprint, fingerprint, index)
            self._remember(self._by_identity, key, index)
        return index

    def _remember(
        self, cache: OrderedDict[Any, CatalogIndex], key: Any, value: CatalogIndex
    ) -> None:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > self._size:
            cache.popitem(last=False)

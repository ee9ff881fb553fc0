"""``pm search``: weighted keyword scoring, BM25, and a blend of the two.

The scorers are pure functions over :class:`SearchDoc` values, so the read index
can feed them candidates and corpus statistics.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.item import Item, normalize_priority, normalize_status

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

MODES = ("keyword", "bm25", "hybrid")
MATCHES = ("or", "and", "exact")

#: Keyword weights per field group (``search.tuning`` in settings overrides them).
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "title": 48,
    "description": 5,
    "tags": 6,
    "status": 2,
    "body": 1,
    "comments": 1,
    "notes": 1,
    "learnings": 1,
    "reminders": 2,
    "events": 2,
    "dependencies": 3,
    "linked": 1,
    "other": 1,
}
TITLE_TOKEN_BONUS = 10.0
ALL_TERMS_BONUS = 40.0
TITLE_PHRASE_BONUS = 120.0
PHRASE_HIT_WEIGHT = 6.0
EXACT_ID_SCORE = 1000.0
SHORT_ID_SCORE = 900.0
BM25_K1 = 1.2
BM25_B = 0.75
#: Hybrid without embeddings: BM25 stands where the semantic score would.
HYBRID_BM25_WEIGHT = 0.7
HYBRID_KEYWORD_WEIGHT = 0.3

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_FILTER = re.compile(r"^(tag|tags|status|type|assignee|priority):(.+)$", re.IGNORECASE)
#: Scalar text fields searched beside the weighted groups ("other" weight).
_OTHER_FIELDS = (
    "acceptance_criteria",
    "definition_of_ready",
    "goal",
    "objective",
    "value",
    "impact",
    "outcome",
    "why_now",
    "close_reason",
    "resolution",
    "expected_result",
    "actual_result",
    "blocked_reason",
    "unblock_note",
    "design",
    "external_ref",
    "reporter",
    "severity",
    "environment",
    "repro_steps",
    "component",
    "customer_impact",
    "sprint",
    "release",
    "assignee",
    "type",
)


def tokenize(text: str) -> list[str]:
    """Words of any script: NFKC-normalised, case-folded runs of letters, digits and marks.

    ``Ünïcode`` and ``unicode`` are different words (accents are kept), ``Straße``
    and ``STRASSE`` the same (case folding), and a combining mark stays inside
    its word. ASCII text takes a fast path that gives the same tokens.
    """
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _word_pattern().findall(unicodedata.normalize("NFKC", folded))


@lru_cache(maxsize=1)
def _word_pattern() -> re.Pattern[str]:
    """Letters and digits of any script (``[^\\W_]``) plus combining marks (M*, BMP)."""
    marks = "".join(
        re.escape(chr(c))
        for c in range(0x300, 0x10000)
        if unicodedata.category(chr(c)).startswith("M")
    )
    return re.compile(f"(?:[^\\W_]|[{marks}])+")


def stream(text: str) -> str:
    """``text`` as the padded token stream stored and matched: `` a  b  c `` (two spaces apart).

    Counting ``needle(token)`` in a stream counts whole tokens only, and a
    phrase's needle counts the tokens in a row, with plain substring counts
    (in Python and in SQL alike); an empty string when there is no token.
    """
    tokens = tokenize(text)
    return " " + "  ".join(tokens) + " " if tokens else ""


def needle(tokens: Sequence[str] | str) -> str:
    """What a token (or a phrase of tokens) looks like inside a :func:`stream`."""
    words = [tokens] if isinstance(tokens, str) else list(tokens)
    return " " + "  ".join(words) + " "


#: A shared empty mapping (read-only, so it can be every instance's default).
_NO_FILTERS: Mapping[str, Any] = MappingProxyType({})


class SearchDoc(NamedTuple):
    """One searchable item: a token :func:`stream` per field group, plus BM25 tokens."""

    id: str
    title: str
    type: str
    status: str
    #: Field group -> token stream (groups as in :data:`DEFAULT_WEIGHTS`).
    fields: Mapping[str, str]
    tokens: tuple[str, ...]
    short_id: str = ""


class Query(NamedTuple):
    """A parsed query: free text, its tokens, and the inline filters."""

    text: str
    tokens: tuple[str, ...]
    filters: Mapping[str, tuple[str, ...]] = _NO_FILTERS

    @property
    def phrase(self) -> str:
        """The tokens in a row as they look in a stream (what phrase matching looks for)."""
        return needle(self.tokens)


class Scored(NamedTuple):
    """A document's score and which field groups matched."""

    id: str
    score: float
    matched_fields: tuple[str, ...]
    pinned: int = 0


class CorpusStats(NamedTuple):
    """What BM25 needs about the whole corpus (an index can supply it)."""

    documents: int
    average_length: float
    document_frequency: Mapping[str, int]


def parse_query(raw: str) -> Query:
    """Split ``tag:x status:y type:z`` filters from the free text."""
    words: list[str] = []
    filters: dict[str, list[str]] = {}
    for word in raw.split():
        found = _FILTER.match(word)
        if found:
            key = found.group(1).lower()
            key = "tag" if key == "tags" else key
            filters.setdefault(key, []).extend(p for p in found.group(2).split(",") if p)
        else:
            words.append(word)
    text = " ".join(words)
    return Query(text, tuple(tokenize(text)), {k: tuple(v) for k, v in filters.items()})


# ---------------------------------------------------------------- documents


def _entries_text(entries: Iterable[Mapping[str, Any]], keys: Sequence[str]) -> str:
    parts: list[str] = []
    for entry in entries:
        for key in keys:
            value = entry.get(key)
            if value:
                parts.append(str(value))
    return "\n".join(parts)


def document_for(
    item: Item, prefix: str, searchable_custom: Sequence[str] = (), *, with_tokens: bool = True
) -> SearchDoc:
    """The search document of one item (``with_tokens=False``: keyword scoring only)."""
    # Every name in _OTHER_FIELDS is a known attribute: getattr skips get_field's lookup.
    other = [str(v) for v in (getattr(item, k) for k in _OTHER_FIELDS) if v]
    other.extend(str(item.extra[k]) for k in searchable_custom if item.extra.get(k) is not None)
    groups = {
        "title": item.title,
        "description": item.description,
        "tags": " ".join(item.tags),
        "status": item.status,
        "body": item.body,
        "comments": _entries_text(item.comments, ("text",)),
        "notes": _entries_text(item.notes, ("text",)),
        "learnings": _entries_text(item.learnings, ("text",)),
        "reminders": _entries_text(item.reminders, ("text", "title")),
        "events": _entries_text(item.events, ("title", "text", "location")),
        "dependencies": _entries_text(item.dependencies, ("id", "kind")),
        "linked": _entries_text(
            [*item.files, *item.docs, *item.tests], ("path", "command", "note")
        ),
        "other": "\n".join(other),
    }
    lowered = {k: s for k, s in ((k, stream(v)) for k, v in groups.items() if v) if s}
    tokens = tuple(t for s in lowered.values() for t in s.split()) if with_tokens else ()
    short = item.id[len(prefix) :] if prefix and item.id.startswith(prefix) else ""
    return SearchDoc(item.id, item.title, item.type, item.status, lowered, tokens, short)


# ---------------------------------------------------------------- scorers


def _pin(doc: SearchDoc, query: Query) -> float:
    raw = [w.lower().lstrip("#") for w in query.text.split()]
    if doc.id in raw:
        return EXACT_ID_SCORE
    if doc.short_id and doc.short_id in raw:
        return SHORT_ID_SCORE
    return 0.0


def keyword_score(
    doc: SearchDoc, query: Query, weights: Mapping[str, float] = DEFAULT_WEIGHTS
) -> Scored:
    """The weighted keyword score of one document (0 when nothing matched)."""
    pin = _pin(doc, query)
    if pin:
        return Scored(doc.id, pin, ("id",), pinned=int(pin))
    score = 0.0
    matched: set[str] = set()
    hit_tokens = 0
    title = doc.fields.get("title", "")
    for token in query.tokens:
        found = False
        whole = needle(token)
        if whole in title:
            score += TITLE_TOKEN_BONUS
        for group, text in doc.fields.items():
            count = text.count(whole)
            if count:
                score += count * weights.get(group, 1.0)
                matched.add(group)
                found = True
        hit_tokens += found
    if len(query.tokens) > 1:
        if hit_tokens == len(query.tokens):
            score += ALL_TERMS_BONUS
        phrase = query.phrase
        if phrase in doc.fields.get("title", ""):
            score += TITLE_PHRASE_BONUS
        score += PHRASE_HIT_WEIGHT * sum(text.count(phrase) for text in doc.fields.values())
    return Scored(doc.id, score, tuple(sorted(matched)))


#: Relevance (the default ``keyword`` ranking): BM25F over the weighted field counts.
#: A token's evidence ``f`` is its weighted count over the field groups (title 48,
#: tags 6, description 5, ... plus the title-token bonus), saturated and length
#: normalised as BM25 does and multiplied by the token's IDF over the whole
#: tracker, so a word common to every item ("pm") counts little and one long,
#: much-commented item cannot win on raw repetitions. Phrase proximity: the
#: tokens in a row, in the title or anywhere (up to PHRASE_CAP times).
REL_K1 = 1.2
REL_B = 0.5
REL_ALL_TERMS = 1.0
REL_TITLE_PHRASE = 3.0
REL_PHRASE = 0.5
PHRASE_CAP = 4


def idf(stats: CorpusStats, token: str) -> float:
    """BM25's inverse document frequency of ``token`` over the tracker (never negative)."""
    n = stats.document_frequency.get(token, 0)
    return math.log(1 + (stats.documents - n + 0.5) / (n + 0.5))


def relevance_score(
    doc: SearchDoc,
    query: Query,
    stats: CorpusStats,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
) -> Scored:
    """The relevance of one document: the one definition both read paths rank by.

    The index computes the same expression in SQL from its postings
    (:func:`pm_core.tracker.index.score.term_sql`), operation for operation,
    so the doubles are equal; any other case is scored here.
    """
    pin = _pin(doc, query)
    if pin:
        return Scored(doc.id, pin, ("id",), pinned=int(pin))
    title = doc.fields.get("title", "")
    average = stats.average_length
    norm = 1 - REL_B + REL_B * len(doc.tokens) / average if average else 1.0
    score = 0.0
    matched: set[str] = set()
    hit_tokens = 0
    for token in query.tokens:
        whole = needle(token)
        evidence = TITLE_TOKEN_BONUS if whole in title else 0.0
        for group, text in doc.fields.items():
            count = text.count(whole)
            if count:
                evidence += count * weights.get(group, 1.0)
                matched.add(group)
        if evidence:
            hit_tokens += 1
            score += idf(stats, token) * (evidence * (REL_K1 + 1)) / (evidence + REL_K1 * norm)
    if len(query.tokens) > 1:
        if hit_tokens == len(query.tokens):
            score += REL_ALL_TERMS
        phrase = query.phrase
        if phrase in title:
            score += REL_TITLE_PHRASE
        score += REL_PHRASE * min(
            sum(text.count(phrase) for text in doc.fields.values()), PHRASE_CAP
        )
    return Scored(doc.id, score, tuple(sorted(matched)))


def corpus_stats(docs: Sequence[SearchDoc], terms: Iterable[str] | None = None) -> CorpusStats:
    """Document count, average length and document frequency of ``docs``.

    With ``terms``, frequencies are counted for those terms only, which is all
    a query needs and much cheaper than a set of every document's tokens.
    """
    frequency: Counter[str] = Counter()
    total = 0
    wanted = None if terms is None else tuple(dict.fromkeys(terms))
    for doc in docs:
        total += len(doc.tokens)
        if wanted is None:
            frequency.update(set(doc.tokens))
        else:
            frequency.update(t for t in wanted if t in doc.tokens)
    count = len(docs)
    return CorpusStats(count, total / count if count else 0.0, frequency)


def bm25_score(
    doc: SearchDoc, query: Query, stats: CorpusStats, k1: float = BM25_K1, b: float = BM25_B
) -> Scored:
    """Okapi BM25 of one document against the query tokens."""
    if not query.tokens or not doc.tokens:
        return Scored(doc.id, 0.0, ())
    # A token can only be present where its text is: a cheap substring test
    # spares counting the tokens of documents that cannot match.
    wholes = [needle(t) for t in query.tokens]
    if not any(w in text for text in doc.fields.values() for w in wholes):
        return Scored(doc.id, 0.0, ())
    counts = Counter(doc.tokens)
    length_norm = (
        1 - b + b * (len(doc.tokens) / stats.average_length if stats.average_length else 1)
    )
    score = 0.0
    for token in set(query.tokens):
        tf = counts.get(token, 0)
        if not tf:
            continue
        n = stats.document_frequency.get(token, 0)
        idf = math.log(1 + (stats.documents - n + 0.5) / (n + 0.5))
        score += idf * tf * (k1 + 1) / (tf + k1 * length_norm)
    if score <= 0:
        return Scored(doc.id, 0.0, ())
    matched = sorted(g for g, text in doc.fields.items() if any(w in text for w in wholes))
    return Scored(doc.id, score, tuple(matched))


def _matches(doc: SearchDoc, query: Query, match: str) -> bool:
    if not query.tokens:
        return True
    if match == "exact":
        return any(query.phrase in text for text in doc.fields.values())
    if match == "and":
        everything = "".join(doc.fields.values())
        return all(needle(t) in everything for t in query.tokens)
    return True


def _normalize(values: Mapping[str, float]) -> dict[str, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high == low:
        return {k: (1.0 if high > 0 else 0.0) for k in values}
    return {k: (v - low) / (high - low) for k, v in values.items()}


def score_documents(
    docs: Sequence[SearchDoc],
    query: Query,
    *,
    mode: str = "keyword",
    match: str = "or",
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    stats: CorpusStats | None = None,
) -> list[Scored]:
    """Score and order ``docs``: pinned ids first, then score desc, then id.

    ``stats`` describes the whole corpus for BM25; pass it when ``docs`` are
    only the candidates an index returned. Documents that do not match score
    nothing and are left out.
    """
    if mode not in MODES:
        raise UsageError(f"unknown search mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
    if match not in MATCHES:
        raise UsageError(f"unknown match mode {match!r}", hint=f"use one of: {', '.join(MATCHES)}")
    candidates = [d for d in docs if _pin(d, query) or _matches(d, query, match)]
    corpus = stats or corpus_stats(docs, query.tokens)
    if mode == "keyword":
        ranked = (relevance_score(d, query, corpus, weights) for d in candidates)
        results = [s for s in ranked if s.score > 0 or s.pinned]
    else:
        keyword = {d.id: keyword_score(d, query, weights) for d in candidates}
        bm25 = {d.id: bm25_score(d, query, corpus) for d in candidates}
        if mode == "bm25":
            results = [
                keyword[k] if keyword[k].pinned else s
                for k, s in bm25.items()
                if s.score > 0 or keyword[k].pinned
            ]
        else:
            unpinned = [k for k in keyword if not keyword[k].pinned]
            kw = _normalize({k: keyword[k].score for k in unpinned})
            bm = _normalize({k: bm25[k].score for k in unpinned})
            results = [keyword[k] for k in keyword if keyword[k].pinned]
            for k in unpinned:
                blended = HYBRID_BM25_WEIGHT * bm[k] + HYBRID_KEYWORD_WEIGHT * kw[k]
                if keyword[k].score > 0 or bm25[k].score > 0:
                    fields = sorted(set(keyword[k].matched_fields) | set(bm25[k].matched_fields))
                    results.append(Scored(k, blended, tuple(fields)))
    results.sort(key=lambda s: (-s.pinned, -s.score, s.id))
    return results


# ---------------------------------------------------------------- entry point


def search(
    tracker: Tracker,
    query: str,
    *,
    mode: str = "keyword",
    match: str = "or",
    limit: int = 50,
    min_score: float = 0.0,
    include_terminal: bool = True,
    filters: Mapping[str, str | Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Search every item (all statuses by default).

    ``filters`` and inline ``tag:/status:/type:/assignee:/priority:`` words
    narrow the candidates before scoring. Returns ``{query, mode, match,
    hits: [{id, title, type, status, score, matched_fields}], total,
    returned, filters}``.
    """
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    parsed = parse_query(query or "")
    merged: dict[str, list[str]] = {k: list(v) for k, v in parsed.filters.items()}
    for key, value in (filters or {}).items():
        name = "tag" if key in ("tags", "tag") else key
        values = [value] if isinstance(value, str) else list(value)
        merged.setdefault(name, []).extend(p for v in values for p in str(v).split(",") if p)
    if not parsed.tokens and not merged:
        raise UsageError(
            "empty search query", hint='pass words to look for, e.g. `pm search "login"`'
        )
    keep = _filter_predicate(tracker, merged, include_terminal)
    settings = tracker.settings.get("search", {})
    weights = dict(DEFAULT_WEIGHTS)
    tuning = settings.get("tuning")
    if isinstance(tuning, Mapping):
        weights.update({k: float(v) for k, v in tuning.items() if k in weights})
    page = tracker.index_reads.search_page(
        parsed,
        merged,
        include_terminal=include_terminal,
        mode=mode,
        match=match,
        weights=weights,
        min_score=min_score,
        limit=limit,
    )
    if page is not None:
        best, total, info = page
        return _result(parsed, mode, match, merged, best, total, info)
    searchable = [f.key for f in tracker.schema.fields if not f.commands or "search" in f.commands]
    # IDF and the average length describe the whole corpus, so every item gets a
    # document when there are words to rank by.
    needs_corpus = bool(parsed.tokens)
    all_docs: list[SearchDoc] = []
    kept_docs: list[SearchDoc] = []
    for item in tracker.items():
        kept = keep(item)
        if not (kept or needs_corpus):
            continue
        doc = document_for(item, tracker.prefix, searchable, with_tokens=needs_corpus)
        all_docs.append(doc)
        if kept:
            kept_docs.append(doc)
    if parsed.tokens:
        stats = corpus_stats(all_docs, parsed.tokens)
        scored = score_documents(
            kept_docs, parsed, mode=mode, match=match, weights=weights, stats=stats
        )
    else:
        # Filters alone: every candidate matches with score 0, in id order.
        scored = [Scored(d.id, 0.0, ()) for d in sorted(kept_docs, key=lambda d: d.id)]
        min_score = min(min_score, 0.0)
    scored = [s for s in scored if s.pinned or s.score >= min_score]
    info = {d.id: (d.title, d.type, d.status) for d in kept_docs}
    return _result(parsed, mode, match, merged, scored[:limit], len(scored), info)


def _result(
    parsed: Query,
    mode: str,
    match: str,
    merged: Mapping[str, Sequence[str]],
    best: Sequence[Scored],
    total: int,
    info: Mapping[str, tuple[str, str, str]],
) -> dict[str, Any]:
    """The search result from the best hits (shared with the index path)."""
    hits = [
        {
            "id": s.id,
            "title": info[s.id][0],
            "type": info[s.id][1],
            "status": info[s.id][2],
            "score": round(s.score, 4),
            "matched_fields": list(s.matched_fields),
        }
        for s in best
    ]
    return {
        "query": parsed.text,
        "mode": mode,
        "match": match,
        "hits": hits,
        "total": total,
        "returned": len(hits),
        "filters": {k: sorted(set(v)) for k, v in sorted(merged.items())},
    }


def _filter_predicate(
    tracker: Tracker, filters: Mapping[str, Sequence[str]], include_terminal: bool
) -> Any:
    schema = tracker.schema
    unknown = sorted(set(filters) - {"tag", "status", "type", "assignee", "priority"})
    if unknown:
        raise UsageError(
            f"unknown search filter(s): {', '.join(unknown)}",
            hint="use tag:, status:, type:, assignee: or priority:",
        )
    try:
        statuses = {normalize_status(s, schema.status_names) for s in filters.get("status", ())}
        priorities = {normalize_priority(p) for p in filters.get("priority", ())}
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    types = {schema.type_by_name(t).name for t in filters.get("type", ())}
    tags = set(filters.get("tag", ()))
    assignees = set(filters.get("assignee", ()))
    terminal = schema.terminal_statuses

    def keep(item: Item) -> bool:
        if not include_terminal and item.status in terminal and item.status not in statuses:
            return False
        if statuses and item.status not in statuses:
            return False
        if types and item.type not in types:
            return False
        if priorities and item.priority not in priorities:
            return False
        if tags and not tags <= set(item.tags):
            return False
        return not assignees or (item.assignee or item.claim_principal) in assignees

    return keep

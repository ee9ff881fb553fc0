"""``pm list`` and ``pm search`` answered from the read index.

Give the answers of :mod:`pm_core.tracker.query.listing` and
:mod:`pm_core.tracker.query.search`, or ``None`` when the index cannot answer.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.rows import GROUPS, doc_tokens
from pm_core.tracker.index.score import PARALLEL_ROWS
from pm_core.tracker.model.item import Item, normalize_priority, normalize_status
from pm_core.tracker.storage.workspace import tracker_relpath

if TYPE_CHECKING:
    from pathlib import Path

    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index.db import ReadIndex
    from pm_core.tracker.index.score import Part
    from pm_core.tracker.query.search import Query, Scored

#: ``ORDER BY`` for each listing sort. ``_desc`` in the listing module sorts
#: newest first with a shorter string before its extensions; appending the
#: largest code point to each value gives SQL's DESC that same order.
ORDERS: Mapping[str, str] = {
    "default": "e.priority, e.updated_at || char(1114111) DESC, e.id",
    "priority": "e.priority, e.updated_at || char(1114111) DESC, e.id",
    "updated": "e.updated_at || char(1114111) DESC, e.id",
    "created": "e.created_at || char(1114111) DESC, e.id",
    "id": "e.id",
    "title": "e.title_lower, e.id",
    "status": "e.status, e.priority, e.id",
    "deadline": "e.deadline IS NULL, COALESCE(e.deadline, ''), e.priority, e.id",
}
#: Who an item is assigned to, as the listing's assignee filter reads it.
_HOLDER = "(CASE WHEN e.assignee IS NOT NULL AND e.assignee != '' THEN e.assignee ELSE e.claim_principal END)"
#: Token bits fit one SQLite integer; a longer query reads every document.
_MAX_TOKEN_BITS = 60
#: Terms of all tokens together above which keyword counts come from the text
#: instead of the postings: each term is a bound parameter, up to twice.
_MAX_POSTING_TERMS = 4000


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


# ---------------------------------------------------------------- list


def list_page(
    tracker: Tracker,
    *,
    statuses: set[str],
    types: set[str],
    priorities: set[int],
    tags: set[str],
    assignee: str | None,
    parent_id: str | None,
    with_terminal: bool,
    sort: str,
    offset: int,
    limit: int | None,
    row_fields: tuple[str, ...] | None,
    head: int | None = None,
) -> tuple[list[dict[str, Any]], int, list[str], tuple[int, int] | None] | None:
    """``(rows, total, skipped_corrupt, rest)`` for a listing, or None to scan files.

    ``head`` (default rows, no ``limit``): build at most that many rows; ``rest``
    is then ``(count, bytes)`` of the page's rows left unbuilt, their compact
    JSON size with a comma each (None when every row was built).
    """

    offset = indexing.bounded(offset)
    limit = None if limit is None else indexing.bounded(limit)
    head = None if head is None else indexing.bounded(head)

    if sort not in ORDERS:
        return None

    def compute(
        index: ReadIndex,
    ) -> tuple[list[dict[str, Any]], int, list[str], tuple[int, int] | None]:
        where = ["e.live = 1"]
        params: list[Any] = []
        if not with_terminal:
            terminal = sorted(tracker.schema.terminal_statuses)
            where.append(f"e.status NOT IN ({_marks(terminal)})")
            params.extend(terminal)
        for column, values in (("status", statuses), ("type", types), ("priority", priorities)):
            if values:
                ordered = sorted(values)
                where.append(f"e.{column} IN ({_marks(ordered)})")
                params.extend(ordered)
        for tag in sorted(tags):
            where.append("EXISTS (SELECT 1 FROM json_each(e.tags) WHERE value = ?)")
            params.append(tag)
        if assignee is not None:
            wanted = assignee.strip()
            if wanted.lower() in ("none", "unassigned", ""):
                where.append(f"({_HOLDER} IS NULL OR {_HOLDER} = '')")
            else:
                where.append(f"{_HOLDER} = ?")
                params.append(wanted)
        if parent_id is not None:
            where.append("EXISTS (SELECT 1 FROM parents p WHERE p.source = e.id AND p.target = ?)")
            params.append(parent_id)
        clause = " AND ".join(where)
        db = index.db
        sized = head is not None and limit is None and row_fields is None
        total, size = db.execute(
            f"SELECT COUNT(*), {'SUM(e.list_bytes)' if sized else '0'} FROM entries e "
            f"WHERE {clause}",
            params,
        ).fetchone()
        total = int(total)
        if sized and head is not None and total - offset > head:
            return _head_rows(tracker, index, clause, params, sort, offset, head, total, int(size))
        columns = (
            "e.id, e.title, e.type, e.status, e.priority, e.tags, e.assignee, p.target, e.updated_at"
            if row_fields is None
            else "(SELECT r.record FROM records r WHERE r.rid = e.rid), p.target, e.path"
        )
        cursor = db.execute(
            f"SELECT {columns} FROM entries e LEFT JOIN parents p ON p.source = e.id "
            f"WHERE {clause} ORDER BY {ORDERS[sort]} LIMIT ? OFFSET ?",
            [*params, -1 if limit is None else limit, offset],
        )
        if row_fields is None:
            rows = [_default_row(r) for r in cursor]
        else:
            rows = _field_rows(index, cursor.fetchall(), row_fields)
        return rows, total, _corrupt(tracker, index), None

    return indexing.answer(tracker, compute)


#: JSON bytes a row's parent adds (``,"parent":"pm-x"``), or 0 without one.
_PARENT_BYTES = (
    "(CASE WHEN p.target IS NOT NULL AND p.target != '' "
    "THEN 10 + length(CAST(json_quote(p.target) AS BLOB)) ELSE 0 END)"
)


def _head_rows(
    tracker: Tracker,
    index: ReadIndex,
    clause: str,
    params: list[Any],
    sort: str,
    offset: int,
    head: int,
    total: int,
    size: int,
) -> tuple[list[dict[str, Any]], int, list[str], tuple[int, int] | None]:
    """The first ``head`` default rows after ``offset``, and the size of the rest.

    ``size`` is the rows' JSON bytes without parents (``entries.list_bytes``);
    parents are added from their table, and the rows before the page and in
    it are subtracted.
    """
    db = index.db
    (parents,) = db.execute(
        f"SELECT COALESCE(SUM({_PARENT_BYTES}), 0) FROM parents p "
        f"JOIN entries e ON e.id = p.source WHERE {clause}",
        params,
    ).fetchone()
    size += int(parents)
    ordered = (
        f"FROM entries e LEFT JOIN parents p ON p.source = e.id WHERE {clause} "
        f"ORDER BY {ORDERS[sort]}"
    )
    if offset:
        (before,) = db.execute(
            f"SELECT COALESCE(SUM(b), 0) FROM (SELECT e.list_bytes + {_PARENT_BYTES} AS b "
            f"{ordered} LIMIT ?)",
            [*params, offset],
        ).fetchone()
        size -= int(before)
    rows = []
    for r in db.execute(
        "SELECT e.id, e.title, e.type, e.status, e.priority, e.tags, e.assignee, p.target, "
        f"e.updated_at, e.list_bytes + {_PARENT_BYTES} {ordered} LIMIT ? OFFSET ?",
        [*params, head, offset],
    ):
        rows.append(_default_row(r))
        size -= r[9]
    if len(rows) < head:  # items removed by another process since the count
        return rows, offset + len(rows), _corrupt(tracker, index), None
    count = total - offset - len(rows)
    return rows, total, _corrupt(tracker, index), (count, size + count)


def _default_row(r: Sequence[Any]) -> dict[str, Any]:
    """The listing's default row (optional keys left out when unset)."""
    row: dict[str, Any] = {
        "id": r[0],
        "title": r[1],
        "type": r[2],
        "status": r[3],
        "priority": r[4],
        "tags": [] if r[5] == "[]" else json.loads(r[5]),
    }
    if r[6]:
        row["assignee"] = r[6]
    if r[7]:
        row["parent"] = r[7]
    row["updated_at"] = r[8]
    return row


def _field_rows(
    index: ReadIndex, rows: Sequence[Sequence[Any]], fields: tuple[str, ...]
) -> list[dict[str, Any]]:
    from pm_core.tracker.index.rows import unpack_item
    from pm_core.tracker.query.listing import item_row  # lazy: ``pm search`` never needs it

    out: list[dict[str, Any]] = []
    for record, parent, rel in rows:
        item = unpack_item(record) if record is not None else index.read_file(index.root / rel)
        if isinstance(item, Item):
            out.append(item_row(item, fields, parent))
    return out


def _corrupt(tracker: Tracker, index: ReadIndex) -> list[str]:
    return [tracker_relpath(tracker.root, path) for path, _ in index.corrupt()]


# ---------------------------------------------------------------- search


def search_page(
    tracker: Tracker,
    parsed: Query,
    filters: Mapping[str, Sequence[str]],
    *,
    include_terminal: bool,
    mode: str,
    match: str,
    weights: Mapping[str, float],
    min_score: float,
    limit: int,
    parallel_rows: int = PARALLEL_ROWS,
) -> tuple[list[Scored], int, dict[str, tuple[str, str, str]]] | None:
    """``(best hits, total, id -> (title, type, status))``, or None to scan files.

    ``filters`` must already have passed the reference's validation. From
    ``parallel_rows`` candidates on, keyword scores are taken in two threads.
    """

    limit = indexing.bounded(limit)

    def compute(index: ReadIndex) -> tuple[list[Scored], int, dict[str, tuple[str, str, str]]]:
        from pm_core.tracker.query.search import Scored, score_documents

        where, params = _search_filters(tracker, filters, include_terminal)
        db = index.db
        if not parsed.tokens:
            # Filters alone: every candidate matches with score 0, in id order.
            total = int(
                db.execute(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]
            )
            rows = db.execute(
                f"SELECT e.id, e.title, e.type, e.status FROM entries e WHERE {where} "
                "ORDER BY e.id LIMIT ?",
                [*params, limit],
            ).fetchall()
            return [Scored(r[0], 0.0, ()) for r in rows], total, {r[0]: r[1:] for r in rows}
        with_tokens = True  # relevance and BM25 both need lengths and IDF
        if mode == "keyword" and match in ("or", "and", "exact"):
            page = _keyword_page(
                db,
                index.path,
                where,
                params,
                parsed,
                tracker.prefix,
                match,
                weights,
                min_score,
                limit,
                parallel_rows,
            )
            if page is not None:
                return page
        rids = _candidates(db, parsed, tracker.prefix)
        docs = _documents(db, where, params, rids, tracker.prefix, with_tokens)
        if rids is not None and match == "or" and with_tokens:
            kept = int(
                db.execute(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]
            )
            if kept > len(docs):
                docs.append(_empty_doc())  # stands for the documents that match nothing
        stats = _corpus_stats(db, parsed)
        scored = score_documents(docs, parsed, mode=mode, match=match, weights=weights, stats=stats)
        scored = [s for s in scored if s.pinned or s.score >= min_score]
        info = {d.id: (d.title, d.type, d.status) for d in docs}
        return scored[:limit], len(scored), info

    return indexing.answer(tracker, compute)


def _search_filters(
    tracker: Tracker, filters: Mapping[str, Sequence[str]], include_terminal: bool
) -> tuple[str, list[Any]]:
    """SQL for the reference's filter predicate (values normalized the same way)."""

    schema = tracker.schema
    statuses = sorted({normalize_status(s, schema.status_names) for s in filters.get("status", ())})
    priorities = sorted({normalize_priority(p) for p in filters.get("priority", ())})
    types = sorted({schema.type_by_name(t).name for t in filters.get("type", ())})
    where = ["e.live = 1"]
    params: list[Any] = []
    if not include_terminal:
        # Terminal items are left out unless a status filter names them.
        hidden = sorted(schema.terminal_statuses - set(statuses))
        if hidden:
            where.append(f"e.status NOT IN ({_marks(hidden)})")
            params.extend(hidden)
    for column, values in (("status", statuses), ("type", types), ("priority", priorities)):
        if values:
            where.append(f"e.{column} IN ({_marks(values)})")
            params.extend(values)
    for tag in sorted(set(filters.get("tag", ()))):
        where.append("EXISTS (SELECT 1 FROM json_each(e.tags) WHERE value = ?)")
        params.append(tag)
    assignees = sorted(set(filters.get("assignee", ())))
    if assignees:
        where.append(f"{_HOLDER} IN ({_marks(assignees)})")
        params.extend(assignees)
    return " AND ".join(where), params


def _token_terms(db: Any, parsed: Query) -> list[list[str]] | None:
    """Each query token's vocabulary term (``[token]``, or ``[]`` when no document has it).

    A keyword hit is a whole token of a field's token stream, and the FTS
    index holds exactly those tokens (its ``ascii`` tokenizer splits the
    streams at their spaces only), so the term equal to the token finds every
    document that can score. None (no narrowing) for a query of more tokens
    than a mask holds.
    """
    if len(parsed.tokens) > _MAX_TOKEN_BITS:
        return None
    per_token: list[list[str]] = []
    for token in parsed.tokens:
        found = [r[0] for r in db.execute("SELECT term FROM vocab WHERE term = ?", (token,))]
        per_token.append(found)
    return per_token


def _pin_ids(parsed: Query, prefix: str) -> dict[str, int]:
    """Ids the query's words name, each with its pin score: exact first, then without the prefix."""
    from pm_core.tracker.query.search import EXACT_ID_SCORE, SHORT_ID_SCORE

    raw = {w.lower().lstrip("#") for w in parsed.text.split()}
    ids = raw | ({prefix + w for w in raw if w} if prefix else set())
    ids.discard("")
    return {i: int(EXACT_ID_SCORE if i in raw else SHORT_ID_SCORE) for i in sorted(ids)}


def _candidates(db: Any, parsed: Query, prefix: str) -> dict[int, int] | None:
    """Rows that can score, each with a bit per query token it holds (pins: no bits).

    A document without token ``n``'s bit holds no occurrence of it anywhere
    (:func:`_token_terms`). None means "all documents".
    """
    per_token = _token_terms(db, parsed)
    if per_token is None:
        return None
    rids: dict[int, int] = {}
    for n, terms in enumerate(per_token):
        bit = 1 << n
        for start in range(0, len(terms), 100):
            expression = " OR ".join(f'"{t}"' for t in terms[start : start + 100])
            for (rid,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expression,)):
                rids[rid] = rids.get(rid, 0) | bit
    ids = _pin_ids(parsed, prefix)
    if ids:
        for (rid,) in db.execute(
            "SELECT rid FROM entries WHERE live = 1 AND id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ):
            rids.setdefault(rid, 0)
    return rids


def _documents(
    db: Any,
    where: str,
    params: list[Any],
    rids: Collection[int] | None,
    prefix: str,
    with_tokens: bool,
) -> list[Any]:
    from pm_core.tracker.query.search import SearchDoc

    groups = ", ".join(f"d.g_{g}" for g in GROUPS)
    sql = (
        f"SELECT e.id, e.title, e.type, e.status, {groups} "
        f"FROM entries e JOIN docs d ON d.rid = e.rid WHERE {where}"
    )
    args = list(params)
    if rids is not None:
        sql += " AND e.rid IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(sorted(rids)))
    sql += " ORDER BY e.id"
    docs = []
    count = len(GROUPS)
    for row in db.execute(sql, args):
        item_id = row[0]
        texts = row[4 : 4 + count]
        fields = {g: text for g, text in zip(GROUPS, texts, strict=True) if text}
        short = item_id[len(prefix) :] if prefix and item_id.startswith(prefix) else ""
        docs.append(
            SearchDoc(
                item_id,
                row[1],
                row[2],
                row[3],
                fields,
                doc_tokens(texts) if with_tokens else (),
                short,
            )
        )
    return docs


def _keyword_page(
    db: Any,
    path: Path,
    where: str,
    params: list[Any],
    parsed: Query,
    prefix: str,
    match: str,
    weights: Mapping[str, float],
    min_score: float,
    limit: int,
    parallel_rows: int,
) -> tuple[list[Scored], int, dict[str, tuple[str, str, str]]] | None:
    """Relevance ranked in SQL from the FTS postings; only the best ``limit`` documents load.

    With whole positive weights (the defaults) and a query the token masks
    hold, each token's weighted counts come from the postings
    (:func:`indexscore.term_part`) and :func:`indexscore.term_sql` computes
    :func:`search.relevance_score` operation for operation. The best
    documents' scores are then recomputed by that reference (which also names
    the matched fields); None if any differs, and the caller scores the
    candidates in Python (the way for other weights too). That also catches a
    write committed between the reads of two connections.
    """
    from pm_core.tracker.index.score import (
        Ranking,
        integer_weights,
        rank_parts,
        term_part,
        term_sql,
    )
    from pm_core.tracker.query.search import relevance_score

    # Kept for its figure: at 10,000 items the postings statement takes 23-53 ms for
    # "vexpol" and 361-425 ms for "deadlock replica" where Python takes 156 and 2,500+.
    whole = integer_weights(weights)
    terms = _token_terms(db, parsed) if whole is not None and parsed.tokens else None
    if whole is None or terms is None or sum(map(len, terms)) > _MAX_POSTING_TERMS:
        return None
    # Each term's document and occurrence counts, read once (fts5vocab decodes
    # a term's whole posting list to count it): IDF and the split both use them.
    every = sorted({t for found in terms for t in found} | set(parsed.tokens))
    counts_of = {
        term: (int(docs), int(cnt))
        for term, docs, cnt in db.execute(
            f"SELECT term, doc, cnt FROM fts_vocab WHERE term IN ({_marks(every)})", every
        )
    }
    stats = _corpus_stats(db, parsed, counts_of)
    pins = _pin_ids(parsed, prefix)
    counts, score, matches = term_sql(parsed, whole, match, stats)
    ranking = Ranking(counts, score, matches, (where, params), min_score, limit)
    part = term_part(parsed, whole, terms, pins)
    parts = _term_parts(db, parsed, whole, terms, pins, parallel_rows, counts_of)
    ranked, total = rank_parts(db, path, ranking, part, parts)
    if not ranked:
        return [], 0, {}
    docs = {d.id: d for d in _documents(db, "1", [], {r[0] for r in ranked}, prefix, True)}
    best: list[Scored] = []
    for _rid, item_id, pinned, value in ranked:
        doc = docs.get(item_id)
        if doc is None:  # written by another process between the two reads
            return None
        scored = relevance_score(doc, parsed, stats, weights)
        if scored.pinned != pinned or (not pinned and scored.score != value):
            return None
        best.append(scored)
    info = {d.id: (d.title, d.type, d.status) for d in docs.values()}
    return best, total, info


def _term_parts(
    db: Any,
    parsed: Query,
    weights: Mapping[str, int],
    terms: Sequence[Sequence[str]],
    pins: Mapping[str, int],
    parallel_rows: int,
    counts_of: Mapping[str, tuple[int, int]],
) -> list[Part] | None:
    """Two rid ranges' parts when the terms occur ``parallel_rows`` times or more.

    ``counts_of``: each term's ``(documents, occurrences)`` (fts_vocab).
    """
    from pm_core.tracker.index.score import term_part

    every = {t for found in terms for t in found}
    occurrences = sum(counts_of.get(t, (0, 0))[1] for t in every)
    if occurrences < max(parallel_rows, 2):
        return None
    # Two subqueries: SQLite reads a lone MIN or MAX off the key, but scans for both.
    low, high = db.execute(
        "SELECT (SELECT MIN(rid) FROM docs), (SELECT MAX(rid) FROM docs)"
    ).fetchone()
    if low is None or high <= low:
        return None
    middle = (low + high) // 2
    return [
        term_part(parsed, weights, terms, pins, (low, middle)),
        term_part(parsed, weights, terms, pins, (middle + 1, high)),
    ]


def _empty_doc() -> Any:
    from pm_core.tracker.query.search import SearchDoc

    return SearchDoc("", "", "", "", {}, (), "")


def _corpus_stats(
    db: Any, parsed: Query, counts_of: Mapping[str, tuple[int, int]] | None = None
) -> Any:
    """BM25 statistics of every live document (the reference counts them all).

    ``counts_of``: the query tokens' ``(documents, occurrences)`` when already read.
    """
    from pm_core.tracker.query.search import CorpusStats

    # docs holds exactly the live items; triggers keep their count and token total.
    count, total = db.execute("SELECT documents, tokens FROM doc_stats").fetchone()
    frequency: dict[str, int] = {}
    for token in set(parsed.tokens):
        if counts_of is not None:
            frequency[token] = counts_of.get(token, (0, 0))[0]
            continue
        row = db.execute("SELECT doc FROM fts_vocab WHERE term = ?", (token,)).fetchone()
        frequency[token] = int(row[0]) if row else 0
    return CorpusStats(int(count), total / count if count else 0.0, frequency)

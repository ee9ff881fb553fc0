"""Relevance in SQL from the FTS postings, bit-identical to :func:`search.relevance_score`.

Each query token's weighted counts per document are read from the postings
into a temp table (:func:`term_part`); :func:`term_sql` then computes the
reference's expression operation for operation (integer evidence, bound
doubles for IDF and the length norm), so the doubles are equal. Other
weights, or queries of more tokens than a mask holds, are scored in Python
(:mod:`pm_core.tracker.query.search`): the one definition.

A large candidate set is scored in two halves on two read-only connections
to the same database file, one per thread (SQLite runs a statement without
Python's global lock). Each half yields its best rows and its count; the
merge orders them as one statement would.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.index.rows import GROUPS
from pm_core.tracker.index.schema import MMAP_BYTES

if TYPE_CHECKING:
    import sqlite3

    from pm_core.tracker.query.search import CorpusStats, Query

#: An SQL fragment and its parameters, in order.
Fragment = tuple[str, list[Any]]
#: A ranked row: ``(rid, id, pin, score)``.
Row = tuple[int, str, int, float]

#: Term occurrences from which the score is split over two connections (fewer
#: do not repay a thread and two connections: at 10,000 items, 7,000-10,000
#: occurrences, one connection was 10-22% faster).
#: Kept for its figure: over 68,000-102,000 occurrences at 100,000 items it saves 9-18% of the search (bench_score_split.py).
PARALLEL_ROWS = 30_000
#: Integer weights up to this keep every sum far below 2**53 (an exact double).
_MAX_EXACT_WEIGHT = 1_000_000
#: The order of the reference: pins first, then score, then id.
_ORDER = "pin DESC, CASE WHEN pin > 0 THEN pin ELSE score END DESC, id"


def join(fragments: Sequence[Fragment], glue: str) -> Fragment:
    """The fragments' SQL joined by ``glue``, with their parameters in order."""
    return glue.join(f[0] for f in fragments), [a for f in fragments for a in f[1]]


def count_sql(group: str, needle: str) -> Fragment:
    """``text.count(needle)`` (non-overlapping) of a field group; 0 when it is empty.

    Byte lengths: each occurrence removed shortens the UTF-8 text by exactly
    the needle's UTF-8 length (a token of any script). Needles are
    :func:`search.needle` forms, so only whole tokens are counted.
    """
    column = f"d.g_{group}"
    # A cheap test first: most groups hold no occurrence. LIKE '%needle%' scans
    # faster than instr() and matches every text instr() would (and more: it
    # ignores ASCII case, and _ or % in the needle match any text); the count
    # itself is exact, so a wider test costs time, never a wrong score. LIKE
    # stops at a NUL, so stored group texts have none (indexrows.doc_values).
    sql = (
        f"(CASE WHEN {column} LIKE ? THEN (length(CAST({column} AS BLOB)) - "
        f"length(CAST(replace({column}, ?, '') AS BLOB))) / ? ELSE 0 END)"
    )
    return sql, [f"%{needle}%", needle, len(needle.encode("utf-8"))]


def integer_weights(weights: Mapping[str, float]) -> dict[str, int] | None:
    """Each group's weight as an int when all of them (and the bonuses) allow it.

    Every weight must be a whole number above zero: then a token's weighted
    sum is above zero exactly when the token was found. None otherwise.
    """
    from pm_core.tracker.query import search

    bonuses = (
        search.TITLE_TOKEN_BONUS,
        search.ALL_TERMS_BONUS,
        search.TITLE_PHRASE_BONUS,
        search.PHRASE_HIT_WEIGHT,
    )
    found: dict[str, int] = {}
    for group in GROUPS:
        value = float(weights.get(group, 1.0))
        if not (value.is_integer() and 0 < value <= _MAX_EXACT_WEIGHT):
            return None
        found[group] = int(value)
    if not all(float(b).is_integer() and 0 <= b <= _MAX_EXACT_WEIGHT for b in bonuses):
        return None
    return found


#: FTS columns in the order a weight lookup tests them: the long free-text
#: groups first (most occurrences lie there), the order of GROUPS otherwise.
_LOOKUP_ORDER = (
    "body",
    "comments",
    "description",
    *[g for g in GROUPS if g not in ("body", "comments", "description")],
)


def _multiplicity(token: str, terms: Sequence[str]) -> Fragment:
    """How often ``token`` occurs in each term, as SQL over ``term`` ("" when always once)."""
    by_count: dict[int, list[str]] = {}
    for term in terms:
        count = term.count(token)
        if count != 1:
            by_count.setdefault(count, []).append(term)
    if not by_count:
        return "", []
    cases = [
        (f"WHEN term IN ({','.join('?' * len(group))}) THEN {count}", group)
        for count, group in sorted(by_count.items())
    ]
    sql, args = join(cases, " ")
    return f" * (CASE {sql} ELSE 1 END)", args


class Part(NamedTuple):
    """One statement's share of a ranking: what fills its temp table, then its source."""

    setup: Sequence[Fragment]
    source: Fragment
    cleanup: Sequence[Fragment] = ()


#: The temp table of :func:`term_part` (one per connection).
TERMS_TABLE = "temp.pm_terms"


def term_part(
    query: Query,
    weights: Mapping[str, int],
    terms: Sequence[Sequence[str]],
    pins: Mapping[str, int],
    bounds: tuple[int, int] | None = None,
) -> Part:
    """Each document's weighted token counts, read from the FTS postings into a temp table.

    ``terms[n]``: the vocabulary terms that contain token ``n``. A token is
    letters and digits only and a term is a maximal run of them, so every
    occurrence of the token in a group's text lies inside one of the group's
    terms, and the group's count is the sum over its term occurrences of how
    often the token occurs in that term (non-overlapping, as ``str.count``).
    Per token ``n`` a row carries ``w<n>``, the weighted sum over groups, and
    ``t<n>``, whether the token itself is a title term; with more than one
    token also ``m<n>``, the groups that hold it (bit ``i`` for ``GROUPS[i]``),
    so the phrase is looked for only in groups holding every token. The
    entries whose id ``pins`` names get a row too, with their ``pin`` score
    (every other row's is 0). ``bounds``: only rids within them.

    A table keyed by rid takes each token's occurrences as they come (in rid
    order, so the first token's are appends): cheaper than sorting them all
    for a GROUP BY.
    """
    size = len(query.tokens)
    weight = (
        "(CASE col "
        + " ".join(f"WHEN 'g_{g}' THEN {int(weights[g])}" for g in _LOOKUP_ORDER)
        + " END)"
    )
    masks = size > 1
    counts = ", pin INTEGER NOT NULL DEFAULT 0" + "".join(
        f", w{m} INTEGER NOT NULL DEFAULT 0, t{m} INTEGER NOT NULL DEFAULT 0"
        + (f", m{m} INTEGER NOT NULL DEFAULT 0" if masks else "")
        for m in range(size)
    )
    bit = (
        "(CASE col "
        + " ".join(f"WHEN 'g_{g}' THEN {1 << GROUPS.index(g)}" for g in _LOOKUP_ORDER)
        + " END)"
    )
    setup: list[Fragment] = [
        (f"DROP TABLE IF EXISTS {TERMS_TABLE}", []),
        (f"CREATE TABLE {TERMS_TABLE}(rid INTEGER PRIMARY KEY{counts})", []),
    ]
    within = " AND doc >= ? AND doc <= ?" if bounds else ""
    for n, (token, found) in enumerate(zip(query.tokens, terms, strict=True)):
        if not found:
            continue
        times = _multiplicity(token, found)
        mask_column = f", m{n}" if masks else ""
        mask_value = f", {bit}" if masks else ""
        mask_update = f", m{n} = m{n} | excluded.m{n}" if masks else ""
        setup.append(
            (
                f"INSERT INTO {TERMS_TABLE}(rid, w{n}, t{n}{mask_column}) "
                f"SELECT doc, {weight}{times[0]}, (col = 'g_title' AND term = ?){mask_value} "
                f"FROM fts_inst WHERE term IN ({','.join('?' * len(found))}){within} "
                f"ON CONFLICT(rid) DO UPDATE SET w{n} = w{n} + excluded.w{n}, "
                f"t{n} = max(t{n}, excluded.t{n}){mask_update}",
                [*times[1], token, *found, *(bounds or ())],
            )
        )
    if pins:
        rids = " AND rid >= ? AND rid <= ?" if bounds else ""
        scores = " ".join("WHEN ? THEN ?" for _ in pins)
        setup.append(
            (
                f"INSERT INTO {TERMS_TABLE}(rid, pin) SELECT rid, (CASE id {scores} END) "
                f"FROM entries WHERE live = 1 AND id IN ({','.join('?' * len(pins))}){rids} "
                "ON CONFLICT(rid) DO UPDATE SET pin = excluded.pin",
                [*(v for pair in pins.items() for v in pair), *pins, *(bounds or ())],
            )
        )
    return Part(
        setup,
        (f"{TERMS_TABLE} h CROSS JOIN entries e ON e.rid = h.rid", []),
        [(f"DROP TABLE IF EXISTS {TERMS_TABLE}", [])],
    )


def term_sql(
    query: Query, weights: Mapping[str, int], match: str, stats: CorpusStats
) -> tuple[Fragment, Fragment, Fragment]:
    """``(counts, score, matches)`` over :func:`term_part` rows: :func:`search.relevance_score`.

    Per token the evidence is ``t<n> * TITLE_TOKEN_BONUS + w<n>`` (an exact
    integer), saturated and length normalised with the entry's ``ntokens``
    and multiplied by the token's IDF (a bound double); every operation is in
    the reference's order, so the doubles are equal. The phrase needs the
    text: only a group holding every token can hold it, and only such groups
    of such a document are read, once, into ``pt`` (twice the phrase count,
    plus one when the title holds the phrase).
    """
    from pm_core.tracker.query.search import (
        PHRASE_CAP,
        REL_ALL_TERMS,
        REL_B,
        REL_K1,
        REL_PHRASE,
        REL_TITLE_PHRASE,
        TITLE_TOKEN_BONUS,
        idf,
    )

    size = len(query.tokens)
    average = stats.average_length
    norm: Fragment = (
        ("(1 - ? + ? * e.ntokens / ?)", [REL_B, REL_B, average]) if average else ("1.0", [])
    )
    # Per row, once: each token's evidence v<n> (an integer) and ``kn``, K1
    # times the length norm (the reference computes the same product per token).
    columns: list[Fragment] = [
        (
            ", ".join(
                f"h.w{n} AS w{n}, (h.t{n} * {int(TITLE_TOKEN_BONUS)} + h.w{n}) AS v{n}"
                for n in range(size)
            ),
            [],
        ),
        (f"(? * {norm[0]}) AS kn", [REL_K1, *norm[1]]),
    ]
    terms: list[Fragment] = [("0.0", [])]
    for n, token in enumerate(query.tokens):
        terms.append(
            (
                f"(CASE WHEN v{n} > 0 THEN ? * (v{n} * ?) / (v{n} + kn) ELSE 0.0 END)",
                [idf(stats, token), REL_K1 + 1],
            )
        )
    every = " AND ".join(f"w{n} > 0" for n in range(size))
    if size > 1:
        phrase = query.phrase
        # The groups holding every token (term_part's masks): the phrase lies in no other.
        shared = "(" + " & ".join(f"h.m{n}" for n in range(size)) + ")"
        counted = [count_sql(g, phrase) for g in GROUPS]
        hits = join(
            [
                (f"(CASE WHEN {shared} & {1 << i} THEN {sql} ELSE 0 END)", args)
                for i, (sql, args) in enumerate(counted)
            ],
            " + ",
        )
        title_bit = 1 << GROUPS.index("title")
        columns.append(
            (
                f"(CASE WHEN {shared} THEN (SELECT ({hits[0]}) * 2 + "
                f"({shared} & {title_bit} > 0 AND instr(IFNULL(d.g_title, ''), ?) > 0) "
                "FROM docs d WHERE d.rid = e.rid) ELSE 0 END) AS pt",
                [*hits[1], phrase],
            )
        )
        terms.append((f"(CASE WHEN {every} THEN ? ELSE 0.0 END)", [REL_ALL_TERMS]))
        terms.append(("(CASE WHEN pt & 1 THEN ? ELSE 0.0 END)", [REL_TITLE_PHRASE]))
        terms.append((f"? * min(pt >> 1, {PHRASE_CAP})", [REL_PHRASE]))
    if match == "and":
        matches: Fragment = (every, [])
    elif match == "exact":
        matches = ("pt >= 2" if size > 1 else "w0 > 0", [])
    else:
        matches = ("1", [])
    return join(columns, ", "), join(terms, " + "), matches


class Ranking:
    """The ranking statement of one search, over a :class:`Part`'s terms table.

    ``where`` filters entries (``e``).
    """

    def __init__(
        self,
        counts: Fragment,
        score: Fragment,
        matches: Fragment,
        where: Fragment,
        min_score: float,
        limit: int,
    ) -> None:
        self._parts = (counts, score, matches, where)
        self._min_score = min_score
        #: How many rows the statement returns at most.
        self.limit = limit

    def statement(self, source: Fragment) -> Fragment:
        """The SQL reading ``source`` (rows ``h`` of the terms table, ``e`` of entries)."""
        counts, score, matches, where = self._parts
        # LIMIT -1 keeps each inner query a co-routine: its columns are computed
        # once per row and read from there, never inlined into each use (the
        # score is used three times). Using ``s`` twice (rows and count)
        # materializes it once.
        sql = (
            f"WITH s AS MATERIALIZED (SELECT rid, id, pin, score FROM ("
            f"SELECT *, {score[0]} AS score FROM ("
            f"SELECT e.rid AS rid, e.id AS id, h.pin AS pin, {counts[0]} "
            f"FROM {source[0]} WHERE {where[0]} LIMIT -1) LIMIT -1) "
            f"WHERE pin > 0 OR ({matches[0]} AND score > 0 AND score >= ?)) "
            f"SELECT rid, id, pin, score, (SELECT COUNT(*) FROM s) FROM s "
            f"ORDER BY {_ORDER} LIMIT ?"
        )
        args = [
            *score[1],
            *counts[1],
            *source[1],
            *where[1],
            *matches[1],
            self._min_score,
            self.limit,
        ]
        return sql, args


def sort_key(row: Row) -> tuple[int, float, str]:
    """The statement's ``ORDER BY`` as a Python key."""
    pin, score = row[2], row[3]
    return (-pin, -(pin if pin > 0 else score), row[1])


def rank_parts(
    db: sqlite3.Connection,
    path: Path,
    ranking: Ranking,
    whole: Part,
    parts: Sequence[Part] | None,
) -> tuple[list[Row], int]:
    """The best rows and the number of hits of ``whole``, or of ``parts`` merged.

    Each part runs on its own thread and read-only connection; if those
    cannot be opened, ``db`` reads ``whole``.
    """
    import sqlite3

    if parts:
        try:
            return _merge([(p.setup, ranking.statement(p.source)) for p in parts], path, ranking)
        except sqlite3.OperationalError:
            pass  # no second connection (permissions, locks): one is enough
    try:
        for step in whole.setup:
            db.execute(*step)
        return _rows(db.execute(*ranking.statement(whole.source)).fetchall())
    finally:
        for step in whole.cleanup:
            db.execute(*step)


def _rows(found: list[Any]) -> tuple[list[Row], int]:
    """The rows of one statement without their count column, and that count."""
    return [r[:4] for r in found], int(found[0][4]) if found else 0


def reader(path: Path) -> sqlite3.Connection:
    """A read-only connection that maps the database file."""
    import sqlite3

    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    db = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        db.execute("PRAGMA temp_store=MEMORY")
        db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    except BaseException:
        db.close()
        raise
    return db


def _merge(
    statements: Sequence[tuple[Sequence[Fragment], Fragment]], path: Path, ranking: Ranking
) -> tuple[list[Row], int]:
    """Run each ``(setup, statement)`` on its own connection and thread; the best rows of all."""
    import threading

    results: list[tuple[list[Row], int] | BaseException] = [([], 0) for _ in statements]

    def work(i: int) -> None:
        try:
            db = reader(path)
            try:
                setup, statement = statements[i]
                for step in setup:
                    db.execute(*step)
                results[i] = _rows(db.execute(*statement).fetchall())
            finally:
                db.close()
        except BaseException as exc:  # handed to the caller's thread
            results[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, len(statements))]
    for thread in threads:
        thread.start()
    work(0)
    for thread in threads:
        thread.join()
    rows: list[Row] = []
    total = 0
    for result in results:
        if isinstance(result, BaseException):
            raise result
        rows.extend(result[0])
        total += result[1]
    rows.sort(key=sort_key)
    return rows[: ranking.limit], total

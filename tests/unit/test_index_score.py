"""Relevance in SQL: the postings path, the Python path for other weights, the two-thread split.

Every path must give what the file scan gives (``PM_INDEX=off``): the same
hits in the same order with the same scores and matched fields, and the same
total. The split is forced on a small workspace through ``parallel_rows``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.index import access as indexing
from pm_core.tracker.index import reads as indexed
from pm_core.tracker.index.rows import GROUPS
from pm_core.tracker.index.score import count_sql, integer_weights
from pm_core.tracker.query.listing import list_items
from pm_core.tracker.query.search import DEFAULT_WEIGHTS, parse_query, search

#: Splits every search of the 300-item workspace over two connections.
ALWAYS_SPLIT = 1
#: Never splits.
NEVER_SPLIT = 10**9


def _tracker(root: Path, index: bool) -> Tracker:
    return Tracker(root, author="alice", env={} if index else {"PM_INDEX": "off"})


def _tune(root: Path, tuning: Mapping[str, float]) -> dict[str, float]:
    """Write ``search.tuning`` and return the weights search() will use."""
    settings = root / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("search", {})["tuning"] = dict(tuning)
    settings.write_text(json.dumps(data))
    return {**DEFAULT_WEIGHTS, **tuning}


def _page(
    root: Path,
    query: str,
    parallel_rows: int,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    **options: Any,
) -> tuple[list[tuple[str, float, tuple[str, ...]]], int]:
    """The index's keyword answer as ``([(id, score, fields)], total)``."""
    parsed = parse_query(query)
    page = indexed.search_page(
        _tracker(root, index=True),
        parsed,
        {k: tuple(v) for k, v in options.get("filters", {}).items()},
        include_terminal=options.get("include_terminal", True),
        mode="keyword",
        match=options.get("match", "or"),
        weights=weights,
        min_score=options.get("min_score", 0.0),
        limit=options.get("limit", 50),
        parallel_rows=parallel_rows,
    )
    assert page is not None, "the index should have answered"
    best, total, _info = page
    return [(s.id, s.score, s.matched_fields) for s in best], total


def _shown(answer: tuple[list[tuple[str, float, tuple[str, ...]]], int]) -> tuple[list[Any], int]:
    """The answer with scores rounded as ``search()`` prints them."""
    return [(i, round(score, 4), fields) for i, score, fields in answer[0]], answer[1]


def _scanned(root: Path, query: str, **options: Any) -> tuple[list[Any], int]:
    """The file scan's answer in the shape of :func:`_page` (scores as printed)."""
    result = search(_tracker(root, index=False), query, **options)
    hits = [(h["id"], h["score"], tuple(h["matched_fields"])) for h in result["hits"]]
    return hits, result["total"]


QUERIES: dict[str, dict[str, Any]] = {
    "broad": {"query": "deadlock replica"},
    "one word": {"query": "replica"},
    "repeated word": {"query": "replica replica cache"},
    "and": {"query": "cache index", "match": "and"},
    "exact": {"query": "cache index", "match": "exact"},
    "exact one word": {"query": "rollback", "match": "exact"},
    "min score": {"query": "deadlock replica", "min_score": 4.0},
    "short token, every document": {"query": "db api", "limit": 7},
    "open tasks": {"query": "rollback", "include_terminal": False, "filters": {"type": ["Task"]}},
    "few hits": {"query": "deadlock", "limit": 3},
}


@pytest.mark.parametrize("split", [ALWAYS_SPLIT, NEVER_SPLIT], ids=["split", "one"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_integer_weights_score_as_the_file_scan(root: Path, name: str, split: int) -> None:
    options = dict(QUERIES[name])
    query = options.pop("query")
    assert integer_weights(DEFAULT_WEIGHTS) is not None
    indexed_answer = _page(root, query, split, **options)
    assert _shown(indexed_answer) == _scanned(root, query, **options)
    assert indexed_answer[0], "the query should find something"


@pytest.mark.parametrize(
    "tuning",
    [{"title": 0.3, "body": 1.7, "comments": 0.1}, {"tags": 0.0, "body": 2.0}, {"title": -3.0}],
    ids=["fractional", "zero", "negative"],
)
def test_other_weights_take_the_general_path_and_score_as_the_file_scan(
    root: Path, tuning: dict[str, float]
) -> None:
    weights = _tune(root, tuning)
    assert integer_weights(weights) is None
    pinned = list_items(_tracker(root, index=False), limit=1)["items"][0]["id"]
    for query in (f"{pinned} deadlock replica cache", "replica", "db api"):
        split = _page(root, query, ALWAYS_SPLIT, weights)
        assert split == _page(root, query, NEVER_SPLIT, weights), query
        assert _shown(split) == _scanned(root, query), query
        assert split[0], query


def test_split_scoring_equals_one_connection_with_pins_and_filters(root: Path) -> None:
    pinned = list_items(_tracker(root, index=False), limit=3)["items"][2]["id"]
    query = f"{pinned} replica cache"
    options: dict[str, Any] = {"filters": {"status": ["open", "closed"]}, "limit": 11}
    split = _page(root, query, ALWAYS_SPLIT, **options)
    assert split == _page(root, query, NEVER_SPLIT, **options)
    assert split[0][0][0] == pinned and split[1] > 11


@pytest.mark.parametrize(
    ("tuning", "whole"),
    [
        ({}, True),
        ({"title": 48.0, "body": 3.0}, True),
        ({"body": 1.5}, False),
        ({"tags": 0.0}, False),
        ({"notes": -2.0}, False),
        ({"title": 1e12}, False),
    ],
)
def test_integer_path_only_for_whole_positive_weights(
    tuning: dict[str, float], whole: bool
) -> None:
    weights = integer_weights({**DEFAULT_WEIGHTS, **tuning})
    assert (weights is not None) == whole
    if weights is not None:
        assert set(weights) == set(GROUPS)
        assert all(isinstance(w, int) and w > 0 for w in weights.values())


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("DeadLock deadlock DEADLOCK", "deadlock"),  # LIKE ignores ASCII case, the count does not
        ("a_b axb a_b", "a_b"),  # _ is a LIKE wildcard
        ("100% 100x", "100%"),  # so is %
        ("é deadlock ü deadlockdeadlock", "deadlock"),
        ("nothing here", "deadlock"),
        (None, "deadlock"),
    ],
)
def test_count_sql_is_exact_where_its_cheap_test_is_wider(text: str | None, needle: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE docs(g_body TEXT)")
    db.execute("INSERT INTO docs VALUES (?)", (text,))
    sql, args = count_sql("body", needle)
    assert db.execute(f"SELECT {sql} FROM docs d", args).fetchone()[0] == (text or "").count(needle)


@pytest.mark.parametrize("match", ["or", "and", "exact"])
def test_a_nul_before_the_word_does_not_hide_it_from_the_index(root: Path, match: str) -> None:
    # SQLite's LIKE stops reading at a NUL: the index stores group texts without one.
    tracker = _tracker(root, index=False)
    tracker.create({"title": "nul item", "body": "zzz\x00 then qworble vantid here"})
    for split in (ALWAYS_SPLIT, NEVER_SPLIT):
        indexed_answer = _page(root, "qworble vantid", split, match=match)
        assert _shown(indexed_answer) == _scanned(root, "qworble vantid", match=match)
        assert indexed_answer[1] == 1


#: Titles and bodies where the token "zor" sits inside longer terms, repeated,
#: overlapping ("zorzor" holds it twice; "zorzorz" twice, not three times) and
#: across groups, with the phrase "zor quax" once in a title and once split.
_TERM_ITEMS: list[dict[str, Any]] = [
    {"title": "zor quax", "body": "zor zor quax zorzor"},
    {"title": "zorzor lantern", "body": "quax", "tags": ["zorzorz"]},
    {"title": "Plain", "description": "xzorx, zor.quax and zor  quax", "tags": ["zor"]},
    {"title": "ZOR in capitals", "body": "ZORZORZOR"},
    {"title": "quax only", "body": "quaxquax quax"},
]


@pytest.mark.parametrize("match", ["or", "and", "exact"])
@pytest.mark.parametrize("split", [ALWAYS_SPLIT, NEVER_SPLIT], ids=["split", "one"])
def test_counts_from_postings_equal_str_count_inside_longer_terms(
    root: Path, match: str, split: int
) -> None:
    tracker = _tracker(root, index=False)
    made = [tracker.create({"type": "Task", **item})["id"] for item in _TERM_ITEMS]
    for query in ("zor quax", "zor", "zor zor quax", f"{made[4]} zor"):
        indexed_answer = _page(root, query, split, match=match)
        assert _shown(indexed_answer) == _scanned(root, query, match=match), query
        assert indexed_answer[0], query
    # The pinned item holds no "zor" at all, and still leads its query.
    assert _page(root, f"{made[4]} zor", split)[0][0][0] == made[4]


def test_postings_stay_exact_after_edits_and_deletes(root: Path) -> None:
    tracker = _tracker(root, index=True)
    assert indexing.fresh(tracker) is not None  # built first: every write below edits it
    made = [tracker.create({"type": "Task", **item})["id"] for item in _TERM_ITEMS]
    tracker.update(made[0], {"title": "quax zor zor"})
    tracker.delete(made[1])
    tracker.add_log("comments", made[2], "zorzorzor quax")
    for query in ("zor quax", "zorzor", "quax"):
        assert _shown(_page(root, query, NEVER_SPLIT)) == _scanned(root, query), query
    incremental = _postings(tracker)
    assert ("zorzorzor", "g_comments", made[2]) in {p[:3] for p in incremental}
    shutil.rmtree(root / "runtime")
    # A contentless row deleted with other tokens than it was given leaves
    # postings behind (SQLite's integrity check cannot see that): the index
    # kept up by edits must hold exactly what a fresh build holds.
    assert incremental == _postings(_tracker(root, index=True))


def _postings(tracker: Tracker) -> list[tuple[str, str, str, int]]:
    """Every FTS occurrence as ``(term, column, item id or "", offset)``."""
    index = indexing.fresh(tracker)
    assert index is not None
    return sorted(
        index.db.execute(
            "SELECT i.term, i.col, IFNULL(e.id, ''), i.offset "
            "FROM fts_inst i LEFT JOIN entries e ON e.rid = i.doc"
        ).fetchall()
    )


def test_queries_with_too_many_terms_are_counted_from_the_text(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every term is a bound parameter of the postings statement; past a bound
    # the candidates' text is scored instead, with the same answer.
    through_postings = _page(root, "deadlock replica", NEVER_SPLIT)
    narrowed: list[int] = []
    real = indexed._candidates

    def spied(db: Any, parsed: Any, prefix: str) -> Any:
        found = real(db, parsed, prefix)
        narrowed.append(len(found or ()))
        return found

    monkeypatch.setattr(indexed, "_MAX_POSTING_TERMS", 1)
    monkeypatch.setattr(indexed, "_candidates", spied)
    assert _page(root, "deadlock replica", NEVER_SPLIT) == through_postings
    assert narrowed and narrowed[0] >= through_postings[1]
    assert _shown(through_postings) == _scanned(root, "deadlock replica")


def test_the_counts_table_is_dropped_after_a_search_on_the_main_connection(root: Path) -> None:
    tracker = _tracker(root, index=True)
    assert _page(root, "deadlock replica", NEVER_SPLIT)[0]
    index = indexing.fresh(tracker)
    assert index is not None
    parsed = parse_query("deadlock replica")
    page = indexed.search_page(
        tracker,
        parsed,
        {},
        include_terminal=True,
        mode="keyword",
        match="or",
        weights=DEFAULT_WEIGHTS,
        min_score=0.0,
        limit=5,
        parallel_rows=NEVER_SPLIT,
    )
    assert page is not None and page[0]
    temp = index.db.execute("SELECT name FROM temp.sqlite_master WHERE type = 'table'").fetchall()
    assert temp == []


@pytest.mark.parametrize("name", ["broad", "repeated word", "and", "exact", "few hits"])
def test_the_sql_relevance_equals_the_reference_bit_for_bit(root: Path, name: str) -> None:
    """The postings statement's answer is taken (its scores equal relevance_score's)."""
    options = QUERIES[name]
    tracker = _tracker(root, index=True)
    index = indexing.fresh(tracker)
    assert index is not None
    parsed = parse_query(options["query"])
    page = indexed._keyword_page(
        index.db,
        index.path,
        "e.live = 1",
        [],
        parsed,
        tracker.prefix,
        options.get("match", "or"),
        DEFAULT_WEIGHTS,
        0.0,
        options.get("limit", 50),
        NEVER_SPLIT,
    )
    assert page is not None and page[0], "SQL and the reference disagreed (Python fallback)"

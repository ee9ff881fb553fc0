"""pm search: keyword weights, id pinning, BM25, hybrid blend, match modes, filters."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.query.search import (
    CorpusStats,
    SearchDoc,
    bm25_score,
    corpus_stats,
    keyword_score,
    parse_query,
    score_documents,
    search,
    stream,
)
from tests.support.trackers import add, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def doc(item_id: str, title: str = "", **fields: str) -> SearchDoc:
    groups = {k: stream(v) for k, v in {"title": title, **fields}.items()}
    text = " ".join(groups.values())
    return SearchDoc(item_id, title, "Task", "open", groups, tuple(text.split()))


def hit_ids(result: dict[str, object]) -> list[str]:
    return [h["id"] for h in result["hits"]]  # type: ignore[attr-defined,index]


# ---------------------------------------------------------------- pure scorers


def test_single_token_in_title_scores_title_bonus_plus_title_weight() -> None:
    scored = keyword_score(doc("pm-a", "Login page"), parse_query("login"))
    assert scored.score == 10 + 48
    assert scored.matched_fields == ("title",)


def test_occurrences_are_multiplied_by_their_field_weight() -> None:
    d = doc(
        "pm-a",
        "other",
        description="cache cache",
        tags="cache",
        body="cache",
        dependencies="cache",
    )
    scored = keyword_score(d, parse_query("cache"))
    assert scored.score == 2 * 5 + 6 + 1 + 3
    assert scored.matched_fields == ("body", "dependencies", "description", "tags")


def test_multi_token_title_phrase_gets_all_terms_and_phrase_bonuses() -> None:
    scored = keyword_score(doc("pm-a", "Build login form"), parse_query("login form"))
    per_token = 10 + 48
    assert scored.score == 2 * per_token + 40 + 120 + 6


def test_all_terms_bonus_needs_every_token() -> None:
    both = keyword_score(doc("pm-a", "x", description="alpha beta"), parse_query("alpha beta"))
    one = keyword_score(doc("pm-b", "x", description="alpha"), parse_query("alpha beta"))
    assert both.score == 5 + 5 + 40 + 6  # two tokens, all-terms bonus, one phrase hit
    assert one.score == 5


def test_exact_id_pins_at_1000_and_short_id_at_900() -> None:
    docs = [
        SearchDoc(
            "pm-ab12", "unrelated", "Task", "open", {"title": "unrelated"}, ("unrelated",), "ab12"
        ),
        doc("pm-zz99", "ab12 " * 20),
    ]
    exact = score_documents(docs, parse_query("pm-ab12"))
    assert (exact[0].id, exact[0].score, exact[0].matched_fields) == ("pm-ab12", 1000, ("id",))
    short = score_documents(docs, parse_query("ab12"))
    assert short[0].id == "pm-ab12" and short[0].score == 900
    assert short[1].id == "pm-zz99" and 0 < short[1].score < 900  # text hits follow the pin


def test_bm25_follows_the_okapi_formula() -> None:
    docs = [doc("pm-a", "apple banana"), doc("pm-b", "banana cherry cherry"), doc("pm-c", "date")]
    stats = corpus_stats(docs)
    scored = bm25_score(docs[0], parse_query("apple"), stats)
    n, df, avgdl, dl, tf = 3, 1, (2 + 3 + 1) / 3, 2, 1
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    expected = idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))
    assert scored.score == pytest.approx(expected)


def test_bm25_ranks_a_rare_term_above_a_common_one() -> None:
    docs = [doc("pm-a", "common rare"), doc("pm-b", "common"), doc("pm-c", "common")]
    ranked = score_documents(docs, parse_query("rare common"), mode="bm25")
    assert ranked[0].id == "pm-a"


def test_scorer_accepts_corpus_stats_from_an_index() -> None:
    # Only one candidate is passed in, but the corpus it came from is large.
    candidate = doc("pm-a", "needle")
    big = CorpusStats(documents=1000, average_length=1.0, document_frequency={"needle": 1})
    small = score_documents([candidate], parse_query("needle"), mode="bm25")
    indexed = score_documents([candidate], parse_query("needle"), mode="bm25", stats=big)
    assert indexed[0].score > small[0].score


def test_hybrid_scores_are_a_normalized_blend_in_zero_to_one() -> None:
    docs = [doc("pm-a", "alpha alpha"), doc("pm-b", "x", description="alpha"), doc("pm-c", "zzz")]
    ranked = score_documents(docs, parse_query("alpha"), mode="hybrid")
    assert [s.id for s in ranked] == ["pm-a", "pm-b"]
    assert ranked[0].score == pytest.approx(1.0)
    assert 0.0 <= ranked[1].score < 1.0


def test_match_modes_and_and_exact() -> None:
    docs = [doc("pm-a", "red green blue"), doc("pm-b", "red"), doc("pm-c", "green red")]
    assert {s.id for s in score_documents(docs, parse_query("red green"), match="or")} == {
        "pm-a",
        "pm-b",
        "pm-c",
    }
    assert {s.id for s in score_documents(docs, parse_query("red green"), match="and")} == {
        "pm-a",
        "pm-c",
    }
    assert [s.id for s in score_documents(docs, parse_query("red green"), match="exact")] == [
        "pm-a"
    ]


def test_parse_query_splits_inline_filters() -> None:
    query = parse_query("tag:ui status:open,in_progress type:Task fix login")
    assert query.tokens == ("fix", "login")
    assert query.filters == {"tag": ("ui",), "status": ("open", "in_progress"), "type": ("Task",)}


# ---------------------------------------------------------------- tracker search


def test_title_match_outranks_description_match(t: Tracker) -> None:
    in_desc = add(t, "Settings page", description="mentions login once")
    in_title = add(t, "Login flow")
    assert hit_ids(search(t, "login")) == [in_title, in_desc]


def test_search_covers_comments_and_all_statuses(t: Tracker) -> None:
    item = add(t, "Quiet title")
    t.add_log("comments", item, "the flamingo bug again")
    t.close(item, "fixed")
    result = search(t, "flamingo")
    assert hit_ids(result) == [item]
    assert result["hits"][0]["matched_fields"] == ["comments"]
    assert search(t, "flamingo", include_terminal=False)["hits"] == []


def test_inline_filters_narrow_candidates(t: Tracker) -> None:
    ui = add(t, "Login button", tags="ui")
    add(t, "Login backend", tags="api")
    result = search(t, "login tag:ui")
    assert hit_ids(result) == [ui]
    assert result["filters"] == {"tag": ["ui"]}
    assert result["query"] == "login"


def test_exact_id_query_finds_the_item_first(t: Tracker) -> None:
    add(t, "mentions nothing")
    target = add(t, "Target")
    result = search(t, target)
    assert result["hits"][0]["id"] == target
    assert result["hits"][0]["score"] == 1000


def test_min_score_and_limit_bound_the_hits(t: Tracker) -> None:
    add(t, "cache", description="cache")
    add(t, "other", description="cache")
    scores = [h["score"] for h in search(t, "cache")["hits"]]
    assert scores[0] > scores[1] > 0  # the title hit first
    assert len(search(t, "cache", min_score=(scores[0] + scores[1]) / 2)["hits"]) == 1
    limited = search(t, "cache", limit=1)
    assert (limited["total"], limited["returned"]) == (2, 1)


def test_bad_search_input_is_a_usage_error(t: Tracker) -> None:
    with pytest.raises(UsageError, match="empty search query"):
        search(t, "   ")
    with pytest.raises(UsageError, match="unknown search mode"):
        search(t, "x", mode="semantic")
    with pytest.raises(UsageError, match="unknown search filter"):
        search(t, "x", filters={"colour": "red"})


def test_settings_tuning_changes_weights(t: Tracker) -> None:
    add(t, "word")
    before = search(t, "word")["hits"][0]["score"]
    t.config_set("search.tuning", '{"title": 100}')
    assert search(t, "word")["hits"][0]["score"] > before  # more evidence from the title
    t.config_set("search.tuning", '{"title": 1}')
    assert search(t, "word")["hits"][0]["score"] < before


def test_query_term_frequencies_match_the_full_corpus_count() -> None:
    docs = [doc("pm-a", "red red blue"), doc("pm-b", "blue"), doc("pm-c", "green")]
    full = corpus_stats(docs)
    narrow = corpus_stats(docs, ["red", "blue", "pink"])
    assert (narrow.documents, narrow.average_length) == (full.documents, full.average_length)
    assert {t: narrow.document_frequency.get(t, 0) for t in ("red", "blue", "pink")} == {
        "red": 1,
        "blue": 2,
        "pink": 0,
    }
    assert full.document_frequency["green"] == 1

"""Search reads words of any script: NFKC, case folding, whole tokens; index and scan agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.query.search import tokenize

TITLES = {
    "accent": "Ünïcode handling in the parser",
    "plain": "Unicode plain spelling",
    "greek": "Διόρθωση σφάλματος στον αναλυτή",
    "cyrillic": "Исправить поиск по заголовку",
    "cjk": "検索 の 改善",
    "german": "Straße names in addresses",
    "open": "Open the door",
    "ligature": "ﬁle handling",  # NFKC: the ligature is "fi"
}


def test_tokens_are_words_of_any_script() -> None:
    assert tokenize("Ünïcode, ПОИСК! σφάλματος") == [
        "ünïcode",
        "поиск",
        "σφάλματοσ",
    ]  # folded: final sigma
    assert tokenize("STRASSE Straße") == ["strasse", "strasse"]
    assert tokenize("ﬁle") == ["file"]
    assert tokenize("e\u0301t\u00e9") == ["été"]  # a combining accent joins its letter
    assert tokenize("snake_case x-y") == ["snake", "case", "x", "y"]


@pytest.fixture
def trackers(repo: Path) -> tuple[Tracker, Tracker, dict[str, str]]:
    root = repo / ".agents" / "pm"
    indexed = Tracker(root, author="tester", env={})
    ids = {key: str(indexed.create({"title": title})["id"]) for key, title in TITLES.items()}
    return indexed, Tracker(root, author="tester", env={"PM_INDEX": "off"}), ids


QUERIES = [
    ("ünïcode", ["accent"]),
    ("ÜNÏCODE", ["accent"]),
    ("unicode", ["plain"]),
    ("σφάλματος", ["greek"]),
    ("ΣΦΆΛΜΑΤΟΣ", ["greek"]),
    ("поиск", ["cyrillic"]),
    ("検索", ["cjk"]),
    ("strasse", ["german"]),
    ("file", ["ligature"]),
    ("n", []),  # no substring junk: "n" is not a word of "open" or "Unicode"
    ("pe", []),
]


def test_a_word_finds_its_items_and_nothing_else(
    trackers: tuple[Tracker, Tracker, dict[str, str]],
) -> None:
    indexed, scanned, ids = trackers
    for mode in ("keyword", "bm25", "hybrid"):
        for query, expected in QUERIES:
            hits = indexed.search(query, mode=mode)
            found = [h["id"] for h in hits["hits"]]
            assert found == [ids[k] for k in expected], (mode, query)
            assert json.dumps(hits, sort_keys=True) == json.dumps(
                scanned.search(query, mode=mode), sort_keys=True
            ), (mode, query)

"""The ``Tracker`` facade declares its keywords: no method hides them behind ``**options``."""

from __future__ import annotations

import inspect

from pm_core.tracker.api import Tracker

#: ``receipt`` adds caller-chosen fields to a receipt: a bag of values by design.
BAGS = {"receipt"}


def test_no_public_tracker_method_takes_a_keyword_bag() -> None:
    bags = []
    for name, member in inspect.getmembers(Tracker, inspect.isfunction):
        if name.startswith("_") or name in BAGS:
            continue
        kinds = {p.kind for p in inspect.signature(member).parameters.values()}
        if inspect.Parameter.VAR_KEYWORD in kinds:
            bags.append(name)
    assert bags == []


def test_facade_keywords_match_the_functions_they_delegate_to() -> None:
    from pm_core.tracker.query import listing, ranking, search

    for method, function in (
        (Tracker.list_items, listing.list_items),
        (Tracker.search, search.search),
        (Tracker.next_items, ranking.next_items),
        (Tracker.context, ranking.context),
    ):
        ours = {
            n: (p.default, p.annotation)
            for n, p in inspect.signature(method).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        theirs = {
            n: (p.default, p.annotation)
            for n, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        assert ours == theirs, method.__name__

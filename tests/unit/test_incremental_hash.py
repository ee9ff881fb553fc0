"""The chain walk's incremental hasher gives the hashes :func:`item_hash` gives from scratch.

``verify_chain`` keeps each key's JSON, the key order and list elements'
JSON between entries and re-encodes only what a patch wrote (named by
:class:`PatchChanges`). Random patch sequences (new and removed keys, list
inserts that shift elements, edits inside elements, moves, body edits) check
that after every patch the cached hashes equal fresh ones in every epoch.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pm_core.tracker.model.itemhash import DocumentHasher, item_hash
from pm_core.tracker.storage import history as hist

_KEYS = ["assignee", "comments", "files", "notes", "priority", "status", "tags", "tests", "zeta"]
_text = st.text(alphabet='abcxyz é"\\', max_size=6)
_element = st.fixed_dictionaries({"path": _text, "note": _text}) | _text
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _text)


@st.composite
def _operation(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    metadata = document["metadata"]
    lists = [k for k, v in metadata.items() if isinstance(v, list)]
    kind = draw(st.sampled_from(["set", "drop", "insert", "edit", "remove_at", "move", "body"]))
    if kind == "body":
        return {"op": "replace", "path": "/body", "value": draw(_text)}
    if kind == "drop" and metadata:
        return {"op": "remove", "path": f"/metadata/{draw(st.sampled_from(sorted(metadata)))}"}
    if kind in ("insert", "edit", "remove_at", "move") and lists:
        key = draw(st.sampled_from(lists))
        size = len(metadata[key])
        if kind == "insert" or size == 0:
            at = draw(st.integers(0, size))
            return {"op": "add", "path": f"/metadata/{key}/{at}", "value": draw(_element)}
        at = draw(st.integers(0, size - 1))
        if kind == "remove_at":
            return {"op": "remove", "path": f"/metadata/{key}/{at}"}
        if kind == "move":
            to = draw(st.integers(0, size - 1))
            return {"op": "move", "from": f"/metadata/{key}/{at}", "path": f"/metadata/{key}/{to}"}
        if isinstance(metadata[key][at], dict):  # an edit inside an element, as TS diffs write
            return {"op": "replace", "path": f"/metadata/{key}/{at}/note", "value": draw(_text)}
        return {"op": "replace", "path": f"/metadata/{key}/{at}", "value": draw(_text)}
    key = draw(st.sampled_from(_KEYS))
    value = draw(st.lists(_element, max_size=4) if key != "priority" else _scalar)
    return {"op": "add", "path": f"/metadata/{key}", "value": value}


@st.composite
def _chains(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    # As a chain starts: an empty document, then a create.
    document: dict[str, Any] = {"metadata": {"tags": []}, "body": ""}
    patches: list[list[dict[str, Any]]] = [[{"op": "add", "path": "/metadata/tags", "value": []}]]
    for _ in range(draw(st.integers(1, 25))):
        patch = [draw(_operation(document)) for _ in range(draw(st.integers(1, 3)))]
        try:
            document = hist.apply_patch(document, patch)
        except hist.PatchError:
            continue
        patches.append(patch)
    return patches


@settings(max_examples=200, deadline=None)
@given(_chains())
def test_incremental_hashes_equal_fresh_hashes_after_every_patch(
    patches: list[list[dict[str, Any]]],
) -> None:
    document: dict[str, Any] = {"metadata": {}, "body": ""}
    hasher = DocumentHasher()
    for patch in patches:
        changes = hist.PatchChanges()
        document = hist.apply_patch(document, patch, in_place=True, changes=changes)
        hasher.changed(changes.keys, changes.elements)
        for epoch in (0, 1, 2):
            fresh = item_hash(copy.deepcopy(document), epoch)
            assert hasher.hash(document, epoch) == fresh, (epoch, patch)
            assert hasher.matches(document, fresh, epoch), (epoch, patch)
        hasher.changed([])  # forget the whole-document hashes only: the parts must hold


@settings(max_examples=100, deadline=None)
@given(_chains(), st.sampled_from([0, 2]))
def test_a_chain_recorded_with_fresh_hashes_verifies_and_ends_at_its_replay(
    patches: list[list[dict[str, Any]]], epoch: int
) -> None:
    document: dict[str, Any] = {"metadata": {}, "body": ""}
    entries = []
    for number, patch in enumerate(patches, start=1):
        before = item_hash(document, epoch)
        document = hist.apply_patch(document, patch)
        entries.append(
            hist.HistoryEntry(
                ts=f"2026-01-01T00:00:{number % 60:02d}.000Z",
                author="t",
                op="update",
                patch=copy.deepcopy(patch),
                before_hash=before,
                after_hash=item_hash(document, epoch),
                item_hash_version=epoch or None,
            )
        )
    report = hist.verify_chain(entries, copy.deepcopy(document))
    assert report.ok, report.problems


def test_a_file_equal_to_its_replay_but_for_a_json_type_is_still_named_as_differing() -> None:
    # True == 1 in Python, but "true" and "1" hash differently: the shortcut must not equate them.
    document = {"metadata": {"priority": 1, "tags": []}, "body": ""}
    entry = hist.HistoryEntry(
        ts="2026-01-01T00:00:00.000Z",
        author="t",
        op="create",
        patch=[
            {"op": "add", "path": "/metadata/priority", "value": 1},
            {"op": "add", "path": "/metadata/tags", "value": []},
        ],
        before_hash=item_hash({"metadata": {"tags": []}, "body": ""}),
        after_hash=item_hash(document),
        item_hash_version=2,
    )
    entries = [entry]
    assert hist.verify_chain(entries, {"metadata": {"priority": 1, "tags": []}, "body": ""}).ok
    changed = hist.verify_chain(entries, {"metadata": {"priority": True, "tags": []}, "body": ""})
    assert [p.message for p in changed.problems] == [
        "item file differs from the state its history records "
        "(edited by hand, or a write was interrupted before its history entry)"
    ]


def test_days_from_civil_is_calendar_timegm() -> None:
    import calendar

    from pm_core.tracker.model.itemhash import days_from_civil, timestamp_ms

    for year in (*range(1, 10_000, 13), 1900, 1970, 2000, 2024, 2100, 9999):
        for month in range(1, 13):
            for day in (1, 28, 29, 30, 31):  # day 31 of a short month rolls over
                expected = calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0)) // 86400
                assert days_from_civil(year, month, day) == expected, (year, month, day)
    assert timestamp_ms("1970-01-02T00:00:00.001Z") == 86_400_001.0
    assert timestamp_ms("2026-02-31") == timestamp_ms("2026-03-03")
    assert timestamp_ms("+275760-01-01") is None  # beyond what the date arithmetic took

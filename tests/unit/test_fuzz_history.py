"""Property-based fuzzing of the history reader and chain checker.

A history line is either an entry or a :class:`CorruptItemError` naming the
file and line; a chain of arbitrary entries (patches that do not apply, wrong
hashes, odd documents) always yields a :class:`ChainReport`, never an
exception; the drift check writers run before every append never raises.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pm_core.tracker.model.errors import CorruptItemError
from pm_core.tracker.model.item import document_hash
from pm_core.tracker.storage import history as hist

FUZZ = settings(max_examples=300, deadline=None)
#: Chains and files cost more per example (JSON patches, a temporary folder).
FUZZ_HEAVY = settings(max_examples=150, deadline=None)

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_pointer = st.one_of(
    st.sampled_from(["", "/", "/metadata", "/metadata/title", "/body", "/metadata/tags/-"]),
    st.sampled_from(["/metadata/tags/0", "/metadata/~1x", "/metadata/~0", "/x/y/z", "/-"]),
    st.text(max_size=15),
)
_operation = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"])
        | st.text(max_size=6),
        "path": _pointer,
    },
    optional={"value": _json, "from": _pointer},
)
_hash = st.one_of(
    st.just(""),
    st.just(document_hash(hist.EMPTY_DOCUMENT)),
    st.text("0123456789abcdef", min_size=64, max_size=64),
)
_entry = st.fixed_dictionaries(
    {"ts": st.text(max_size=30), "op": st.text(max_size=12), "patch": st.lists(_operation)},
    optional={
        "author": _json,
        "before_hash": _hash,
        "after_hash": _hash,
        "message": _json,
        "extra_key": _json,
    },
)
_line = st.one_of(
    _entry.map(json.dumps),
    _entry.map(lambda e: json.dumps({**e, "item_hash_version": 3})),
    _json.map(json.dumps),
    st.text(max_size=80),
    st.sampled_from(['{"ts": "x"', "[]", "null", '{"ts":1,"op":2,"patch":[1]}', "\x00"]),
)


@FUZZ
@given(_line)
def test_any_history_line_is_an_entry_or_a_corrupt_item_error_naming_the_line(line: str) -> None:
    try:
        entry = hist.parse_entry(line, "history/pm-f1.jsonl line 3")
    except CorruptItemError as exc:
        assert exc.message.startswith("history/pm-f1.jsonl line 3: "), exc.message
        return
    assert isinstance(entry, hist.HistoryEntry)
    assert isinstance(entry.patch, list)


@FUZZ_HEAVY
@given(
    st.lists(_entry, max_size=6),
    st.one_of(st.none(), st.fixed_dictionaries({"metadata": _json, "body": _json})),
)
def test_any_chain_of_entries_yields_a_report(
    raw: list[dict[str, Any]], current: dict[str, Any] | None
) -> None:
    entries = [hist.parse_entry(json.dumps(r), "fuzz") for r in raw]
    report = hist.verify_chain(entries, current)
    assert report.entries == len(entries)
    assert report.ok == (not report.problems)


@FUZZ_HEAVY
@given(st.lists(_line, max_size=6), st.binary(max_size=40))
def test_history_files_of_any_content_read_or_fail_cleanly_and_never_break_the_drift_check(
    lines: list[str], tail: bytes
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        history_dir = Path(folder)
        path = hist.history_path(history_dir, "pm-f1")
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + tail)
        try:
            entries = hist.read_entries(history_dir, "pm-f1")
        except (CorruptItemError, UnicodeDecodeError):
            entries = None
        if entries is not None:
            assert all(isinstance(e, hist.HistoryEntry) for e in entries)
        current = {"metadata": {"id": "pm-f1", "title": "t"}, "body": ""}
        gap = hist.drift_entry(history_dir, "pm-f1", current, ts="t", author="fuzz")
        assert gap is None or (
            gap.op == "history_repair" and gap.after_hash == document_hash(current)
        )


def test_a_valid_chain_verifies_and_a_drifted_file_gets_one_repair_entry(tmp_path: Path) -> None:
    first = {"metadata": {"id": "pm-f1", "title": "a"}, "body": ""}
    second = {"metadata": {"id": "pm-f1", "title": "b"}, "body": "x"}
    hist.append_entry(
        tmp_path,
        "pm-f1",
        hist.build_entry(ts="t1", author="a", op="create", before=hist.EMPTY_DOCUMENT, after=first),
    )
    assert hist.drift_entry(tmp_path, "pm-f1", first, ts="t2", author="a") is None
    gap = hist.drift_entry(tmp_path, "pm-f1", second, ts="t2", author="a")
    assert gap is not None and gap.op == "history_repair"
    hist.append_entry(tmp_path, "pm-f1", gap)
    entries = hist.read_entries(tmp_path, "pm-f1")
    assert hist.verify_chain(entries, second).ok
    assert hist.drift_entry(tmp_path, "pm-f1", second, ts="t3", author="a") is None

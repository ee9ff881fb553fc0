"""Property-based fuzzing of the item file reader (TOON).

Whatever bytes sit in an item file, :func:`decode_item` either returns an item
or raises :class:`CorruptItemError` naming the file; no other exception
escapes (a crash in ``pm list`` because of one bad file would hide every other
item). Anything the reader accepts, the writer writes back and reads again to
the same item. The budget is bounded (``max_examples``) so CI stays quick.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm_core.tracker.model.errors import CorruptItemError
from pm_core.tracker.model.item import Item, item_from_record
from pm_core.tracker.storage.itemfile import decode_item, encode_item

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "toon"
VALID = [p.read_bytes() for p in sorted(FIXTURES.glob("*.toon"))]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that carry meaning in TOON, so random text often looks like it.
_TOON_ALPHABET = st.sampled_from(
    [*':-[]{},"\\#\n\t |', "  ", "id", "title", "x", "1", "0", "e", "null", "true", "é"]
)
_toonish = st.lists(_TOON_ALPHABET, max_size=200).map("".join)


def read_or_refuse(data: bytes) -> Item | None:
    """Decode ``data``; None when it is refused with CorruptItemError (the only allowed error)."""
    try:
        item = decode_item(data, "fuzz.toon")
    except CorruptItemError as exc:
        assert exc.message.startswith("fuzz.toon"), exc.message  # names the file
        return None
    assert isinstance(item, Item)
    return item


def assert_writes_back(item: Item) -> None:
    """What the reader accepted, the writer writes and the reader reads back the same."""
    again = decode_item(encode_item(item), "rewritten.toon")
    assert again.to_record() == item.to_record()


@FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_are_an_item_or_a_corrupt_item_error(data: bytes) -> None:
    read_or_refuse(data)


@FUZZ
@given(_toonish)
def test_toon_like_text_is_an_item_or_a_corrupt_item_error(text: str) -> None:
    item = read_or_refuse(("id: pm-f1\ntitle: t\n" + text).encode("utf-8"))
    if item is not None:
        assert_writes_back(item)


_mutation = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 4000), st.integers(1, 80)),
    st.tuples(st.just("insert"), st.integers(0, 4000), _toonish),
    st.tuples(st.just("duplicate_line"), st.integers(0, 200), st.just("")),
    st.tuples(st.just("drop_line"), st.integers(0, 200), st.just("")),
    st.tuples(st.just("indent"), st.integers(0, 200), st.sampled_from([" ", "  ", "\t", "    "])),
    st.tuples(st.just("truncate"), st.integers(0, 4000), st.just("")),
)


def mutate(text: str, mutations: list[tuple[str, int, object]]) -> str:
    """Apply edits a bad merge, a crash or a careless hand edit could make."""
    for kind, at, arg in mutations:
        lines = text.split("\n")
        line = at % max(1, len(lines))
        pos = at % (len(text) + 1)
        if kind == "delete":
            assert isinstance(arg, int)
            text = text[:pos] + text[pos + arg :]
        elif kind == "insert":
            text = text[:pos] + str(arg) + text[pos:]
        elif kind == "duplicate_line":
            text = "\n".join([*lines[: line + 1], *lines[line:]])
        elif kind == "drop_line":
            text = "\n".join(lines[:line] + lines[line + 1 :])
        elif kind == "indent":
            lines[line] = str(arg) + lines[line]
            text = "\n".join(lines)
        else:
            text = text[:pos]
    return text


@FUZZ
@given(st.sampled_from(VALID), st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_valid_item_files_are_items_or_corrupt_item_errors(
    original: bytes, mutations: list[tuple[str, int, object]]
) -> None:
    item = read_or_refuse(mutate(original.decode("utf-8"), mutations).encode("utf-8"))
    if item is not None:
        assert_writes_back(item)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@FUZZ
@given(
    title=_text.filter(str.strip),
    body=_text,
    tags=st.lists(_text.filter(str.strip), max_size=4),
    comments=st.lists(st.fixed_dictionaries({"author": _text, "text": _text}), max_size=3),
    extra=st.dictionaries(
        st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True).filter(lambda k: k != "body"),
        _text | st.integers(-(10**6), 10**6) | st.booleans(),
        max_size=3,
    ),
)
def test_any_text_in_any_field_survives_a_write_and_read(
    title: str,
    body: str,
    tags: list[str],
    comments: list[dict[str, str]],
    extra: dict[str, object],
) -> None:
    record: dict[str, object] = {**extra, "id": "pm-f1", "title": title, "tags": tags}
    record["comments"] = [{"created_at": "2026-01-01T00:00:00.000Z", **c} for c in comments]
    record["body"] = body
    try:
        item = item_from_record(record)
    except Exception as exc:  # a record the model refuses is not this test's subject
        assert type(exc).__name__ == "ItemFormatError", exc
        return
    assert_writes_back(item)

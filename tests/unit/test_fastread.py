"""The fast item reader agrees with the full TOON decoder, or steps aside.

For any text, :func:`read_record` either returns exactly what
``toon_format.decode`` returns (same keys, order, values and types) or
``None``; it never accepts a document the decoder rejects.
"""

from __future__ import annotations

from typing import Any

import toon_format
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_core.tracker.model.item import item_from_record
from pm_core.tracker.storage.fastread import read_record
from pm_core.tracker.storage.itemfile import encode_item

# Text that exercises quoting: delimiters, colons, quotes, escapes, look-alikes.
_TRICKY = st.sampled_from(
    [
        "",
        " ",
        "-",
        "#x",
        "05",
        "1.5",
        "-0",
        "1e3",
        "true",
        "null",
        "a,b",
        "k: v",
        '"q"',
        "\\",
        "[1]",
        "{x}",
        "é",
        "\t",
        "\n",
        "x ",
    ]
)
TEXT = st.one_of(st.text(max_size=40), _TRICKY, st.from_regex(r"[a-z ]{1,20}", fullmatch=True))
ENTRY = st.fixed_dictionaries({"created_at": TEXT, "author": TEXT, "text": TEXT})


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "pm-" + draw(st.from_regex(r"[a-z0-9]{4}", fullmatch=True)),
        "title": draw(TEXT.filter(bool)),
        "description": draw(TEXT),
        "status": draw(st.sampled_from(["open", "closed", "in_progress"])),
        "priority": draw(st.integers(0, 4)),
        "tags": draw(st.lists(TEXT.filter(bool), max_size=4)),
        "created_at": draw(TEXT),
        "updated_at": draw(TEXT),
    }
    if draw(st.booleans()):
        record["estimated_minutes"] = draw(st.integers(-5, 10**6))
    if draw(st.booleans()):
        record["confidence"] = draw(st.one_of(st.integers(0, 100), TEXT))
    if draw(st.booleans()):
        record["comments"] = draw(st.lists(ENTRY, min_size=1, max_size=3))
    if draw(st.booleans()):
        # Rows of differing keys are written in list form.
        record["dependencies"] = [
            {"id": draw(TEXT), "kind": "blocked_by"}
            | ({"author": draw(TEXT)} if draw(st.booleans()) else {})
            for _ in range(draw(st.integers(1, 3)))
        ]
    if draw(st.booleans()):
        record["custom_score"] = draw(
            st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none())
        )
    record["body"] = draw(TEXT)
    return record


def _text(record: dict[str, Any]) -> str:
    return encode_item(item_from_record(record)).decode("utf-8")


def _agrees(text: str) -> None:
    fast = read_record(text)
    if fast is None:
        return
    expected = toon_format.decode(text)
    assert list(fast.items()) == list(expected.items())
    assert [type(v) for v in fast.values()] == [type(v) for v in expected.values()]
    for key, value in fast.items():
        if isinstance(value, list):
            for got, want in zip(value, expected[key], strict=True):
                assert type(got) is type(want)
                if isinstance(got, dict):
                    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


@settings(max_examples=300, deadline=None)
@given(records())
def test_fast_reader_equals_decoder_on_encoded_items(record: dict[str, Any]) -> None:
    _agrees(_text(record))


@settings(max_examples=300, deadline=None)
@given(records(), st.integers(0, 10_000), st.sampled_from(list(':",\\ \n[]{}-#0tn\t')))
def test_fast_reader_never_accepts_what_the_decoder_would_read_differently(
    record: dict[str, Any], where: int, char: str
) -> None:
    text = _text(record)
    at = where % (len(text) + 1)
    mutated = text[:at] + char + text[at:]
    fast = read_record(mutated)
    if fast is None:
        return
    assert fast == toon_format.decode(mutated)
    _agrees(mutated)


def test_plain_item_is_read_by_the_fast_path() -> None:
    text = _text(
        {
            "id": "pm-ab12",
            "title": "Fix login, again",
            "tags": ["auth", "web"],
            "comments": [{"created_at": "2026-01-01T00:00:00.000Z", "author": "a", "text": "x: y"}],
            "body": "line one\nline two",
        }
    )
    assert read_record(text) == toon_format.decode(text)


def test_nested_object_falls_back_to_the_decoder() -> None:
    text = _text({"id": "pm-ab12", "title": "t", "type_options": {"a": 1}, "body": ""})
    assert read_record(text) is None
    assert toon_format.decode(text)["type_options"] == {"a": 1}


def test_list_form_arrays_are_read_by_the_fast_path() -> None:
    # The TypeScript pm writes an array of objects in list form when it chooses to.
    text = (
        "id: pm-ab12\n"
        "title: t\n"
        "dependencies[2]:\n"
        "  - id: pm-x1\n"
        "    kind: blocked_by\n"
        '    created_at: "2026-07-13T22:03:31.210Z"\n'
        "  - id: pm-x2\n"
        "    kind: related\n"
        "notes[2]:\n"
        "  - first\n"
        '  - "quoted, with comma"\n'
    )
    expected = toon_format.decode(text)
    assert read_record(text) == expected
    assert expected["dependencies"][1] == {"id": "pm-x2", "kind": "related"}


def test_arrays_inside_list_items() -> None:
    text = (
        "id: pm-ab12\n"
        "tests[1]:\n"
        "  - command: x\n"
        "    env[2]: a,b\n"
        "    runs[2]{name,value}:\n"
        "      gate,1\n"
        '      coverage,"1, of 2"\n'
        "    after: y\n"
    )
    assert read_record(text) == toon_format.decode(text)
    assert toon_format.decode(text)["tests"][0]["runs"][1] == {
        "name": "coverage",
        "value": "1, of 2",
    }
    deeper = (
        "id: pm-ab12\ntests[1]:\n  - command: x\n    links[1]:\n      - id: a\n        kind: b\n"
    )
    assert read_record(deeper) is None
    assert toon_format.decode(deeper)["tests"][0]["links"] == [{"id": "a", "kind": "b"}]


def test_quoted_cells_need_a_comma_between_them() -> None:
    text = 'id: pm-ab12\ncomments[1]{created_at,text}:\n  "a""b"\n'
    assert read_record(text) is None
    for row in ('  "a, b",c', '  x,"a, b"', '  "a", "b, c" ,d'):
        text = f"id: pm-ab12\ncomments[1]{{created_at,text{',k' * (row.count(',') - 1)}}}:\n{row}\n"
        _agrees(text)

"""History patches: the operations of a create are the diff's, in the document's order.

``jsonpatch`` is the oracle: from the empty document, :func:`make_patch` writes
the same operations it finds (its order follows a set, ours the document),
and replaying either gives the document back.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
from hypothesis import given
from hypothesis import strategies as st

from pm_core.tracker.storage.history import EMPTY_DOCUMENT, apply_patch, make_patch

_SCALAR = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
#: Field names, with the characters a JSON pointer escapes.
_KEY = st.text(alphabet="ab~/_1", min_size=1, max_size=5)
_DOCUMENT = st.fixed_dictionaries(
    {"metadata": st.dictionaries(_KEY, _VALUE, max_size=6), "body": st.text(max_size=8)}
)


def _canonical(ops: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(op, sort_keys=True) for op in ops)


@given(_DOCUMENT)
def test_a_patch_from_nothing_is_the_diff_in_document_order(after: dict[str, Any]) -> None:
    ops = make_patch(EMPTY_DOCUMENT, after)
    assert _canonical(ops) == _canonical(jsonpatch.make_patch(EMPTY_DOCUMENT, after).patch)
    added = [op["path"] for op in ops if op["op"] == "add"]
    assert added == [
        "/metadata/" + key.replace("~", "~0").replace("/", "~1") for key in after["metadata"]
    ]
    assert apply_patch(EMPTY_DOCUMENT, ops) == after
    assert EMPTY_DOCUMENT == {"metadata": {}, "body": ""}  # the shared constant is not touched


@given(_DOCUMENT, _DOCUMENT)
def test_a_patch_between_documents_replays_to_the_later_one(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    ops = make_patch(before, after)
    assert apply_patch(before, ops) == after
    if before != EMPTY_DOCUMENT:
        assert ops == jsonpatch.make_patch(before, after).patch


def test_the_values_of_a_create_are_copies() -> None:
    tags = ["a"]
    ops = make_patch(EMPTY_DOCUMENT, {"metadata": {"tags": tags}, "body": "x"})
    tags.append("b")
    assert ops == [
        {"op": "add", "path": "/metadata/tags", "value": ["a"]},
        {"op": "replace", "path": "/body", "value": "x"},
    ]

"""The fast TOON encoder writes exactly what the reference encoder writes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import toon_format
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_core.tracker.storage.toon import encode

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "toon"

# Text that exercises quoting: structure characters, digits, spaces, keywords.
_text = st.one_of(
    st.sampled_from(
        [
            "",
            "plain",
            "true",
            "null",
            "05",
            "-3",
            "1e5",
            "+1",
            " lead",
            "trail ",
            "#tag",
            "- item",
            "a,b",
            "k: v",
            'say "hi"',
            "back\\slash",
            "line\nbreak",
            "tab\there",
            "[x]",
            "{y}",
            "é ü 中",
            "\x01ctl",
            "\ufeffbom",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FF), max_size=12),
)
_keys = st.one_of(st.sampled_from(["id", "a.b", "_x", "9lives", "with space", "k:v", ""]), _text)
_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.5, 1e-7, 1.5e21, 2.0**60, -0.0, 0.9079, 123456.789]
)
_primitives = st.one_of(st.none(), st.booleans(), st.integers(), _floats, _text)
_json = st.recursive(
    _primitives,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(_keys, inner, max_size=5),
        # Uniform rows, so tables and keyed tables come up often.
        st.lists(
            st.fixed_dictionaries({"id": _text, "n": st.integers(), "ok": st.booleans()}),
            min_size=1,
            max_size=4,
        ),
        st.dictionaries(
            _keys,
            st.fixed_dictionaries(
                {"a": _primitives, "b": st.fixed_dictionaries({"c": _primitives})}
            ),
            min_size=2,
            max_size=3,
        ),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_matches_the_reference_encoder(value: Any) -> None:
    assert encode(value) == toon_format.encode(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=6))
def test_output_decodes_back_to_the_value(value: dict[str, Any]) -> None:
    def finite(v: Any) -> Any:
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        if isinstance(v, list):
            return [finite(x) for x in v]
        return v

    assert toon_format.decode(encode(value)) == finite(value)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.toon")), ids=lambda p: p.name)
def test_item_fixtures_encode_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert encode(toon_format.decode(text)) + "\n" == text


def test_tuples_encode_as_lists_and_unknown_types_are_refused() -> None:
    assert encode({"t": (1, 2)}) == "t[2]: 1,2"
    with pytest.raises(TypeError, match="not TOON serializable"):
        encode({"p": Path("x")})
    with pytest.raises(ValueError, match="surrogate"):
        encode({"s": "\ud800"})

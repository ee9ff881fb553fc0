"""One cursor module serves pm_discover and the skills listings, with their wire bytes unchanged."""

from __future__ import annotations

import base64

import pytest
from pm_plugins.progressive_discovery import cursor as discovery
from pm_plugins.progressive_discovery.errors import DiscoveryError
from pm_plugins.skills_sep2640.cursor import CursorCodec

from pm_core.cursors import MAX_CURSOR_CHARS, CursorError, CursorFormat

KEY = b"k" * 32


def test_discovery_cursors_keep_their_bytes() -> None:
    # Known answers taken from the plugin's own implementation before the move.
    binding = discovery.binding_digest(["query", "filters", "profile"])
    issued = [discovery.encode(KEY, binding, o) for o in (0, 2, 1000, 2**32 - 1)]
    assert issued == [
        "AQAAAACbLIklmTmgC2DWf_0Sy1Nl",
        "AQAAAALSmPiCcS0eGNEbrObxetky",
        "AQAAA-g_BMatG-ZLxXgO5JkaM6xA",
        "Af____9FGBtwd6qOn86JXIEFLI46",
    ]
    assert [discovery.decode(KEY, binding, c) for c in issued] == [0, 2, 1000, 2**32 - 1]


def test_skills_cursors_keep_their_bytes() -> None:
    codec = CursorCodec("f" * 64, KEY)
    assert [codec.encode(o, "skills/list") for o in (1, 2, 1000)] == [
        "AAAAAaQPYbUMld5d1VDrJDvoNEc",
        "AAAAAvZYBant6oR7AZG9fmdmFfc",
        "AAAD6E5aix9Bu9tw1pahv2aMVhY",
    ]
    assert codec.encode(3, "skill://pm-user/references/") == "AAAAAxxGnFXa6kXK1j6CiE0u6PY"


def _reason(fmt: CursorFormat, token: object, key: bytes = KEY, binding: bytes = b"b") -> str:
    with pytest.raises(CursorError) as caught:
        fmt.decode(key, binding, token)
    return caught.value.reason


def test_another_key_domain_or_binding_makes_a_cursor_stale() -> None:
    fmt = CursorFormat(header=b"\x07", domain=b"one")
    token = fmt.encode(KEY, b"b", 5)
    assert fmt.decode(KEY, b"b", token) == 5
    assert _reason(fmt, token, key=b"x" * 32) == "stale"
    assert _reason(fmt, token, binding=b"c") == "stale"
    assert _reason(CursorFormat(header=b"\x07", domain=b"two"), token) == "stale"


def test_a_token_of_another_header_or_length_is_malformed() -> None:
    token = CursorFormat(header=b"\x01").encode(KEY, b"b", 5)
    assert _reason(CursorFormat(header=b"\x02"), token) == "malformed"
    assert _reason(CursorFormat(), token) == "malformed"  # one byte too long
    assert _reason(CursorFormat(header=b"\x01\x00"), token) == "malformed"


@pytest.mark.parametrize(
    "token",
    [None, 5, b"AQAAAAU", "", "=", "AQ==", "a b", "x" * (MAX_CURSOR_CHARS + 1), "é"],
)
def test_what_is_not_a_base64url_string_is_malformed(token: object) -> None:
    assert _reason(CursorFormat(header=b"\x01"), token) == "malformed"


def test_only_the_issued_spelling_is_accepted() -> None:
    # pm_discover's old decoder let base64 drop what it did not understand, so
    # each of these decoded to the issued cursor; now they are malformed.
    token = discovery.encode(KEY, b"b", 5)
    for variant in (token + "=", token + "\n", " " + token, token[:10] + "!" + token[10:]):
        assert _reason(discovery.FORMAT, variant) == "malformed", variant
    # Without a header, 20 bytes encode to 27 characters whose last carries 2
    # bits the decoder drops: flipping one gives the same bytes, another spelling.
    fmt = CursorFormat(domain=b"d")
    token = fmt.encode(KEY, b"b", 5)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    other = token[:-1] + alphabet[alphabet.index(token[-1]) ^ 0b01]
    assert base64.urlsafe_b64decode(other + "=") == base64.urlsafe_b64decode(token + "=")
    assert _reason(fmt, other) == "malformed"


def test_discovery_maps_reasons_to_its_own_errors() -> None:
    binding = discovery.binding_digest(["q"])
    token = discovery.encode(KEY, binding, 3)
    with pytest.raises(DiscoveryError) as stale:
        discovery.decode(KEY, discovery.binding_digest(["r"]), token)
    assert stale.value.details == {"field": "cursor", "reason": "stale"}
    with pytest.raises(DiscoveryError) as malformed:
        discovery.decode(KEY, binding, token + "=")
    assert malformed.value.details == {"field": "cursor", "reason": "malformed"}

"""Skill cursors are opaque, bound to one registry snapshot and one scope."""

from __future__ import annotations

import base64
import re

import pytest
from pm_plugins.skills_sep2640.cursor import CursorCodec

from pm_core.contracts import ProtocolError

KEY = b"k" * 32


def _refused(codec: CursorCodec, token: object, scope: str = "s", total: int = 10) -> None:
    with pytest.raises(ProtocolError) as caught:
        codec.decode(token, scope, total)
    assert caught.value.code == -32602
    assert caught.value.message == "Skill cursor is invalid or stale."


def test_cursor_round_trips_offset_for_its_scope() -> None:
    codec = CursorCodec("f" * 64, KEY)
    token = codec.encode(7, "s")
    assert codec.decode(token, "s", 10) == 7
    assert re.fullmatch(r"[A-Za-z0-9_-]+", token)  # base64url, unpadded


def test_cursor_is_bound_to_scope_fingerprint_and_key() -> None:
    token = CursorCodec("f" * 64, KEY).encode(3, "s")
    _refused(CursorCodec("f" * 64, KEY), token, scope="other")
    _refused(CursorCodec("e" * 64, KEY), token)
    _refused(CursorCodec("f" * 64, b"x" * 32), token)
    _refused(CursorCodec("f" * 64), token)  # a fresh random key: another registry


@pytest.mark.parametrize("offset", [0, 10, 11])
def test_validly_signed_offset_outside_the_listing_is_refused(offset: int) -> None:
    codec = CursorCodec("f" * 64, KEY)
    _refused(codec, codec.encode(offset, "s"), total=10)


def test_padded_or_reencoded_variants_are_refused() -> None:
    codec = CursorCodec("f" * 64, KEY)
    token = codec.encode(3, "s")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    _refused(codec, token + "=")
    _refused(codec, base64.b64encode(raw).decode() + "!")
    _refused(codec, token[:-2])


def test_another_spelling_of_a_valid_cursor_is_refused() -> None:
    # 20 bytes encode to 27 characters whose last carries 2 bits the decoder
    # drops: flipping those gives the same bytes under another spelling.
    codec = CursorCodec("f" * 64, KEY)
    token = codec.encode(4, "s")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(token[-1])
    other = token[:-1] + alphabet[last ^ 0b01]
    padded = other + "=" * (-len(other) % 4)
    assert base64.urlsafe_b64decode(padded) == base64.urlsafe_b64decode(token + "=")
    _refused(codec, other)

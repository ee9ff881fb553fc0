"""Opaque pagination cursors bound to one registry's content and one scope.

A cursor is base64url(offset || HMAC-SHA256(key, offset, fingerprint, scope)),
truncated to 128 bits of tag. The key is drawn per registry, so a cursor from
another registry (another server process, changed skills) or another scope
(``skills/list`` versus one directory) fails verification and is reported as
invalid or stale, never silently reinterpreted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from typing import Any

from pm_core.contracts import INVALID_PARAMS, ProtocolError

_TAG_BYTES = 16
_OFFSET_BYTES = 4
_DOMAIN = b"pm-skills-cursor/1\x00"
_MAX_TOKEN_CHARS = 64
_TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]+")

STALE_CURSOR_MESSAGE = "Skill cursor is invalid or stale."


def stale_cursor_error() -> ProtocolError:
    """The -32602 error for a cursor this registry did not issue for this scope."""
    return ProtocolError(INVALID_PARAMS, STALE_CURSOR_MESSAGE, {"field": "cursor"})


class CursorCodec:
    """Issues and verifies cursors for one registry snapshot."""

    __slots__ = ("_fingerprint", "_key")

    def __init__(self, fingerprint: str, key: bytes | None = None) -> None:
        self._fingerprint = fingerprint.encode("ascii")
        self._key = key if key is not None else secrets.token_bytes(32)

    def _tag(self, offset_bytes: bytes, scope: str) -> bytes:
        message = _DOMAIN + offset_bytes + self._fingerprint + b"\x00" + scope.encode("utf-8")
        return hmac.new(self._key, message, hashlib.sha256).digest()[:_TAG_BYTES]

    def encode(self, offset: int, scope: str) -> str:
        """A cursor that resumes ``scope`` at ``offset``."""
        offset_bytes = offset.to_bytes(_OFFSET_BYTES, "big")
        raw = offset_bytes + self._tag(offset_bytes, scope)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def decode(self, token: Any, scope: str, total: int) -> int:
        """The offset a valid cursor resumes at; -32602 for anything else.

        ``total`` is the number of entries in ``scope``: a cursor is only ever
        issued for an offset strictly inside it.
        """
        if (
            not isinstance(token, str)
            or len(token) > _MAX_TOKEN_CHARS
            or _TOKEN_PATTERN.fullmatch(token) is None
        ):
            raise stale_cursor_error()
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError) as exc:
            raise stale_cursor_error() from exc
        # One spelling per cursor: a last character differing only in bits the
        # decoder drops would otherwise pass as the cursor it was made from.
        canonical = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if len(raw) != _OFFSET_BYTES + _TAG_BYTES or canonical != token:
            raise stale_cursor_error()
        offset_bytes, tag = raw[:_OFFSET_BYTES], raw[_OFFSET_BYTES:]
        if not hmac.compare_digest(tag, self._tag(offset_bytes, scope)):
            raise stale_cursor_error()
        offset = int.from_bytes(offset_bytes, "big")
        if not 0 < offset < total:
            raise stale_cursor_error()
        return offset

"""Opaque pagination cursors: an offset sealed by a truncated HMAC-SHA256.

The caller chooses what the binding holds and how each refusal reads; a cursor
made under another key, domain or binding fails its tag.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from typing import Literal

import attrs

__all__ = ["MAX_CURSOR_CHARS", "CursorError", "CursorFormat"]

_OFFSET_BYTES = 4
_TAG_BYTES = 16
#: Longer strings are refused before any decoding (every format here is far shorter).
MAX_CURSOR_CHARS = 64
_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")


class CursorError(Exception):
    """A cursor that cannot be honoured.

    ``reason`` is ``"malformed"`` (not a cursor of this format) or ``"stale"``
    (well formed, but not issued under this key, domain and binding).
    """

    def __init__(self, reason: Literal["malformed", "stale"]) -> None:
        super().__init__(f"{reason} cursor")
        self.reason: Literal["malformed", "stale"] = reason


@attrs.frozen(slots=True)
class CursorFormat:
    """One kind of cursor: ``header`` starts every token, ``domain`` every tagged message."""

    header: bytes = b""
    domain: bytes = b""

    def _tag(self, key: bytes, offset_bytes: bytes, binding: bytes) -> bytes:
        message = self.domain + offset_bytes + binding
        return hmac.new(key, message, hashlib.sha256).digest()[:_TAG_BYTES]

    def encode(self, key: bytes, binding: bytes, offset: int) -> str:
        """The cursor that resumes at ``offset`` (0 to 2**32 - 1) under ``binding``."""
        offset_bytes = offset.to_bytes(_OFFSET_BYTES, "big")
        raw = self.header + offset_bytes + self._tag(key, offset_bytes, binding)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def decode(self, key: bytes, binding: bytes, token: object) -> int:
        """The offset ``token`` resumes at; :class:`CursorError` for anything else.

        Only the one spelling :meth:`encode` produces is accepted: padding,
        characters outside base64url, and a last character differing only in
        the bits the decoder drops are all ``malformed``.
        """
        if (
            not isinstance(token, str)
            or len(token) > MAX_CURSOR_CHARS
            or _ALPHABET.fullmatch(token) is None
        ):
            raise CursorError("malformed")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError) as exc:
            raise CursorError("malformed") from exc
        start = len(self.header)
        if (
            len(raw) != start + _OFFSET_BYTES + _TAG_BYTES
            or not raw.startswith(self.header)
            or base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != token
        ):
            raise CursorError("malformed")
        offset_bytes = raw[start : start + _OFFSET_BYTES]
        if not hmac.compare_digest(
            raw[start + _OFFSET_BYTES :], self._tag(key, offset_bytes, binding)
        ):
            raise CursorError("stale")
        return int.from_bytes(offset_bytes, "big")

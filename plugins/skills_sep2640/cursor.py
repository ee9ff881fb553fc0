"""Skills cursors: a :mod:`pm_core.cursors` format bound to one registry and one scope.

A cursor from another registry or scope is reported invalid or stale, never reinterpreted.
"""

from __future__ import annotations

import secrets
from typing import Any

from pm_core.contracts import INVALID_PARAMS, ProtocolError
from pm_core.cursors import CursorError, CursorFormat

#: No header; the domain keeps these tags apart from every other use of a key.
FORMAT = CursorFormat(domain=b"pm-skills-cursor/1\x00")

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

    def _binding(self, scope: str) -> bytes:
        return self._fingerprint + b"\x00" + scope.encode("utf-8")

    def encode(self, offset: int, scope: str) -> str:
        """A cursor that resumes ``scope`` at ``offset``."""
        return FORMAT.encode(self._key, self._binding(scope), offset)

    def decode(self, token: Any, scope: str, total: int) -> int:
        """The offset a valid cursor resumes at; -32602 for anything else.

        ``total`` is the number of entries in ``scope``: a cursor is only ever
        issued for an offset strictly inside it.
        """
        try:
            offset = FORMAT.decode(self._key, self._binding(scope), token)
        except CursorError as exc:
            raise stale_cursor_error() from exc
        if not 0 < offset < total:
            raise stale_cursor_error()
        return offset

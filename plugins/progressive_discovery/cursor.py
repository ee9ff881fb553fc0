"""``pm_discover`` cursors: a :mod:`pm_core.cursors` format bound to what shaped the ranking.

A change of query, filters, projection, profile or catalog makes a cursor stale;
limit and output budget are not bound.
"""

from __future__ import annotations

import hashlib
import os
import threading

from pm_plugins.progressive_discovery.errors import DiscoveryError

from pm_core.cursors import CursorError, CursorFormat

#: Version 1: the version byte heads the token and the tagged message.
FORMAT = CursorFormat(header=b"\x01", domain=b"\x01")

_key_lock = threading.Lock()
_process_key: bytes | None = None

RESTART_HINT = "call pm_discover again without a cursor"


def process_key() -> bytes:
    """The process-wide cursor key, created on first use."""
    global _process_key
    with _key_lock:
        if _process_key is None:
            _process_key = os.urandom(32)
        return _process_key


def binding_digest(parts: list[str]) -> bytes:
    """Digest of the binding parts (already canonical strings)."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def encode(secret: bytes, binding: bytes, offset: int) -> str:
    """A cursor that resumes at ``offset`` under ``binding``."""
    return FORMAT.encode(secret, binding, offset)


def decode(secret: bytes, binding: bytes, cursor: str) -> int:
    """The offset of ``cursor``; refuses a malformed or stale one."""
    try:
        return FORMAT.decode(secret, binding, cursor)
    except CursorError as exc:
        if exc.reason == "malformed":
            raise DiscoveryError(
                f"cursor is not one pm_discover issued; {RESTART_HINT}",
                details={"field": "cursor", "reason": "malformed"},
            ) from None
        raise DiscoveryError(
            "cursor is stale: the query, filters, schema projection, profile, tool catalog "
            f"or ranking signals changed since it was issued; {RESTART_HINT}",
            details={"field": "cursor", "reason": "stale"},
        ) from None

"""Opaque pagination cursors, HMAC-bound to everything that shaped the ranking.

A cursor carries an offset into the ranked rows and a MAC over that offset and
a *binding*: the query, the filters, the schema projection, the profile, the
filtered catalog's fingerprint and the ranking inputs. Any change to those
makes the MAC fail and the cursor is refused as stale. Limit and output budget
are deliberately not bound: a caller may continue with a larger budget.

The key is per process unless the caller passes one, so cursors do not survive
a server restart; that is acceptable for a 30-second private cache.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import threading

from pm_plugins.progressive_discovery.errors import DiscoveryError

_VERSION = 1
_MAC_BYTES = 16
_OFFSET_BYTES = 4

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


def _mac(secret: bytes, binding: bytes, offset: int) -> bytes:
    message = bytes([_VERSION]) + offset.to_bytes(_OFFSET_BYTES, "big") + binding
    return hmac.new(secret, message, hashlib.sha256).digest()[:_MAC_BYTES]


def encode(secret: bytes, binding: bytes, offset: int) -> str:
    """A cursor that resumes at ``offset`` under ``binding``."""
    raw = bytes([_VERSION]) + offset.to_bytes(_OFFSET_BYTES, "big") + _mac(secret, binding, offset)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode(secret: bytes, binding: bytes, cursor: str) -> int:
    """The offset of ``cursor``; refuses a malformed or stale one."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 1 + _OFFSET_BYTES + _MAC_BYTES or raw[0] != _VERSION:
        raise DiscoveryError(
            f"cursor is not one pm_discover issued; {RESTART_HINT}",
            details={"field": "cursor", "reason": "malformed"},
        )
    offset = int.from_bytes(raw[1 : 1 + _OFFSET_BYTES], "big")
    if not hmac.compare_digest(raw[1 + _OFFSET_BYTES :], _mac(secret, binding, offset)):
        raise DiscoveryError(
            "cursor is stale: the query, filters, schema projection, profile, tool catalog "
            f"or ranking signals changed since it was issued; {RESTART_HINT}",
            details={"field": "cursor", "reason": "stale"},
        )
    return offset

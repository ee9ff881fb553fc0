"""The one error type of progressive discovery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Exit-code semantics of a usage error (bad input); MCP reports it as code 64.
USAGE = 64


class DiscoveryError(ValueError):
    """Bad ``pm_discover`` input: a bad limit, a stale cursor, a budget too small.

    ``code`` follows the tracker's exit-code semantics (64: usage error) and
    ``details`` names the offending input (``field``, using the tool's wire
    names) with whatever helps the caller recover, such as ``minimum`` for a
    budget that is too small. Adapters turn it into an ``isError`` tool result.
    """

    def __init__(
        self, message: str, *, code: int = USAGE, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details: dict[str, Any] = dict(details or {})

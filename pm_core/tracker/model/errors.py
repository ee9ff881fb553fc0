"""Tracker errors, each with the process exit code it maps to.

Every error names the problem and, where there is one, the fix. The CLI prints
``error: <message>`` (and ``hint: <fix>``) on stderr and exits with ``code``;
``pm-mcp`` turns the same error into an ``isError`` tool result.
"""

from __future__ import annotations

from typing import Any

OK = 0
GENERIC = 1
USAGE = 2
NOT_FOUND = 3
CONFLICT = 4
DEPENDENCY = 5
NO_EFFECT = 6
PARTIAL = 7


class PmError(Exception):
    """Base error: ``message`` says what went wrong, ``hint`` how to fix it."""

    code: int = GENERIC

    def __init__(self, message: str, *, hint: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details

    def to_json(self) -> dict[str, Any]:
        """The error as the JSON shape both adapters emit."""
        out: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.hint:
            out["hint"] = self.hint
        if self.details is not None:
            out["details"] = self.details
        return out


class UsageError(PmError):
    """Bad arguments: unknown flag, bad enum value, missing required field."""

    code = USAGE


class NotFoundError(PmError):
    """An id (or tracker) that does not exist."""

    code = NOT_FOUND


class ConflictError(PmError):
    """Held by someone else, locked by a live process, or otherwise contended."""

    code = CONFLICT


class DependencyError(PmError):
    """A dependency rule failed: missing target, cycle."""

    code = DEPENDENCY


class NoEffectError(PmError):
    """The operation would change nothing.

    ``warning``: the code a single-item command reports instead of failing
    (exit 0, ``warnings: [code]``); only bulk commands exit 6 on it.
    """

    code = NO_EFFECT

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        details: Any = None,
        warning: str = "noop_no_change",
    ) -> None:
        super().__init__(message, hint=hint, details=details)
        self.warning = warning


class PartialError(PmError):
    """Some of a batch succeeded and some did not."""

    code = PARTIAL


class CorruptItemError(PmError):
    """An item file that cannot be parsed; nothing was changed."""

    code = GENERIC

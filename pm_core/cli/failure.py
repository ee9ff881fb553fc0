"""How ``pm`` fails: argument checks, exception-to-exit-code mapping, the error lines.

Shared by the click path and the fast path so both refuse the same arguments and
print the same ``error:``/``hint:`` lines (one JSON line under ``--json``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pm_core.tracker.model.errors import PmError

EXIT_USAGE = 2


def argument_problem(args: Sequence[str], wants_json: bool) -> int | None:
    """Refuse an argument no file, JSON output or terminal can hold; ``None`` when all are fine.

    A non-UTF-8 byte in argv decodes to a lone surrogate; a NUL (only possible
    through ``main(argv)``) would reach the OS in a path.
    """
    for number, arg in enumerate(args, start=1):
        problem = "contains a NUL byte" if "\x00" in arg else None
        if problem is None and not arg.isascii() and not _utf8(arg):
            problem = "is not valid UTF-8"
        if problem is not None:
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
            return fail(
                f"argument {number} {problem}: {shown[:80]!r}",
                "pass text in UTF-8 without NUL bytes",
                EXIT_USAGE,
                wants_json,
            )
    return None


def _utf8(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def guarded(body: Callable[[], int], wants_json: bool) -> int:
    """Run ``body``; a tracker error or a bug becomes an exit code and a clear message."""
    try:
        return body()
    except PmError as exc:
        return fail(exc.message, exc.hint, exc.code, wants_json, exc.details)
    except KeyboardInterrupt:
        return fail("interrupted", None, 130, wants_json)
    except Exception as exc:  # a bug, not bad input: one line unless PM_DEBUG asks for more
        if os.environ.get("PM_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        message = f"unexpected {type(exc).__name__}: {exc}"
        return fail(message, "rerun with PM_DEBUG=1 for a traceback", 1, wants_json)


def fail(message: str, hint: str | None, code: int, as_json: bool, details: Any = None) -> int:
    """Print the error (and hint) on stderr; returns ``code``."""
    one_line = " ".join(message.split())
    if as_json:
        import json

        body: dict[str, Any] = {"error": one_line, "code": code}
        if hint:
            body["hint"] = hint
        if details is not None:
            body["details"] = details
        sys.stderr.write(json.dumps(body, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stderr.write(f"error: {one_line}\n")
        if hint:
            sys.stderr.write(f"hint: {' '.join(hint.split())}\n")
    return code

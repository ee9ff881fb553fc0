"""Per-invocation CLI state: global options and the lazily opened tracker.

Click-free: the fast path (:mod:`pm_core.cli.fast`) uses it too; the click
helpers around it are in :mod:`pm_core.cli.clickstate`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


class CliState:
    """What every command shares: ``--path``, ``--author``, ``--json``, the tracker."""

    def __init__(self, path: str | None, author: str | None, json_output: bool) -> None:
        self.path = path
        self.author = author
        #: True when ``--json`` was given (globally or on the command).
        self.json = json_output
        self._tracker: Tracker | None = None

    @property
    def tracker(self) -> Tracker:
        """The tracker for ``--path`` / ``PM_PATH`` / the enclosing repository."""
        if self._tracker is None:
            from pm_core.tracker.api import Tracker

            root = Path(self.path).expanduser() if self.path else None
            self._tracker = Tracker(root, author=self.author, env=os.environ)
        return self._tracker

    def output_settings(self) -> Mapping[str, Any] | None:
        """The opened tracker's settings (output limits read them), or None before it opens."""
        if self._tracker is None:
            return None
        try:
            return self._tracker.settings
        except Exception:  # no tracker yet (init) or unreadable settings: defaults apply
            return None

    def output_format(self) -> str:
        """``json`` when asked for (flag or settings ``output.default_format``), else ``toon``."""
        if self.json:
            return "json"
        settings = self.output_settings() or {}
        fmt = str((settings.get("output") or {}).get("default_format") or "toon").lower()
        return "json" if fmt == "json" else "toon"

    def emit(self, payload: Mapping[str, Any], *, kind: str = "read", exact: bool = False) -> None:
        """Print ``payload``; ``exact`` (an explicit ``--limit``) or ``--json`` skip shrinking."""
        from pm_core.cli.output import render, write

        fmt = self.output_format()
        bounded = not (exact or self.json)
        write(render(payload, fmt=fmt, kind=kind, bounded=bounded, settings=self.output_settings()))


def read_text(value: str | None, *, stdin: bool = False, file: str | None = None) -> str | None:
    """Text from an option, ``--stdin``, or a file (``-`` is stdin)."""
    import sys

    from pm_core.tracker.model.errors import UsageError

    sources = [s for s in (value is not None, stdin, file is not None) if s]
    if len(sources) > 1:
        raise UsageError("give the text one way only", hint="use the argument, --stdin or a file")
    if stdin or file == "-":
        return sys.stdin.read()
    if file is not None:
        try:
            return Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot read {file}: {exc.strerror or exc}", hint="pass a readable file"
            ) from None
    return value


def parse_assignments(values: tuple[str, ...] | list[str], flag: str) -> dict[str, str]:
    """``key=value`` pairs from a repeatable flag; UsageError naming a bad one."""
    from pm_core.tracker.model.errors import UsageError

    out: dict[str, str] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} expects key=value, got {raw!r}", hint=f"{flag} name=value")
        out[key.strip()] = value
    return out


def split_commas(values: tuple[str, ...] | list[str]) -> list[str]:
    """Flatten repeated and comma-separated flag values."""
    return [p.strip() for v in values for p in v.split(",") if p.strip()]

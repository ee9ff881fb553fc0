"""Per-invocation CLI state: global options and the lazily opened tracker.

Click-free: the fast path (:mod:`pm_core.cli.fast`) uses it too; the click
helpers around it are in :mod:`pm_core.cli.clickstate`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.params import parse_assignments, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


class CliState:
    """What every command shares: ``--path``, ``--author``, ``--json``, the tracker."""

    def __init__(
        self,
        path: str | None,
        author: str | None,
        json_output: bool,
        *,
        output: Mapping[str, bool] | None = None,
    ) -> None:
        self.path = path
        self.author = author
        #: True when ``--json`` was given (globally or on the command).
        self.json = json_output
        #: The output switches the TypeScript pm has too (:data:`OUTPUT_FLAGS`), by name.
        self.output = {name: bool((output or {}).get(name)) for name in OUTPUT_FLAGS}
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

        if self.output["quiet"]:
            warn(payload)
            return
        if kind == "mutation":
            payload = self._receipt(payload)
        if self.output["lean"]:
            payload = lean(payload)
        fmt = self.output_format()
        bounded = not (exact or self.json)
        write(render(payload, fmt=fmt, kind=kind, bounded=bounded, settings=self.output_settings()))
        warn(payload)

    def _receipt(self, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        """A mutation receipt as ``--id-only``/``--no-changed-fields``/``--full-changed-fields`` ask."""
        if "id" not in payload or "status" not in payload:
            return payload
        if self.output["id_only"]:
            return {"id": payload["id"], "status": payload["status"]}
        out = dict(payload)
        if self.output["no_changed_fields"]:
            out.pop("changed_fields", None)
        if self.output["full_changed_fields"] and self._tracker is not None:
            from pm_core.tracker.model.errors import PmError

            try:
                out = {"item": self._tracker.get(str(payload["id"])).to_record(), **out}
            except PmError:  # a deleted item: the receipt alone
                return out
        return out


#: Global output switches, spelt as the TypeScript pm spells them (``--id-only``: ``id_only``).
OUTPUT_FLAGS = ("lean", "id_only", "quiet", "no_changed_fields", "full_changed_fields")


def lean(value: Any) -> Any:
    """``value`` without nulls and empty lists or objects (``--lean``)."""
    if isinstance(value, Mapping):
        kept = {k: lean(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list | tuple):
        return [lean(v) for v in value]
    return value


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


__all__ = ["OUTPUT_FLAGS", "CliState", "lean", "parse_assignments", "read_text", "split_commas"]


def warn(payload: Mapping[str, Any]) -> None:
    """Repeat a result's ``warnings`` on stderr, one ``warning:`` line each (stdout stays data).

    A no-op receipt's code is followed by what it found (``noop``).
    """
    import sys

    warnings = payload.get("warnings") if isinstance(payload, Mapping) else None
    if not isinstance(warnings, list) or not warnings:
        return
    detail = payload.get("noop")
    lines = []
    for text in warnings:
        line = f"warning: {text}"
        if detail and str(text).startswith("noop"):
            line += f": {detail}"
        lines.append(line + "\n")
    try:
        sys.stderr.write("".join(lines))
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass

"""The index group, declared: status and stop (neither takes a parameter).

``PARAMS`` declares each subcommand under ``"index <sub>"``; the CLI
(:mod:`pm_core.cli.commands.index`), ``pm contracts`` and ``docs/generated/``
read it, and ``pm_run``'s ``index`` action takes the same ``subcommand``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


def status(tracker: Tracker) -> dict[str, Any]:
    """How reads find changed files: the verify mode, the index, the watcher."""
    from pm_core.tracker.index.refresh import status as report

    return report(tracker)


def stop(tracker: Tracker) -> dict[str, Any]:
    """Stop the watcher."""
    from pm_core.tracker.index.refresh import stop as halt

    return halt(tracker)


PARAMS: dict[str, tuple[Param, ...]] = {"index status": (), "index stop": ()}

#: Subcommand -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {"index status": status, "index stop": stop}

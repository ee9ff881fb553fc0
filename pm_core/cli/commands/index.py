"""``pm index``: the read index and its watcher.

Declared in :mod:`pm_core.commands.index` (see :mod:`pm_core.cli.argspec`).
"""

from __future__ import annotations

from pm_core.cli.argspec import Group, Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.index import PARAMS, status, stop


def run_status(state: CliState) -> None:
    """How reads find changed files: the verify mode, the index, the watcher."""
    state.emit(status(state.tracker))


def run_stop(state: CliState) -> None:
    """Stop the watcher (a later read of a large tracker starts it again)."""
    state.emit(stop(state.tracker), kind="mutation")


SPECS = specs(
    Group(
        "index",
        "Show the read index and its file watcher, or stop the watcher.",
        Spec("status", run_status, params=PARAMS["index status"]),
        Spec("stop", run_stop, params=PARAMS["index stop"]),
    )
)

"""``pm index``: the read index and its watcher."""

from __future__ import annotations

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState


@click.group("index")
def cmd_index() -> None:
    """Show the read index and its file watcher, or stop the watcher."""


@cmd_index.command("status")
@json_option
@pass_state
def index_status_cmd(state: CliState) -> None:
    """How reads find changed files: the verify mode, the index, the watcher."""
    from pm_core.tracker.index.refresh import status

    state.emit(status(state.tracker))


@cmd_index.command("stop")
@json_option
@pass_state
def index_stop_cmd(state: CliState) -> None:
    """Stop the watcher (a later read of a large tracker starts it again)."""
    from pm_core.tracker.index.refresh import stop

    state.emit(stop(state.tracker), kind="mutation")

"""Graph commands: deps and graph.

Declared in :mod:`pm_core.commands.graph` (see :mod:`pm_core.cli.argspec`): they
run without click, and the tools ``pm_deps`` and ``pm_graph`` read the same
declarations. ``plan`` lives in :mod:`pm_core.cli.commands.plan`.
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.graph import PARAMS, deps, graph
from pm_core.tracker.model.errors import UsageError


def run_deps(state: CliState, **values: Any) -> None:
    """Show an item's dependency tree, or --add / --remove one link."""
    if values["add"] and values["remove"]:
        raise UsageError("--add and --remove together", hint="run them one at a time")
    # ID, ID:KIND or KIND:ID: the SDK parses and canonicalises the kind.
    changed = bool(values["add"] or values["remove"])
    state.emit(deps(state.tracker, **values), kind="mutation" if changed else "read")


def run_graph(state: CliState, **values: Any) -> None:
    """Graph analyses: ancestors, descendants, blockers, dependents ID; path ID TARGET; cycles."""
    state.emit(graph(state.tracker, **values))


SPECS = specs(
    Spec("deps", run_deps, params=PARAMS["deps"]),
    Spec("graph", run_graph, params=PARAMS["graph"]),
)

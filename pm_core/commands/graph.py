"""Graph commands, declared: deps and graph.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.graph`) and the tools ``pm_deps`` and ``pm_graph``
read it, and call the functions here. (``plan``, a command group, is still
declared with click.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: The analyses of ``pm graph``, written here so the start-up path imports no
#: query module (``tests/unit/test_cli_help_values.py`` checks them against
#: ``pm_core.tracker.query.graph.SUBCOMMANDS``).
GRAPH_SUBCOMMANDS = ("ancestors", "descendants", "blockers", "dependents", "path", "cycles")


def deps(
    tracker: Tracker,
    item_id: str,
    add: str | None,
    remove: str | None,
    allow_unresolved_deps: bool,
    depth: int | None,
    kind: str | None = None,
) -> dict[str, Any]:
    """Add ``add`` or remove ``remove`` (the receipt), else the bounded dependency tree.

    ``add``/``remove`` may spell the kind (``ID:KIND``); ``kind`` is the tool's
    separate spelling of it.
    """
    if add:
        return tracker.add_dependency(
            item_id, add, kind or "blocked_by", allow_unresolved=allow_unresolved_deps
        )
    if remove:
        return tracker.remove_dependency(item_id, remove, kind)
    return tracker.deps_tree(item_id, depth=depth)


def graph(
    tracker: Tracker,
    subcommand: str,
    item_id: str | None,
    target: str | None,
    depth: int | None,
    max_nodes: int | None,
    max_edges: int | None,
) -> dict[str, Any]:
    """One read-only graph analysis; a bound left as ``None`` takes the default."""
    return tracker.graph(
        subcommand, item_id, target, depth=depth, max_nodes=max_nodes, max_edges=max_edges
    )


def _bound(flag: str, dest: str, help: str) -> Opt:
    return Opt(flag, dest=dest, kind="int", minimum=1, role="filter", help=help)


PARAMS: dict[str, tuple[Param, ...]] = {
    "deps": (
        Arg("item_id", help="The item's id (prefix optional)."),
        Opt("--add", dest="add", metavar="ID[:KIND]", help="Add a dependency (kind blocked_by)."),
        Opt("--remove", dest="remove", metavar="ID[:KIND]", help="Remove a dependency."),
        Opt(
            "--allow-unresolved-deps",
            dest="allow_unresolved_deps",
            kind="flag",
            help="Allow a target that does not exist.",
        ),
        _bound("--depth", "depth", "How far the tree goes (default 32)."),
    ),
    "graph": (
        Arg(
            "subcommand",
            metavar="SUBCOMMAND",
            choices=GRAPH_SUBCOMMANDS,
            help="The analysis.",
        ),
        Arg("item_id", required=False, help="The item (every analysis but cycles)."),
        Arg("target", required=False, help="The other end of a path."),
        _bound("--depth", "depth", "How far to walk (default 32)."),
        _bound("--max-nodes", "max_nodes", "Node cap (default 200)."),
        _bound("--max-edges", "max_edges", "Edge cap (default 400)."),
    ),
}

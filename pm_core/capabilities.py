"""The agent capability contract: every built-in command, declared once.

One row per command: name, tier, family, summary, and the module that holds
its CLI implementation (a ``SPECS`` entry or a ``cmd_<name>`` click command).
Everything else projects from these rows: the CLI's command list and its
help ordered by tier, the MCP profiles (through the host's command registry),
``pm_run``'s action enum, ``pm contracts``, shell completion and
``docs/generated/``. There is no second table anywhere.

The rows also carry the MCP annotation facts of each command (title,
read-only, destructive, idempotent, open-world): ``None`` means "not
declared" and the adapters leave the hint out.

This module imports nothing beyond the standard library at import time: the
fast CLI path reads :data:`ROWS` before click or attrs are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pm_core.contracts import CommandSpec

#: The tiers a command may declare, in widening order (``internal`` is never advertised).
TIERS = ("core", "standard", "full", "internal")
#: The capability families shared by commands, tools, discovery and docs.
FAMILIES = (
    "orientation",
    "lifecycle",
    "authoring",
    "evidence",
    "graph",
    "planning",
    "assurance",
    "configuration",
    "history",
    "extensions",
)

_CLI = "pm_core.cli.commands."


class Row(NamedTuple):
    """One built-in command of the contract."""

    name: str
    tier: str
    family: str
    summary: str
    #: The module that implements ``pm <name>`` (``SPECS`` entry or ``cmd_<name>``).
    module: str
    #: MCP annotation facts (``None``: not declared).
    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


def _row(name: str, tier: str, family: str, summary: str, module: str) -> Row:
    return Row(name, tier, family, summary, _CLI + module)


#: Every built-in command, core first. The order within a tier is the help's order.
ROWS: tuple[Row, ...] = (
    # core
    _row("context", "core", "orientation", "Ranked working context: what matters now.", "work"),
    _row("next", "core", "orientation", "Recommend the next ready item, with reasons.", "work"),
    _row("get", "core", "orientation", "Show one item.", "read"),
    _row("list", "core", "orientation", "List items with filters.", "read"),
    _row("search", "core", "orientation", "Search items (keyword and BM25).", "read"),
    _row("discover", "core", "orientation", "Find the tools for an intent (ranked).", "tools"),
    _row("create", "core", "authoring", "Create an item.", "items"),
    _row("update", "core", "authoring", "Update fields of an item.", "items"),
    _row("mutate", "core", "authoring", "Apply several mutations as one transaction.", "history"),
    _row("claim", "core", "lifecycle", "Claim an item for the current author.", "lifecycle"),
    _row("release", "core", "lifecycle", "Release a claimed item.", "lifecycle"),
    _row("close", "core", "lifecycle", "Close an item with a reason.", "lifecycle"),
    _row("plan", "core", "planning", "Create or show a plan with ordered steps.", "graph"),
    _row("validate", "core", "assurance", "Check items, dependencies and history.", "assurance"),
    # standard
    _row("focus", "standard", "orientation", "Set, show or clear the focus item.", "read"),
    _row("append", "standard", "evidence", "Append text to an item's body.", "items"),
    _row("comments", "standard", "evidence", "List or add comments.", "evidence"),
    _row("notes", "standard", "evidence", "List or add notes.", "evidence"),
    _row("learnings", "standard", "evidence", "List or add learnings.", "evidence"),
    _row("files", "standard", "evidence", "Link or unlink files.", "evidence"),
    _row("docs", "standard", "evidence", "Link or unlink documents.", "evidence"),
    _row("test", "standard", "evidence", "Link tests; run them, record results.", "assurance"),
    _row("claims", "standard", "lifecycle", "List live claims (leases).", "lifecycle"),
    _row("reopen", "standard", "lifecycle", "Reopen a closed or canceled item.", "lifecycle"),
    _row("deps", "standard", "graph", "Add, remove or show dependencies.", "graph"),
    _row("graph", "standard", "graph", "Ancestors, descendants, blockers, paths.", "graph"),
    _row("health", "standard", "assurance", "Workspace health checks.", "assurance"),
    _row("events", "standard", "history", "Recent history events.", "admin"),
    _row("history", "standard", "history", "Show an item's history.", "history"),
    _row("config", "standard", "configuration", "Get, set or list settings.", "admin"),
    _row("schema", "standard", "configuration", "List or add types, statuses, fields.", "admin"),
    _row("contracts", "standard", "configuration", "The command and schema contract.", "admin"),
    _row("profile", "standard", "configuration", "MCP tool profiles and their tools.", "tools"),
    _row("stats", "standard", "orientation", "Counts by status, type, priority; age.", "bulk"),
    _row("activity", "standard", "history", "Recent changes across items.", "bulk"),
    # full
    _row("update-many", "full", "authoring", "Update many items (filters, dry run).", "bulk"),
    _row("close-many", "full", "lifecycle", "Close many items (filters, dry run).", "bulk"),
    _row("test-all", "full", "evidence", "Run the linked tests of many items.", "bulk"),
    _row("eval", "full", "assurance", "Search relevance on golden queries.", "evaluate"),
    _row("copy", "full", "authoring", "Copy an item.", "items"),
    _row("delete", "full", "authoring", "Delete an item (history is kept).", "items"),
    _row("restore", "full", "history", "Rebuild an item from its history.", "history"),
    _row("init", "full", "configuration", "Create a tracker in this repository.", "items"),
    _row("index", "full", "configuration", "Show or stop the read index watcher.", "index"),
    _row("run", "full", "extensions", "Run any command by name (extensions too).", "tools"),
    _row("merge", "full", "configuration", "Git merge drivers for tracker files.", "merge"),
    _row("history-repair", "full", "history", "Re-anchor an item's history chain.", "merge"),
    # internal: callable, never advertised
    _row("help", "internal", "configuration", "Show help (--all: every command).", "tools"),
)

#: Built-in command name -> its row.
BY_NAME: dict[str, Row] = {row.name: row for row in ROWS}


def tier_problem(tier: str, family: str) -> str | None:
    """Why a command's tier or family is invalid (naming the valid values), else ``None``."""
    if tier not in TIERS:
        return f"unknown tier {tier!r} (valid: {', '.join(TIERS)})"
    if family not in FAMILIES:
        return f"unknown family {family!r} (valid: {', '.join(FAMILIES)})"
    return None


def builtin_commands() -> list[CommandSpec]:
    """The built-in commands as command contracts (no handlers)."""
    from pm_core.contracts import CommandSpec

    return [
        CommandSpec(
            name=row.name,
            summary=row.summary,
            tier=row.tier,  # type: ignore[arg-type]  # checked by tests/unit/test_capabilities.py
            family=row.family,
            builtin=True,
        )
        for row in ROWS
    ]

"""The agent capability contract: every built-in command, declared once.

One row per command: name, tier, family, summary, and the module that holds
its CLI implementation (its ``SPECS`` entry: a command or a group).
Everything else projects from these rows: the CLI's command list and its
help ordered by tier, the MCP profiles (through the host's command registry),
``pm_run``'s action enum, ``pm contracts``, shell completion and
``docs/generated/``. There is no second table anywhere.

The rows also carry each command's title and effects (a preset name from
:data:`EFFECTS`, so this module needs no attrs at import): the tool's MCP
annotations (read-only, destructive, idempotent, open-world) come from them.

This module imports nothing beyond the standard library at import time: the
fast CLI path reads :data:`ROWS` before click or attrs are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pm_core.contracts import CommandEffects, CommandSpec

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
    #: The module whose ``SPECS`` declares ``pm <name>``.
    module: str
    #: The tool title (MCP ``title``).
    title: str
    #: The name of its effects preset (:data:`EFFECTS`): the tool's MCP annotations.
    effects: str


def _row(
    name: str, tier: str, family: str, summary: str, module: str, title: str, effects: str
) -> Row:
    return Row(name, tier, family, summary, _CLI + module, title, effects)


#: Effects presets: (read_only, destructive, idempotent, open_world), the four MCP
#: tool annotations as the specification defines them.
EFFECTS: dict[str, tuple[bool, bool, bool, bool]] = {
    # Changes nothing.
    "READ": (True, False, True, False),
    # Changes nothing; in remote claim mode it reads the git remote.
    "READ_REMOTE": (True, False, True, True),
    # A read that claims when asked (``next --claim``): annotated as that claim
    # (a lease, remote in remote mode), served as a read in read-only mode.
    "READ_CLAIM": (True, False, False, True),
    # Adds something new on every call (an item, a comment); never overwrites.
    "ADD": (False, False, False, False),
    # Sets a value only this session or clone uses; the same call again changes nothing.
    "SET": (False, False, True, False),
    # May overwrite or remove values; the same call again changes nothing more.
    "REPLACE": (False, True, True, False),
    # May overwrite or remove, and a repeat can change more (batches, plans).
    "WRITE": (False, True, False, False),
    # Leases: force takes over another author's claim; remote mode pushes to the remote.
    "LEASE": (False, True, True, True),
    # Runs processes (linked test commands, extension actions): anything can happen.
    "RUN": (False, True, False, True),
}

#: The commands a preset's read may also do when asked (``CommandEffects.writes_with``).
WRITES_WITH: dict[str, tuple[str, ...]] = {"READ_CLAIM": ("claim",)}

#: Every built-in command, core first. The order within a tier is the help's order.
ROWS: tuple[Row, ...] = (
    # core
    _row(
        "context",
        "core",
        "orientation",
        "Ranked working context: what matters now.",
        "work",
        "Working context",
        "READ",
    ),
    _row(
        "next",
        "core",
        "orientation",
        "Recommend the next ready item, with reasons.",
        "work",
        "Next item",
        "READ_CLAIM",
    ),
    _row("get", "core", "orientation", "Show one item.", "read", "Show item", "READ"),
    _row("list", "core", "orientation", "List items with filters.", "read", "List items", "READ"),
    _row(
        "search",
        "core",
        "orientation",
        "Search items (keyword and BM25).",
        "read",
        "Search items",
        "READ",
    ),
    _row(
        "discover",
        "core",
        "orientation",
        "Find the tools for an intent (ranked).",
        "tools",
        "Discover tools",
        "READ",
    ),
    _row("create", "core", "authoring", "Create an item.", "items", "Create item", "ADD"),
    _row(
        "update",
        "core",
        "authoring",
        "Update fields of an item.",
        "items",
        "Update item",
        "REPLACE",
    ),
    _row(
        "mutate",
        "core",
        "authoring",
        "Apply several mutations as one transaction.",
        "history",
        "Apply mutations",
        "WRITE",
    ),
    _row(
        "claim",
        "core",
        "lifecycle",
        "Claim an item for the current author.",
        "lifecycle",
        "Claim item",
        "LEASE",
    ),
    _row(
        "release",
        "core",
        "lifecycle",
        "Release a claimed item.",
        "lifecycle",
        "Release claim",
        "LEASE",
    ),
    _row(
        "close",
        "core",
        "lifecycle",
        "Close an item with a reason.",
        "lifecycle",
        "Close item",
        "REPLACE",
    ),
    _row(
        "plan",
        "core",
        "planning",
        "Create or show a plan with ordered steps.",
        "plan",
        "Plan",
        "WRITE",
    ),
    _row(
        "validate",
        "core",
        "assurance",
        "Check items, dependencies and history.",
        "assurance",
        "Validate tracker",
        "READ",
    ),
    # standard
    _row(
        "focus",
        "standard",
        "orientation",
        "Set, show or clear the focus item.",
        "read",
        "Session focus",
        "SET",
    ),
    _row(
        "append",
        "standard",
        "evidence",
        "Append text to an item's body.",
        "items",
        "Append to body",
        "ADD",
    ),
    _row(
        "comments", "standard", "evidence", "List or add comments.", "evidence", "Comments", "ADD"
    ),
    _row("notes", "standard", "evidence", "List or add notes.", "evidence", "Notes", "ADD"),
    _row(
        "learnings",
        "standard",
        "evidence",
        "List or add learnings.",
        "evidence",
        "Learnings",
        "ADD",
    ),
    _row(
        "files",
        "standard",
        "evidence",
        "Link or unlink files.",
        "evidence",
        "Linked files",
        "REPLACE",
    ),
    _row(
        "docs",
        "standard",
        "evidence",
        "Link or unlink documents.",
        "evidence",
        "Linked docs",
        "REPLACE",
    ),
    _row(
        "test",
        "standard",
        "evidence",
        "Link tests; run them, record results.",
        "assurance",
        "Linked tests",
        "RUN",
    ),
    _row(
        "claims",
        "standard",
        "lifecycle",
        "List live claims (leases).",
        "lifecycle",
        "Live claims",
        "READ_REMOTE",
    ),
    _row(
        "reopen",
        "standard",
        "lifecycle",
        "Reopen a closed or canceled item.",
        "lifecycle",
        "Reopen item",
        "REPLACE",
    ),
    _row(
        "deps",
        "standard",
        "graph",
        "Add, remove or show dependencies.",
        "graph",
        "Dependencies",
        "REPLACE",
    ),
    _row(
        "graph",
        "standard",
        "graph",
        "Ancestors, descendants, blockers, paths.",
        "graph",
        "Graph analyses",
        "READ",
    ),
    _row(
        "health",
        "standard",
        "assurance",
        "Workspace health checks.",
        "assurance",
        "Workspace health",
        "READ",
    ),
    _row(
        "events", "standard", "history", "Recent history events.", "admin", "Recent events", "READ"
    ),
    _row(
        "history",
        "standard",
        "history",
        "Show an item's history.",
        "history",
        "Item history",
        "READ",
    ),
    _row(
        "config",
        "standard",
        "configuration",
        "Get, set or list settings.",
        "admin",
        "Settings",
        "REPLACE",
    ),
    _row(
        "schema",
        "standard",
        "configuration",
        "List or add types, statuses, fields.",
        "admin",
        "Workspace schema",
        "REPLACE",
    ),
    _row(
        "contracts",
        "standard",
        "configuration",
        "The command and schema contract.",
        "admin",
        "Command contracts",
        "READ",
    ),
    _row(
        "profile",
        "standard",
        "configuration",
        "MCP tool profiles and their tools.",
        "tools",
        "Tool profiles",
        "READ",
    ),
    _row(
        "stats",
        "standard",
        "orientation",
        "Counts by status, type, priority; age.",
        "bulk",
        "Tracker statistics",
        "READ",
    ),
    _row(
        "activity",
        "standard",
        "history",
        "Recent changes across items.",
        "bulk",
        "Recent activity",
        "READ",
    ),
    # full
    _row(
        "update-many",
        "full",
        "authoring",
        "Update many items (filters, dry run).",
        "bulk",
        "Update many items",
        "WRITE",
    ),
    _row(
        "close-many",
        "full",
        "lifecycle",
        "Close many items (filters, dry run).",
        "bulk",
        "Close many items",
        "WRITE",
    ),
    _row(
        "test-all",
        "full",
        "evidence",
        "Run the linked tests of many items.",
        "bulk",
        "Run linked tests of many items",
        "RUN",
    ),
    _row(
        "eval",
        "full",
        "assurance",
        "Search relevance on golden queries.",
        "evaluate",
        "Evaluate search relevance",
        "READ",
    ),
    _row("copy", "full", "authoring", "Copy an item.", "items", "Copy item", "ADD"),
    _row(
        "delete",
        "full",
        "authoring",
        "Delete an item (history is kept).",
        "items",
        "Delete item",
        "REPLACE",
    ),
    _row(
        "restore",
        "full",
        "history",
        "Rebuild an item from its history.",
        "history",
        "Restore item",
        "REPLACE",
    ),
    _row(
        "init",
        "full",
        "configuration",
        "Create a tracker in this repository.",
        "items",
        "Create tracker",
        "SET",
    ),
    _row(
        "index",
        "full",
        "configuration",
        "Show or stop the read index watcher.",
        "index",
        "Read index",
        "SET",
    ),
    _row(
        "run",
        "full",
        "extensions",
        "Run any command by name (extensions too).",
        "tools",
        "Run command",
        "RUN",
    ),
    _row(
        "merge",
        "full",
        "configuration",
        "Git merge drivers for tracker files.",
        "merge",
        "Merge drivers",
        "REPLACE",
    ),
    _row(
        "history-repair",
        "full",
        "history",
        "Re-anchor an item's history chain.",
        "merge",
        "Repair history",
        "REPLACE",
    ),
    # internal: callable, never advertised
    _row(
        "help",
        "internal",
        "configuration",
        "Show help (--all: every command).",
        "tools",
        "Help",
        "READ",
    ),
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


def effects(preset: str) -> CommandEffects:
    """The command effects of a preset name (:data:`EFFECTS`)."""
    from pm_core.contracts import CommandEffects

    read_only, destructive, idempotent, open_world = EFFECTS[preset]
    return CommandEffects(
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=open_world,
        writes_with=WRITES_WITH.get(preset, ()),
    )


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
            title=row.title,
            effects=effects(row.effects),
        )
        for row in ROWS
    ]

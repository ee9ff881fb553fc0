"""The agent capability contract for built-in commands: command -> tier and family.

CLI help, MCP profiles, ``pm_run``'s action enum and
``docs/generated/AGENT_COMMAND_SURFACE.md`` all project from this one table.
"""

from __future__ import annotations

from pm_core.contracts import CommandEffects, CommandSpec, Tier

# Effects, the four MCP tool annotations of each command (see CommandEffects).
#: Changes nothing.
READ = CommandEffects(read_only=True, destructive=False, idempotent=True, open_world=False)
#: Changes nothing; in remote claim mode it reads the git remote.
READ_REMOTE = CommandEffects(read_only=True, destructive=False, idempotent=True, open_world=True)
#: Adds something new on every call (an item, a comment); never overwrites.
ADD = CommandEffects(read_only=False, destructive=False, idempotent=False, open_world=False)
#: Sets a value that only this session or clone uses; the same call again changes nothing.
SET = CommandEffects(read_only=False, destructive=False, idempotent=True, open_world=False)
#: May overwrite or remove values (fields, links, settings, schema, the item itself);
#: the same call again changes nothing more.
REPLACE = CommandEffects(read_only=False, destructive=True, idempotent=True, open_world=False)
#: May overwrite or remove, and a repeat can change more (batches, plans).
WRITE = CommandEffects(read_only=False, destructive=True, idempotent=False, open_world=False)
#: Leases: ``force`` takes over another author's claim; remote mode pushes to the git remote.
LEASE = CommandEffects(read_only=False, destructive=True, idempotent=True, open_world=True)
#: Runs processes (linked test commands, extension actions): anything can happen.
RUN = CommandEffects(read_only=False, destructive=True, idempotent=False, open_world=True)

_TABLE: tuple[tuple[str, Tier, str, str, str, CommandEffects], ...] = (
    # name, tier, family, summary, title, effects
    (
        "claim",
        "core",
        "lifecycle",
        "Claim an item for the current author (test-and-set).",
        "Claim item",
        LEASE,
    ),
    (
        "close",
        "core",
        "lifecycle",
        "Close an item with a reason; unblocks dependents.",
        "Close item",
        REPLACE,
    ),
    (
        "context",
        "core",
        "orientation",
        "Ranked working context: what matters now.",
        "Working context",
        READ,
    ),
    ("create", "core", "authoring", "Create an item.", "Create item", ADD),
    (
        "discover",
        "core",
        "orientation",
        "Find the tools for an intent (ranked, budgeted).",
        "Discover tools",
        READ,
    ),
    ("get", "core", "orientation", "Show one item.", "Show item", READ),
    ("list", "core", "orientation", "List items with filters.", "List items", READ),
    (
        "mutate",
        "core",
        "authoring",
        "Apply several mutations as one transaction.",
        "Apply mutations",
        WRITE,
    ),
    (
        "next",
        "core",
        "orientation",
        "Recommend the next ready item, with reasons.",
        "Next item",
        READ,
    ),
    ("plan", "core", "planning", "Create or show a plan with ordered steps.", "Plan", WRITE),
    ("release", "core", "lifecycle", "Release a claimed item.", "Release claim", LEASE),
    ("search", "core", "orientation", "Search items (keyword and BM25).", "Search items", READ),
    ("update", "core", "authoring", "Update fields of an item.", "Update item", REPLACE),
    (
        "validate",
        "core",
        "assurance",
        "Check metadata, lifecycle, dependencies and history.",
        "Validate tracker",
        READ,
    ),
    ("append", "standard", "evidence", "Append text to an item's body.", "Append to body", ADD),
    ("comments", "standard", "evidence", "List or add comments.", "Comments", ADD),
    ("config", "standard", "configuration", "Get, set or list settings.", "Settings", REPLACE),
    (
        "contracts",
        "standard",
        "configuration",
        "Machine-readable command and schema contract.",
        "Command contracts",
        READ,
    ),
    ("deps", "standard", "graph", "Add, remove or show dependencies.", "Dependencies", REPLACE),
    ("docs", "standard", "evidence", "Link or unlink documents.", "Linked docs", REPLACE),
    (
        "events",
        "standard",
        "history",
        "Recent history events across the tracker.",
        "Recent events",
        READ,
    ),
    ("files", "standard", "evidence", "Link or unlink files.", "Linked files", REPLACE),
    (
        "focus",
        "standard",
        "orientation",
        "Set, show or clear the session focus item.",
        "Session focus",
        SET,
    ),
    (
        "graph",
        "standard",
        "graph",
        "Graph analyses: ancestors, descendants, blockers, paths, cycles.",
        "Graph analyses",
        READ,
    ),
    (
        "health",
        "standard",
        "assurance",
        "Workspace health checks with remediation.",
        "Workspace health",
        READ,
    ),
    ("learnings", "standard", "evidence", "List or add learnings.", "Learnings", ADD),
    ("notes", "standard", "evidence", "List or add notes.", "Notes", ADD),
    (
        "profile",
        "standard",
        "configuration",
        "Show MCP tool profiles and their tools.",
        "Tool profiles",
        READ,
    ),
    (
        "schema",
        "standard",
        "configuration",
        "List or add types, statuses and fields.",
        "Workspace schema",
        REPLACE,
    ),
    (
        "test",
        "standard",
        "evidence",
        "Link test commands; run them and record results.",
        "Linked tests",
        RUN,
    ),
    (
        "reopen",
        "standard",
        "lifecycle",
        "Reopen a closed or canceled item.",
        "Reopen item",
        REPLACE,
    ),
    ("history", "standard", "history", "Show an item's append-only history.", "Item history", READ),
    ("copy", "full", "authoring", "Copy an item.", "Copy item", ADD),
    (
        "run",
        "full",
        "extensions",
        "Run any command visible at the profile's tier.",
        "Run command",
        RUN,
    ),
    ("delete", "full", "authoring", "Delete an item (history is kept).", "Delete item", REPLACE),
    (
        "restore",
        "full",
        "history",
        "Rebuild an item from history at a version or time.",
        "Restore item",
        REPLACE,
    ),
    (
        "init",
        "full",
        "configuration",
        "Create a tracker in this repository.",
        "Create tracker",
        SET,
    ),
    ("claims", "standard", "lifecycle", "List live claims (leases).", "Live claims", READ_REMOTE),
    (
        "merge",
        "full",
        "configuration",
        "Git merge drivers for tracker files; post-merge gate.",
        "Merge drivers",
        REPLACE,
    ),
    (
        "history-repair",
        "full",
        "history",
        "Re-anchor an item's history chain with an audit entry.",
        "Repair history",
        REPLACE,
    ),
)


def builtin_commands() -> list[CommandSpec]:
    """The built-in commands as command contracts (no handlers)."""
    return [
        CommandSpec(
            name=name,
            summary=summary,
            tier=tier,
            family=family,
            builtin=True,
            title=title,
            effects=effects,
        )
        for name, tier, family, summary, title, effects in _TABLE
    ]

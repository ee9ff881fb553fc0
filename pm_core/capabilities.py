"""The agent capability contract for built-in commands: command -> tier and family.

CLI help, MCP profiles, ``pm_run``'s action enum and
``docs/generated/AGENT_COMMAND_SURFACE.md`` all project from this one table.
"""

from __future__ import annotations

from pm_core.contracts import CommandSpec, Tier

_TABLE: tuple[tuple[str, Tier, str, str], ...] = (
    # name, tier, family, summary
    ("claim", "core", "lifecycle", "Claim an item for the current author (test-and-set)."),
    ("close", "core", "lifecycle", "Close an item with a reason; unblocks dependents."),
    ("context", "core", "orientation", "Ranked working context: what matters now."),
    ("create", "core", "authoring", "Create an item."),
    ("discover", "core", "orientation", "Find the tools for an intent (ranked, budgeted)."),
    ("get", "core", "orientation", "Show one item."),
    ("list", "core", "orientation", "List items with filters."),
    ("mutate", "core", "authoring", "Apply several mutations as one transaction."),
    ("next", "core", "orientation", "Recommend the next ready item, with reasons."),
    ("plan", "core", "planning", "Create or show a plan with ordered steps."),
    ("release", "core", "lifecycle", "Release a claimed item."),
    ("search", "core", "orientation", "Search items (keyword and BM25)."),
    ("update", "core", "authoring", "Update fields of an item."),
    ("validate", "core", "assurance", "Check metadata, lifecycle, dependencies and history."),
    ("append", "standard", "evidence", "Append text to an item's body."),
    ("comments", "standard", "evidence", "List or add comments."),
    ("config", "standard", "configuration", "Get, set or list settings."),
    ("contracts", "standard", "configuration", "Machine-readable command and schema contract."),
    ("deps", "standard", "graph", "Add, remove or show dependencies."),
    ("docs", "standard", "evidence", "Link or unlink documents."),
    ("events", "standard", "history", "Recent history events across the tracker."),
    ("files", "standard", "evidence", "Link or unlink files."),
    ("focus", "standard", "orientation", "Set, show or clear the session focus item."),
    (
        "graph",
        "standard",
        "graph",
        "Graph analyses: ancestors, descendants, blockers, paths, cycles.",
    ),
    ("health", "standard", "assurance", "Workspace health checks with remediation."),
    ("learnings", "standard", "evidence", "List or add learnings."),
    ("notes", "standard", "evidence", "List or add notes."),
    ("profile", "standard", "configuration", "Show MCP tool profiles and their tools."),
    ("schema", "standard", "configuration", "List or add types, statuses and fields."),
    ("test", "standard", "evidence", "Link test commands; run them and record results."),
    ("reopen", "standard", "lifecycle", "Reopen a closed or canceled item."),
    ("history", "standard", "history", "Show an item's append-only history."),
    ("copy", "full", "authoring", "Copy an item."),
    ("run", "full", "extensions", "Run any command visible at the profile's tier."),
    ("delete", "full", "authoring", "Delete an item (history is kept)."),
    ("restore", "full", "history", "Rebuild an item from history at a version or time."),
    ("init", "full", "configuration", "Create a tracker in this repository."),
    ("claims", "standard", "lifecycle", "List live claims (leases)."),
    ("update-many", "standard", "authoring", "Update many items at once (filters, dry run)."),
    ("close-many", "standard", "lifecycle", "Close many items at once (filters, dry run)."),
    ("test-all", "standard", "evidence", "Run the linked tests of many items."),
    ("stats", "standard", "orientation", "Counts by status, type, priority, assignee; age."),
    ("activity", "standard", "history", "Recent changes across items, one row per item."),
    ("eval", "standard", "assurance", "Search relevance on golden queries (nDCG, MRR @k)."),
    ("merge", "full", "configuration", "Git merge drivers for tracker files; post-merge gate."),
    ("history-repair", "full", "history", "Re-anchor an item's history chain with an audit entry."),
)


def builtin_commands() -> list[CommandSpec]:
    """The built-in commands as command contracts (no handlers)."""
    return [
        CommandSpec(name=name, summary=summary, tier=tier, family=family, builtin=True)
        for name, tier, family, summary in _TABLE
    ]

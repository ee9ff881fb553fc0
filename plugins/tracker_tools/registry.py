"""The tracker tools: name, one-line description, backing command, schema, handler.

The backing command (``pm_core/capabilities.py``) decides the tool's tier and
family; the host reads it from there, so no tier is repeated here.
"""

from __future__ import annotations

from pm_plugins.tracker_tools import configure, core, evidence, orient, run

from pm_core.contracts import ToolSpec

_SPECS: tuple[ToolSpec, ...] = (
    # core
    ToolSpec(
        "pm_claim",
        "Claim an item for yourself before working on it; conflict if another author holds it.",
        "claim",
        core.claim_schema,
        core.claim_handler,
        request_schema=core.claim_request_schema,
        accepts=core.claim_accepts,
    ),
    ToolSpec(
        "pm_close",
        "Close an item with a reason stating what was done and the evidence.",
        "close",
        core.close_schema,
        core.close_handler,
        request_schema=core.close_request_schema,
        accepts=core.close_accepts,
    ),
    ToolSpec(
        "pm_context",
        "Ranked working context: what matters now. Start here when orienting.",
        "context",
        orient.context_schema,
        orient.context_handler,
    ),
    ToolSpec(
        "pm_create",
        "Create an item (task, issue, epic...); returns its id.",
        "create",
        core.create_schema,
        core.create_handler,
        request_schema=core.create_request_schema,
        accepts=core.bag_accepts,
    ),
    ToolSpec(
        "pm_get",
        "Show one item in full.",
        "get",
        core.get_schema,
        core.get_handler,
        request_schema=core.get_request_schema,
        accepts=core.get_accepts,
    ),
    ToolSpec(
        "pm_list",
        "List items by status, type, tag, assignee or parent (open items unless all).",
        "list",
        core.list_schema,
        core.list_handler,
        request_schema=core.list_request_schema,
        accepts=core.list_accepts,
    ),
    ToolSpec(
        "pm_mutate",
        "Apply several mutations as one all-or-nothing transaction (dryRun to preview).",
        "mutate",
        core.mutate_schema,
        core.mutate_handler,
    ),
    ToolSpec(
        "pm_next",
        "Recommend the next ready item to work on, with reasons.",
        "next",
        orient.next_schema,
        orient.next_handler,
    ),
    ToolSpec(
        "pm_plan",
        "Create or show a plan; update or add a step; record a decision.",
        "plan",
        orient.plan_schema,
        orient.plan_handler,
    ),
    ToolSpec(
        "pm_release",
        "Release your claim on an item when you stop working on it.",
        "release",
        core.release_schema,
        core.release_handler,
        request_schema=core.release_request_schema,
        accepts=core.release_accepts,
    ),
    ToolSpec(
        "pm_search",
        "Search items by words (keyword, bm25 or hybrid), all statuses.",
        "search",
        core.search_schema,
        core.search_handler,
        request_schema=core.search_request_schema,
        accepts=core.search_accepts,
    ),
    ToolSpec(
        "pm_update",
        "Change fields of an item (setting a closed status routes through close).",
        "update",
        core.update_schema,
        core.update_handler,
        request_schema=core.update_request_schema,
        accepts=core.bag_accepts,
    ),
    ToolSpec(
        "pm_validate",
        "Check items for metadata, lifecycle, dependency and history problems.",
        "validate",
        orient.validate_schema,
        orient.validate_handler,
    ),
    # standard
    ToolSpec(
        "pm_append",
        "Append a paragraph to an item's body.",
        "append",
        evidence.append_schema,
        evidence.append_handler,
    ),
    ToolSpec(
        "pm_comments",
        "List an item's comments, or add one.",
        "comments",
        evidence.log_schema,
        evidence.log_handler("comments"),
    ),
    ToolSpec(
        "pm_config",
        "Get, set or list tracker settings.",
        "config",
        configure.config_schema,
        configure.config_handler,
    ),
    ToolSpec(
        "pm_contracts",
        "The machine-readable command and schema contract.",
        "contracts",
        configure.contracts_schema,
        configure.contracts_handler,
    ),
    ToolSpec(
        "pm_deps",
        "Show an item's dependency tree, or add/remove a dependency.",
        "deps",
        evidence.deps_schema,
        evidence.deps_handler,
    ),
    ToolSpec(
        "pm_docs",
        "List, link or unlink an item's documents.",
        "docs",
        evidence.link_schema,
        evidence.link_handler("docs"),
    ),
    ToolSpec(
        "pm_events",
        "Recent history events across the tracker.",
        "events",
        orient.events_schema,
        orient.events_handler,
    ),
    ToolSpec(
        "pm_files",
        "List, link or unlink an item's files.",
        "files",
        evidence.link_schema,
        evidence.link_handler("files"),
    ),
    ToolSpec(
        "pm_focus",
        "Show, set or clear the session's focus item.",
        "focus",
        orient.focus_schema,
        orient.focus_handler,
    ),
    ToolSpec(
        "pm_graph",
        "Read-only graph analyses: ancestors, descendants, blockers, paths, cycles.",
        "graph",
        orient.graph_schema,
        orient.graph_handler,
    ),
    ToolSpec(
        "pm_health",
        "Workspace health checks with remediation.",
        "health",
        orient.health_schema,
        orient.health_handler,
    ),
    ToolSpec(
        "pm_learnings",
        "List an item's learnings, or add one.",
        "learnings",
        evidence.log_schema,
        evidence.log_handler("learnings"),
    ),
    ToolSpec(
        "pm_notes",
        "List an item's notes, or add one.",
        "notes",
        evidence.log_schema,
        evidence.log_handler("notes"),
    ),
    ToolSpec(
        "pm_profile",
        "The MCP tool profiles and which tools each selects.",
        "profile",
        configure.profile_schema,
        configure.profile_handler,
    ),
    ToolSpec(
        "pm_schema",
        "List the workspace schema, or add a type, status or custom field.",
        "schema",
        configure.schema_schema,
        configure.schema_handler,
    ),
    ToolSpec(
        "pm_test",
        "List, link or unlink an item's test commands, or run them and record results.",
        "test",
        evidence.test_schema,
        evidence.test_handler,
    ),
    # full
    ToolSpec(
        "pm_copy",
        "Copy an item as a new open item.",
        "copy",
        evidence.copy_schema,
        evidence.copy_handler,
    ),
    ToolSpec(
        "pm_run",
        "Run any command visible at this profile by action name (extension commands too).",
        "run",
        run.input_schema,
        run.handle,
        request_schema=run.request_schema,
    ),
)


def tool_specs() -> tuple[ToolSpec, ...]:
    """Every tracker tool (31: all of pm's tools but ``pm_discover``)."""
    return _SPECS

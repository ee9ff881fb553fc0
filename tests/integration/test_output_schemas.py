"""Every tool's ``structuredContent`` is valid against the ``outputSchema`` it lists.

Each profile's tools are called through the official SDK client (which also
checks structured results against the listed schema) and validated here with
``jsonschema``; every listed tool must answer at least one call successfully,
so a tool with no scenario fails the test instead of passing unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from pm_core.host import build_host
from pm_core.mcp.results import RESULTS
from pm_core.mcp.server import PmMcp, ServerConfig
from pm_core.operator import OperatorPolicy

pytestmark = pytest.mark.anyio

Args = Callable[[dict[str, str]], dict[str, Any]]

#: (tool, arguments from the ids made so far). Run in order; ``first``/``second`` are
#: two Tasks, ``plan`` the Plan pm_plan creates.
SCENARIOS: list[tuple[str, Args]] = [
    ("pm_create", lambda ids: {"options": {"title": "First", "type": "Task"}}),
    ("pm_create", lambda ids: {"options": {"title": "Second", "type": "Task"}}),
    ("pm_get", lambda ids: {"id": ids["first"]}),
    ("pm_list", lambda ids: {}),
    ("pm_search", lambda ids: {"query": "First"}),
    ("pm_context", lambda ids: {}),
    ("pm_next", lambda ids: {}),
    ("pm_claim", lambda ids: {"id": ids["first"]}),
    ("pm_update", lambda ids: {"id": ids["first"], "options": {"priority": 1}}),
    ("pm_release", lambda ids: {"id": ids["first"]}),
    ("pm_plan", lambda ids: {"subcommand": "create", "title": "A plan", "steps": ["one"]}),
    ("pm_plan", lambda ids: {"subcommand": "show", "id": ids["plan"]}),
    ("pm_plan", lambda ids: {"subcommand": "decision", "id": ids["plan"], "text": "chose"}),
    (
        "pm_mutate",
        lambda ids: {
            "mutations": [{"op": "comment", "id": ids["first"], "options": {"text": "m"}}]
        },
    ),
    (
        "pm_mutate",
        lambda ids: {
            "mutations": [{"op": "comment", "id": ids["first"], "options": {"text": "m"}}],
            "dryRun": True,
        },
    ),
    ("pm_validate", lambda ids: {}),
    ("pm_append", lambda ids: {"id": ids["first"], "text": "more"}),
    ("pm_comments", lambda ids: {"id": ids["first"], "add": "a comment"}),
    ("pm_comments", lambda ids: {"id": ids["first"]}),
    ("pm_notes", lambda ids: {"id": ids["first"], "add": "a note"}),
    ("pm_notes", lambda ids: {"id": ids["first"]}),
    ("pm_learnings", lambda ids: {"id": ids["first"], "add": "a learning"}),
    ("pm_learnings", lambda ids: {"id": ids["first"]}),
    ("pm_docs", lambda ids: {"id": ids["first"], "add": "README.md"}),
    ("pm_docs", lambda ids: {"id": ids["first"]}),
    ("pm_files", lambda ids: {"id": ids["first"], "add": "src/x.py"}),
    ("pm_files", lambda ids: {"id": ids["first"]}),
    ("pm_test", lambda ids: {"id": ids["first"], "add": "true"}),
    ("pm_test", lambda ids: {"id": ids["first"]}),
    ("pm_test", lambda ids: {"id": ids["first"], "run": True}),
    ("pm_config", lambda ids: {"configAction": "list"}),
    ("pm_config", lambda ids: {"configAction": "get", "key": "id_prefix"}),
    ("pm_contracts", lambda ids: {}),
    ("pm_deps", lambda ids: {"id": ids["first"], "add": ids["second"], "kind": "blocked_by"}),
    ("pm_deps", lambda ids: {"id": ids["first"]}),
    ("pm_events", lambda ids: {}),
    ("pm_focus", lambda ids: {"id": ids["first"]}),
    ("pm_focus", lambda ids: {}),
    ("pm_focus", lambda ids: {"clear": True}),
    ("pm_graph", lambda ids: {"subcommand": "ancestors", "id": ids["first"]}),
    ("pm_graph", lambda ids: {"subcommand": "cycles"}),
    ("pm_health", lambda ids: {}),
    ("pm_profile", lambda ids: {}),
    ("pm_schema", lambda ids: {"subcommand": "list"}),
    ("pm_copy", lambda ids: {"id": ids["first"]}),
    ("pm_run", lambda ids: {"action": "history", "id": ids["first"]}),
    ("pm_run", lambda ids: {"action": "claims"}),
    ("pm_discover", lambda ids: {"query": "claim"}),
    ("pm_close", lambda ids: {"id": ids["second"], "reason": "done"}),
]


def _remember(ids: dict[str, str], tool: str, result: Any) -> None:
    if tool == "pm_create":
        ids["second" if "first" in ids else "first"] = result["id"]
    elif tool == "pm_plan" and "plan" not in ids:
        ids["plan"] = result["id"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("profile", ["core", "standard", "full"])
async def test_every_result_is_valid_against_its_output_schema(
    repo: Path, profile: str, mode: str
) -> None:
    # Commands on: pm_test links and runs a command, and its result is validated too.
    app = PmMcp(
        build_host({}),
        ServerConfig(
            root=repo / ".agents" / "pm",
            profile=profile,
            author="tester",
            env={},
            operator=OperatorPolicy(allow_commands=True),
        ),
    )
    async with Client(app.server, mode=mode) as client:  # type: ignore[arg-type]
        listed = {t.name: t for t in (await client.list_tools()).tools}
        ids: dict[str, str] = {}
        answered: set[str] = set()
        for tool, make_args in SCENARIOS:
            if tool not in listed:
                continue
            result = await client.call_tool(tool, make_args(ids))
            assert not result.is_error, (tool, result.structured_content)
            schema = listed[tool].output_schema
            assert schema is not None, f"{tool} lists no outputSchema"
            structured = result.structured_content
            jsonschema.validate(structured, schema)
            assert structured is not None
            first_text = result.content[0].text  # type: ignore[union-attr]
            assert json.loads(first_text) == structured["result"], tool
            _remember(ids, tool, structured["result"])
            answered.add(tool)
    assert answered == set(listed), f"tools never answered: {sorted(set(listed) - answered)}"


def test_every_builtin_tool_declares_its_result() -> None:
    host = build_host({})
    assert sorted(host.tools()) == sorted(RESULTS)


#: Keywords that constrain a value; a subschema with none of them accepts anything.
_CONSTRAINING = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref", "properties",
    "items", "minimum", "maximum", "pattern", "format", "minLength", "maxLength",
    "required", "additionalProperties", "minItems", "maxItems",
}  # fmt: skip


def _portability_problems(node: Any, path: str) -> list[str]:
    """Type arrays, bare booleans and untyped subschemas under ``node``."""
    if isinstance(node, bool):
        return [f"{path}: bare {node} schema"]
    if not isinstance(node, dict):
        return []
    problems = []
    if isinstance(node.get("type"), list):
        problems.append(f"{path}: type array {node['type']}")
    if not set(node) & _CONSTRAINING:
        problems.append(f"{path}: untyped {node}")
    for key in ("properties", "patternProperties", "$defs"):
        for name, sub in (node.get(key) or {}).items():
            problems += _portability_problems(sub, f"{path}/{key}/{name}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for index, sub in enumerate(node.get(key) or []):
            problems += _portability_problems(sub, f"{path}/{key}/{index}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        if isinstance(node.get(key), dict):
            problems += _portability_problems(node[key], f"{path}/{key}")
    return problems


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
async def test_every_listed_schema_is_portable(repo: Path, profile: str) -> None:
    app = PmMcp(build_host({}), ServerConfig(root=repo / ".agents" / "pm", profile=profile, env={}))
    async with Client(app.server, mode="auto") as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
    problems = [
        p
        for t in tools
        for p in _portability_problems(t.input_schema, f"{t.name} inputSchema")
        + _portability_problems(t.output_schema, f"{t.name} outputSchema")
    ]
    assert tools and not problems, problems

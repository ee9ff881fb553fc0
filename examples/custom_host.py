"""A custom host for pm in one page: tools, skills and an app view, without pm-mcp.

It imports nothing from pm but ``pm_core.sdk``, the public SDK. Run it in a
repository with a tracker (or pass ``--path``)::

    python examples/custom_host.py --profile core --view context --out context.html

It prints the tools a client at the profile would list (with the app view a
tool's result can be shown in), the skills the installed plugins and the
workspace offer, and writes one MCP Apps view, a self-contained HTML document,
to ``--out``. Add ``--json`` for one JSON object instead of text.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pm_core.sdk import (
    APP_CONTRACTS,
    ConfigurationError,
    SkillRegistry,
    build_host,
    list_tools,
    render_app_html,
)


def describe(workspace: Path, profile: str, allowlist: Sequence[str] | None) -> dict[str, Any]:
    """The tools at ``profile`` and the skills for ``workspace``, as plain data."""
    host = build_host()  # built-in and installed plugins, PM_* switches honoured
    views = {contract.tool: contract.view for contract in APP_CONTRACTS}
    tools = [
        {"name": t.name, "tier": t.tier, "family": t.family, "view": views.get(t.name)}
        for t in list_tools(profile, workspace, host=host, allowlist=allowlist)
    ]
    # Skill origins come from plugins (pm's own skills, the workspace's
    # .agents/skills, any installed package that ships some).
    registry = SkillRegistry.load(host.skill_origins(workspace), log=False)
    skills = []
    cursor = None
    while True:
        page = registry.list(cursor, 50)
        for entry in page["skills"]:
            body = registry.read(entry["uri"]).text or ""
            skills.append(
                {
                    "name": entry["frontmatter"]["name"],
                    "uri": entry["uri"],
                    "files": len(entry["resources"]),
                    "bytes": len(body.encode("utf-8")),
                }
            )
        cursor = page.get("nextCursor")
        if not cursor:
            break
    refused = [{"name": r.name, "origin": r.origin, "reason": r.reason} for r in registry.rejected]
    return {"profile": profile, "tools": tools, "skills": skills, "refused_skills": refused}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, describe the host, write the view; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--profile", default="core", help="core, standard, full or custom")
    parser.add_argument("--tools", help="the custom profile's tools, comma-separated")
    parser.add_argument("--view", default="context", help="the app view to render")
    parser.add_argument("--out", type=Path, help="where to write the view (default: not written)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    allowlist = [t.strip() for t in args.tools.split(",")] if args.tools else None
    try:
        report = describe(args.path.resolve(), args.profile, allowlist)
        html = render_app_html(args.view)
    except (ConfigurationError, ValueError) as exc:
        print(f"custom_host: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        args.out.write_text(html, encoding="utf-8")
    report["view"] = {"name": args.view, "bytes": len(html.encode("utf-8")), "out": str(args.out)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{len(report['tools'])} tools at profile {args.profile}:")
    for tool in report["tools"]:
        view = f"  view: {tool['view']}" if tool["view"] else ""
        print(f"  {tool['name']:<14} {tool['tier']:<9} {tool['family']}{view}")
    print(f"{len(report['skills'])} skills:")
    for skill in report["skills"]:
        print(f"  {skill['uri']}  ({skill['files']} files)")
    written = f"written to {args.out}" if args.out else "not written (pass --out)"
    print(f"view {args.view}: {report['view']['bytes']} bytes of HTML, {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

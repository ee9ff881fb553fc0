"""Per-profile snapshots of ``tools/list`` (schemas and estimated tokens), and their token gates.

``python -m tests.support.tool_snapshots`` rewrites
``docs/generated/tools-list/<profile>.json`` from pm's own plugins and a fresh
tracker; ``tests/unit/test_tool_snapshots.py`` fails when a snapshot drifts
from what ``pm-mcp`` lists, and when a profile's tokens pass its gate.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "docs" / "generated" / "tools-list"
PROFILES = ("core", "standard", "full")
#: The TypeScript pm's ``tools/list`` at its full profile, in estimated tokens.
TS_FULL_TOKENS = 43_060
#: Token gates per profile (estimated tokens, ``ceil(bytes / 4)`` of the listed tools:
#: schemas, output schemas, titles, annotations): core and standard about 10% over
#: today's figures (4,104 and 8,259), room for a
#: tool or two; full may grow with the options it gains, under a third of the
#: TypeScript pm's.
GATES = {"core": 4_500, "standard": 9_000, "full": TS_FULL_TOKENS // 3}


def snapshot(profile: str, repo: Path) -> dict[str, Any]:
    """What a client at ``profile`` lists for a fresh tracker in ``repo``, with its size."""
    from pm_core.host import build_host
    from pm_core.hosting import list_tools

    host = build_host(env={"PM_LOAD_PLUGINS": ""})
    from pm_core.mcp.server import wire_tool

    # Exactly what tools/list sends: schemas, output schemas, title and annotations.
    tools = [
        wire_tool(t).model_dump(by_alias=True, exclude_none=True, mode="json")
        for t in list_tools(profile, repo, host=host)
    ]
    size = len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return {
        "profile": profile,
        "tool_count": len(tools),
        "bytes": size,
        "estimated_tokens": math.ceil(size / 4),
        "gate": GATES[profile],
        "tools": tools,
    }


def fresh_repo(folder: Path) -> Path:
    """A git repository with an initialised tracker (built-in types and statuses)."""
    from pm_core.tracker.api import Tracker

    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    Tracker(folder / ".agents" / "pm", env={}).init(None)
    return folder


def render(data: dict[str, Any]) -> str:
    """The committed text of one snapshot."""
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:
    """Rewrite every snapshot; print the figures."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        repo = fresh_repo(Path(tmp))
        for profile in PROFILES:
            data = snapshot(profile, repo)
            (FOLDER / f"{profile}.json").write_text(render(data), encoding="utf-8")
            sys.stdout.write(
                f"{profile:9} {data['tool_count']:3} tools {data['estimated_tokens']:6,} tokens"
                f" (gate {data['gate']:,})\n"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

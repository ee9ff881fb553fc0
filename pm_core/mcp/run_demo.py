"""``make run``: serve this repository's tracker over Streamable HTTP.

Creates the tracker when the repository has none, prints the URL and a client
configuration snippet for stdio hosts, then serves until interrupted.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from pm_core.tracker.api import Tracker
from pm_core.tracker.storage.workspace import find_root


def mcp_command() -> str:
    """The absolute path of ``pm-mcp``: beside this Python first (``make run`` does not
    put ``.venv/bin`` on ``PATH``), else found on ``PATH``."""
    beside = Path(sys.executable).parent / "pm-mcp"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which("pm-mcp")
    return str(Path(found).absolute()) if found else "pm-mcp"


def client_snippet(root: Path) -> dict[str, object]:
    """The ``.mcp.json`` entry that starts ``pm-mcp`` on ``root`` over stdio, as printed."""
    return {"mcpServers": {"pm": {"command": mcp_command(), "args": ["--path", str(root)]}}}


def main() -> int:
    """Initialise if needed, print the client snippets, run ``pm-mcp --http``."""
    root = find_root(Path.cwd())
    tracker = Tracker(root)
    if not (root / "settings.json").exists():
        tracker.init()
        print(f"created a tracker at {root}", file=sys.stderr)
    bind = os.environ.get("PM_MCP_HTTP", "127.0.0.1:8765")
    snippet = client_snippet(root)
    print(f"pm-mcp will serve {root} at http://{bind}/mcp", file=sys.stderr)
    print("For stdio hosts, put this in .mcp.json:", file=sys.stderr)
    print(json.dumps(snippet, indent=2), file=sys.stderr, flush=True)
    from pm_core.mcp.main import main as mcp_main

    return mcp_main(["--path", str(root), "--http", bind])


if __name__ == "__main__":
    raise SystemExit(main())

"""``make run`` prints an ``.mcp.json`` entry that starts pm-mcp as printed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pm_core.mcp.run_demo import client_snippet


def test_the_printed_snippet_runs_as_printed(repo: Path) -> None:
    root = repo / ".agents" / "pm"
    entry = client_snippet(root)["mcpServers"]
    assert isinstance(entry, dict)
    server = entry["pm"]
    command = Path(server["command"])
    assert command.is_absolute() and command.name == "pm-mcp"
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "snippet-test", "version": "1"},
        },
    }
    # an empty PATH: the snippet must not depend on the caller's PATH
    done = subprocess.run(
        [str(command), *server["args"]],
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "", "HOME": str(repo)},
        cwd="/",
    )
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and "serverInfo" in reply["result"], done.stderr


def test_readme_explains_adopting_pm_in_another_repository() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use pm in your own repository", 1)[1].split("\n## ", 1)[0]
    for needed in ("pipx install", "uv tool install", "pm init", "command -v pm-mcp", ".mcp.json"):
        assert needed in section, needed
    entry = json.loads(section.split("```json", 1)[1].split("```", 1)[0])
    assert Path(entry["mcpServers"]["pm"]["command"]).is_absolute()

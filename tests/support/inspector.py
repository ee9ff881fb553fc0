"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``), installed on first use.

Installed with Node 22 into ``PM_INSPECTOR_CACHE`` (default
``~/.cache/pm-inspector``) through npm, both pinned. Missing npm or a failed
install raises :class:`InspectorUnavailable`, which tests let fail: a skipped
real-client test would hide exactly what it is there to show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

NODE_VERSION = "22.23.3"
INSPECTOR_VERSION = "2.12.0"


class InspectorUnavailable(RuntimeError):
    """npm is missing or the install failed; the message says which."""


def cache_dir() -> Path:
    configured = os.environ.get("PM_INSPECTOR_CACHE", "").strip()
    return Path(configured) if configured else Path.home() / ".cache" / "pm-inspector"


def ensure_inspector() -> list[str]:
    """The command prefix that runs the Inspector CLI (``node launcher --cli``)."""
    cache = cache_dir()
    node = cache / "node_modules" / "node" / "bin" / "node"
    launcher = (
        (cache / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher")
        / "build"
        / "index.js"
    )
    marker = cache / "pm-inspector.json"
    wanted = {"node": NODE_VERSION, "inspector": INSPECTOR_VERSION}
    ready = marker.exists() and node.exists() and launcher.exists()
    if not ready or json.loads(marker.read_text(encoding="utf-8")) != wanted:
        npm = shutil.which("npm")
        if npm is None:
            raise InspectorUnavailable("npm is not on PATH; it installs Node 22 and the Inspector")
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                npm, "install", "--prefix", str(cache), "--save-exact", "--no-audit",
                "--no-fund", "--loglevel=error", f"node@{NODE_VERSION}",
                f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}",
            ],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not launcher.exists():
            raise InspectorUnavailable(
                f"npm install failed (exit {done.returncode}): {done.stderr.strip()[-1500:]}"
            )
        marker.write_text(json.dumps(wanted), encoding="utf-8")
    return [str(node), str(launcher), "--cli"]

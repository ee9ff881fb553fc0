"""The TypeScript pm's command-line surface, taken from its ``--help``: ``ts_surface.json``.

``PM_UPSTREAM_BIN=<bin folder> python tests/compat/ts_surface.py`` rewrites the
committed ``ts_surface.json`` (its commands and global options);
``test_compatibility_doc.py`` checks ``docs/compatibility.md`` against it and
against this program's click command tree, and, when the oracle is there,
that the committed surface still matches the oracle's help.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

SURFACE = Path(__file__).resolve().parent / "ts_surface.json"


def surface_from_help(text: str) -> dict[str, list[str]]:
    """``{commands, global_options}`` parsed from ``pm --help``."""
    commands: list[str] = []
    options: list[str] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("Options:"):
            section = "options"
            continue
        if line.startswith("Commands:"):
            section = "commands"
            continue
        if section == "options":
            match = re.match(r"\s+(?:-\w, )?(--[\w-]+)", line)
            if match and match.group(1) not in ("--help", "--version"):
                options.append(match.group(1))
        elif section == "commands":
            if not line.strip():
                section = ""  # the commands end at the first blank line (examples follow)
                continue
            match = re.match(r"\s{2}([a-z][\w-]*)(?:\|[\w-]+)?\b", line)
            if match and match.group(1) != "help":
                commands.append(match.group(1))
    return {"commands": sorted(set(commands)), "global_options": sorted(set(options))}


def oracle_surface(bin_dir: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [str(Path(bin_dir) / "pm"), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        check=True,
        timeout=120,
    )
    return surface_from_help(done.stdout)


def main() -> int:
    bin_dir = os.environ.get("PM_UPSTREAM_BIN")
    if not bin_dir:
        print("set PM_UPSTREAM_BIN to the TypeScript pm's bin folder", file=sys.stderr)
        return 2
    SURFACE.write_text(json.dumps(oracle_surface(bin_dir), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

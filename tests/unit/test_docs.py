"""Documentation stays in step with the code."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pm_core.hookspecs as hookspecs

ROOT = Path(__file__).resolve().parents[2]


def hookspec_signatures() -> list[str]:
    """``name(args) -> return`` for every hookspec, as the docs title them."""
    out = []
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if name.startswith("pm_"):
            out.append(f"{name}{inspect.signature(fn)}".replace("'", ""))
    return out


def test_every_hookspec_has_a_docs_section_titled_with_its_signature() -> None:
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    headings = {line[3:].strip().strip("`") for line in text.splitlines() if line.startswith("## ")}
    signatures = hookspec_signatures()
    assert len(signatures) >= 8
    missing = [s for s in signatures if s not in headings]
    assert not missing, f"docs/plugins.md lacks sections for: {missing}"


def test_committed_command_surface_matches_the_generated_one() -> None:
    env = {**os.environ, "PM_LOAD_PLUGINS": ""}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pm_core.cli.plugins_cmd",
            "surface",
            "--check",
            "docs/generated/AGENT_COMMAND_SURFACE.md",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_surface_check_reports_drift_with_a_diff(tmp_path: Path) -> None:
    stale = tmp_path / "SURFACE.md"
    stale.write_text("# Agent command surface\n\n| stale |\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.cli.plugins_cmd", "surface", "--check", str(stale)],
        cwd=ROOT,
        env={**os.environ, "PM_LOAD_PLUGINS": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "+| `claim` | core | lifecycle |" in done.stdout
    assert "has drifted" in done.stderr

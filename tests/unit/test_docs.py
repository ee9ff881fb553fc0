"""Documentation stays in step with the code."""

from __future__ import annotations

import inspect
import os
import re
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


def test_every_hook_section_in_the_docs_names_a_current_hookspec() -> None:
    # The other direction: a renamed or re-typed hook leaves no stale section.
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    titles = [
        line[3:].strip().strip("`") for line in text.splitlines() if line.startswith("## `pm_")
    ]
    stale = sorted(set(titles) - set(hookspec_signatures()))
    assert titles and not stale, f"docs/plugins.md has sections for no hookspec: {stale}"


def test_plugin_guide_documents_every_environment_switch_the_host_reads() -> None:
    from pm_core.host import HostSettings

    switches = set(re.findall(r"PM_[A-Z_]+", inspect.getsource(HostSettings.from_env)))
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert len(switches) >= 4
    assert not [s for s in switches if f"`{s}" not in text]


def test_readme_points_extension_authors_to_the_guide_and_the_example() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in ("docs/plugins.md", "docs/sdk.md", "examples/pm-standup", "pm-plugins list"):
        assert target in text, target
        if target.startswith(("docs/", "examples/")):
            assert (ROOT / target).exists(), target


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


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def test_plugin_guide_names_every_built_in_where_it_explains_loading() -> None:
    from pm_core.host import BUILTIN_PLUGINS

    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = _section(text, "How plugins are loaded")
    named = set(re.findall(r"`([a-z_0-9]+)`", section.split("BUILTIN_PLUGINS", 1)[1]))
    assert {name for name, _ in BUILTIN_PLUGINS} <= named
    assert "BUILTIN_PLUGINS" in section


def test_wrapper_section_sorts_every_hook_into_collection_or_per_request() -> None:
    # Collection hooks are the specs without firstresult: the host calls them per plugin.
    text = _section((ROOT / "docs" / "plugins.md").read_text(encoding="utf-8"), "Wrappers")
    collection_part, request_part = text.split("**Per-request hooks**", 1)
    specs = {
        name: fn
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("pm_")
    }
    firstresult = {n for n, fn in specs.items() if fn.pm_spec["firstresult"]}  # type: ignore[attr-defined]
    listed_collection = set(re.findall(r"`(pm_[a-z_]+)`", collection_part))
    listed_request = set(re.findall(r"`(pm_[a-z_]+)`", request_part))
    assert listed_collection == set(specs) - firstresult
    assert firstresult <= listed_request and firstresult

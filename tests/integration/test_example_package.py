"""The example extension, installed into a fresh virtual environment, works through every door.

The module fixture builds one environment:

- a new venv whose packages are the development environment's (a ``.pth``
  file adds them), so pm and its dependencies resolve without a download,
  while anything installed into the new venv stays out of the developer's;
- ``examples/pm-standup`` copied and installed into it with pip, the way a
  user installs an extension (a real wheel build and entry point);
- two more installed distributions, written as pip would lay them out: one
  whose module fails to import (``broken_demo``), and one whose commands
  collide with a built-in and with pm-standup (``zz_clash``, named to load
  after ``standup``) next to one good command.

pm, pm-plugins and pm-mcp then run with that venv's interpreter
(``python -m`` the same entry functions the console scripts call).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.support.mcp_client import McpProcess, tool_names

#: A venv, a wheel build and some thirty pm processes: tens of seconds.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pm-standup"
CLEAN = (
    "PM_PATH",
    "PM_AUTHOR",
    "PM_LOAD_PLUGINS",
    "PM_DISABLE_PLUGINS",
    "PM_PLUGINS_STRICT",
    "PM_TRACE_PLUGINS",
    "PM_MCP_PROFILE",
    "PM_MCP_TOOLS",
    "PYTHONPATH",
)

BROKEN_MODULE = 'raise ImportError("pm_broken_demo needs a module that is not installed")\n'
CLASH_MODULE = """
from pm_core import hookimpl
from pm_core.contracts import CommandSpec


def _ok(ctx, **params):
    return {"clash": "ok"}


@hookimpl
def pm_register_commands():
    return [
        CommandSpec("list", "Shadows a built-in.", tier="core", handler=_ok),
        CommandSpec("standup", "Shadows pm-standup.", tier="core", handler=_ok),
        CommandSpec("clash-ok", "A command nobody else has.", tier="core", handler=_ok),
    ]
"""


def _fake_distribution(site: Path, dist: str, module: str, entry: str, source: str) -> None:
    """An installed distribution as pip lays it out: the module and its dist-info."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[pm.plugins]\n{entry} = {module}\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


@attrs.frozen
class Fresh:
    """The fresh environment and a repository with a tracker to run it in."""

    python: str
    repo: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in CLEAN}
        env["PM_AUTHOR"] = "alice"
        env.update(extra)
        return env

    def run(self, module: str, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "-m", module, *args],
            cwd=self.repo,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def pm(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return self.run("pm_core.cli.main", *args, **extra)

    def plugins(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return self.run("pm_core.cli.plugins_cmd", *args, **extra)

    def rows(self, **extra: str) -> dict[str, Any]:
        done = self.plugins("list", "--json", "-v", **extra)
        assert done.returncode == 0, done.stderr
        listing = json.loads(done.stdout)
        assert listing["schema"] == 1
        return {row["name"]: row for row in listing["plugins"]}

    def mcp(self, **extra: str) -> McpProcess:
        return McpProcess(self.repo, env=self.env(**extra), python=self.python, timeout=60)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fresh]:
    base = tmp_path_factory.mktemp("fresh")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    dev_site = sysconfig.get_paths()["purelib"]
    (site / "_pm_dev_packages.pth").write_text(
        f"import site; site.addsitedir({dev_site!r})\n", encoding="utf-8"
    )
    copy = base / "pm-standup"
    shutil.copytree(
        EXAMPLE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", str(copy)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    _fake_distribution(site, "pm-broken-demo", "pm_broken_demo", "broken_demo", BROKEN_MODULE)
    _fake_distribution(site, "pm-clash-demo", "pm_clash_demo", "zz_clash", CLASH_MODULE)
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    made = Fresh(python, repo)
    init = made.pm("init")
    assert init.returncode == 0, init.stderr
    yield made


@pytest.fixture(scope="module")
def worked(fresh: Fresh) -> dict[str, str]:
    """Alice closed one item and claimed another; Bob created one."""

    def create(title: str, **extra: str) -> str:
        done = fresh.pm("create", title, "--json", **extra)
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["id"])

    shipped, working = create("Ship the export"), create("Fix the importer")
    create("Bob's item", PM_AUTHOR="bob")
    assert fresh.pm("close", shipped, "shipped").returncode == 0
    assert fresh.pm("claim", working).returncode == 0
    return {"shipped": shipped, "working": working}


# ---------------------------------------------------------------- pm-plugins list


def test_installed_package_is_an_ok_row_with_its_commands_and_tiers(fresh: Fresh) -> None:
    row = fresh.rows()["standup"]
    assert (row["source"], row["version"], row["status"]) == ("pm-standup", "0.1.0", "ok")
    assert row["hooks"] == ["pm_register_commands"]
    assert row["module"] == "pm_standup" and row["error"] is None
    assert row["contributes"] == {
        "tools": [],
        "commands": [
            {"name": "standup", "tier": "core", "family": "orientation"},
            {"name": "standup-digest", "tier": "internal", "family": "history"},
        ],
        "resources": [],
        "prompts": [],
        "skill_origins": [],
        "protocol_extensions": [],
    }


def test_table_shows_the_row_and_what_it_contributes(fresh: Fresh) -> None:
    done = fresh.plugins("list")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^standup +pm-standup +0\.1\.0 +ok +pm_register_commands$", done.stdout, re.M)
    assert "commands: standup (core), standup-digest (internal)" in done.stdout


def test_plugin_that_fails_to_import_is_an_error_row_with_its_error_under_v(
    fresh: Fresh,
) -> None:
    row = fresh.rows()["broken_demo"]
    assert (row["source"], row["status"], row["hooks"]) == ("pm-broken-demo", "error", [])
    assert row["error"] == "ImportError: pm_broken_demo needs a module that is not installed"
    table = fresh.plugins("list", "-v").stdout
    assert "error: ImportError: pm_broken_demo needs a module" in table


def test_colliding_commands_are_a_conflict_row_and_the_plugins_other_command_works(
    fresh: Fresh,
) -> None:
    rows = fresh.rows()
    clash = rows["zz_clash"]
    assert clash["status"] == "conflict"
    assert clash["error"].splitlines() == [
        "command 'list' is already provided by 'core'; this one was dropped",
        "command 'standup' is already provided by 'standup'; this one was dropped",
    ]
    assert clash["contributes"]["commands"] == [
        {"name": "clash-ok", "tier": "core", "family": "extensions"}
    ]
    assert rows["standup"]["status"] == "ok" and rows["core"]["status"] == "ok"
    assert json.loads(fresh.pm("clash-ok", "--json").stdout) == {"clash": "ok"}


def test_disable_blocks_and_empty_allowlist_keeps_only_built_ins(fresh: Fresh) -> None:
    disabled = fresh.rows(PM_DISABLE_PLUGINS="standup,broken_demo")
    assert disabled["standup"]["status"] == "blocked"
    assert disabled["broken_demo"]["status"] == "blocked"
    assert disabled["zz_clash"]["status"] == "conflict"  # still loaded: not named
    builtins_only = fresh.rows(PM_LOAD_PLUGINS="")
    third_party = {n: r["status"] for n, r in builtins_only.items() if r["source"] != "builtin"}
    assert third_party == {"broken_demo": "blocked", "standup": "blocked", "zz_clash": "blocked"}
    assert fresh.pm("standup").returncode == 0
    missing = fresh.pm("standup", PM_LOAD_PLUGINS="")
    assert missing.returncode == 2 and "No such command 'standup'" in missing.stderr


def test_allowlist_loads_only_the_named_plugin(fresh: Fresh) -> None:
    rows = fresh.rows(PM_LOAD_PLUGINS="standup")
    assert rows["standup"]["status"] == "ok"
    assert (rows["broken_demo"]["status"], rows["zz_clash"]["status"]) == ("blocked", "blocked")


def test_strict_mode_makes_the_broken_plugin_fatal_everywhere(fresh: Fresh) -> None:
    listing = fresh.plugins("list", PM_PLUGINS_STRICT="1")
    assert listing.returncode == 1
    assert "plugin 'broken_demo' failed to load" in listing.stderr
    help_ = fresh.pm("--help", PM_PLUGINS_STRICT="1")
    assert help_.returncode == 1
    assert help_.stderr.splitlines()[0].startswith("error: plugin 'broken_demo' failed to load")
    server = fresh.run("pm_core.mcp.main", PM_PLUGINS_STRICT="1")
    assert server.returncode == 1 and "broken_demo" in server.stderr


def test_trace_prints_hook_calls_on_stderr_only(fresh: Fresh) -> None:
    done = fresh.plugins("list", "--json", PM_TRACE_PLUGINS="1")
    assert done.returncode == 0
    assert "pm-plugins: calling pm_register_commands on standup" in done.stderr
    assert json.loads(done.stdout)["schema"] == 1  # stdout stays clean JSON


# ---------------------------------------------------------------- the CLI


def test_help_lists_standup_as_an_extension_and_names_the_plugins_not_working(
    fresh: Fresh,
) -> None:
    done = fresh.pm("--help")
    assert done.returncode == 0, done.stderr
    # Extension commands are listed in their tier's section, marked as extensions.
    core = done.stdout.split("Core commands:", 1)[1].split("Standard commands:", 1)[0]
    assert re.search(r"^  standup +Stand-up report[^[]*\[extension\]", core, re.M)
    assert re.search(r"^  clash-ok +A command nobody else has\. \[extension\]", core, re.M)
    assert "standup-digest" not in done.stdout
    assert "broken_demo, zz_clash: run `pm-plugins list -v` for why." in done.stdout


def test_standup_help_is_generated_from_the_spec(fresh: Fresh) -> None:
    done = fresh.pm("standup", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--who TEXT whose stand-up (default: the current author)" in text
    assert "[default: 1d]" in text
    assert "Tier core, family orientation; from plugin standup (pm-standup 0.1.0)." in text
    assert "Examples: pm standup pm standup --who alice --since 3d" in text


def test_pm_standup_reports_from_the_tracker(fresh: Fresh, worked: dict[str, str]) -> None:
    done = fresh.pm("standup", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["who"] == "alice"
    assert [r["id"] for r in report["done"]] == [worked["shipped"]]
    assert [r["id"] for r in report["in_progress"]] == [worked["working"]]
    bob = json.loads(fresh.pm("standup", "--who", "bob", "--json").stdout)
    assert [r["title"] for r in bob["changed"]] == ["Bob's item"]


def test_handler_usage_error_is_exit_2_with_its_message(fresh: Fresh) -> None:
    done = fresh.pm("standup", "--since", "last tuesday")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: invalid since 'last tuesday'"


def test_internal_command_runs_from_the_cli(fresh: Fresh, worked: dict[str, str]) -> None:
    done = fresh.pm("standup-digest", "--json")
    assert done.returncode == 0, done.stderr
    authors = {row["author"]: row for row in json.loads(done.stdout)["authors"]}
    assert set(authors) == {"alice", "bob"}
    contracts = json.loads(fresh.pm("contracts", "--json").stdout)
    names = {c["name"] for c in contracts["commands"]}
    assert "standup" in names and "standup-digest" not in names


# ---------------------------------------------------------------- pm-mcp


def _run_actions(tools: Mapping[str, Any]) -> list[str]:
    return list(tools["pm_run"]["inputSchema"]["properties"]["action"]["enum"])


def test_core_profile_lists_pm_run_with_standup_and_runs_it(
    fresh: Fresh, worked: dict[str, str]
) -> None:
    with fresh.mcp() as server:
        server.initialize()
        listed = server.request("tools/list")["result"]
        tools = {t["name"]: t for t in listed["tools"]}
        assert "pm_run" in tools and "pm_comments" not in tools
        actions = _run_actions(tools)
        assert "standup" in actions and "clash-ok" in actions
        assert "standup-digest" not in actions
        assert {"who", "since"} <= set(tools["pm_run"]["inputSchema"]["properties"])
        called = server.request(
            "tools/call", {"name": "pm_run", "arguments": {"action": "standup"}}
        )["result"]
        assert called["isError"] is False, called
        report = called["structuredContent"]["result"]
        assert [r["id"] for r in report["done"]] == [worked["shipped"]]


def test_internal_command_is_never_an_action_and_calling_it_is_an_error_result(
    fresh: Fresh,
) -> None:
    for profile in ("core", "standard", "full"):
        with fresh.mcp(PM_MCP_PROFILE=profile) as server:
            server.initialize()
            tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
            assert "standup-digest" not in _run_actions(tools), profile
            called = server.request(
                "tools/call", {"name": "pm_run", "arguments": {"action": "standup-digest"}}
            )["result"]
            assert called["isError"] is True, profile
            error = called["structuredContent"]
            assert error["code"] == 2
            assert "unknown or unavailable action 'standup-digest'" in error["error"]


def test_custom_profile_without_pm_run_does_not_list_it(fresh: Fresh) -> None:
    with fresh.mcp(PM_MCP_PROFILE="custom", PM_MCP_TOOLS="pm_get") as server:
        server.initialize()
        assert tool_names(server.request("tools/list")["result"]) == ["pm_get"]


def test_pm_mcp_starts_and_lists_tools_despite_the_broken_plugin(fresh: Fresh) -> None:
    with fresh.mcp() as server:
        init = server.initialize()
        assert init["serverInfo"]["name"]
        assert "pm_get" in tool_names(server.request("tools/list")["result"])

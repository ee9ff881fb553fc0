"""``pm`` start-up imports only what a command needs, and never the MCP SDK.

Runs ``python -X importtime`` on the CLI and reads the modules it imported
from the report on stderr.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.pm_cli import PmCli

NEVER_AT_START = ("mcp", "pydantic", "structlog", "pluggy", "uvicorn", "starlette", "anyio")


def _imported(args: list[str], cwd: Path, env: dict[str, str]) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names: set[str] = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name)
    assert names, "no -X importtime report on stderr"
    return names


def _top_level(names: set[str]) -> set[str]:
    return {n.split(".", 1)[0] for n in names}


@pytest.fixture
def cli(tmp_path: Path) -> PmCli:
    cli = PmCli.init(tmp_path)
    cli.create("An item")
    return cli


def test_importing_the_cli_entry_module_loads_nothing_heavy(cli: PmCli) -> None:
    names = _imported(["-c", "import pm_core.cli.main"], cli.repo, cli.env())
    assert "pm_core.cli.main" in names
    assert not _top_level(names) & {*NEVER_AT_START, "click", "toon_format", "attrs"}


def test_version_imports_neither_click_nor_the_tracker(cli: PmCli) -> None:
    names = _imported(["-m", "pm_core.cli.main", "--version"], cli.repo, cli.env())
    top = _top_level(names)
    assert not top & {*NEVER_AT_START, "click", "toon_format", "attrs", "jsonpatch"}
    assert not any(n.startswith("pm_core.tracker") for n in names)


READS = [["list"], ["get", "ITEM"], ["next"], ["context"], ["search", "item"], ["focus"]]


@pytest.mark.parametrize("command", READS)
def test_read_commands_never_import_mcp_or_the_plugin_host(cli: PmCli, command: list[str]) -> None:
    item_id = cli("list", "--json").json()["items"][0]["id"]
    args = [item_id if a == "ITEM" else a for a in command]
    names = _imported(["-m", "pm_core.cli.main", *args], cli.repo, cli.env())
    top = _top_level(names)
    assert not top & set(NEVER_AT_START), sorted(top & set(NEVER_AT_START))
    assert "pm_core.host" not in names and "pm_core.contracts" not in names
    assert "pm_core.tracker.api" in names  # the command really opened the tracker


@pytest.mark.parametrize("command", READS)
def test_everyday_reads_import_neither_click_nor_attrs(cli: PmCli, command: list[str]) -> None:
    item_id = cli("list", "--json").json()["items"][0]["id"]
    args = [item_id if a == "ITEM" else a for a in command]
    names = _imported(["-m", "pm_core.cli.main", "--json", *args, "--json"], cli.repo, cli.env())
    # click and attrs (with inspect, which it needs) were ~30 ms of each command's start.
    assert not _top_level(names) & {"click", "attr", "attrs", "inspect"}
    assert "pm_core.tracker.api" in names


def test_create_and_update_import_neither_click_nor_attrs(cli: PmCli) -> None:
    created = _imported(
        ["-m", "pm_core.cli.main", "create", "Fast", "--tags", "a", "-p", "1"], cli.repo, cli.env()
    )
    item_id = cli("list", "--json").json()["items"][0]["id"]
    updated = _imported(
        ["-m", "pm_core.cli.main", "update", item_id, "--status", "in_progress"],
        cli.repo,
        cli.env(),
    )
    for names in (created, updated):
        assert not _top_level(names) & {"click", "attr", "attrs", "inspect"}
        assert "pm_core.tracker.api" in names


def test_help_of_a_read_command_still_comes_from_click(cli: PmCli) -> None:
    names = _imported(["-m", "pm_core.cli.main", "list", "--help"], cli.repo, cli.env())
    assert "click" in _top_level(names)


def test_mutations_never_import_mcp(cli: PmCli) -> None:
    item_id = cli("list", "--json").json()["items"][0]["id"]
    names = _imported(
        ["-m", "pm_core.cli.main", "comments", item_id, "--add", "imports checked"],
        cli.repo,
        cli.env(),
    )
    assert not _top_level(names) & set(NEVER_AT_START)


def test_help_lists_extensions_without_importing_mcp(cli: PmCli) -> None:
    # `pm --help` builds the plugin host to list extension commands: pluggy is
    # expected there, the MCP SDK is not.
    names = _imported(["-m", "pm_core.cli.main", "--help"], cli.repo, cli.env())
    assert not _top_level(names) & {"mcp", "pydantic", "structlog", "uvicorn", "starlette"}

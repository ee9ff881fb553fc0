"""``docs/compatibility.md`` cannot drift: its tables follow both command-line surfaces.

Every TypeScript pm command and global option (``ts_surface.json``) has one
row; a row saying ``same`` or ``different`` names something this program has,
a row saying ``missing`` names something it lacks; every command of this
program appears. When the oracle is installed, the committed surface must be
the oracle's own.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import click
import pytest

from pm_core.cli.app import cli
from tests.compat.ts_surface import SURFACE, oracle_surface

DOC = Path(__file__).resolve().parents[2] / "docs" / "compatibility.md"
STATUSES = ("same", "different", "missing")


def _section(name: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in body.splitlines():
        if line.startswith("| `") or line.startswith("| |"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _name(cell: str) -> str:
    match = re.fullmatch(r"`([^`]+)`", cell)
    return match.group(1) if match else ""


def _ours() -> tuple[set[str], set[str]]:
    ctx = click.Context(cli)
    commands = set(cli.list_commands(ctx))
    options = {opt for param in cli.params for opt in param.opts if opt.startswith("--")}
    return commands, options


def _surface() -> dict[str, list[str]]:
    return dict(json.loads(SURFACE.read_text(encoding="utf-8")))


def test_every_typescript_command_has_one_row_that_matches_our_tree() -> None:
    ours, _ = _ours()
    rows = [r for r in _section("Commands") if len(r) == 4]
    names = [_name(r[0]) for r in rows]
    assert sorted(names) == sorted(_surface()["commands"])
    assert len(names) == len(set(names))
    for theirs, here, status, notes in rows:
        assert status in STATUSES, (theirs, status)
        if status == "missing":
            assert _name(theirs) not in ours, f"{theirs} exists here now: say how it compares"
            assert not here
        else:
            assert _name(here) in ours, f"{here} ({theirs}) is not a command here"
            assert status == "same" or notes, f"{theirs} differs: say why"


def test_every_command_of_ours_is_on_the_page() -> None:
    ours, _ = _ours()
    listed = {_name(r[1]) for r in _section("Commands") if len(r) == 4}
    only_here = {_name(r[0]) for r in _section("Commands") if len(r) == 2}
    assert ours == (listed - {""}) | only_here
    assert not only_here & set(_surface()["commands"])


def test_every_typescript_global_option_has_one_row_that_matches_ours() -> None:
    _, ours = _ours()
    rows = _section("Global options")
    names = [_name(r[0]) for r in rows]
    assert sorted(names) == sorted(_surface()["global_options"])
    for theirs, status, _notes in rows:
        assert status in STATUSES
        assert (_name(theirs) in ours) == (status != "missing"), (theirs, status)


def test_the_committed_surface_is_the_oracles_own() -> None:
    folder = os.environ.get("PM_UPSTREAM_BIN")
    if not folder or not (Path(folder) / "pm").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail("PM_UPSTREAM_BIN does not name the TypeScript pm's bin folder")
        pytest.skip("PM_UPSTREAM_BIN is not set")
    assert oracle_surface(folder) == _surface(), "run tests/compat/ts_surface.py"

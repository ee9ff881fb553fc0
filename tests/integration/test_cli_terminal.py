"""On a terminal, list/search/next print one aligned line per item; piped output stays TOON."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.pm_cli import PmCli, pm_executable

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def on_terminal(cli: PmCli, *args: str, **env: str) -> str:
    """Run pm with stdout on a pseudo-terminal; what the terminal showed."""
    master, slave = pty.openpty()
    base = cli.env()
    base.pop("NO_COLOR", None)
    base.pop("PM_COLOR", None)
    process = subprocess.Popen(
        [*pm_executable(), *args],
        cwd=cli.repo,
        env={**base, "TERM": "xterm", **env},
        stdout=slave,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.fixture
def cli(tmp_path: Path) -> PmCli:
    cli = PmCli.init(tmp_path)
    cli.create("Write the parser")
    cli.create("A much longer title for the second item", "--priority", "0")
    return cli


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_list_search_next_print_aligned_lines_with_colour(cli: PmCli) -> None:
    shown = on_terminal(cli, "list")
    lines = _ANSI.sub("", shown).splitlines()
    assert len(lines) == 3 and lines[-1] == "2 of 2 items", shown
    assert lines[0].index("open") == lines[1].index("open")  # aligned columns
    assert "\x1b[" in shown  # coloured
    found = _ANSI.sub("", on_terminal(cli, "search", "parser")).splitlines()
    assert "Write the parser" in found[0] and found[-1] == "1 of 1 hits"
    following = _ANSI.sub("", on_terminal(cli, "next"))
    assert following.startswith("next: ") and "A much longer title" in following.splitlines()[0]


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_no_color_is_honoured_and_pipes_stay_toon(cli: PmCli) -> None:
    plain = on_terminal(cli, "list", NO_COLOR="1")
    assert "\x1b[" not in plain and plain.splitlines()[-1] == "2 of 2 items"
    piped = cli("list")
    assert piped.code == 0 and piped.out.startswith("items[2]"), piped
    assert "\x1b[" not in piped.out
    assert cli("list", "--json").json()["total"] == 2

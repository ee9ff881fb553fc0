"""Path escapes through the real doors: ``pm`` arguments and ``pm-mcp`` requests.

Hostile ids are usage errors (exit 2) that create nothing; links leaving the
repository are refused unless global; a ``--path`` that is a file, a plain
directory or a symlink loop is a clean error; ``ui://`` and ``pm://`` URIs
with traversal are "not found" and never read a file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import McpProcess
from tests.support.pm_cli import PmCli, pm_executable

APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
SECRET = "TOP-SECRET-CONTENT-42"


@pytest.fixture
def cli(tmp_path: Path) -> PmCli:
    """A tracker in tmp_path/repo, with a secret file beside the repository."""
    (tmp_path / "secret.txt").write_text(SECRET)
    return PmCli.init(tmp_path)


def snapshot(root: Path) -> set[Path]:
    """Every path under ``root`` except git's own files."""
    return {p for p in root.rglob("*") if ".git" not in p.parts and "runtime" not in p.parts}


@pytest.mark.parametrize(
    "raw",
    ["../x", "../../secret.txt", "/etc/passwd", "pm-a\\..\\b", "pm-é", "pm-" + "a" * 300],
)
def test_hostile_ids_exit_2_with_one_error_line_and_create_nothing(
    tmp_path: Path, cli: PmCli, raw: str
) -> None:
    before = snapshot(tmp_path)
    for args in (["get", raw], ["update", raw, "--priority", "1"], ["comments", raw, "--add", "x"]):
        result = cli(*args)
        assert result.code == 2, result
        assert result.err_lines[0].startswith("error: "), result
        assert "invalid item id" in result.err or "too long" in result.err, result
        assert len(result.err) < 400, result
    assert snapshot(tmp_path) == before


def test_non_utf8_arguments_are_a_usage_error(cli: PmCli) -> None:
    proc = subprocess.run(
        [*pm_executable(), "create", "--title", b"bad \xff byte"],
        cwd=cli.repo,
        env=cli.env(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().startswith("error: argument 3 is not valid UTF-8"), proc.stderr
    assert cli("list", "--all", "--json").json()["items"] == []


@pytest.mark.parametrize("kind", ["files", "docs"])
def test_links_escaping_the_repository_exit_2_and_global_scope_is_explicit(
    tmp_path: Path, cli: PmCli, kind: str
) -> None:
    item = cli.create("Linker")
    (cli.repo / "sneaky").symlink_to(tmp_path)
    for raw in ("../secret.txt", str(tmp_path / "secret.txt"), "sneaky/secret.txt", ".."):
        result = cli(kind, item, "--add", raw)
        assert result.code == 2, result
        assert "outside the repository" in result.err_lines[0], result
        assert "scope" in result.err_lines[1], result  # the hint names the way out
    assert cli(kind, item, "--json").json()[kind] == []
    allowed = cli(kind, item, "--add", str(tmp_path / "secret.txt"), "--scope", "global")
    assert allowed.code == 0, allowed
    assert cli(kind, item, "--add", "src/inside.py").code == 0


def test_path_that_is_a_file_a_plain_directory_or_a_loop_is_a_clean_error(
    tmp_path: Path, cli: PmCli
) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    cases = [
        (tmp_path / "secret.txt", 3, "no tracker at"),
        (tmp_path / "plain", 3, "no tracker at"),
        (tmp_path / "loop", 2, "cannot be resolved"),
    ]
    for path, code, needle in cases:
        result = cli("--path", str(path), "list")
        assert result.code == code, result
        assert needle in result.err_lines[0], result
        assert SECRET not in result.out + result.err


def _read(server: McpProcess, uri: str) -> dict[str, Any]:
    return server.modern("resources/read", {"uri": uri}, extensions=APPS)


@pytest.mark.parametrize(
    "uri",
    [
        "ui://pm/../../secret.txt",
        "ui://pm/../../../secret.txt",
        "ui://pm/%2e%2e/%2e%2e/secret.txt",
        "ui://pm/..%2f..%2f..%2fsecret.txt",
        "ui://pm/../../etc/passwd",
        "ui://pm/context.html/../../../../secret.txt",
        "pm://workspace/../../secret.txt",
        "pm://workspace/%2e%2e/secret.txt",
        "file:///etc/passwd",
    ],
)
def test_traversal_uris_are_not_found_and_read_nothing(cli: PmCli, uri: str) -> None:
    with McpProcess(cli.repo) as server:
        assert "contents" in _read(server, "ui://pm/context.html")["result"]  # Apps is on
        reply = _read(server, uri)
        assert "error" in reply, reply
        assert reply["error"]["code"] in (-32602, -32002), reply
        assert "not found" in reply["error"]["message"], reply
        assert SECRET not in str(reply) and "root:x:0:0" not in str(reply)
        assert server.close() == 0


def test_tool_path_argument_with_nul_a_file_or_no_tracker_is_an_error_result(
    tmp_path: Path, cli: PmCli
) -> None:
    with McpProcess(cli.repo) as server:
        server.initialize()
        for path, code in (
            ("a\x00b", 2),
            (str(tmp_path / "secret.txt"), 3),
            (str(tmp_path), 3),
        ):
            reply = server.request("tools/call", {"name": "pm_list", "arguments": {"path": path}})
            result = reply["result"]
            assert result["isError"] is True, reply
            assert result["structuredContent"]["code"] == code, reply
            assert SECRET not in str(reply)
        assert server.close() == 0
    assert not (tmp_path / ".agents").exists()

"""A hostile ``.agents/skills`` and hostile ``skill://`` URIs, against a real ``pm-mcp``.

The hostile workspace holds one offending skill per case, side by side: each
is refused (absent from ``skills/list``, -32602 on every read, a
``skill_rejected`` log line naming the reason) while the four package skills
and the workspace's valid skills keep working. The path-escape cases aim
``resources/read`` and ``resources/directory/read`` at files outside the
registry that carry a marker, and prove the marker never reaches the wire.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import McpProcess
from tests.support.skills import write_skill
from tests.support.skills_wire import (
    NEGOTIATED,
    content_bytes,
    failed,
    init_repo,
    ok,
    sha256,
    wait_for_events,
)

MIB = 1024 * 1024
PACKAGE = ("pm-developer", "pm-extensions", "pm-sdk", "pm-user")
MARKER = "MARKER-5e1f0c-never-on-the-wire"
PASSWD_LINE = "root:x:0:0"


def sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk space (the limits check ``st_size``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.truncate(size)


def _link_file(root: Path) -> None:
    skill = write_skill(root, "link-file")
    (skill / "references").mkdir()
    os.symlink(root.parent.parent.parent / "SECRET-OUTSIDE.md", skill / "references" / "a.md")


def _link_dir(root: Path) -> None:
    skill = write_skill(root, "link-dir")
    os.symlink(root.parent.parent.parent, skill / "escape")


def _link_skill(root: Path) -> None:
    elsewhere = write_skill(root.parent.parent.parent / "elsewhere", "link-skill")
    os.symlink(elsewhere, root / "link-skill")


def _alias(root: Path) -> None:
    write_skill(root, "alias", frontmatter="name: alias\ndescription: &d hi\nsummary: *d\n")


def _impostor(root: Path) -> None:
    # Claims to be pm-user from another directory: refused, never a shadow.
    write_skill(root, "impostor", frontmatter="name: pm-user\ndescription: impostor\n")


def _oversized(root: Path) -> None:
    skill = write_skill(root, "oversized")
    sparse(skill / "references" / "huge.md", 16 * MIB + 1)


def _too_many_files(root: Path) -> None:
    write_skill(root, "too-many-files", files={f"r/{i:03d}.md": "x" for i in range(512)})


def _too_many_dirs(root: Path) -> None:
    skill = write_skill(root, "too-many-dirs")
    for i in range(513):
        (skill / f"d{i:03d}").mkdir()


def _over_the_origin_budget(root: Path) -> None:
    # 12 MiB each: the first two fit the origin's 32 MiB, the third does not.
    for name in ("budget-a", "budget-b", "budget-c"):
        sparse(write_skill(root, name) / "payload.bin", 12 * MIB)


#: case -> (builder, refused skill, words its logged reason must contain)
HOSTILE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "symlinked-file": (_link_file, "link-file", "is a symbolic link"),
    "symlinked-directory": (_link_dir, "link-dir", "is a symbolic link"),
    "symlinked-skill": (_link_skill, "link-skill", "the skill directory is a symbolic link"),
    "yaml-alias": (_alias, "alias", "YAML anchor"),
    "name-mismatch": (_impostor, "impostor", "does not match the directory name 'impostor'"),
    "oversized-file": (_oversized, "oversized", f"is {16 * MIB + 1} bytes, over the"),
    "too-many-files": (_too_many_files, "too-many-files", "more than 512 files"),
    "too-many-directories": (_too_many_dirs, "too-many-dirs", "more than 512 directories"),
    "origin-over-32-mib": (_over_the_origin_budget, "budget-c", "33554432-byte budget"),
}
SERVED_WORKSPACE = ("budget-a", "budget-b", "good-neighbour")


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpProcess]:
    """pm-mcp over a workspace holding every hostile case at once."""
    repo = init_repo(tmp_path_factory.mktemp("hostile") / "repo")
    (repo / "SECRET-OUTSIDE.md").write_text(MARKER)
    skills = repo / ".agents" / "skills"
    skills.mkdir()
    for builder, _name, _words in HOSTILE.values():
        builder(skills)
    write_skill(skills, "good-neighbour")
    # The rejection warnings are asserted, so no inherited level may hide them.
    with McpProcess(repo, env={"PM_LOG_LEVEL": "INFO"}) as server:
        yield server


def _names(server: McpProcess) -> list[str]:
    page = ok(server.modern("skills/list", {"limit": 100}, extensions=NEGOTIATED))
    assert "nextCursor" not in page
    return [s["frontmatter"]["name"] for s in page["skills"]]


def test_only_valid_skills_are_listed_beside_a_hostile_workspace(
    hostile_server: McpProcess,
) -> None:
    assert _names(hostile_server) == sorted([*PACKAGE, *SERVED_WORKSPACE])


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_skill_is_refused_on_every_method(hostile_server: McpProcess, case: str) -> None:
    _builder, name, _words = HOSTILE[case]
    assert name not in _names(hostile_server)
    requests: list[tuple[str, dict[str, Any]]] = [
        ("skills/get", {"uri": f"skill://{name}/SKILL.md"}),
        ("resources/read", {"uri": f"skill://{name}/SKILL.md"}),
        ("resources/directory/read", {"uri": f"skill://{name}"}),
    ]
    for method, params in requests:
        reply = hostile_server.modern(method, params, extensions=NEGOTIATED)
        failed(reply, -32602)
        assert MARKER not in json.dumps(reply)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_skill_is_logged_with_its_reason(hostile_server: McpProcess, case: str) -> None:
    _builder, name, words = HOSTILE[case]
    _names(hostile_server)  # the registry is loaded by the first skills request

    def rejection(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in events if e.get("event") == "skill_rejected" and e.get("skill") == name]

    found = rejection(wait_for_events(hostile_server, lambda events: bool(rejection(events))))
    assert len(found) == 1, found
    assert found[0]["origin"] == "workspace" and found[0]["level"] == "warning"
    assert words in found[0]["reason"]


def test_package_skills_keep_working_beside_a_hostile_workspace(
    hostile_server: McpProcess,
) -> None:
    for name in PACKAGE:
        entry = ok(
            hostile_server.modern(
                "skills/get", {"uri": f"skill://{name}/SKILL.md"}, extensions=NEGOTIATED
            )
        )["skill"]
        # The impostor named itself pm-user; the package skill is still the one served.
        assert entry["_meta"]["origin"] == "package"
        assert entry["frontmatter"]["name"] == name
        for resource in entry["resources"]:
            read = ok(
                hostile_server.modern(
                    "resources/read", {"uri": resource["uri"]}, extensions=NEGOTIATED
                )
            )
            data = content_bytes(read["contents"][0])
            assert (sha256(data), len(data)) == (resource["digest"], resource["size"])


def test_skills_root_that_is_a_symlink_is_refused_as_a_whole(repo: Path) -> None:
    real = repo.parent / "real-skills"
    write_skill(real, "fine")
    os.symlink(real, repo / ".agents" / "skills")
    with McpProcess(repo) as server:
        assert _names(server) == list(PACKAGE)
        failed(
            server.modern("skills/get", {"uri": "skill://fine/SKILL.md"}, extensions=NEGOTIATED),
            -32602,
        )


# --- path escapes -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def escape_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with marked files outside the registry, in and around the skills root."""
    repo = init_repo(tmp_path_factory.mktemp("escape") / "repo")
    skills = repo / ".agents" / "skills"
    (repo / "SECRET-OUTSIDE.md").write_text(MARKER)
    write_skill(skills, "notes", files={"references/a.md": "a\n"})
    (skills / "SECRET-IN-ROOT.md").write_text(MARKER)
    for housekeeping in (".hidden", "_drafts"):
        write_skill(skills, housekeeping.strip("._"), directory=housekeeping, body=MARKER)
    return repo


@pytest.fixture(scope="module")
def escape_server(escape_repo: Path) -> Iterator[McpProcess]:
    """pm-mcp over :func:`escape_repo`."""
    with McpProcess(escape_repo) as server:
        yield server


ESCAPING_READS = [
    "skill://pm-user/../../etc/passwd",
    "skill://pm-user/../../../../../../../../etc/passwd",
    "skill://pm-user/%2e%2e/%2e%2e/etc/passwd",
    "skill://pm-user/%2E%2E/%2E%2E/%2E%2E/SECRET-OUTSIDE.md",
    "skill://pm-user/..%2f..%2f..%2fetc%2fpasswd",
    "skill://pm-user/%2e%2e%2f%2e%2e%2fSECRET-IN-ROOT.md",
    "skill://pm-user/..;/..;/etc/passwd",
    "skill://notes/../SECRET-IN-ROOT.md",
    "skill://notes/../../../SECRET-OUTSIDE.md",
    "skill://notes/references/../../SECRET-IN-ROOT.md",
    "skill://notes/references/../SKILL.md",
    "skill://notes/./SKILL.md",
    "skill://../SECRET-OUTSIDE.md",
    "skill://..",
    "skill://.hidden/SKILL.md",
    "skill://_drafts/SKILL.md",
    "skill:///etc/passwd",
    "skill:////etc/passwd",
    "skill://%2Fetc%2Fpasswd",
    "skill://pm-user//etc/passwd",
    "skill://pm-user/~/.bashrc",
    "skill://pm-user/SKILL.md\x00",
    "skill://pm-user/SKILL.md\x00/../../../../etc/passwd",
    "skill://pm-user/%00",
    "skill://notes/references/a.md%00.png",
    "skill://pm-user\\..\\..\\etc\\passwd",
    "skill://notes\\..\\SECRET-IN-ROOT.md",
    "skill://notes/references\\..\\SKILL.md",
    "skill://C:\\Windows\\win.ini",
    "skill://C:/Windows/win.ini",
    "file:///etc/passwd",
    "/etc/passwd",
    "../../etc/passwd",
    "../SECRET-OUTSIDE.md",
]

ESCAPING_DIRECTORIES = [
    "skill://pm-user/..",
    "skill://pm-user/../..",
    "skill://notes/references/..",
    "skill://notes/%2e%2e",
    "skill://notes/.",
    "skill://..",
    "skill://.",
    "skill://",
    "skill:///",
    "skill:///etc",
    "skill://.hidden",
    "skill://notes\\..",
    "skill://notes/\x00",
    "skill://notes\x00/..",
    "file:///etc",
    "/etc",
    "/",
    ".",
    ".agents/skills",
]


def _assert_nothing_leaked(reply: dict[str, Any]) -> None:
    text = json.dumps(reply)
    assert MARKER not in text and PASSWD_LINE not in text, reply
    if "result" in reply:
        # An error may echo the requested URI; a result must not even name them.
        assert "SECRET-" not in text, reply


@pytest.mark.parametrize("uri", ESCAPING_READS, ids=repr)
def test_read_never_escapes_the_registry(escape_server: McpProcess, uri: str) -> None:
    reply = escape_server.modern("resources/read", {"uri": uri}, extensions=NEGOTIATED)
    failed(reply, -32602, -32002)
    _assert_nothing_leaked(reply)


def test_read_of_an_absolute_path_never_escapes_the_registry(
    escape_repo: Path, escape_server: McpProcess
) -> None:
    secret = escape_repo / "SECRET-OUTSIDE.md"
    for uri in (f"skill://{secret}", f"skill:/{secret}", str(secret), secret.as_uri()):
        reply = escape_server.modern("resources/read", {"uri": uri}, extensions=NEGOTIATED)
        failed(reply, -32602, -32002)
        _assert_nothing_leaked(reply)


@pytest.mark.parametrize("uri", ESCAPING_DIRECTORIES, ids=repr)
def test_directory_read_never_escapes_the_registry(escape_server: McpProcess, uri: str) -> None:
    reply = escape_server.modern("resources/directory/read", {"uri": uri}, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "uri"}
    _assert_nothing_leaked(reply)


def test_directory_read_of_an_absolute_path_never_escapes_the_registry(
    escape_repo: Path, escape_server: McpProcess
) -> None:
    skills = escape_repo / ".agents" / "skills"
    for uri in (f"skill://{skills}", str(skills), skills.as_uri(), f"skill://{escape_repo}"):
        reply = escape_server.modern(
            "resources/directory/read", {"uri": uri}, extensions=NEGOTIATED
        )
        failed(reply, -32602)
        _assert_nothing_leaked(reply)


def test_the_escape_workspace_serves_only_its_one_valid_skill(escape_server: McpProcess) -> None:
    # The marked files sit beside a real, served skill: the refusals above are
    # not an empty registry answering everything with -32602.
    assert _names(escape_server) == sorted([*PACKAGE, "notes"])
    read = ok(
        escape_server.modern(
            "resources/read", {"uri": "skill://notes/references/a.md"}, extensions=NEGOTIATED
        )
    )
    assert read["contents"][0]["text"] == "a\n"
    root = ok(
        escape_server.modern(
            "resources/directory/read", {"uri": "skill://notes"}, extensions=NEGOTIATED
        )
    )
    assert [c["name"] for c in root["resources"]] == ["SKILL.md", "references"]


def test_reads_come_from_memory_even_after_a_file_becomes_a_link_outside(repo: Path) -> None:
    (repo / "SECRET-OUTSIDE.md").write_text(MARKER)
    skill = write_skill(repo / ".agents" / "skills", "notes", files={"references/a.md": "a\n"})
    with McpProcess(repo) as server:
        entry = ok(
            server.modern("skills/get", {"uri": "skill://notes/SKILL.md"}, extensions=NEGOTIATED)
        )["skill"]
        (skill / "references" / "a.md").unlink()
        os.symlink(repo / "SECRET-OUTSIDE.md", skill / "references" / "a.md")
        reply = server.modern(
            "resources/read", {"uri": "skill://notes/references/a.md"}, extensions=NEGOTIATED
        )
        [content] = ok(reply)["contents"]
        [listed] = [r for r in entry["resources"] if r["uri"] == content["uri"]]
        assert content_bytes(content) == b"a\n"
        assert sha256(b"a\n") == listed["digest"]
        _assert_nothing_leaked(reply)

"""Skills over MCP (SEP-2640 draft a3e147c) against a real ``pm-mcp`` over stdio.

Every request is a raw JSON-RPC line: the 2026-07-28 era carries the
client's capabilities in each request's ``_meta``, the initialize era
declares them once at ``initialize``. Servers are shared per module where a
test only reads, so the suite spawns few processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import McpProcess
from tests.support.skills import write_skill
from tests.support.skills_wire import (
    ADVERTISED,
    NEGOTIATED,
    REQUIRED,
    SKILLS_EXTENSION_ID,
    content_bytes,
    declaration,
    failed,
    init_repo,
    ok,
    sha256,
    walk,
)

PACKAGE_URIS = [
    f"skill://{n}/SKILL.md" for n in ("pm-developer", "pm-extensions", "pm-sdk", "pm-user")
]
WORKSPACE_URIS = sorted([*PACKAGE_URIS, "skill://ws-kit/SKILL.md"])
OVERRIDE_DESCRIPTION = "This repository's own rules for using pm."
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
RAW = b"\xff\xfe\x00\x01not utf-8"
MANY = 55  # more than one directory page of 50

#: One request per skills method, each needing the extension to be negotiated.
SKILL_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "skills/list": ("skills/list", {}),
    "skills/get": ("skills/get", {"uri": "skill://pm-user/SKILL.md"}),
    "resources/read": ("resources/read", {"uri": "skill://pm-user/SKILL.md"}),
    "resources/directory/read": ("resources/directory/read", {"uri": "skill://pm-user"}),
}

#: Declarations that must be refused with -32021 on every skills method.
REFUSED: dict[str, dict[str, Any]] = {
    "nothing-declared": {},
    "wrong-revision": declaration(revision="SEP-2640@0000000000000000000000000000000000000000"),
    "abbreviated-revision": declaration(revision="SEP-2640@a3e147c"),
    "revision-not-a-string": declaration(revision=2640),
}


@pytest.fixture(scope="module")
def package_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpProcess]:
    """pm-mcp over a repository with no workspace skills."""
    repo = init_repo(tmp_path_factory.mktemp("package") / "repo")
    with McpProcess(repo) as server:
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose ``.agents/skills`` overrides pm-user and adds ws-kit."""
    repo = init_repo(tmp_path_factory.mktemp("workspace") / "repo")
    skills = repo / ".agents" / "skills"
    write_skill(skills, "pm-user", description=OVERRIDE_DESCRIPTION, body="Local rules.\n")
    files: dict[str, bytes | str] = {
        "references/guide.md": "# Guide\n\nSee ../SKILL.md.\n",
        "assets/logo.png": PNG,
        "data/raw.bin": RAW,
        "data/nested/deep.txt": "deep\n",
    }
    files.update({f"many/{i:02d}.txt": f"file {i}\n" for i in range(MANY)})
    write_skill(skills, "ws-kit", description="Workspace kit.", files=files)
    return repo


@pytest.fixture(scope="module")
def workspace_server(workspace: Path) -> Iterator[McpProcess]:
    """pm-mcp over :func:`workspace`."""
    with McpProcess(workspace) as server:
        yield server


def _listing(server: McpProcess) -> list[dict[str, Any]]:
    skills: list[dict[str, Any]] = ok(
        server.modern("skills/list", {"limit": 100}, extensions=NEGOTIATED)
    )["skills"]
    return skills


# --- advertisement -------------------------------------------------------------------


def test_initialize_advertises_the_pinned_draft_with_directory_read(repo: Path) -> None:
    with McpProcess(repo) as server:
        result = server.initialize(extensions=NEGOTIATED)
        assert result["capabilities"]["extensions"][SKILLS_EXTENSION_ID] == ADVERTISED


def test_server_discover_advertises_the_pinned_draft_with_directory_read(
    package_server: McpProcess,
) -> None:
    result = ok(package_server.modern("server/discover"))
    assert result["capabilities"]["extensions"][SKILLS_EXTENSION_ID] == ADVERTISED
    assert "resources" in result["capabilities"]


# --- negotiation, 2026-07-28 era: capabilities on every request --------------------------


@pytest.mark.parametrize("method", sorted(SKILL_METHODS))
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_modern_skills_request_without_the_pinned_revision_is_32021(
    package_server: McpProcess, case: str, method: str
) -> None:
    name, params = SKILL_METHODS[method]
    error = failed(package_server.modern(name, params, extensions=REFUSED[case]), -32021)
    assert error["data"] == REQUIRED


@pytest.mark.parametrize("method", sorted(SKILL_METHODS))
def test_malformed_skills_settings_are_refused_never_served(
    package_server: McpProcess, method: str
) -> None:
    # The SDK validates the capabilities of the methods it types (-32602);
    # the extension's own methods see no declaration at all (-32021).
    name, params = SKILL_METHODS[method]
    reply = package_server.modern(name, params, extensions={SKILLS_EXTENSION_ID: True})
    failed(reply, -32021, -32602)


@pytest.mark.parametrize("directory_read", [None, False, "true", 1])
def test_directory_read_needs_directory_read_true_and_nothing_else_does(
    package_server: McpProcess, directory_read: object
) -> None:
    declared = declaration(directory_read=directory_read)
    reply = package_server.modern(
        "resources/directory/read", {"uri": "skill://pm-user"}, extensions=declared
    )
    assert failed(reply, -32021)["data"] == REQUIRED
    for method in ("skills/list", "skills/get", "resources/read"):
        name, params = SKILL_METHODS[method]
        ok(package_server.modern(name, params, extensions=declared))


def test_capabilities_are_not_remembered_between_modern_requests(
    package_server: McpProcess,
) -> None:
    ok(package_server.modern("skills/list", extensions=NEGOTIATED))
    failed(package_server.modern("skills/list", extensions={}), -32021)
    ok(package_server.modern("skills/list", extensions=NEGOTIATED))


# --- negotiation, initialize era: capabilities declared once ------------------------------


@pytest.mark.parametrize("case", ["nothing-declared", "wrong-revision", "abbreviated-revision"])
def test_initialize_era_skills_requests_without_the_pinned_revision_are_32021(
    repo: Path, case: str
) -> None:
    with McpProcess(repo) as server:
        server.initialize(extensions=REFUSED[case] or None)
        for name, params in SKILL_METHODS.values():
            assert failed(server.request(name, params), -32021)["data"] == REQUIRED
        listed = ok(server.request("resources/list"))["resources"]
        assert not [r for r in listed if r["uri"].startswith("skill://")]


def test_initialize_era_directory_read_needs_directory_read_true(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.initialize(extensions=declaration(directory_read=False))
        ok(server.request("skills/list"))
        reply = server.request("resources/directory/read", {"uri": "skill://pm-user"})
        assert failed(reply, -32021)["data"] == REQUIRED


def test_initialize_era_serves_every_method_without_cache_hints(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.initialize(extensions=NEGOTIATED)
        listed = ok(server.request("skills/list", {"limit": 100}))
        assert [s["uri"] for s in listed["skills"]] == PACKAGE_URIS
        got = ok(server.request("skills/get", {"uri": "skill://pm-sdk/SKILL.md"}))
        read = ok(server.request("resources/read", {"uri": "skill://pm-sdk/SKILL.md"}))
        directory = ok(server.request("resources/directory/read", {"uri": "skill://pm-sdk"}))
        for result in (listed, got):
            assert "ttlMs" not in result and "cacheScope" not in result
        assert read["contents"][0]["text"].startswith("---\nname: pm-sdk\n")
        assert {c["name"] for c in directory["resources"]} == {"SKILL.md", "references"}


# --- skills/list ------------------------------------------------------------------------


def test_list_is_in_lexical_uri_order(workspace_server: McpProcess) -> None:
    uris = [s["uri"] for s in _listing(workspace_server)]
    assert uris == WORKSPACE_URIS


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_pagination_walk_visits_every_skill_once(workspace_server: McpProcess, limit: int) -> None:
    pages = walk(workspace_server, limit)
    assert all(1 <= len(page) <= limit for page in pages)
    assert len(pages) == -(-len(WORKSPACE_URIS) // limit)
    assert [s["uri"] for page in pages for s in page] == WORKSPACE_URIS


def test_an_entry_and_its_resources_never_span_pages(workspace_server: McpProcess) -> None:
    whole = {s["uri"]: s for s in _listing(workspace_server)}
    for page in walk(workspace_server, 2):
        for entry in page:
            assert entry == whole[entry["uri"]]


def test_limit_outside_1_to_100_is_32602(package_server: McpProcess) -> None:
    for limit in (0, 101, -1, "5", True, 2.5):
        reply = package_server.modern("skills/list", {"limit": limit}, extensions=NEGOTIATED)
        assert failed(reply, -32602)["data"] == {"field": "limit"}


def _first_cursor(server: McpProcess) -> str:
    page = ok(server.modern("skills/list", {"limit": 1}, extensions=NEGOTIATED))
    cursor: str = page["nextCursor"]
    return cursor


def _tampered(cursor: str) -> str:
    last = "A" if cursor[-1] != "A" else "B"
    return cursor[:-1] + last


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda c: "b3A6Mg", id="forged"),
        pytest.param(_tampered, id="tampered"),
        pytest.param(lambda c: c + "AA", id="extended"),
        pytest.param(lambda c: c + "=", id="padded"),
        pytest.param(lambda c: "", id="empty"),
        pytest.param(lambda c: "../../etc", id="not-base64url"),
        pytest.param(lambda c: 7, id="not-a-string"),
    ],
)
def test_forged_or_tampered_cursor_is_32602(package_server: McpProcess, make: Any) -> None:
    cursor = make(_first_cursor(package_server))
    reply = package_server.modern("skills/list", {"cursor": cursor}, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "cursor"}


def test_directory_cursor_is_refused_by_skills_list(workspace_server: McpProcess) -> None:
    page = ok(
        workspace_server.modern(
            "resources/directory/read", {"uri": "skill://ws-kit/many"}, extensions=NEGOTIATED
        )
    )
    reply = workspace_server.modern(
        "skills/list", {"cursor": page["nextCursor"]}, extensions=NEGOTIATED
    )
    failed(reply, -32602)


def test_cursor_is_stale_after_the_workspace_changes_and_the_server_restarts(
    repo: Path,
) -> None:
    with McpProcess(repo) as first:
        cursor = _first_cursor(first)
        ok(first.modern("skills/list", {"cursor": cursor}, extensions=NEGOTIATED))
    write_skill(repo / ".agents" / "skills", "added-later")
    with McpProcess(repo) as second:
        reply = second.modern("skills/list", {"cursor": cursor}, extensions=NEGOTIATED)
        assert failed(reply, -32602)["message"] == "Skill cursor is invalid or stale."
        uris = [s["uri"] for page in walk(second, 2) for s in page]
        assert uris == sorted([*PACKAGE_URIS, "skill://added-later/SKILL.md"])


# --- skills/get -------------------------------------------------------------------------


def test_get_returns_the_listed_entry_for_every_skill(workspace_server: McpProcess) -> None:
    for entry in _listing(workspace_server):
        got = ok(
            workspace_server.modern("skills/get", {"uri": entry["uri"]}, extensions=NEGOTIATED)
        )
        assert got["skill"] == entry
        assert got["resultType"] == "complete"


@pytest.mark.parametrize(
    "uri",
    [
        "skill://no-such-skill/SKILL.md",
        "skill://pm-user",
        "skill://pm-user/",
        "skill://pm-user/references/REPORTING.md",
        "skill://PM-USER/SKILL.md",
        "pm-user",
        "ui://pm/plan.html",
    ],
)
def test_get_of_anything_but_a_served_skill_is_32602(package_server: McpProcess, uri: str) -> None:
    reply = package_server.modern("skills/get", {"uri": uri}, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "uri"}


@pytest.mark.parametrize("params", [{}, {"uri": ""}, {"uri": 42}, {"uri": None}])
def test_get_without_a_uri_string_is_32602(
    package_server: McpProcess, params: dict[str, Any]
) -> None:
    reply = package_server.modern("skills/get", params, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "uri"}


# --- resources/read and digests ---------------------------------------------------------


def test_every_listed_digest_and_size_match_the_bytes_read(workspace_server: McpProcess) -> None:
    checked = 0
    for entry in _listing(workspace_server):
        assert isinstance(entry["resources"], list)
        assert entry["uri"] in [r["uri"] for r in entry["resources"]]
        for resource in entry["resources"]:
            read = ok(
                workspace_server.modern(
                    "resources/read", {"uri": resource["uri"]}, extensions=NEGOTIATED
                )
            )
            [content] = read["contents"]
            data = content_bytes(content)
            assert (sha256(data), len(data)) == (resource["digest"], resource["size"])
            assert content["_meta"]["digest"] == resource["digest"]
            checked += 1
    assert checked >= 16 + MANY


def test_binary_files_are_blobs_and_markdown_is_text(workspace_server: McpProcess) -> None:
    def read(uri: str) -> dict[str, Any]:
        result = ok(workspace_server.modern("resources/read", {"uri": uri}, extensions=NEGOTIATED))
        content: dict[str, Any] = result["contents"][0]
        return content

    logo = read("skill://ws-kit/assets/logo.png")
    raw = read("skill://ws-kit/data/raw.bin")
    guide = read("skill://ws-kit/references/guide.md")
    assert (logo["mimeType"], content_bytes(logo)) == ("image/png", PNG)
    assert (raw["mimeType"], content_bytes(raw)) == ("application/octet-stream", RAW)
    assert "text" not in logo and "text" not in raw
    assert guide["mimeType"] == "text/markdown" and guide["text"].startswith("# Guide")


@pytest.mark.parametrize(
    "uri",
    [
        "skill://no-such-skill/SKILL.md",
        "skill://pm-user/NOPE.md",
        "skill://pm-user/references",
        "skill://pm-user",
        "skill://pm-user/skill.md",
    ],
)
def test_read_of_an_unknown_skill_uri_is_32602(package_server: McpProcess, uri: str) -> None:
    reply = package_server.modern("resources/read", {"uri": uri}, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "uri"}


# --- resources/directory/read -----------------------------------------------------------


def _directory(server: McpProcess, uri: str, cursor: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"uri": uri}
    if cursor is not None:
        params["cursor"] = cursor
    return ok(server.modern("resources/directory/read", params, extensions=NEGOTIATED))


def test_directory_read_lists_direct_children_with_listed_sizes(
    package_server: McpProcess,
) -> None:
    [entry] = [s for s in _listing(package_server) if s["uri"] == "skill://pm-developer/SKILL.md"]
    sizes = {r["uri"]: r["size"] for r in entry["resources"]}
    digests = {r["uri"]: r["digest"] for r in entry["resources"]}
    root = _directory(package_server, "skill://pm-developer")
    assert root["resultType"] == "complete"
    assert [(c["name"], c["mimeType"]) for c in root["resources"]] == [
        ("SKILL.md", "text/markdown"),
        ("references", "inode/directory"),
    ]
    references = _directory(package_server, "skill://pm-developer/references")["resources"]
    assert [c["name"] for c in references] == [
        "MULTI_AGENT.md",
        "TOKEN_DISCIPLINE.md",
        "WORK_LOOP.md",
    ]
    for child in references:
        assert child["uri"] == f"skill://pm-developer/references/{child['name']}"
        assert child["size"] == sizes[child["uri"]]
        assert child["_meta"]["digest"] == digests[child["uri"]]
        assert child["_meta"]["trust"] == "untrusted"


def test_directory_read_pages_a_large_directory_once_each(workspace_server: McpProcess) -> None:
    first = _directory(workspace_server, "skill://ws-kit/many")
    second = _directory(workspace_server, "skill://ws-kit/many", first["nextCursor"])
    assert "nextCursor" not in second
    names = [c["name"] for c in first["resources"] + second["resources"]]
    assert names == [f"{i:02d}.txt" for i in range(MANY)]


def test_nested_directories_are_listed_as_directories(workspace_server: McpProcess) -> None:
    data = _directory(workspace_server, "skill://ws-kit/data")["resources"]
    assert [(c["name"], c["mimeType"]) for c in data] == [
        ("nested", "inode/directory"),
        ("raw.bin", "application/octet-stream"),
    ]
    nested = _directory(workspace_server, "skill://ws-kit/data/nested")["resources"]
    assert [c["uri"] for c in nested] == ["skill://ws-kit/data/nested/deep.txt"]


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pm-developer/references/",
        "skill://pm-developer/",
        "skill://pm-developer/SKILL.md",
        "skill://pm-developer/nope",
        "skill://nope",
    ],
)
def test_directory_read_of_a_file_missing_or_slashed_uri_is_32602(
    package_server: McpProcess, uri: str
) -> None:
    reply = package_server.modern("resources/directory/read", {"uri": uri}, extensions=NEGOTIATED)
    assert failed(reply, -32602)["data"] == {"field": "uri"}


# --- workspace override -----------------------------------------------------------------


def test_workspace_skill_overrides_the_package_skill_and_is_untrusted(
    workspace: Path, workspace_server: McpProcess
) -> None:
    origins = {s["uri"]: s["_meta"]["origin"] for s in _listing(workspace_server)}
    assert origins == {
        **{uri: "package" for uri in PACKAGE_URIS},
        "skill://pm-user/SKILL.md": "workspace",
        "skill://ws-kit/SKILL.md": "workspace",
    }
    got = ok(
        workspace_server.modern(
            "skills/get", {"uri": "skill://pm-user/SKILL.md"}, extensions=NEGOTIATED
        )
    )["skill"]
    assert got["frontmatter"] == {"name": "pm-user", "description": OVERRIDE_DESCRIPTION}
    assert got["_meta"]["trust"] == "untrusted"
    assert [r["uri"] for r in got["resources"]] == ["skill://pm-user/SKILL.md"]
    read = ok(
        workspace_server.modern(
            "resources/read", {"uri": "skill://pm-user/SKILL.md"}, extensions=NEGOTIATED
        )
    )["contents"][0]
    on_disk = (workspace / ".agents" / "skills" / "pm-user" / "SKILL.md").read_bytes()
    assert content_bytes(read) == on_disk
    assert read["_meta"]["origin"] == "workspace" and read["_meta"]["trust"] == "untrusted"
    # The package's references are not served under the workspace skill's name.
    reply = workspace_server.modern(
        "resources/read", {"uri": "skill://pm-user/references/REPORTING.md"}, extensions=NEGOTIATED
    )
    failed(reply, -32602)


# --- clients that do not negotiate ------------------------------------------------------


def _surface(server: McpProcess, extensions: dict[str, Any]) -> dict[str, list[Any]]:
    tools = ok(server.modern("tools/list", extensions=extensions))["tools"]
    prompts = ok(server.modern("prompts/list", extensions=extensions))["prompts"]
    resources = ok(server.modern("resources/list", extensions=extensions))["resources"]
    return {"tools": tools, "prompts": prompts, "resources": resources}


def test_clients_that_do_not_negotiate_keep_everything_but_skill_resources(
    workspace_server: McpProcess,
) -> None:
    plain = _surface(workspace_server, {})
    negotiated = _surface(workspace_server, NEGOTIATED)
    assert plain["tools"] == negotiated["tools"] and plain["tools"]
    assert plain["prompts"] == negotiated["prompts"] and plain["prompts"]
    assert not [r for r in plain["resources"] if r["uri"].startswith("skill://")]
    others = [r for r in negotiated["resources"] if not r["uri"].startswith("skill://")]
    assert plain["resources"] == others and others
    skill_uris = {r["uri"] for r in negotiated["resources"] if r["uri"].startswith("skill://")}
    listed = {r["uri"] for s in _listing(workspace_server) for r in s["resources"]}
    assert skill_uris == listed


def test_initialize_era_client_without_the_extension_keeps_tools_and_prompts(
    workspace: Path, workspace_server: McpProcess
) -> None:
    with McpProcess(workspace) as server:
        server.initialize()
        tools = ok(server.request("tools/list"))["tools"]
        prompts = ok(server.request("prompts/list"))["prompts"]
        resources = ok(server.request("resources/list"))["resources"]
    assert [t["name"] for t in tools] == [
        t["name"] for t in ok(workspace_server.modern("tools/list", extensions={}))["tools"]
    ]
    assert prompts and resources
    assert not [r for r in resources if r["uri"].startswith("skill://")]


# --- cache hints ------------------------------------------------------------------------


def test_modern_list_and_get_carry_ttl_and_cache_scope(package_server: McpProcess) -> None:
    listed = ok(package_server.modern("skills/list", extensions=NEGOTIATED))
    got = ok(
        package_server.modern(
            "skills/get", {"uri": "skill://pm-user/SKILL.md"}, extensions=NEGOTIATED
        )
    )
    for result in (listed, got):
        assert result["resultType"] == "complete"
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] > 0
        assert result["cacheScope"] == "private"

"""skills/list, skills/get, skill:// reads and directory reads, in process."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pm_plugins.skills_sep2640 import pm_skill_origins
from pm_plugins.skills_sep2640.registry import DIRECTORY_PAGE_SIZE, SkillRegistry
from pm_plugins.skills_sep2640.service import RegistryCache, SkillsService

from pm_core import __version__
from pm_core.contracts import ProtocolError, ServeContext
from tests.support.skills import (
    PACKAGE_SKILLS,
    content_bytes,
    package_origins,
    request,
    serve,
    sha256,
    workspace_origin,
    write_skill,
)

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@pytest.fixture
def service() -> SkillsService:
    return SkillsService(RegistryCache())


@pytest.fixture
def ctx(tmp_path: Path) -> ServeContext:
    return serve(request(), package_origins(), tmp_path)


def _walk(service: SkillsService, ctx: ServeContext, limit: int) -> list[dict[str, Any]]:
    skills: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": limit}
    for _ in range(1000):
        page = service.skills_list(ctx, params)
        assert len(page["skills"]) <= limit
        skills.extend(page["skills"])
        if "nextCursor" not in page:
            return skills
        params = {"limit": limit, "cursor": page["nextCursor"]}
    raise AssertionError("pagination never ended")


def _invalid(excinfo: pytest.ExceptionInfo[ProtocolError], field: str) -> None:
    assert excinfo.value.code == -32602
    assert excinfo.value.data == {"field": field}


# --- skills/list --------------------------------------------------------------


def test_list_serves_the_four_package_skills_in_uri_order(
    service: SkillsService, ctx: ServeContext
) -> None:
    result = service.skills_list(ctx, {})
    assert [s["uri"] for s in result["skills"]] == [f"skill://{n}/SKILL.md" for n in PACKAGE_SKILLS]
    assert "nextCursor" not in result


def test_list_descriptor_carries_frontmatter_resources_and_meta(
    service: SkillsService, ctx: ServeContext
) -> None:
    entry = service.skills_list(ctx, {})["skills"][0]
    assert set(entry) == {"uri", "frontmatter", "resources", "_meta"}
    assert entry["frontmatter"]["name"] == "pm-developer"
    uris = [r["uri"] for r in entry["resources"]]
    assert entry["uri"] in uris
    assert all(u.startswith("skill://pm-developer/") for u in uris)
    for resource in entry["resources"]:
        assert set(resource) == {"uri", "digest", "size"}
        assert DIGEST.fullmatch(resource["digest"])
    meta = entry["_meta"]
    assert meta["origin"] == "package"
    assert meta["trust"] == "untrusted"
    assert meta["packageVersion"] == __version__
    assert meta["compatibility"]["revision"] == "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03"
    assert "2026-07-28" in meta["compatibility"]["mcpProtocolVersions"]
    total = sum(r["size"] for r in entry["resources"])
    assert meta["tokenEstimate"]["total"] == -(-total // 4)


def test_modern_results_carry_cache_hints_and_initialize_results_do_not(
    service: SkillsService, tmp_path: Path
) -> None:
    modern = serve(request("modern"), package_origins(), tmp_path)
    legacy = serve(request("initialize"), package_origins(), tmp_path)
    for result in (
        service.skills_list(modern, {}),
        service.skills_get(modern, {"uri": "skill://pm-sdk/SKILL.md"}),
    ):
        assert result["ttlMs"] > 0
        assert result["cacheScope"] == "private"
        assert result["resultType"] == "complete"
    for result in (
        service.skills_list(legacy, {}),
        service.skills_get(legacy, {"uri": "skill://pm-sdk/SKILL.md"}),
    ):
        assert "ttlMs" not in result and "cacheScope" not in result


def test_pagination_walk_returns_every_skill_once_in_order(
    service: SkillsService, tmp_path: Path
) -> None:
    root = tmp_path / "skills"
    names = [f"skill-{i:02d}" for i in range(45)]
    for name in names:
        write_skill(root, name)
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    walked = _walk(service, ctx, limit=20)
    assert [s["frontmatter"]["name"] for s in walked] == names
    assert _walk(service, ctx, limit=100) == walked
    assert len(service.skills_list(ctx, {})["skills"]) == 20  # default limit


def test_last_page_has_no_next_cursor(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for i in range(4):
        write_skill(root, f"s{i}")
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    first = service.skills_list(ctx, {"limit": 2})
    second = service.skills_list(ctx, {"limit": 2, "cursor": first["nextCursor"]})
    assert [s["frontmatter"]["name"] for s in second["skills"]] == ["s2", "s3"]
    assert "nextCursor" not in second


@pytest.mark.parametrize("limit", [0, 101, -1, "5", 2.5, True])
def test_limit_outside_1_to_100_is_invalid_params(
    service: SkillsService, ctx: ServeContext, limit: object
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.skills_list(ctx, {"limit": limit})
    _invalid(caught, "limit")


def test_cursor_from_another_registry_is_stale(service: SkillsService, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for i in range(3):
        write_skill(one, f"s{i}")
        write_skill(two, f"s{i}")
    ctx_one = serve(request(), [workspace_origin(one)], tmp_path)
    ctx_two = serve(request(), [workspace_origin(two)], tmp_path)
    cursor = service.skills_list(ctx_one, {"limit": 1})["nextCursor"]
    assert service.skills_list(ctx_one, {"limit": 1, "cursor": cursor})["skills"]
    with pytest.raises(ProtocolError) as caught:
        service.skills_list(ctx_two, {"limit": 1, "cursor": cursor})
    _invalid(caught, "cursor")


@pytest.mark.parametrize("forge", ["", "AAAA", "not a cursor!", "A" * 500, 7, ["x"]])
def test_forged_cursor_is_invalid_params(
    service: SkillsService, ctx: ServeContext, forge: object
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.skills_list(ctx, {"limit": 1, "cursor": forge})
    _invalid(caught, "cursor")


def test_tampered_cursor_is_invalid_params(service: SkillsService, ctx: ServeContext) -> None:
    cursor = service.skills_list(ctx, {"limit": 1})["nextCursor"]
    flipped = ("B" if cursor[0] != "B" else "C") + cursor[1:]
    with pytest.raises(ProtocolError) as caught:
        service.skills_list(ctx, {"limit": 1, "cursor": flipped})
    _invalid(caught, "cursor")


def test_directory_cursor_is_refused_by_list(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    files = {f"many/f{i:03d}.md": "x" for i in range(DIRECTORY_PAGE_SIZE + 1)}
    for i in range(3):
        write_skill(root, f"s{i}", files=files)
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    dir_cursor = service.directory_read(ctx, {"uri": "skill://s0/many"})["nextCursor"]
    with pytest.raises(ProtocolError):
        service.skills_list(ctx, {"limit": 1, "cursor": dir_cursor})
    with pytest.raises(ProtocolError):  # nor by a different directory
        service.directory_read(ctx, {"uri": "skill://s1/many", "cursor": dir_cursor})


# --- skills/get ---------------------------------------------------------------


def test_get_returns_the_list_descriptor_without_bodies(
    service: SkillsService, ctx: ServeContext
) -> None:
    listed = {s["uri"]: s for s in service.skills_list(ctx, {})["skills"]}
    got = service.skills_get(ctx, {"uri": "skill://pm-extensions/SKILL.md"})
    assert got["skill"] == listed["skill://pm-extensions/SKILL.md"]
    assert "text" not in repr(got["skill"]["resources"]) and "blob" not in repr(got)


@pytest.mark.parametrize(
    "uri",
    [
        "skill://nope/SKILL.md",
        "skill://pm-user/references/REPORTING.md",
        "skill://pm-user",
        "skill://pm-user/SKILL.md/",
        "file:///etc/passwd",
    ],
)
def test_get_of_anything_but_a_served_skill_is_invalid_params(
    service: SkillsService, ctx: ServeContext, uri: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.skills_get(ctx, {"uri": uri})
    _invalid(caught, "uri")
    assert uri in caught.value.message


@pytest.mark.parametrize("params", [{}, {"uri": 3}, {"uri": ""}, {"uri": None}])
def test_get_without_a_string_uri_is_invalid_params(
    service: SkillsService, ctx: ServeContext, params: dict[str, Any]
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.skills_get(ctx, params)
    _invalid(caught, "uri")


# --- resources/read -----------------------------------------------------------


def test_every_digest_matches_the_bytes_read(service: SkillsService, ctx: ServeContext) -> None:
    provider = service.resource_provider()
    count = 0
    for skill in service.skills_list(ctx, {"limit": 100})["skills"]:
        for resource in skill["resources"]:
            content = provider.read(ctx, resource["uri"])
            data = content_bytes(content)
            assert len(data) == resource["size"]
            assert sha256(data) == resource["digest"]
            assert content.meta is not None and content.meta["digest"] == resource["digest"]
            assert content.meta["trust"] == "untrusted" and content.meta["origin"] == "package"
            count += 1
    assert count >= 16


def test_markdown_is_text_and_binary_is_blob(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    binary = bytes(range(256))
    write_skill(
        root,
        "mixed",
        files={"assets/logo.png": binary, "data/raw.bin": b"\xff\xfe\x00", "notes.txt": "ok"},
    )
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    read = service.resource_provider().read
    skill_md = read(ctx, "skill://mixed/SKILL.md")
    assert (
        skill_md.mime_type == "text/markdown"
        and skill_md.text is not None
        and skill_md.blob is None
    )
    logo = read(ctx, "skill://mixed/assets/logo.png")
    assert logo.mime_type == "image/png" and logo.text is None and content_bytes(logo) == binary
    raw = read(ctx, "skill://mixed/data/raw.bin")
    assert raw.mime_type == "application/octet-stream" and content_bytes(raw) == b"\xff\xfe\x00"
    assert read(ctx, "skill://mixed/notes.txt").text == "ok"


def test_unknown_skill_resource_is_invalid_params(
    service: SkillsService, ctx: ServeContext
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.resource_provider().read(ctx, "skill://pm-user/references/NOPE.md")
    _invalid(caught, "uri")


def test_reads_are_served_from_memory_not_disk(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill = write_skill(root, "frozen", body="original body\n")
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    listed = service.skills_get(ctx, {"uri": "skill://frozen/SKILL.md"})["skill"]["resources"][0]
    (skill / "SKILL.md").write_text("---\nname: frozen\ndescription: changed\n---\nnew\n")
    (skill / "SKILL.md").unlink()
    content = service.resource_provider().read(ctx, "skill://frozen/SKILL.md")
    assert "original body" in (content.text or "")
    assert sha256(content_bytes(content)) == listed["digest"]


def test_registry_loads_once_per_set_of_origins(tmp_path: Path) -> None:
    cache = RegistryCache()
    service = SkillsService(cache)
    ctx = serve(request(), package_origins(), tmp_path)
    service.skills_list(ctx, {})
    service.skills_get(ctx, {"uri": "skill://pm-user/SKILL.md"})
    service.resource_provider().read(ctx, "skill://pm-user/SKILL.md")
    service.directory_read(ctx, {"uri": "skill://pm-user"})
    assert cache.loads == 1
    assert cache.get(package_origins()) is cache.get(package_origins())
    other = serve(request(), [*package_origins(), workspace_origin(tmp_path / "none")], tmp_path)
    service.skills_list(other, {})
    assert cache.loads == 2


def test_frontmatter_is_served_verbatim(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    header = (
        "name: verbatim\n"
        "description: Keeps every field.\n"
        "license: Apache-2.0\n"
        "metadata:\n  owner: team-a\n  version: '2.1'\n"
        "released: 2026-01-02\n"
        "allowed-tools: [pm_get, pm_search]\n"
        "zeta: null\n"
        "alpha: 3\n"
    )
    write_skill(root, "verbatim", frontmatter=header)
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    frontmatter = service.skills_get(ctx, {"uri": "skill://verbatim/SKILL.md"})["skill"][
        "frontmatter"
    ]
    assert list(frontmatter) == [
        "name",
        "description",
        "license",
        "metadata",
        "released",
        "allowed-tools",
        "zeta",
        "alpha",
    ]
    assert frontmatter["metadata"] == {"owner": "team-a", "version": "2.1"}
    assert frontmatter["released"] == "2026-01-02"
    assert frontmatter["zeta"] is None and frontmatter["alpha"] == 3
    frontmatter["name"] = "mutated"  # a caller's copy: the registry keeps its own
    again = service.skills_get(ctx, {"uri": "skill://verbatim/SKILL.md"})["skill"]["frontmatter"]
    assert again["name"] == "verbatim"


# --- resources/directory/read ---------------------------------------------------


def test_directory_read_lists_direct_children(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root, "tree", files={"references/A.md": "a", "references/deep/B.md": "b", "top.txt": "t"}
    )
    (root / "tree" / "empty").mkdir()
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    top = service.directory_read(ctx, {"uri": "skill://tree"})
    assert [(r["name"], r["mimeType"]) for r in top["resources"]] == [
        ("SKILL.md", "text/markdown"),
        ("empty", "inode/directory"),
        ("references", "inode/directory"),
        ("top.txt", "text/plain"),
    ]
    refs = service.directory_read(ctx, {"uri": "skill://tree/references"})["resources"]
    assert [r["uri"] for r in refs] == [
        "skill://tree/references/A.md",
        "skill://tree/references/deep",
    ]
    file_entry = refs[0]
    assert file_entry["size"] == 1 and file_entry["_meta"]["digest"] == sha256(b"a")
    assert service.directory_read(ctx, {"uri": "skill://tree/empty"})["resources"] == []
    assert "nextCursor" not in top


def test_directory_read_paginates(service: SkillsService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    count = DIRECTORY_PAGE_SIZE * 2 + 5
    write_skill(root, "wide", files={f"many/f{i:03d}.md": "x" for i in range(count)})
    ctx = serve(request(), [workspace_origin(root)], tmp_path)
    seen: list[str] = []
    params: dict[str, Any] = {"uri": "skill://wide/many"}
    while True:
        page = service.directory_read(ctx, params)
        seen.extend(r["name"] for r in page["resources"])
        if "nextCursor" not in page:
            break
        params = {"uri": "skill://wide/many", "cursor": page["nextCursor"]}
    assert seen == [f"f{i:03d}.md" for i in range(count)]


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("skill://pm-user/SKILL.md", "Not a pm MCP skill directory"),
        ("skill://pm-user/missing", "Unknown pm MCP skill directory"),
        ("skill://nobody", "Unknown pm MCP skill directory"),
        ("skill://pm-user/", "Unknown pm MCP skill directory"),
    ],
)
def test_directory_read_of_a_file_or_missing_path_is_invalid_params(
    service: SkillsService, ctx: ServeContext, uri: str, why: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        service.directory_read(ctx, {"uri": uri})
    _invalid(caught, "uri")
    assert caught.value.message.startswith(why)


# --- origins and overrides --------------------------------------------------------


def test_workspace_origin_comes_from_agents_skills(tmp_path: Path) -> None:
    assert [o.kind for o in pm_skill_origins(tmp_path)] == ["package"]
    (tmp_path / ".agents" / "skills").mkdir(parents=True)
    origins = list(pm_skill_origins(tmp_path))
    assert [(o.kind, o.precedence) for o in origins] == [("package", 0), ("workspace", 100)]
    assert origins[1].root == tmp_path / ".agents" / "skills"
    assert origins[0].version == __version__


def test_workspace_skill_overrides_the_package_skill(
    service: SkillsService, tmp_path: Path
) -> None:
    local = tmp_path / ".agents" / "skills"
    write_skill(local, "pm-user", description="Our team's intake rules.", body="Local rules.\n")
    ctx = serve(request(), pm_skill_origins(tmp_path), tmp_path)
    skills = service.skills_list(ctx, {})["skills"]
    assert [s["frontmatter"]["name"] for s in skills] == list(PACKAGE_SKILLS)
    user = next(s for s in skills if s["frontmatter"]["name"] == "pm-user")
    assert user["frontmatter"]["description"] == "Our team's intake rules."
    assert user["_meta"]["origin"] == "workspace"
    assert user["_meta"]["trust"] == "untrusted"
    assert [r["uri"] for r in user["resources"]] == ["skill://pm-user/SKILL.md"]
    content = service.resource_provider().read(ctx, "skill://pm-user/SKILL.md")
    assert content.meta is not None and content.meta["origin"] == "workspace"
    registry = service.registry(ctx)
    assert [(o.name, o.origin, o.by_origin) for o in registry.overridden] == [
        ("pm-user", "pm-tracker", "workspace")
    ]


def test_equal_precedence_keeps_the_first_origin(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    write_skill(first, "same", description="first")
    write_skill(second, "same", description="second")
    registry = SkillRegistry.load(
        [workspace_origin(first, "a", 5), workspace_origin(second, "b", 5)]
    )
    assert registry.skills[0].frontmatter["description"] == "first"
    assert registry.overridden[0].origin == "b"

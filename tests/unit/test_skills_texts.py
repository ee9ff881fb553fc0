"""Each skills request is served under the text it negotiated: draft, Final or neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pm_plugins.skills_sep2640.capability import (
    FINAL_META_PREFIX,
    SKILLS_EXTENSION_ID,
    skills_text,
)
from pm_plugins.skills_sep2640.service import SkillsService

from pm_core.contracts import ProtocolError, RequestContext
from tests.support.skills import package_origins, request, serve

OPEN = {"skills": "open"}
SKILL = "skill://pm-user/SKILL.md"


@pytest.mark.parametrize(
    ("ctx", "text"),
    [
        (request(), "draft"),
        (request(era="initialize"), "draft"),
        (request(revision=None, directory_read=None), "final"),
        (request(revision=None), "final"),
        (request(revision=None, era="initialize"), "final"),
        (request(declare=False), None),
        (request(declare=False, options=OPEN), "final"),
        (request(declare=False, era="initialize", options=OPEN), "final"),
        (request(revision="SEP-2640@a3e147c"), None),
        (request(revision="SEP-2640@a3e147c", options=OPEN), None),
        (request(settings="yes", options=OPEN), None),
        (request(settings=None, options=OPEN), None),
    ],
    ids=[
        "draft",
        "draft-init",
        "final-empty",
        "final-directory-read",
        "final-init",
        "undeclared",
        "undeclared-open",
        "undeclared-open-init",
        "other-revision",
        "other-revision-open",
        "not-a-map-open",
        "null-open",
    ],
)
def test_the_text_follows_the_declaration(ctx: RequestContext, text: str | None) -> None:
    assert skills_text(ctx) == text


def test_final_directory_read_needs_no_client_setting() -> None:
    assert skills_text(request(revision=None, directory_read=None), directory_read=True) == "final"
    assert skills_text(request(directory_read=None), directory_read=True) is None  # draft rule


def _methods() -> dict[str, Any]:
    extension = SkillsService().protocol_extension()
    return {m.method: m.handler for m in extension.methods}


def _all_meta_keys(value: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "_meta" and isinstance(inner, dict):
                keys.extend(inner)
            keys.extend(_all_meta_keys(inner))
    elif isinstance(value, list):
        for inner in value:
            keys.extend(_all_meta_keys(inner))
    return keys


@pytest.mark.parametrize("era", ["modern", "initialize"])
def test_final_results_prefix_every_meta_key(era: str, tmp_path: Path) -> None:
    methods = _methods()
    ctx = serve(request(era, revision=None, directory_read=None), package_origins(), tmp_path)
    listed = methods["skills/list"](ctx, {})
    got = methods["skills/get"](ctx, {"uri": SKILL})
    directory = methods["resources/directory/read"](ctx, {"uri": "skill://pm-user"})
    keys = _all_meta_keys([listed, got, directory])
    assert keys, "the Final results carry _meta"
    assert all(k.startswith(FINAL_META_PREFIX) for k in keys), keys
    compat = got["skill"]["_meta"][FINAL_META_PREFIX + "compatibility"]
    assert compat["status"] == "final" and "revision" not in compat
    provider = SkillsService().resource_provider()
    entries = provider.list(ctx)
    assert entries and all(k.startswith(FINAL_META_PREFIX) for e in entries for k in (e.meta or {}))
    content = provider.read(ctx, SKILL)
    assert content.meta is not None
    assert content.meta[FINAL_META_PREFIX + "digest"].startswith("sha256:")


def test_draft_results_keep_the_unprefixed_keys(tmp_path: Path) -> None:
    got = _methods()["skills/get"](serve(request(), package_origins(), tmp_path), {"uri": SKILL})
    meta = got["skill"]["_meta"]
    assert meta["trust"] == "untrusted"
    assert meta["compatibility"]["status"] == "draft"
    assert not any(k.startswith(FINAL_META_PREFIX) for k in meta)


@pytest.mark.parametrize("ctx", [request(revision=None), request(declare=False, options=OPEN)])
def test_final_cache_hints_on_list_and_get_in_2026(ctx: RequestContext, tmp_path: Path) -> None:
    methods = _methods()
    serve_ctx = serve(ctx, package_origins(), tmp_path)
    for result in (
        methods["skills/list"](serve_ctx, {}),
        methods["skills/get"](serve_ctx, {"uri": SKILL}),
    ):
        assert result["resultType"] == "complete"
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] > 0
        assert result["cacheScope"] == "private"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("skills/get", {"uri": "skill://no-such-skill/SKILL.md"}),
        ("skills/get", {"uri": "skill://pm-user/references/none.md"}),
        ("resources/directory/read", {"uri": "skill://pm-user/SKILL.md"}),
        ("resources/directory/read", {"uri": "skill://nowhere"}),
    ],
)
def test_final_unknown_skill_or_file_is_32602(
    method: str, params: dict[str, str], tmp_path: Path
) -> None:
    ctx = serve(request(revision=None), package_origins(), tmp_path)
    with pytest.raises(ProtocolError) as caught:
        _methods()[method](ctx, params)
    assert caught.value.code == -32602
    assert caught.value.data == {"field": "uri"}


def test_final_read_of_an_unserved_file_is_32602(tmp_path: Path) -> None:
    ctx = serve(request(revision=None), package_origins(), tmp_path)
    with pytest.raises(ProtocolError) as caught:
        SkillsService().resource_provider().read(ctx, "skill://pm-user/nothing-here.md")
    assert caught.value.code == -32602


def test_undeclared_without_opt_in_stays_refused(tmp_path: Path) -> None:
    ctx = serve(request(declare=False), package_origins(), tmp_path)
    with pytest.raises(ProtocolError) as caught:
        _methods()["skills/list"](ctx, {})
    assert caught.value.code == -32021
    assert SKILLS_EXTENSION_ID in caught.value.data["requiredCapabilities"]["extensions"]

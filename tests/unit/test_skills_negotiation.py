"""Skills over MCP is refused to requests that negotiated neither text.

The Final-text cases (no ``revision``, the ``open`` opt-in) are in
``test_skills_texts.py``.
"""

from __future__ import annotations

from pathlib import Path

import pm_plugins.skills_sep2640 as skills_plugin
import pytest
from pm_plugins.skills_sep2640.capability import (
    SKILLS_EXTENSION_ID,
    SKILLS_REVISION,
    SKILLS_SERVER_CAPABILITY,
    assert_skills_capability,
)
from pm_plugins.skills_sep2640.service import SkillsService

from pm_core.contracts import ProtocolError, RequestContext
from pm_core.host import build_host
from tests.support.skills import package_origins, request, serve

EXPECTED_SETTINGS = {
    "revision": "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03",
    "status": "draft",
    "directoryRead": True,
}


def _required(error: ProtocolError) -> object:
    assert error.code == -32021
    assert error.message == "missing required client capability"
    return error.data["requiredCapabilities"]


def test_server_capability_is_the_pinned_draft_with_directory_read() -> None:
    assert SKILLS_SERVER_CAPABILITY == EXPECTED_SETTINGS
    assert EXPECTED_SETTINGS["revision"] == SKILLS_REVISION


def test_host_advertises_the_extension_with_its_three_methods() -> None:
    host = build_host(env={}, plugins=[("skills_sep2640", skills_plugin)], entry_points=False)
    (extension,) = host.protocol_extensions()
    assert extension.identifier == "io.modelcontextprotocol/skills"
    assert dict(extension.settings) == EXPECTED_SETTINGS
    assert [m.method for m in extension.methods] == [
        "skills/list",
        "skills/get",
        "resources/directory/read",
    ]
    (provider,) = host.resource_providers()
    assert provider.prefix == "skill://"
    assert host.records["skills_sep2640"].status == "ok"


def test_advertised_settings_are_a_copy_callers_cannot_corrupt() -> None:
    extension = SkillsService().protocol_extension()
    assert isinstance(extension.settings, dict)
    extension.settings["directoryRead"] = False
    assert SKILLS_SERVER_CAPABILITY["directoryRead"] is True


@pytest.mark.parametrize(
    "ctx",
    [
        request(declare=False),
        request(revision="SEP-2640@0000000000000000000000000000000000000000"),
        request(revision="SEP-2640@a3e147c"),
        request(settings="yes"),
        request(era="initialize", declare=False),
    ],
    ids=["undeclared", "other-revision", "short-sha", "not-a-map", "init-era"],
)
@pytest.mark.parametrize("method", ["skills/list", "skills/get", "resources/directory/read"])
def test_methods_without_the_exact_revision_fail_with_32021(
    ctx: RequestContext, method: str, tmp_path: Path
) -> None:
    extension = SkillsService().protocol_extension()
    handler = next(m.handler for m in extension.methods if m.method == method)
    with pytest.raises(ProtocolError) as caught:
        handler(serve(ctx, package_origins(), tmp_path), {"uri": "skill://pm-user/SKILL.md"})
    assert _required(caught.value) == {"extensions": {SKILLS_EXTENSION_ID: EXPECTED_SETTINGS}}


@pytest.mark.parametrize("directory_read", [None, False, "true"])
def test_directory_read_needs_directory_read_true(directory_read: object, tmp_path: Path) -> None:
    ctx = request(directory_read=directory_read)  # type: ignore[arg-type]
    service = SkillsService()
    # The revision alone is enough for the other methods ...
    assert service.skills_get(
        serve(ctx, package_origins(), tmp_path), {"uri": "skill://pm-user/SKILL.md"}
    )
    # ... but not for directory reads.
    with pytest.raises(ProtocolError) as caught:
        service.directory_read(serve(ctx, package_origins(), tmp_path), {"uri": "skill://pm-user"})
    assert _required(caught.value) == {"extensions": {SKILLS_EXTENSION_ID: EXPECTED_SETTINGS}}


def test_assert_skills_capability_accepts_initialize_era_declaration() -> None:
    assert_skills_capability(request(era="initialize"))
    assert_skills_capability(request(era="initialize"), directory_read=True)


def test_resource_provider_is_gated_per_request(tmp_path: Path) -> None:
    provider = SkillsService().resource_provider()
    denied_ctx = request(declare=False)
    assert provider.gate(request()) is True
    assert provider.gate(denied_ctx) is False
    assert provider.denied is not None
    assert _required(provider.denied(denied_ctx)) == {
        "extensions": {SKILLS_EXTENSION_ID: EXPECTED_SETTINGS}
    }


def test_skill_resources_never_listed_or_read_without_negotiation(tmp_path: Path) -> None:
    provider = SkillsService().resource_provider()
    plain = serve(request(declare=False), package_origins(), tmp_path)
    assert provider.list(plain) == []
    with pytest.raises(ProtocolError) as caught:
        provider.read(plain, "skill://pm-user/SKILL.md")
    assert caught.value.code == -32021


def test_negotiated_requests_list_every_skill_file(tmp_path: Path) -> None:
    provider = SkillsService().resource_provider()
    entries = provider.list(serve(request(), package_origins(), tmp_path))
    uris = [e.uri for e in entries]
    assert "skill://pm-user/SKILL.md" in uris
    assert "skill://pm-developer/references/WORK_LOOP.md" in uris
    skill_md = next(e for e in entries if e.uri == "skill://pm-sdk/SKILL.md")
    assert skill_md.name == "pm-sdk"
    assert skill_md.mime_type == "text/markdown"
    assert skill_md.description.startswith("Embed pm in Python")
    assert skill_md.meta is not None and skill_md.meta["trust"] == "untrusted"

"""A custom host serves skills from ``pm_core.sdk`` alone, without pm-mcp."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from pm_core.contracts import ProtocolError, RequestContext, SkillOrigin
from pm_core.sdk import SKILLS_SERVER_CAPABILITY, SkillRegistry, assert_skills_capability

SKILLS = Path(__file__).resolve().parents[2] / "skills"
ID = "io.modelcontextprotocol/skills"


def test_custom_host_lists_gets_reads_and_walks_directories() -> None:
    registry = SkillRegistry.load([SkillOrigin(name="pm", kind="package", root=SKILLS)])
    request = RequestContext(era="modern", extensions={ID: dict(SKILLS_SERVER_CAPABILITY)})
    assert_skills_capability(request, directory_read=True)
    page = registry.list(None, 3)
    assert len(page["skills"]) == 3 and "nextCursor" in page
    rest = registry.list(page["nextCursor"], 3)
    assert [s["frontmatter"]["name"] for s in rest["skills"]] == ["pm-user"]
    entry = registry.get("skill://pm-sdk/SKILL.md")["skill"]
    for resource in entry["resources"]:
        content = registry.read(resource["uri"])
        assert content.text is not None
        digest = "sha256:" + hashlib.sha256(content.text.encode()).hexdigest()
        assert digest == resource["digest"]
    children = registry.read_directory("skill://pm-sdk/references")["resources"]
    assert {c["name"] for c in children} == {
        "CUSTOM_HOST.md",
        "PLUGIN_CONTRACTS.md",
        "TRACKER_API.md",
    }


def test_custom_host_gets_the_same_32021_as_pm_mcp() -> None:
    with pytest.raises(ProtocolError) as caught:
        assert_skills_capability(RequestContext(extensions={ID: {"revision": "other"}}))
    assert caught.value.code == -32021
    assert caught.value.data == {
        "requiredCapabilities": {"extensions": {ID: SKILLS_SERVER_CAPABILITY}}
    }


def test_importing_the_sdk_does_not_import_the_mcp_adapter() -> None:
    probe = "import sys, pm_core.sdk; print(sorted(m for m in sys.modules if m.startswith('pm_core.mcp')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_loading_the_plugin_defers_yaml_and_the_registry_until_skills_are_served() -> None:
    probe = (
        "import sys, pm_plugins.skills_sep2640 as p\n"
        "p.pm_skill_origins(None); p.pm_protocol_extensions(); p.pm_resource_providers()\n"
        "print(sorted(m for m in ('yaml', 'pm_plugins.skills_sep2640.registry') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

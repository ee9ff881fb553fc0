"""The public Python SDK: the names a program embedding pm imports.

Everything here is a plain function or contract object; nothing depends on
MCP, the CLI or an output format.

- :func:`discover_tools` ranks a tool catalog for an intent, with paging and
  a token budget (the engine behind ``pm_discover``).
- :data:`APP_CONTRACTS`, :func:`has_apps_capability`,
  :func:`decorate_tools_with_apps` and :func:`render_app_html` let a custom
  host serve pm's MCP Apps views (``ui://pm/*.html``) under the same
  negotiation and decoration policy as ``pm-mcp``.
- :class:`SkillRegistry`, :func:`assert_skills_capability` and
  :data:`SKILLS_SERVER_CAPABILITY` let a custom host serve Agent Skills over
  MCP (SEP-2640 draft a3e147c) with pm's limits, digests and negotiation:
  ``SkillRegistry.load(origins)`` then ``list``/``get``/``read``/``read_directory``.
  :func:`skills_health` reports the skills the loader refuses, and
  :func:`with_skills_check` appends that check to a ``pm health`` report.
"""

from __future__ import annotations

from plugins.apps_ui.apps import (
    APP_CONTRACTS,
    decorate_tools_with_apps,
    has_apps_capability,
    render_app_html,
)
from plugins.progressive_discovery.engine import discover_tools
from plugins.progressive_discovery.errors import DiscoveryError
from plugins.progressive_discovery.result import DiscoveryResult
from plugins.skills_sep2640.capability import SKILLS_SERVER_CAPABILITY, assert_skills_capability
from plugins.skills_sep2640.health import skills_health, with_skills_check
from plugins.skills_sep2640.registry import SkillRegistry

__all__ = [
    "APP_CONTRACTS",
    "SKILLS_SERVER_CAPABILITY",
    "DiscoveryError",
    "DiscoveryResult",
    "SkillRegistry",
    "assert_skills_capability",
    "decorate_tools_with_apps",
    "discover_tools",
    "has_apps_capability",
    "render_app_html",
    "skills_health",
    "with_skills_check",
]

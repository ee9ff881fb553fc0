"""The public Python SDK: the names a program embedding pm imports.

These names, with the plugin contract (:data:`pm_core.hookimpl`,
:mod:`pm_core.contracts`, :mod:`pm_core.hookspecs`), are pm's public Python
surface; every other module is private and may change. ``docs/sdk.md`` lists
them and ``tests/unit/test_sdk_surface.py`` pins them. Nothing here depends on
MCP, the CLI or an output format.

The tracker:

- :class:`Tracker` reads and changes one ``.agents/pm`` tracker; every
  mutation takes the item lock and appends history. :class:`Item` is what its
  reads return.
- :class:`PmError` and its subclasses :class:`UsageError` (exit 2),
  :class:`NotFoundError` (3), :class:`ConflictError` (4),
  :class:`DependencyError` (5), :class:`NoEffectError` (6),
  :class:`PartialError` (7) and :class:`CorruptItemError` (1) are what it
  raises; ``code`` is the CLI exit code, ``hint`` the fix.

Hosting pm:

- :func:`build_host` loads the built-in and installed plugins into a
  :class:`Host` (honouring ``PM_DISABLE_PLUGINS``, ``PM_LOAD_PLUGINS``,
  ``PM_PLUGINS_STRICT``, ``PM_TRACE_PLUGINS``); :class:`PluginLoadError` is
  raised in strict mode. :class:`ConfigurationError` names a profile setup that
  cannot work.
- :func:`list_tools` returns the :class:`ToolDescriptor` list ``pm-mcp``
  lists at a profile; :class:`RequestContext` describes one request for the
  helpers below.
- :func:`run_command` runs an extension command by name, at any tier
  (``internal`` included).

Helpers for custom MCP hosts:

- :func:`discover_tools` ranks a tool catalog for an intent, with paging and
  a token budget (the engine behind ``pm_discover``); it raises
  :class:`DiscoveryError` and returns a :class:`DiscoveryResult`.
- :data:`APP_CONTRACTS`, :func:`has_apps_capability`,
  :func:`decorate_tools_with_apps` and :func:`render_app_html` let a custom
  host serve pm's MCP Apps views (``ui://pm/*.html``) under the same
  negotiation and decoration policy as ``pm-mcp``.
- :class:`SkillRegistry`, :func:`assert_skills_capability` and
  :data:`SKILLS_SERVER_CAPABILITY` let a custom host serve Agent Skills over
  MCP (SEP-2640 draft a3e147c) with pm's limits, digests and negotiation:
  ``SkillRegistry.load(host.skill_origins(workspace))`` then
  ``list``/``get``/``read``/``read_directory``. :func:`skills_health` reports
  the skills the loader refuses, and :func:`with_skills_check` appends that
  check to a ``pm health`` report.
"""

from __future__ import annotations

from pm_plugins.apps_ui.apps import (
    APP_CONTRACTS,
    decorate_tools_with_apps,
    has_apps_capability,
    render_app_html,
)
from pm_plugins.progressive_discovery.engine import discover_tools
from pm_plugins.progressive_discovery.errors import DiscoveryError
from pm_plugins.progressive_discovery.result import DiscoveryResult
from pm_plugins.skills_sep2640.capability import SKILLS_SERVER_CAPABILITY, assert_skills_capability
from pm_plugins.skills_sep2640.health import skills_health, with_skills_check
from pm_plugins.skills_sep2640.registry import SkillRegistry

from pm_core.contracts import ConfigurationError, RequestContext, ToolDescriptor
from pm_core.host import Host, PluginLoadError, build_host
from pm_core.hosting import list_tools, run_command
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import (
    ConflictError,
    CorruptItemError,
    DependencyError,
    NoEffectError,
    NotFoundError,
    PartialError,
    PmError,
    UsageError,
)
from pm_core.tracker.model.item import Item

__all__ = [
    "APP_CONTRACTS",
    "SKILLS_SERVER_CAPABILITY",
    "ConfigurationError",
    "ConflictError",
    "CorruptItemError",
    "DependencyError",
    "DiscoveryError",
    "DiscoveryResult",
    "Host",
    "Item",
    "NoEffectError",
    "NotFoundError",
    "PartialError",
    "PluginLoadError",
    "PmError",
    "RequestContext",
    "SkillRegistry",
    "ToolDescriptor",
    "Tracker",
    "UsageError",
    "assert_skills_capability",
    "build_host",
    "decorate_tools_with_apps",
    "discover_tools",
    "has_apps_capability",
    "list_tools",
    "render_app_html",
    "run_command",
    "skills_health",
    "with_skills_check",
]

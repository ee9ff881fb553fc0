"""The public Python SDK: the names a program embedding pm imports.

With the plugin contract (:data:`pm_core.hookimpl`, :mod:`pm_core.contracts`,
:mod:`pm_core.hookspecs`) this is pm's public surface; ``docs/sdk.md`` documents
each name and ``tests/unit/test_sdk_surface.py`` pins the list.
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

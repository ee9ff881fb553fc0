"""Test helpers for pm and for plugin authors: a fresh host with fake plugins.

Every call builds a new host (no global state)::

    host = make_host(("mine", MyPlugin()))                        # built-ins + mine
    host = make_host(installed("ext", MyPlugin(), dist="pm-ext"))  # as if pip-installed
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pm_core.host import Host, HostSettings, PluginSource, build_host

__all__ = ["broken", "installed", "make_host", "settings"]


def installed(
    name: str, plugin: object, *, dist: str = "pm-ext", version: str = "1.0"
) -> PluginSource:
    """A plugin that looks like an entry point of an installed distribution."""
    return PluginSource(name, dist, version, lambda: plugin, module=f"{dist}:{name}")


def broken(name: str, error: Exception, *, dist: str = "pm-broken") -> PluginSource:
    """An installed plugin whose import fails with ``error``."""

    def load() -> object:
        raise error

    return PluginSource(name, dist, "0.0", load, module=f"{dist}:{name}")


def make_host(
    *plugins: tuple[str, object] | PluginSource,
    env: Mapping[str, str] | None = None,
    builtins: bool = True,
) -> Host:
    """A fresh host: core, the built-in and installed plugins, and ``plugins``.

    ``builtins=False`` leaves out everything but core and ``plugins``.

    Plain ``(name, object)`` pairs register as local plugins; :func:`installed`
    and :func:`broken` sources go through the same loading path as entry points,
    so statuses (``error``, ``blocked``, ``conflict``) behave as in production.
    """
    environment: dict[str, Any] = dict(env or {})
    local = [p for p in plugins if isinstance(p, tuple)]
    sources = [p for p in plugins if isinstance(p, PluginSource)]
    host = build_host(environment, plugins=local, entry_points=builtins)
    if sources:
        host.load(sources)
    return host


def settings(**values: Any) -> HostSettings:
    """Host settings for a test (``strict=True``, ``disabled=frozenset({...})``)."""
    return HostSettings(**values)

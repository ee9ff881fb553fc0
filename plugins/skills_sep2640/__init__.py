"""Skills over MCP (the SEP-2640 draft at a3e147c and the Final text) as a pm plugin.

Serves the shipped pm skills and the repository's ``.agents/skills``, each request
under the text it negotiated (``capability``, ``docs/skills.md``). Skill text is
untrusted guidance, never a permission. The public names are re-exported by
:mod:`pm_core.sdk`.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pm_core import __version__, hookimpl
from pm_core.contracts import SkillOrigin

if TYPE_CHECKING:
    from pm_plugins.skills_sep2640.service import SkillsService

    from pm_core.contracts import ProtocolExtension, ResourceProvider

# The registry (YAML, hashing) and structlog are imported only when skills are
# first served: every pm program loads this plugin, few of them serve skills.

#: The package that ships the canonical skills inside the wheel.
PACKAGE_SKILLS = "pm_core._skills"
PACKAGE_ORIGIN = "pm-tracker"
WORKSPACE_ORIGIN = "workspace"
PACKAGE_PRECEDENCE = 0
WORKSPACE_PRECEDENCE = 100

__all__ = [
    "PACKAGE_ORIGIN",
    "PACKAGE_SKILLS",
    "WORKSPACE_ORIGIN",
    "package_skills_root",
    "pm_protocol_extensions",
    "pm_resource_providers",
    "pm_skill_origins",
]


@functools.cache
def _service() -> SkillsService:
    # One service per process: the extension methods and the resource provider
    # must read from the same cached registry, and both hooks are called once
    # per host without any shared argument to hang the cache on.
    from pm_plugins.skills_sep2640.service import RegistryCache, SkillsService

    return SkillsService(RegistryCache())


def _warn(event: str, **fields: str) -> None:
    import structlog

    structlog.get_logger("pm.skills").warning(event, **fields)


def package_skills_root() -> Path | None:
    """The directory of the skills shipped in the wheel, or None if unavailable."""
    try:
        root = importlib.resources.files(PACKAGE_SKILLS)
    except ModuleNotFoundError:
        _warn("package_skills_missing", package=PACKAGE_SKILLS)
        return None
    if not isinstance(root, Path):
        # Zip imports have no directory to lstat; the loader refuses to guess.
        _warn("package_skills_not_on_disk", package=PACKAGE_SKILLS, location=str(root))
        return None
    return root


@hookimpl
def pm_skill_origins(workspace: Path | None) -> Sequence[SkillOrigin]:
    """The wheel's skills, and ``<workspace>/.agents/skills`` when present."""
    origins: list[SkillOrigin] = []
    root = package_skills_root()
    if root is not None:
        origins.append(
            SkillOrigin(
                name=PACKAGE_ORIGIN,
                kind="package",
                root=root,
                version=__version__,
                precedence=PACKAGE_PRECEDENCE,
            )
        )
    if workspace is not None:
        local = workspace / ".agents" / "skills"
        # lexists: a symlinked skills directory is still offered, so the loader
        # can refuse it by name instead of it silently vanishing.
        if os.path.lexists(local):
            origins.append(
                SkillOrigin(
                    name=WORKSPACE_ORIGIN,
                    kind="workspace",
                    root=local,
                    precedence=WORKSPACE_PRECEDENCE,
                )
            )
    return origins


@hookimpl
def pm_protocol_extensions() -> Sequence[ProtocolExtension]:
    """The ``io.modelcontextprotocol/skills`` extension and its three methods."""
    return [_service().protocol_extension()]


@hookimpl
def pm_resource_providers() -> Sequence[ResourceProvider]:
    """The ``skill://`` provider, visible only to negotiated requests."""
    return [_service().resource_provider()]

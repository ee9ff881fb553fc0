"""Workspace resources (``pm://workspace/...``) and the three workflow prompts.

Resources (context, focus, claims, ``AGENTS.md``) are always listed and are read
through the tracker SDK at request time; ``pm://items/{id}`` and its history are
offered as templates. Hooks: ``pm_resource_providers``,
``pm_register_prompts``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pm_plugins.workspace_resources import items
from pm_plugins.workspace_resources.prompts import prompt_specs
from pm_plugins.workspace_resources.resources import PREFIX, provider

from pm_core import hookimpl
from pm_core.contracts import PromptSpec, ResourceProvider

__all__ = ["PREFIX", "pm_register_prompts", "pm_resource_providers"]


@hookimpl
def pm_resource_providers() -> Sequence[ResourceProvider]:
    """Serve ``pm://workspace/`` resources and the ``pm://items/`` templates."""
    return [provider(), items.provider()]


@hookimpl
def pm_register_prompts() -> Sequence[PromptSpec]:
    """Contribute ``orient``, ``claim-and-start`` and ``record-evidence-and-close``."""
    return prompt_specs()

"""Builders shared by the skills tests: requests, serve contexts, skill trees."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pm_plugins.skills_sep2640 import pm_skill_origins
from pm_plugins.skills_sep2640.capability import SKILLS_EXTENSION_ID, SKILLS_REVISION

from pm_core.contracts import RequestContext, ResourceContent, ServeContext, SkillOrigin
from pm_core.tracker.api import Tracker

PACKAGE_SKILLS = ("pm-developer", "pm-extensions", "pm-sdk", "pm-user")

_UNSET: Any = object()


def request(
    era: str = "modern",
    *,
    revision: str | None = SKILLS_REVISION,
    directory_read: bool | None = True,
    declare: bool = True,
    settings: Any = _UNSET,
    options: dict[str, str] | None = None,
) -> RequestContext:
    """A request that declared (or not) the skills extension with these settings."""
    extensions: dict[str, Any] = {}
    if settings is not _UNSET:
        extensions[SKILLS_EXTENSION_ID] = settings
    elif declare:
        declared: dict[str, Any] = {}
        if revision is not None:
            declared["revision"] = revision
        if directory_read is not None:
            declared["directoryRead"] = directory_read
        extensions[SKILLS_EXTENSION_ID] = declared
    protocol = "2026-07-28" if era == "modern" else "2025-11-25"
    return RequestContext(
        era=era,  # type: ignore[arg-type]
        protocol_version=protocol,
        extensions=extensions,
        options=options or {},
    )


def serve(request_ctx: RequestContext, origins: Sequence[SkillOrigin], tmp: Path) -> ServeContext:
    """A serve context over real origins and a real (lazy) tracker."""
    frozen = tuple(origins)
    return ServeContext(
        request=request_ctx,
        tracker=Tracker(tmp / ".agents" / "pm", env={}),
        skill_origins=lambda: frozen,
    )


def package_origins() -> list[SkillOrigin]:
    """The wheel's skills, as the plugin's own hook reports them."""
    return list(pm_skill_origins(None))


def workspace_origin(root: Path, name: str = "workspace", precedence: int = 100) -> SkillOrigin:
    """An origin over ``root`` (the ``.agents/skills`` directory of a workspace)."""
    return SkillOrigin(name=name, kind="workspace", root=root, precedence=precedence)


def write_skill(
    root: Path,
    name: str,
    *,
    description: str = "A test skill.",
    frontmatter: str | None = None,
    body: str = "Do the thing.\n",
    files: dict[str, bytes | str] | None = None,
    directory: str | None = None,
) -> Path:
    """Write ``root/<directory or name>/SKILL.md`` (and ``files``); return the skill dir."""
    skill = root / (directory or name)
    skill.mkdir(parents=True, exist_ok=True)
    header = (
        frontmatter if frontmatter is not None else f"name: {name}\ndescription: {description}\n"
    )
    (skill / "SKILL.md").write_text(f"---\n{header}---\n{body}", encoding="utf-8")
    for rel, content in (files or {}).items():
        path = skill / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
    return skill


def write_big(path: Path, size: int) -> None:
    """A real (non-sparse) file of ``size`` bytes, written in 1 MiB chunks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = b"x" * (1 << 20)
    with path.open("wb") as out:
        remaining = size
        while remaining > 0:
            out.write(chunk[: min(remaining, len(chunk))])
            remaining -= len(chunk)


def content_bytes(content: ResourceContent) -> bytes:
    """The exact bytes a ``resources/read`` content carries."""
    if content.text is not None:
        return content.text.encode("utf-8")
    assert content.blob is not None
    return base64.b64decode(content.blob)


def sha256(data: bytes) -> str:
    """The draft's digest format."""
    return "sha256:" + hashlib.sha256(data).hexdigest()

"""The skill registry: loaded once from a set of origins, immutable after.

Loading stays inside :mod:`pm_plugins.skills_sep2640.limits` and resolves
same-named skills by origin precedence; later calls are answered from memory.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

import attrs
import structlog
from pm_plugins.skills_sep2640.capability import (
    MCP_PROTOCOL_VERSIONS,
    SKILLS_EXTENSION_ID,
    SKILLS_REVISION,
)
from pm_plugins.skills_sep2640.cursor import CursorCodec
from pm_plugins.skills_sep2640.frontmatter import parse_frontmatter
from pm_plugins.skills_sep2640.limits import (
    DEFAULT_LIST_LIMIT,
    MAX_LIST_LIMIT,
    MAX_ORIGIN_BYTES,
    MAX_SKILLS_PER_ORIGIN,
    SkillRejected,
)
from pm_plugins.skills_sep2640.model import (
    DIRECTORY_MIME,
    TRUST,
    OverriddenSkill,
    RejectedSkill,
    Skill,
    SkillFile,
    directory_uri,
    file_uri,
)
from pm_plugins.skills_sep2640.scan import (
    SKILL_FILE,
    SkillPlan,
    candidate_directories,
    check_origin_root,
    plan_skill,
    read_planned,
)

from pm_core.contracts import (
    INVALID_PARAMS,
    ProtocolError,
    ResourceContent,
    ResourceEntry,
    SkillOrigin,
)
from pm_core.tracker.query.budget import estimate_tokens

DIRECTORY_PAGE_SIZE: Final = 50
LIST_SCOPE: Final = "skills/list"

_log = structlog.get_logger("pm.skills")


def _invalid(message: str, field: str) -> ProtocolError:
    return ProtocolError(INVALID_PARAMS, message, {"field": field})


def _require_uri(uri: object) -> str:
    if not isinstance(uri, str) or not uri:
        raise _invalid("Parameter 'uri' must be a non-empty string.", "uri")
    return uri


@attrs.frozen(slots=True)
class _Child:
    """One direct child of a directory resource."""

    name: str
    uri: str
    file: SkillFile | None

    def as_json(self, origin: SkillOrigin) -> dict[str, Any]:
        if self.file is None:
            return {"uri": self.uri, "name": self.name, "mimeType": DIRECTORY_MIME}
        return {
            "uri": self.uri,
            "name": self.name,
            "mimeType": self.file.mime_type,
            "size": self.file.size,
            "_meta": {"digest": self.file.digest, "origin": origin.kind, "trust": TRUST},
        }


def _build_skill(plan: SkillPlan, origin: SkillOrigin) -> Skill:
    """Read a planned skill's bodies (``SKILL.md`` first) and hash them."""
    skill_md_plan = next(f for f in plan.files if f.rel == SKILL_FILE)
    skill_md = read_planned(skill_md_plan)
    # Parse before reading anything else: a bad skill costs one file, not all.
    frontmatter = parse_frontmatter(skill_md, plan.name)
    files = tuple(
        SkillFile.from_bytes(plan.name, p.rel, skill_md if p is skill_md_plan else read_planned(p))
        for p in plan.files
    )
    return Skill(
        name=plan.name,
        uri=file_uri(plan.name, SKILL_FILE),
        root_uri=directory_uri(plan.name, ""),
        frontmatter_json=json.dumps(frontmatter, ensure_ascii=False),
        files=files,
        directories=plan.directories,
        origin=origin,
    )


def _load_origin(origin: SkillOrigin) -> tuple[list[Skill], list[RejectedSkill]]:
    """Every acceptable skill of one origin, and every rejection with its reason."""
    rejected: list[RejectedSkill] = []
    try:
        if not check_origin_root(origin.root):
            return [], []
        candidates = candidate_directories(origin.root)
    except SkillRejected as exc:
        return [], [RejectedSkill("*", origin.name, exc.reason)]
    except OSError as exc:
        reason = f"origin root could not be listed: {exc.strerror or exc}"
        return [], [RejectedSkill("*", origin.name, reason)]
    surplus_reason = f"the origin has more than {MAX_SKILLS_PER_ORIGIN} candidate skill directories"
    rejected.extend(RejectedSkill(name, origin.name, surplus_reason) for name in candidates.surplus)
    unnamed = candidates.surplus_count - len(candidates.surplus)
    if unnamed > 0:
        rejected.append(
            RejectedSkill("*", origin.name, f"{unnamed} further directories: {surplus_reason}")
        )
    skills: list[Skill] = []
    retained = 0
    for name in candidates.selected:
        try:
            plan = plan_skill(origin.root, name)
            if retained + plan.total_bytes > MAX_ORIGIN_BYTES:
                raise SkillRejected(
                    f"its {plan.total_bytes} bytes would take the origin past its "
                    f"{MAX_ORIGIN_BYTES}-byte budget"
                )
            skill = _build_skill(plan, origin)
        except SkillRejected as exc:
            rejected.append(RejectedSkill(name, origin.name, exc.reason))
            continue
        except OSError as exc:
            rejected.append(
                RejectedSkill(name, origin.name, f"could not be read: {exc.strerror or exc}")
            )
            continue
        except Exception as exc:  # one faulty skill must not take down the others
            reason = f"unexpected {type(exc).__name__} while loading"
            rejected.append(RejectedSkill(name, origin.name, reason))
            continue
        retained += plan.total_bytes
        skills.append(skill)
    return skills, rejected


def _fingerprint(skills: Iterable[Skill]) -> str:
    digest = hashlib.sha256()
    for skill in skills:
        origin = skill.origin
        digest.update(f"{skill.uri}\0{origin.kind}\0{origin.name}\0{origin.version}\n".encode())
        for f in skill.files:
            digest.update(f"{f.uri}\0{f.digest}\n".encode())
    return digest.hexdigest()


class SkillRegistry:
    """Skills from a set of origins, answered from memory.

    Build one with :meth:`load`. ``skills`` is in lexical URI order;
    ``rejected`` lists what the security envelope refused, ``overridden`` what
    a higher-precedence origin hid. Methods return the JSON shapes of the
    draft's results (without the per-era ``ttlMs``/``cacheScope``, which the
    caller adds) and raise :class:`~pm_core.contracts.ProtocolError` -32602
    for unknown URIs, bad parameters and stale cursors.
    """

    __slots__ = (
        "_by_uri",
        "_cursors",
        "_directories",
        "_files",
        "fingerprint",
        "overridden",
        "rejected",
        "skills",
    )

    def __init__(
        self,
        skills: Sequence[Skill],
        rejected: Sequence[RejectedSkill] = (),
        overridden: Sequence[OverriddenSkill] = (),
    ) -> None:
        ordered = tuple(sorted(skills, key=lambda s: s.uri))
        self.skills: tuple[Skill, ...] = ordered
        self.rejected: tuple[RejectedSkill, ...] = tuple(rejected)
        self.overridden: tuple[OverriddenSkill, ...] = tuple(overridden)
        self.fingerprint: str = _fingerprint(ordered)
        self._cursors = CursorCodec(self.fingerprint)
        self._by_uri: Mapping[str, Skill] = MappingProxyType({s.uri: s for s in ordered})
        files: dict[str, tuple[SkillFile, Skill]] = {}
        directories: dict[str, tuple[tuple[_Child, ...], Skill]] = {}
        for skill in ordered:
            files.update((f.uri, (f, skill)) for f in skill.files)
            for uri, children in self._index_directories(skill).items():
                directories[uri] = (children, skill)
        self._files: Mapping[str, tuple[SkillFile, Skill]] = MappingProxyType(files)
        self._directories: Mapping[str, tuple[tuple[_Child, ...], Skill]] = MappingProxyType(
            directories
        )

    @staticmethod
    def _index_directories(skill: Skill) -> dict[str, tuple[_Child, ...]]:
        children: dict[str, list[_Child]] = {"": []}
        children.update((rel, []) for rel in skill.directories)
        for rel in skill.directories:
            parent, _, name = rel.rpartition("/")
            children[parent].append(_Child(name, directory_uri(skill.name, rel), None))
        for f in skill.files:
            parent, _, name = f.rel.rpartition("/")
            children[parent].append(_Child(name, f.uri, f))
        return {
            directory_uri(skill.name, rel): tuple(sorted(kids, key=lambda c: c.name))
            for rel, kids in children.items()
        }

    # --- loading -------------------------------------------------------------

    @classmethod
    def load(cls, origins: Sequence[SkillOrigin], *, log: bool = True) -> SkillRegistry:
        """Load every origin; on a name clash the highest precedence wins.

        Among origins of equal precedence the one listed first wins. Each
        rejection is logged as a ``skill_rejected`` warning on ``pm.skills``
        unless ``log`` is False (for callers that report ``rejected`` themselves).
        """
        rejected: list[RejectedSkill] = []
        winners: dict[str, Skill] = {}
        overridden: list[OverriddenSkill] = []
        ranked = sorted(enumerate(origins), key=lambda pair: (-pair[1].precedence, pair[0]))
        for _index, origin in ranked:
            skills, refused = _load_origin(origin)
            rejected.extend(refused)
            for skill in skills:
                winner = winners.get(skill.name)
                if winner is None:
                    winners[skill.name] = skill
                else:
                    overridden.append(OverriddenSkill(skill.name, origin.name, winner.origin.name))
        for item in rejected if log else ():
            _log.warning("skill_rejected", skill=item.name, origin=item.origin, reason=item.reason)
        return cls(list(winners.values()), rejected, overridden)

    # --- queries -------------------------------------------------------------

    def skill(self, uri: str) -> Skill | None:
        """The skill whose ``SKILL.md`` URI is ``uri``, or None."""
        return self._by_uri.get(uri)

    def file(self, uri: str) -> SkillFile | None:
        """The served file at ``uri``, or None."""
        entry = self._files.get(uri)
        return entry[0] if entry else None

    def descriptor(self, skill: Skill) -> dict[str, Any]:
        """A skill entry of ``skills/list`` and ``skills/get`` (no file bodies)."""
        origin = skill.origin
        return {
            "uri": skill.uri,
            "frontmatter": skill.frontmatter,
            "resources": [f.manifest_entry() for f in skill.files],
            "_meta": {
                "origin": origin.kind,
                "originName": origin.name,
                "trust": TRUST,
                "packageVersion": origin.version or None,
                "tokenEstimate": {
                    "skillMd": estimate_tokens(skill.skill_md.size),
                    "total": estimate_tokens(skill.total_bytes),
                    "method": "ceil(bytes / 4)",
                },
                "compatibility": {
                    "extension": SKILLS_EXTENSION_ID,
                    "revision": SKILLS_REVISION,
                    "status": "draft",
                    "mcpProtocolVersions": list(MCP_PROTOCOL_VERSIONS),
                },
            },
        }

    def list(self, cursor: str | None = None, limit: int = DEFAULT_LIST_LIMIT) -> dict[str, Any]:
        """One page of skills in URI order; ``nextCursor`` only when more remain."""
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_LIST_LIMIT
        ):
            raise _invalid(
                f"Parameter 'limit' must be an integer from 1 to {MAX_LIST_LIMIT}.", "limit"
            )
        total = len(self.skills)
        offset = 0 if cursor is None else self._cursors.decode(cursor, LIST_SCOPE, total)
        end = offset + limit
        result: dict[str, Any] = {"skills": [self.descriptor(s) for s in self.skills[offset:end]]}
        if end < total:
            result["nextCursor"] = self._cursors.encode(end, LIST_SCOPE)
        return result

    def get(self, uri: str) -> dict[str, Any]:
        """``{"skill": entry}`` for a served ``SKILL.md`` URI; -32602 otherwise."""
        skill = self._by_uri.get(_require_uri(uri))
        if skill is None:
            raise _invalid(f"Unknown pm MCP skill: {uri}.", "uri")
        return {"skill": self.descriptor(skill)}

    def read(self, uri: str) -> ResourceContent:
        """One file, from the bytes its digest was computed from; -32602 if unknown."""
        entry = self._files.get(_require_uri(uri))
        if entry is None:
            raise _invalid(f"Unknown pm MCP skill resource: {uri}.", "uri")
        file, skill = entry
        return file.content(skill.origin)

    def read_directory(self, uri: str, cursor: str | None = None) -> dict[str, Any]:
        """The direct children of a directory resource, one page at a time."""
        entry = self._directories.get(_require_uri(uri))
        if entry is None:
            if uri in self._files:
                raise _invalid(f"Not a pm MCP skill directory: {uri}.", "uri")
            raise _invalid(f"Unknown pm MCP skill directory: {uri}.", "uri")
        children, skill = entry
        scope = f"resources/directory/read\0{uri}"
        offset = 0 if cursor is None else self._cursors.decode(cursor, scope, len(children))
        end = offset + DIRECTORY_PAGE_SIZE
        result: dict[str, Any] = {
            "resources": [c.as_json(skill.origin) for c in children[offset:end]]
        }
        if end < len(children):
            result["nextCursor"] = self._cursors.encode(end, scope)
        return result

    def resource_entries(self) -> builtins.list[ResourceEntry]:
        """Every served file as a ``resources/list`` entry, in URI order."""
        out: builtins.list[ResourceEntry] = []
        for skill in self.skills:
            frontmatter = skill.frontmatter
            for f in skill.files:
                meta = {"digest": f.digest, "origin": skill.origin.kind, "trust": TRUST}
                if f.uri == skill.uri:
                    out.append(
                        ResourceEntry(
                            f.uri,
                            str(frontmatter.get("name", skill.name)),
                            f.mime_type,
                            str(frontmatter.get("description", "")),
                            meta,
                        )
                    )
                else:
                    out.append(ResourceEntry(f.uri, f.rel, f.mime_type, "", meta))
        return out

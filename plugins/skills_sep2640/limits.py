"""The security envelope of the skill loader, in one place.

Every count and byte budget is checked from ``lstat`` metadata before a body is
read, so a hostile workspace can make the loader refuse, never over-allocate.
"""

from __future__ import annotations

import re
from typing import Final

MIB: Final = 1024 * 1024

#: Files per skill, ``SKILL.md`` included (draft limit).
MAX_FILES_PER_SKILL: Final = 512
#: Sub-directories walked per skill; bounds the walk of a tree of empty dirs.
MAX_DIRS_PER_SKILL: Final = 512
#: Bytes of one file.
MAX_FILE_BYTES: Final = 16 * MIB
#: Bytes summed over one skill's files (draft limit).
MAX_SKILL_BYTES: Final = 16 * MIB
#: Candidate skill directories loaded from one origin; the rest are rejected.
MAX_SKILLS_PER_ORIGIN: Final = 100
#: Bytes retained across all skills of one origin.
MAX_ORIGIN_BYTES: Final = 32 * MIB
#: Bytes of YAML between the ``---`` fences of ``SKILL.md``.
MAX_FRONTMATTER_BYTES: Final = 64 * 1024
#: ``skills/list`` page size: default and largest a request may ask for.
DEFAULT_LIST_LIMIT: Final = 20
MAX_LIST_LIMIT: Final = 100
#: Agent Skills: 1-64 chars of ``a-z0-9``, single hyphens inside.
MAX_NAME_LENGTH: Final = 64
MAX_DESCRIPTION_LENGTH: Final = 1024
NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class SkillRejected(Exception):
    """A skill (or an origin's surplus) was refused; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def valid_skill_name(name: str) -> bool:
    """Whether ``name`` satisfies the Agent Skills naming rule."""
    return len(name) <= MAX_NAME_LENGTH and NAME_PATTERN.fullmatch(name) is not None

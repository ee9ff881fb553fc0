"""Walking skill directories from metadata alone, then reading bodies within budget.

Plans use ``lstat`` data only and stop at the first crossed limit; bodies are read
without following links and checked against the planned inode and size.
"""

from __future__ import annotations

import bisect
import os
import stat
from pathlib import Path

import attrs
from pm_plugins.skills_sep2640.limits import (
    MAX_DIRS_PER_SKILL,
    MAX_FILE_BYTES,
    MAX_FILES_PER_SKILL,
    MAX_SKILL_BYTES,
    MAX_SKILLS_PER_ORIGIN,
    SkillRejected,
    valid_skill_name,
)

SKILL_FILE = "SKILL.md"
#: Surplus candidate names kept for the report; the rest are only counted.
MAX_REPORTED_SURPLUS = 100


@attrs.frozen(slots=True)
class PlannedFile:
    """A file measured by ``lstat``: where it is and what it must still be."""

    rel: str
    path: Path
    size: int
    device: int
    inode: int


@attrs.frozen(slots=True)
class SkillPlan:
    """Everything about one skill directory that metadata can tell."""

    name: str
    root: Path
    files: tuple[PlannedFile, ...]
    directories: tuple[str, ...]
    total_bytes: int


@attrs.frozen(slots=True)
class Candidates:
    """The candidate skill directories of one origin root."""

    selected: tuple[str, ...]
    surplus: tuple[str, ...] = ()
    surplus_count: int = 0


def _is_housekeeping(name: str) -> bool:
    # Dot and underscore entries (.git, __pycache__, __init__.py) are never
    # skills and are not valid skill names; skipping them keeps the package
    # origin (a Python package directory) free of bogus rejections.
    return name.startswith((".", "_"))


def check_origin_root(root: Path) -> bool:
    """Whether ``root`` exists; raise :class:`SkillRejected` if it is unsafe."""
    try:
        info = root.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise SkillRejected(f"origin root {root.name!r} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise SkillRejected(f"origin root {root.name!r} is not a directory")
    return True


def candidate_directories(root: Path) -> Candidates:
    """The first :data:`MAX_SKILLS_PER_ORIGIN` candidates by name, and the surplus.

    A candidate is any non-housekeeping directory or symbolic link directly in
    ``root``. Memory stays bounded however many entries ``root`` holds: only
    the smallest names are kept, the surplus is counted.
    """
    selected: list[str] = []
    surplus: list[str] = []
    count = 0
    with os.scandir(root) as entries:
        for entry in entries:
            if _is_housekeeping(entry.name):
                continue
            if not (entry.is_symlink() or entry.is_dir(follow_symlinks=False)):
                continue
            bisect.insort(selected, entry.name)
            if len(selected) > MAX_SKILLS_PER_ORIGIN:
                evicted = selected.pop()
                count += 1
                if len(surplus) < MAX_REPORTED_SURPLUS:
                    surplus.append(evicted)
    return Candidates(tuple(selected), tuple(sorted(surplus)), count)


def _display(rel: str) -> str:
    return rel or "."


def plan_skill(root: Path, name: str) -> SkillPlan:
    """Measure the skill directory ``root/name`` without reading any body.

    Raises :class:`SkillRejected` for a symbolic link anywhere in the skill,
    an invalid directory name, a special file, more than
    :data:`MAX_FILES_PER_SKILL` files or :data:`MAX_DIRS_PER_SKILL`
    directories, a file over :data:`MAX_FILE_BYTES`, a skill over
    :data:`MAX_SKILL_BYTES`, or a missing ``SKILL.md``.
    """
    skill_root = root / name
    info = skill_root.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise SkillRejected("the skill directory is a symbolic link")
    if not valid_skill_name(name):
        raise SkillRejected(
            f"directory name {name!r} is not a valid skill name "
            "(lowercase a-z, 0-9 and single inner hyphens, at most 64 characters)"
        )
    files: list[PlannedFile] = []
    directories: list[str] = []
    total = 0
    pending: list[tuple[Path, str]] = [(skill_root, "")]
    while pending:
        directory, prefix = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                rel = f"{prefix}{entry.name}"
                try:
                    rel.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise SkillRejected(
                        f"a file name under {_display(prefix)!r} is not UTF-8"
                    ) from exc
                if entry.is_symlink():
                    raise SkillRejected(f"{rel!r} is a symbolic link")
                meta = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(meta.st_mode):
                    directories.append(rel)
                    if len(directories) > MAX_DIRS_PER_SKILL:
                        raise SkillRejected(f"more than {MAX_DIRS_PER_SKILL} directories")
                    pending.append((Path(entry.path), f"{rel}/"))
                elif stat.S_ISREG(meta.st_mode):
                    if len(files) + 1 > MAX_FILES_PER_SKILL:
                        raise SkillRejected(f"more than {MAX_FILES_PER_SKILL} files")
                    if meta.st_size > MAX_FILE_BYTES:
                        raise SkillRejected(
                            f"{rel!r} is {meta.st_size} bytes, over the {MAX_FILE_BYTES}-byte file limit"
                        )
                    total += meta.st_size
                    if total > MAX_SKILL_BYTES:
                        raise SkillRejected(f"the skill holds more than {MAX_SKILL_BYTES} bytes")
                    files.append(
                        PlannedFile(rel, Path(entry.path), meta.st_size, meta.st_dev, meta.st_ino)
                    )
                else:
                    raise SkillRejected(f"{rel!r} is not a regular file or directory")
    files.sort(key=lambda f: f.rel)
    if not any(f.rel == SKILL_FILE for f in files):
        raise SkillRejected(f"no {SKILL_FILE} at the skill root")
    return SkillPlan(name, skill_root, tuple(files), tuple(sorted(directories)), total)


def read_planned(planned: PlannedFile) -> bytes:
    """Read a planned file's body, refusing anything the plan did not measure.

    The file is opened without following a final link and must be the same
    inode, still a regular file, of exactly the planned size; at most
    ``size + 1`` bytes are ever read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    changed = SkillRejected(f"{planned.rel!r} changed while the skill was loading")
    try:
        fd = os.open(planned.path, flags)
    except OSError as exc:
        raise SkillRejected(f"{planned.rel!r} could not be opened: {exc.strerror}") from exc
    with os.fdopen(fd, "rb", buffering=0) as raw:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or (info.st_dev, info.st_ino) != (planned.device, planned.inode)
            or info.st_size != planned.size
        ):
            raise changed
        # One allocation of the planned size; a short read is topped up, and
        # one extra byte proves the file did not grow after fstat.
        data = raw.read(planned.size) or b""
        while len(data) < planned.size:
            more = raw.read(planned.size - len(data))
            if not more:
                raise changed
            data += more
        if raw.read(1):
            raise changed
    return data

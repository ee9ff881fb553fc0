"""git's ``user.name`` read from the config files themselves, when that is certain.

Every write records an author; without ``PM_AUTHOR`` or a settings default
that is git's ``user.name``, which ``git config`` answers after starting a
process. :func:`user_name` reads the repository's and the user's config files
instead, for the plain form almost every name is written in
(``name = Ada Lovelace`` under ``[user]``), skipping every other section as
git reads it (subsections, quoted values: the merge drivers ``pm init``
writes), and returns ``None`` whenever git could read the files differently:
an ``include``, a quote or backslash in the name, a continued line, a linked
worktree or per-worktree config, a variable such as ``GIT_DIR`` or
``GIT_CONFIG_GLOBAL``, no name in either file. The caller then asks git, so
the answer is always git's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

#: A section header: its name, an optional quoted subsection, an optional comment.
_HEADER = re.compile(
    r'\[(?P<name>[A-Za-z0-9.-]+)(?P<sub>[ \t]+"(?:[^"\\]|\\.)*")?\][ \t]*(?:[#;].*)?'
)
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
#: The files alone do not settle the answer.
UNSURE = object()
#: Variables that change which config files git reads, or which repository it finds
#: (every ``GIT_CONFIG*`` too: GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS, ...).
_REDIRECTS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    }
)


def user_name(repo: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``user.name`` as ``git config user.name`` would answer in ``repo``; None: ask git.

    An empty string is git's answer too (a name set to nothing).
    """
    env = os.environ if environ is None else environ
    if any(name.startswith("GIT_CONFIG") or name in _REDIRECTS for name in env):
        return None
    home = env.get("HOME")
    if not home:
        return None
    local = _local_config(repo)
    if local is UNSURE:
        return None
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    # Later files win, as git reads them: XDG, then ~/.gitconfig, then the repository's.
    found: str | None = None
    for path in (os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig"), local):
        if path is None:
            continue
        value = _read(str(path))
        if value is UNSURE:
            return None
        if value is not None:
            found = str(value)
    # None found here: a system-wide name may still apply, which only git knows.
    return found


def _local_config(repo: str) -> str | object | None:
    """The repository's own config file (None outside a repository)."""
    folder = os.path.abspath(repo)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            if os.path.exists(os.path.join(dot_git, "config.worktree")):
                return UNSURE  # extensions.worktreeConfig: one more file git may read
            return os.path.join(dot_git, "config")
        if os.path.exists(dot_git):
            return UNSURE  # a linked worktree or a submodule: its config has more places
        if os.path.isfile(os.path.join(folder, "HEAD")) and os.path.isdir(
            os.path.join(folder, "objects")
        ):
            return UNSURE  # a bare repository
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _read(path: str) -> str | object | None:
    """The last plain ``user.name`` in one file (None: none; UNSURE: git may read it otherwise)."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_uid != os.getuid():
                return UNSURE  # git may refuse a file another user owns (safe.directory)
            data = fh.read()
    except FileNotFoundError:
        return None
    except OSError:
        return UNSURE
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return UNSURE
    found: str | None = None
    in_user = False
    for raw in text.removeprefix("\ufeff").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = _HEADER.fullmatch(line)
            if header is None:
                return UNSURE  # a setting on the header line, or one git may not read as written
            section = header["name"].lower()
            if section.startswith("include"):
                return UNSURE  # include, includeIf: more files git reads
            in_user = section == "user" and header["sub"] is None
            continue
        key, equals, value = line.partition("=")
        key = key.strip()
        if not _KEY.fullmatch(key):
            return UNSURE  # git stops at a bad line ("bad config line"): let it say so
        if not in_user or key.lower() != "name":
            if not _value_ends(value):
                return UNSURE  # a continued line, an open quote or a bad escape
            continue
        if not equals:
            return UNSURE  # a bare "name" is boolean true to git
        if "\\" in value or '"' in value:
            return UNSURE  # escapes and quotes in the name itself: git decodes them
        for mark in "#;":
            value = value.split(mark, 1)[0]
        found = value.strip()
    return found


def _value_ends(value: str) -> bool:
    """Whether a value git reads ends on its own line (False: continued, open quote, bad escape)."""
    quoted = False
    chars = iter(value)
    for char in chars:
        if char == "\\":
            if next(chars, None) not in ("t", "b", "n", '"', "\\"):
                return False  # a backslash at the end continues the line; others are errors
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            return True  # the rest is a comment
    return not quoted

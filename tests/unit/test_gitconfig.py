"""git's ``user.name`` read from the config files agrees with ``git config user.name``.

Real git is the oracle: for generated global, XDG and repository config
files, whenever the file reader answers, it answers what git prints; where it
is unsure it says so (``None``) and pm asks git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm_core.tracker.api import Tracker, git_user_name
from pm_core.tracker.storage.gitconfig import user_name

#: Lines in the plain forms the reader settles itself.
PLAIN = [
    "[user]",
    "[User]",
    "[core]",
    "[user.work]",
    "\tname = Ada Lovelace",
    "name=Grace Hopper",
    "NAME = Alan  Turing   ",
    "name = Edsger ; a comment",
    "name = Barbara # a comment",
    "name =",
    "email = a@example.invalid",
    "editor = vi",
    "# a comment",
    "; another",
    "",
    '[user "work"]',
    '[merge "pm-item-toon"]',
    '[remote "a \\"quoted\\" one"]  # with a comment',
    "\tname = pm field-aware merge",
    '\tdriver = "python3 -c \'import sys; main()\' \\"%O\\" %A" # run by git',
    '\turl = "a;b#c" ; then a comment',
    "\tpath = C:\\\\tools\\tbin",
]
#: Lines git may read otherwise (or refuse): the reader must leave those files to git.
RISKY = [
    '[user "unclosed]',
    "\tdriver = runs on \\",
    '\tdriver = "an open quote',
    "\tdriver = a bad \\q escape",
    "[include]",
    '[includeIf "gitdir:/x/"]',
    "\tpath = elsewhere",
    "name",
    'name = "Quoted Name"',
    "name = back\\slash",
    "[user] name = On The Header",
    "bad key = x",
]


def _files(lines: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(lines), max_size=8).map(lambda ls: "\n".join(ls) + "\n")


def _git_answer(repo: Path, env: dict[str, str]) -> str | None:
    done = subprocess.run(
        ["git", "config", "user.name"], cwd=repo, env=env, capture_output=True, text=True
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return home, repo, env


def _write(world: tuple[Path, Path, dict[str, str]], texts: tuple[str, str, str]) -> None:
    home, repo, _env = world
    (home / ".gitconfig").write_text(texts[0])
    (home / ".config" / "git" / "config").write_text(texts[1])
    base = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    (repo / ".git" / "config").write_text(base + texts[2])


_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(texts=st.tuples(_files(PLAIN), _files(PLAIN), _files(PLAIN)))
def test_plain_files_are_read_as_git_reads_them(
    world: tuple[Path, Path, dict[str, str]], texts: tuple[str, str, str]
) -> None:
    _write(world, texts)
    _home, repo, env = world
    answer = _git_answer(repo, env)
    read = user_name(str(repo), env)
    if answer is None and read is None:
        return  # no name in these files: left to git, which may know a system-wide one
    assert read is not None, texts  # a plain name is settled without starting git
    assert (read or None) == answer, texts


@_SETTINGS
@given(texts=st.tuples(_files(PLAIN + RISKY), _files(PLAIN + RISKY), _files(PLAIN + RISKY)))
def test_when_the_reader_answers_it_answers_what_git_prints(
    world: tuple[Path, Path, dict[str, str]], texts: tuple[str, str, str]
) -> None:
    _write(world, texts)
    _home, repo, env = world
    read = user_name(str(repo), env)
    if read is not None:
        assert (read or None) == _git_answer(repo, env), texts


def test_a_repository_pm_init_configured_is_read_without_git(
    world: tuple[Path, Path, dict[str, str]],
) -> None:
    """``pm init`` writes merge drivers (quoted values, subsections) into ``.git/config``."""
    home, repo, env = world
    (home / ".gitconfig").write_text("[user]\n\tname = Ada Lovelace\n")
    Tracker(repo / ".agents" / "pm", author="t").init()
    config = (repo / ".git" / "config").read_text()
    assert '[merge "pm-history"]' in config and '\\"' in config
    assert user_name(str(repo), env) == "Ada Lovelace" == _git_answer(repo, env)
    (repo / ".git" / "config").write_text(config + "[user]\n\tname = Grace Hopper\n")
    assert user_name(str(repo), env) == "Grace Hopper" == _git_answer(repo, env)


def test_the_plain_forms_are_read_without_git(world: tuple[Path, Path, dict[str, str]]) -> None:
    home, repo, env = world
    (home / ".gitconfig").write_text("[user]\n\tname = Ada Lovelace\n\temail = a@b.invalid\n")
    assert user_name(str(repo), env) == "Ada Lovelace"
    # git variables that do not change which config is read leave the reader sure
    assert user_name(str(repo), {**env, "GIT_SSL_CAINFO": "/etc/ssl/ca.pem"}) == "Ada Lovelace"
    # the repository's own setting wins, from a folder inside it too
    (repo / ".git" / "config").write_text("[User]\n    NAME = Grace Hopper  # work\n")
    (repo / "sub" / "dir").mkdir(parents=True)
    assert user_name(str(repo / "sub" / "dir"), env) == "Grace Hopper"
    assert _git_answer(repo, env) == "Grace Hopper"


@pytest.mark.parametrize(
    ("text", "env_extra"),
    [
        ("[include]\n\tpath = other\n[user]\n\tname = X\n", {}),
        ('[user]\n\tname = "Quoted"\n', {}),
        ("[user]\n\tname = X\n", {"GIT_CONFIG_GLOBAL": "/dev/null"}),
        ("[user]\n\tname = X\n", {"GIT_CONFIG_COUNT": "1"}),
        ("[user]\n\tname = X\n", {"GIT_DIR": "/elsewhere/.git"}),
        ("[core]\n", {}),  # no name anywhere: a system-wide one may apply
    ],
)
def test_what_git_may_read_differently_is_left_to_git(
    world: tuple[Path, Path, dict[str, str]], text: str, env_extra: dict[str, str]
) -> None:
    home, repo, env = world
    (home / ".gitconfig").write_text(text)
    assert user_name(str(repo), {**env, **env_extra}) is None


def test_a_linked_worktree_is_left_to_git(world: tuple[Path, Path, dict[str, str]]) -> None:
    home, repo, env = world
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n")
    git_env = {**env, "GIT_AUTHOR_NAME": "t", "GIT_COMMITTER_NAME": "t"}
    git_env |= {"GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"],
        env=git_env,
        check=True,
    )
    linked = repo.parent / "linked"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], env=git_env, check=True
    )
    assert user_name(str(linked), env) is None
    assert user_name(str(repo), env) == "Ada"
    (repo / ".git" / "config.worktree").write_text("[user]\n\tname = Per Worktree\n")
    assert user_name(str(repo), env) is None  # read when extensions.worktreeConfig is on


def test_git_user_name_asks_git_when_unsure(
    world: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, repo, env = world
    (home / ".gitconfig").write_text('[user]\n\tname = "Quoted  Name"\n')
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", env["HOME"])
    assert git_user_name(repo) == "Quoted  Name"  # git's own reading of the quotes

"""Every built-in plugin is served by an installed wheel, and by a copy of pm with no metadata.

The built-ins are named in code (``pm_core.host.BUILTIN_PLUGINS``), not found
through entry points, so neither case depends on pm's own ``dist-info``:

- the wheel, built from the tree and installed with pip into a fresh venv,
  puts ``pm_core`` and ``pm_plugins`` in site-packages and no top-level
  ``plugins`` package (which any other wheel shipping one would overwrite);
- the source tree copied under its import names (``plugins/`` as
  ``pm_plugins``, ``skills/`` as ``pm_core._skills``, as pyproject maps them)
  onto ``PYTHONPATH``, with no ``pm-tracker`` distribution anywhere, loads
  the same plugins.

Each venv reaches the development environment's dependencies through a
directory of links (so nothing is downloaded) that leaves out pm's own
editable install and metadata. pm-plugins and pm-mcp then run in it as
separate processes, and what they serve is compared with the development
environment's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from pm_core.host import BUILTIN_PLUGINS, build_host
from tests.support.mcp_client import McpProcess, tool_names

#: Two venvs, a wheel build and a handful of pm processes: tens of seconds.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CLEAN = (
    "PM_PATH",
    "PM_LOAD_PLUGINS",
    "PM_DISABLE_PLUGINS",
    "PM_PLUGINS_STRICT",
    "PM_TRACE_PLUGINS",
    "PM_MCP_PROFILE",
    "PM_MCP_TOOLS",
    "PYTHONPATH",
)
BUILTIN_NAMES = {"core", *(name for name, _ in BUILTIN_PLUGINS)}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env["PM_AUTHOR"] = "alice"
    env.update(extra)
    return env


def _dependencies(base: Path) -> Path:
    """The development environment's packages, without pm's own install or metadata."""
    dev_site = Path(sysconfig.get_paths()["purelib"])
    deps = base / "deps"
    deps.mkdir()
    for entry in dev_site.iterdir():
        name = entry.name
        if name.startswith(("__editable__", "pm_tracker", "pm_core", "pm_plugins", "plugins")):
            continue
        (deps / name).symlink_to(entry)
    return deps


@attrs.frozen
class Venv:
    """A fresh venv, its site-packages, and a repository with a tracker to run pm in."""

    root: Path
    site: Path
    repo: Path
    pythonpath: str = ""

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def env(self, **extra: str) -> dict[str, str]:
        if self.pythonpath:
            extra = {"PYTHONPATH": self.pythonpath, **extra}
        return _env(**extra)

    def run(self, *argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            cwd=self.repo,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def python_c(self, code: str) -> str:
        done = self.run(self.python, "-c", code)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def init_tracker(self) -> None:
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        done = self.run(self.python, "-m", "pm_core.cli.main", "init")
        assert done.returncode == 0, done.stderr


def _venv(base: Path, pythonpath: str = "") -> Venv:
    base.mkdir()
    root = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # A plain directory line: added to sys.path after site-packages, its own
    # .pth files (the editable install's among them, were it there) unread.
    (site / "_pm_dev_dependencies.pth").write_text(f"{_dependencies(base)}\n", encoding="utf-8")
    repo = base / "repo"
    repo.mkdir()
    return Venv(root, site, repo, pythonpath)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    """The wheel built from the tree, installed with pip into a fresh venv."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    (wheel,) = dist.glob("*.whl")
    venv = _venv(base / "env")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", venv.python, "install", "--no-deps", "-q", wheel],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    venv.init_tracker()
    yield venv


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    """The source tree under its import names on PYTHONPATH; no pm-tracker metadata anywhere."""
    base = tmp_path_factory.mktemp("copy")
    tree = base / "src"
    tree.mkdir()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    assert set(mapped) == {"pm_core._skills", "pm_plugins"}, mapped  # keep this copy in step
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "pm_core", tree / "pm_core", ignore=ignore)
    for package, directory in mapped.items():
        shutil.copytree(ROOT / directory, tree.joinpath(*package.split(".")), ignore=ignore)
    venv = _venv(base / "env", pythonpath=str(tree))
    venv.init_tracker()
    yield venv


def _rows(venv: Venv, *command: str) -> dict[str, dict[str, Any]]:
    done = venv.run(*command, "list", "--json", "-v")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert listing["schema"] == 1
    return {row["name"]: row for row in listing["plugins"]}


def _served(cwd: Path, env: dict[str, str], python: str) -> dict[str, Any]:
    """What pm-mcp serves at the full profile: capabilities, tools, prompts, resources."""
    env = {**env, "PM_MCP_PROFILE": "full"}
    with McpProcess(cwd, env=env, python=python, timeout=60) as server:
        init = server.initialize()
        return {
            "capabilities": init["capabilities"],
            "tools": server.request("tools/list")["result"],
            "prompts": server.request("prompts/list")["result"],
            "resources": server.request("resources/list")["result"],
        }


def _serves_every_contribution(rows: dict[str, dict[str, Any]], served: dict[str, Any]) -> None:
    """pm-mcp lists each tool, prompt and protocol extension the plugin rows contribute."""

    def contributed(kind: str) -> set[str]:
        return {name for row in rows.values() for name in row["contributes"][kind]}

    assert set(tool_names(served["tools"])) == contributed("tools")
    assert {p["name"] for p in served["prompts"]["prompts"]} == contributed("prompts")
    assert set(served["capabilities"]["extensions"]) == contributed("protocol_extensions")
    assert {"pm_get", "pm_discover"} <= contributed("tools")  # tracker_tools, discovery


@pytest.fixture(scope="module")
def development(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the development environment's pm-mcp serves, built-ins only."""
    repo = tmp_path_factory.mktemp("dev") / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = _env(PM_LOAD_PLUGINS="")
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.cli.main", "init"], cwd=repo, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    return _served(repo, env, sys.executable)


def test_every_plugin_directory_is_a_named_built_in() -> None:
    # A plugin added to plugins/ but not to BUILTIN_PLUGINS would ship and never load.
    directories = {p.name for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").is_file()}
    assert directories == {name for name, _ in BUILTIN_PLUGINS}
    assert all(module == f"pm_plugins.{name}" for name, module in BUILTIN_PLUGINS)


def test_installed_wheel_lives_in_site_packages_with_no_top_level_plugins(
    installed: Venv,
) -> None:
    located = json.loads(
        installed.python_c(
            "import importlib.util, json, pm_core, pm_plugins;"
            "print(json.dumps([pm_core.__file__, pm_plugins.__file__,"
            " importlib.util.find_spec('plugins') is None]))"
        )
    )
    assert located == [
        str(installed.site / "pm_core" / "__init__.py"),
        str(installed.site / "pm_plugins" / "__init__.py"),
        True,
    ]
    assert not (installed.site / "plugins").exists()
    info = sorted(p.name for p in installed.site.glob("pm_tracker-*.dist-info"))
    assert info == ["pm_tracker-0.1.0.dist-info"]
    assert "pm.plugins" not in (installed.site / info[0] / "entry_points.txt").read_text()


def test_installed_wheel_lists_every_built_in_as_builtin_and_ok(installed: Venv) -> None:
    rows = _rows(installed, str(installed.root / "bin" / "pm-plugins"))
    assert set(rows) == BUILTIN_NAMES
    for name, row in rows.items():
        assert (row["source"], row["status"], row["error"]) == ("builtin", "ok", None), name
        assert row["hooks"], name
    assert rows["tracker_tools"]["module"] == "pm_plugins.tracker_tools"


def test_installed_wheel_serves_what_the_development_tree_serves(
    installed: Venv, development: dict[str, Any]
) -> None:
    served = _served(installed.repo, installed.env(), installed.python)
    _serves_every_contribution(_rows(installed, str(installed.root / "bin" / "pm-plugins")), served)
    assert tool_names(served["tools"]) == sorted(build_host({"PM_LOAD_PLUGINS": ""}).tools())
    assert served == development


def test_copy_without_metadata_has_no_pm_tracker_distribution(copied: Venv) -> None:
    found = copied.python_c(
        "import importlib.metadata as md, pm_core, pm_plugins\n"
        "try:\n    md.distribution('pm-tracker'); print('found')\n"
        "except md.PackageNotFoundError:\n    print(pm_core.__file__, pm_plugins.__file__)"
    )
    assert (
        found
        == f"{copied.pythonpath}/pm_core/__init__.py {copied.pythonpath}/pm_plugins/__init__.py"
    )


def test_copy_without_metadata_still_loads_every_built_in(copied: Venv) -> None:
    rows = _rows(copied, copied.python, "-m", "pm_core.cli.plugins_cmd")
    assert set(rows) == BUILTIN_NAMES
    for name, row in rows.items():
        assert (row["source"], row["status"], row["error"]) == ("builtin", "ok", None), name
        assert row["version"] == "0.1.0", name


def test_copy_without_metadata_serves_what_the_development_tree_serves(
    copied: Venv, development: dict[str, Any]
) -> None:
    served = _served(copied.repo, copied.env(), copied.python)
    _serves_every_contribution(
        _rows(copied, copied.python, "-m", "pm_core.cli.plugins_cmd"), served
    )
    assert served == development

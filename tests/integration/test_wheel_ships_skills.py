"""A built wheel carries the four skills (as ``pm_core._skills``), the built-in plugins
(as ``pm_plugins``) and every package.

Builds the wheel with ``python -m build --wheel`` into a temporary directory,
so it exercises the real packaging configuration, not the editable install.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKILL_NAMES = ("pm-developer", "pm-extensions", "pm-sdk", "pm-user")
#: Source files whose absence from the wheel would break an installed pm.
SHIPPED_SUFFIXES = {".py", ".md", ".html", ".json"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


def _tree(directory: str) -> set[str]:
    root = REPO / directory
    return {
        p.relative_to(REPO).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix in SHIPPED_SUFFIXES and "__pycache__" not in p.parts
    }


def test_wheel_ships_every_skill_file_under_pm_core_skills(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "pm_core/_skills/__init__.py" in names
    for skill in SKILL_NAMES:
        assert f"pm_core/_skills/{skill}/SKILL.md" in names
        assert any(n.startswith(f"pm_core/_skills/{skill}/references/") for n in names), skill
    source = {("pm_core/_skills/" + n.removeprefix("skills/")) for n in _tree("skills")}
    assert source <= names, sorted(source - names)


def test_wheel_skill_bytes_equal_the_source(wheel: zipfile.ZipFile) -> None:
    for skill in SKILL_NAMES:
        shipped = wheel.read(f"pm_core/_skills/{skill}/SKILL.md")
        assert shipped == (REPO / "skills" / skill / "SKILL.md").read_bytes()


def test_wheel_ships_every_package_and_data_file_of_the_source_tree(
    wheel: zipfile.ZipFile,
) -> None:
    # Catches a package added to the tree but not to pyproject's packages list.
    plugins = {"pm_plugins/" + n.removeprefix("plugins/") for n in _tree("plugins")}
    missing = sorted((_tree("pm_core") | plugins) - set(wheel.namelist()))
    assert missing == [], f"not in the wheel (add them to [tool.setuptools] packages): {missing}"


def test_wheel_has_no_top_level_plugins_package(wheel: zipfile.ZipFile) -> None:
    # A top-level "plugins" package would be overwritten by any other wheel shipping one.
    tops = {n.split("/", 1)[0] for n in wheel.namelist() if "/" in n}
    assert "plugins" not in tops
    assert {"pm_core", "pm_plugins"} <= tops

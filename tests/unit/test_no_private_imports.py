"""No pm module uses another module's ``_private`` names (house rule 12 of STYLE.md).

What is shared is public inside its package; an underscore name belongs to its
own module. The scan covers ``from X import _name`` and ``X._name`` where ``X`` is an
imported pm module (``pm_core`` or the built-in plugins, ``pm_plugins``), and
``obj._name`` on any object but ``self``/``cls`` when ``_name`` is defined in
another pm module and not in this one (``tracker._apply`` from claims).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"pm_core": ROOT / "pm_core", "pm_plugins": ROOT / "plugins"}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(package: str, base: Path, path: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    drop = node.level - 1 if is_package else node.level
    base = base[: len(base) - drop] if drop else base
    return ".".join([*base, *([node.module] if node.module else [])])


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def defined_private_names(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, assignments, ``self._x``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return {n for n in names if _is_private(n)}


def private_uses(
    module: str, source: str, is_package: bool = False, foreign: frozenset[str] = frozenset()
) -> list[str]:
    """Every use in ``source`` (module ``module``) of another pm module's private name.

    ``foreign`` holds the private names other pm modules define; ``obj._name`` with
    such a name (and not one this module defines) is a use of another module's name.
    """
    tree = ast.parse(source)
    own = defined_private_names(tree)
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> imported pm module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name):
                    for part in alias.name.split(".")[1:]:
                        if _is_private(part):
                            found.append(f"import {alias.name}")
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source_module = _resolve(module, node, is_package)
            if not _ours(source_module) or source_module == module:
                continue
            if any(_is_private(p) for p in source_module.split(".")[1:]):
                found.append(f"from {source_module} import ...")
            for alias in node.names:
                if _is_private(alias.name):
                    found.append(f"from {source_module} import {alias.name}")
                else:
                    aliases[alias.asname or alias.name] = f"{source_module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            target = node.value
            dotted: list[str] = []
            while isinstance(target, ast.Attribute):
                dotted.insert(0, target.attr)
                target = target.value
            if isinstance(target, ast.Name) and target.id in aliases:
                found.append(".".join([aliases[target.id], *dotted, node.attr]))
            elif (
                node.attr in foreign
                and node.attr not in own
                and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
            ):
                found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return sorted(found)


def _modules() -> list[tuple[str, Path]]:
    out = []
    for package, base in PACKAGES.items():
        for path in sorted(base.rglob("*.py")):
            out.append((_module_name(package, base, path), path))
    return out


# pm_core._skills is a data package (the shipped skills), named private so no one
# imports it as code; reading its files by that name is its purpose.
ALLOWED = ("pm_core._skills",)

MODULES = _modules()


def _foreign_names(module: str) -> frozenset[str]:
    names: set[str] = set()
    for other, defined in DEFINED.items():
        if other != module:
            names |= defined
    return frozenset(names)


DEFINED = {m: defined_private_names(ast.parse(p.read_text())) for m, p in MODULES}


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_module_uses_no_private_name_of_another_module(module: str, path: Path) -> None:
    uses = [
        use
        for use in private_uses(
            module, path.read_text(), path.name == "__init__.py", _foreign_names(module)
        )
        if not any(a in use for a in ALLOWED)
    ]
    assert not uses, f"{module} uses private names of other modules: {uses}"


def test_scan_finds_each_form_of_private_use() -> None:
    source = (
        "from pm_core.tracker.query.listing import _row\n"
        "from ..query import ranking\n"
        "import pm_core.tracker.api as api\n"
        "ranking._deadline_pressure(1)\n"
        "api.Tracker._apply\n"
        "def f(tracker):\n    tracker._apply(1)\n"
    )
    uses = private_uses("pm_core.tracker.index.rank", source, foreign=frozenset({"_apply"}))
    assert uses == [
        "from pm_core.tracker.query.listing import _row",
        "pm_core.tracker.api.Tracker._apply",
        "pm_core.tracker.query.ranking._deadline_pressure",
        "tracker._apply",
    ]


def test_scan_allows_own_and_dunder_names() -> None:
    source = (
        "from pm_core.tracker.query import listing\nlisting.__name__\n"
        "def _apply(): ...\nclass A:\n    def f(self, other):\n"
        "        self._apply()\n        other._apply()\n"
    )
    uses = private_uses("pm_core.tracker.query.x", source, foreign=frozenset({"_apply"}))
    assert uses == []

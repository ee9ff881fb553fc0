"""The ``skills`` check of ``pm health``: which skills the loader refuses, and why.

It loads the origins exactly as ``pm-mcp`` does, so a skill named here is one
``pm-mcp`` will not serve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pm_plugins.skills_sep2640.registry import SkillRegistry

from pm_core.contracts import SkillOrigin

#: The check's name in the health report.
SKILLS_CHECK: Final = "skills"
#: The remediation the report's ``remediation_map`` carries when skills are refused.
SKILLS_REMEDY: Final = (
    "fix or remove each refused skill directory (each failure names its reason); "
    "pm-mcp keeps serving the other skills meanwhile"
)
#: The name the loader gives a refusal that is not one skill's (a whole origin).
WHOLE_ORIGIN: Final = "*"


def skills_health(origins: Sequence[SkillOrigin]) -> dict[str, Any]:
    """Load ``origins`` and report the refused skills as one health check.

    Returns ``{"name": "skills", "ok", "problems", "failures", "detail"}``:
    ``failures`` holds ``{"id", "message", "origin", "path"}`` per refused
    skill (``id`` is the directory name, or ``"*"`` when a whole origin or an
    unnamed surplus was refused); ``problems`` says the same in one line
    each, like the report's other checks; ``detail`` counts what is served and
    lists skills hidden by a same-named skill of a higher-precedence origin.
    """
    registry = SkillRegistry.load(origins, log=False)
    roots = {origin.name: origin.root for origin in origins}
    failures: list[dict[str, Any]] = []
    for refused in registry.rejected:
        root = roots.get(refused.origin)
        path = (
            None if root is None else root if refused.name == WHOLE_ORIGIN else root / refused.name
        )
        failures.append(
            {
                "id": refused.name,
                "message": refused.reason,
                "origin": refused.origin,
                "path": None if path is None else str(path),
            }
        )
    problems = [f"{f['origin']} skill {f['id']!r}: {f['message']}" for f in failures]
    return {
        "name": SKILLS_CHECK,
        "ok": not failures,
        "problems": problems,
        "failures": failures,
        "detail": {
            "served": len(registry.skills),
            "refused": len(failures),
            "overridden": [
                {"id": o.name, "origin": o.origin, "by": o.by_origin} for o in registry.overridden
            ],
        },
    }


def with_skills_check(report: Mapping[str, Any], origins: Sequence[SkillOrigin]) -> dict[str, Any]:
    """``report`` (a ``pm health`` report) with the skills check appended.

    A refused skill makes the whole report unhealthy and adds the check's
    remediation, as any other failing check does. ``report`` is not modified.
    """
    check = skills_health(origins)
    merged = dict(report)
    merged["checks"] = [*report.get("checks", ()), check]
    if not check["ok"]:
        merged["ok"] = False
        merged["remediation_map"] = {
            **report.get("remediation_map", {}),
            SKILLS_CHECK: SKILLS_REMEDY,
        }
    return merged

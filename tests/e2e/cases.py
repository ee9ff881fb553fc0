"""Tool results for the view tests, and what each view must show for them.

The results come from a real ``pm-mcp`` (see ``workspace.py``). Cases a small
seeded workspace cannot produce are derived from those real results: a large
result repeats real rows past the view's bound, the text-only result drops
``structuredContent``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs

#: The list each view bounds, the bound, and how many rows the large case carries.
BOUNDS: dict[str, tuple[str, int]] = {
    "context": ("low_level", 100),
    "graph": ("nodes", 150),
    "plan": ("steps", 150),
    "assurance": ("checks[].failures", 200),
    "operations": ("runs", 50),
}
LARGE = 260


@attrs.frozen
class ViewCase:
    """One view, its tool's arguments and the real results it is tested with."""

    view: str
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    error: dict[str, Any]

    @property
    def payload(self) -> dict[str, Any]:
        """The canonical result (``structuredContent.result``)."""
        value: dict[str, Any] = self.result["structuredContent"]["result"]
        return value

    def text_only(self) -> dict[str, Any]:
        """The same result as a host without structured data would pass it on."""
        return {"content": copy.deepcopy(self.result["content"])}

    def large(self, rows: int = LARGE) -> dict[str, Any]:
        """The real result with its bounded list repeated to ``rows`` rows."""
        payload = copy.deepcopy(self.payload)
        INFLATE[self.view](payload, rows)
        return {
            "content": [{"type": "text", "text": "(large result)"}],
            "structuredContent": {"result": payload},
        }


def _repeat(rows: list[dict[str, Any]], count: int, key: str = "id") -> list[dict[str, Any]]:
    if not rows:
        raise AssertionError("the real result has no rows to repeat; seed more data")
    out = []
    for i in range(count):
        row = copy.deepcopy(rows[i % len(rows)])
        if key in row:
            row[key] = f"{row[key]}-{i}"
        out.append(row)
    return out


def _inflate_context(p: dict[str, Any], count: int) -> None:
    rows = p.get("low_level") or p.get("high_level") or []
    p["low_level"] = _repeat(rows, count)


def _inflate_graph(p: dict[str, Any], count: int) -> None:
    p["nodes"] = _repeat(p["nodes"], count)
    edges = p.get("edges") or []
    p["edges"] = [
        dict(e, to=f"{e['to']}-{i}")
        for i, e in enumerate(edges * (count // max(1, len(edges)) + 1))
    ][:count]
    p["counts"] = {"nodes": count, "edges": len(p["edges"])}


def _inflate_plan(p: dict[str, Any], count: int) -> None:
    p["steps"] = _repeat(p["steps"], count)


def _inflate_assurance(p: dict[str, Any], count: int) -> None:
    checks = p["checks"]
    failing = next((c for c in checks if c.get("failures")), None)
    if failing is None:
        raise AssertionError("the seeded workspace must fail at least one validation check")
    failing["failures"] = _repeat(failing["failures"], count)


def _inflate_operations(p: dict[str, Any], count: int) -> None:
    p["runs"] = _repeat(p["runs"], count, key="command")


INFLATE: dict[str, Callable[[dict[str, Any], int], None]] = {
    "context": _inflate_context,
    "graph": _inflate_graph,
    "plan": _inflate_plan,
    "assurance": _inflate_assurance,
    "operations": _inflate_operations,
}


def visible_facts(case: ViewCase) -> list[str]:
    """Strings from the real result that the rendered view must show."""
    p = case.payload
    if case.view == "context":
        rows = (
            (p.get("high_level") or [])
            + (p.get("low_level") or [])
            + (p.get("blocked_fallback") or [])
        )
        return [r["title"] for r in rows[:6]] + [r["id"] for r in rows[:6]]
    if case.view == "graph":
        return [n["id"] for n in p["nodes"][:8]]
    if case.view == "plan":
        return [p["plan"]["title"]] + [s["title"] for s in p["steps"][:8]]
    if case.view == "assurance":
        return [c["name"] for c in p["checks"]]
    if case.view == "operations":
        return [r["command"] for r in p["runs"][:6]]
    raise AssertionError(case.view)

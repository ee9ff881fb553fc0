"""SKILL.md frontmatter is accepted only when it maps one-to-one onto JSON."""

from __future__ import annotations

import pytest
from pm_plugins.skills_sep2640.frontmatter import parse_frontmatter
from pm_plugins.skills_sep2640.limits import SkillRejected


def _md(header: str, newline: str = "\n") -> bytes:
    return f"---{newline}{header}---{newline}Body.{newline}".encode()


def test_crlf_files_are_accepted() -> None:
    parsed = parse_frontmatter(_md("name: s\r\ndescription: d\r\n", "\r\n"), "s")
    assert parsed == {"name": "s", "description": "d"}


def test_a_fence_needs_its_own_line() -> None:
    text = "name: s\ndescription: 'ends --- here'\n"
    assert parse_frontmatter(_md(text), "s")["description"] == "ends --- here"
    with pytest.raises(SkillRejected, match="no closing"):
        parse_frontmatter(b"---\nname: s\ndescription: d\n --- \n", "s")


def test_timestamps_stay_the_text_the_author_wrote() -> None:
    parsed = parse_frontmatter(_md("name: s\ndescription: d\nat: 2026-01-02T03:04:05Z\n"), "s")
    assert parsed["at"] == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("name: s\ndescription: d\n1: one\n", "non-string key 1"),
        ("name: s\ndescription: d\nx: .inf\n", "not a finite number"),
        ("name: s\ndescription: d\nx: !!set {a: null}\n", "JSON cannot carry"),
        ("name: s\ndescription: d\nx: !custom 1\n", "not valid YAML"),
        ("name: s\ndescription: " + "d" * 1025 + "\n", "longer than 1024"),
        ("name: s\ndescription: d\nx: '" + "y" * 70_000 + "'\n", "larger than 65536 bytes"),
        ("name: s\ndescription: d\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("name: 5\ndescription: d\n", "not a valid skill name"),
        ("", "empty, not a mapping"),
    ],
)
def test_frontmatter_json_cannot_mirror_is_refused(header: str, reason: str) -> None:
    with pytest.raises(SkillRejected) as caught:
        parse_frontmatter(_md(header), "s")
    assert reason in caught.value.reason

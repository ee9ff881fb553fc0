"""A hostile workspace is refused skill by skill; the package skills keep working.

Every case builds a real tree under tmp_path, loads it beside the package
origin, and checks the offending skill is rejected with a reason that names
the problem while the four package skills are still listed and readable.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import structlog
from pm_plugins.skills_sep2640.limits import MAX_FILE_BYTES, MIB
from pm_plugins.skills_sep2640.registry import SkillRegistry
from pm_plugins.skills_sep2640.scan import plan_skill, read_planned
from pm_plugins.skills_sep2640.service import RegistryCache, SkillsService

from pm_core.contracts import ProtocolError
from tests.support.skills import (
    PACKAGE_SKILLS,
    package_origins,
    request,
    serve,
    workspace_origin,
    write_big,
    write_skill,
)

Builder = Callable[[Path], None]


def _load(workspace: Path) -> SkillRegistry:
    return SkillRegistry.load([*package_origins(), workspace_origin(workspace)])


def _assert_package_skills_work(registry: SkillRegistry, tmp_path: Path) -> None:
    package = [s.name for s in registry.skills if s.origin.kind == "package"]
    assert package == list(PACKAGE_SKILLS)
    for name in PACKAGE_SKILLS:
        content = registry.read(f"skill://{name}/SKILL.md")
        assert content.text is not None and content.text.startswith("---\nname: " + name)


def _reasons(registry: SkillRegistry, name: str) -> list[str]:
    return [r.reason for r in registry.rejected if r.name == name]


# --- one offending skill at a time ------------------------------------------------


def _symlinked_file(root: Path) -> None:
    skill = write_skill(root, "evil")
    (skill / "references").mkdir()
    os.symlink("/etc/passwd", skill / "references" / "passwd.md")


def _symlinked_dir(root: Path) -> None:
    skill = write_skill(root, "evil")
    os.symlink(root.parent, skill / "escape")


def _symlinked_skill(root: Path) -> None:
    write_skill(root.parent / "elsewhere", "evil")
    root.mkdir(parents=True, exist_ok=True)
    os.symlink(root.parent / "elsewhere" / "evil", root / "evil")


def _alias(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\ndescription: &d hi\nsummary: *d\n")


def _laughs(root: Path) -> None:
    rows = ["name: evil", "description: boom", "a: &a [x, x, x, x, x, x, x, x, x]"]
    rows += [
        f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    write_skill(root, "evil", frontmatter="\n".join(rows) + "\n")


def _merge_key(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\ndescription: d\n<<: {license: MIT}\n")


def _duplicate_key(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\ndescription: safe\ndescription: sneaky\n")


def _sequence(root: Path) -> None:
    write_skill(root, "evil", frontmatter="- name: evil\n- description: d\n")


def _scalar(root: Path) -> None:
    write_skill(root, "evil", frontmatter="just text\n")


def _binary_value(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\ndescription: d\nblob: !!binary aGk=\n")


def _name_mismatch(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: pm-user\ndescription: impostor\n")


def _bad_directory_name(root: Path) -> None:
    write_skill(root, "Evil--Name", frontmatter="name: Evil--Name\ndescription: d\n")


def _missing_description(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\n")


def _blank_description(root: Path) -> None:
    write_skill(root, "evil", frontmatter="name: evil\ndescription: '  '\n")


def _no_fence(root: Path) -> None:
    skill = root / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("name: evil\ndescription: d\n")


def _unclosed_fence(root: Path) -> None:
    skill = root / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: evil\ndescription: d\n")


def _not_utf8(root: Path) -> None:
    skill = root / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(b"---\nname: evil\ndescription: \xff\xfe\n---\n")


def _no_skill_md(root: Path) -> None:
    (root / "evil" / "references").mkdir(parents=True)
    (root / "evil" / "references" / "A.md").write_text("a")


def _fifo(root: Path) -> None:
    skill = write_skill(root, "evil")
    os.mkfifo(skill / "pipe")


def _oversized_file(root: Path) -> None:
    skill = write_skill(root, "evil")
    write_big(skill / "references" / "huge.md", MAX_FILE_BYTES + 1)


def _too_many_files(root: Path) -> None:
    write_skill(root, "evil", files={f"r/{i:03d}.md": "x" for i in range(512)})  # + SKILL.md = 513


def _skill_over_16_mib(root: Path) -> None:
    skill = write_skill(root, "evil")
    write_big(skill / "a.bin", 9 * MIB)
    write_big(skill / "b.bin", 8 * MIB)


def _too_many_directories_in_skill(root: Path) -> None:
    skill = write_skill(root, "evil")
    for i in range(513):
        (skill / f"d{i}").mkdir()


HOSTILE: dict[str, tuple[Builder, str, str]] = {
    # case: (builder, rejected skill name, words the reason must contain)
    "symlinked-file": (_symlinked_file, "evil", "symbolic link"),
    "symlinked-dir": (_symlinked_dir, "evil", "symbolic link"),
    "symlinked-skill": (_symlinked_skill, "evil", "symbolic link"),
    "yaml-alias": (_alias, "evil", "YAML anchor"),
    "billion-laughs": (_laughs, "evil", "YAML anchor"),
    "merge-key": (_merge_key, "evil", "merge key"),
    "duplicate-key": (_duplicate_key, "evil", "duplicate key 'description'"),
    "sequence-frontmatter": (_sequence, "evil", "not a mapping"),
    "scalar-frontmatter": (_scalar, "evil", "not a mapping"),
    "binary-value": (_binary_value, "evil", "JSON cannot carry"),
    "name-mismatch": (_name_mismatch, "evil", "does not match the directory name"),
    "bad-directory-name": (_bad_directory_name, "Evil--Name", "not a valid skill name"),
    "missing-description": (_missing_description, "evil", "no description"),
    "blank-description": (_blank_description, "evil", "no description"),
    "no-fence": (_no_fence, "evil", "frontmatter fence"),
    "unclosed-fence": (_unclosed_fence, "evil", "no closing"),
    "not-utf8": (_not_utf8, "evil", "not valid UTF-8"),
    "no-skill-md": (_no_skill_md, "evil", "no SKILL.md"),
    "fifo": (_fifo, "evil", "not a regular file"),
    "oversized-file": (_oversized_file, "evil", "file limit"),
    "too-many-files": (_too_many_files, "evil", "more than 512 files"),
    "skill-over-16-mib": (_skill_over_16_mib, "evil", "more than 16777216 bytes"),
    "too-many-dirs-in-skill": (_too_many_directories_in_skill, "evil", "more than 512 directories"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_skill_is_refused_and_package_skills_keep_working(
    case: str, tmp_path: Path
) -> None:
    builder, name, words = HOSTILE[case]
    workspace = tmp_path / "ws" / ".agents" / "skills"
    workspace.mkdir(parents=True, exist_ok=True)
    builder(workspace)
    write_skill(workspace, "good-neighbour")
    registry = _load(workspace)
    reasons = _reasons(registry, name)
    assert len(reasons) == 1 and words in reasons[0], registry.rejected
    assert registry.skill(f"skill://{name}/SKILL.md") is None
    assert all(not f.uri.startswith(f"skill://{name}/") for s in registry.skills for f in s.files)
    assert registry.skill("skill://good-neighbour/SKILL.md") is not None
    _assert_package_skills_work(registry, tmp_path)


def test_rejections_are_logged_with_skill_origin_and_reason(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    _duplicate_key(workspace)
    with structlog.testing.capture_logs() as logs:
        SkillRegistry.load([workspace_origin(workspace)])
    assert {
        "event": "skill_rejected",
        "log_level": "warning",
        "skill": "evil",
        "origin": "workspace",
        "reason": "frontmatter has a duplicate key 'description'",
    } in logs


def test_rejected_workspace_override_leaves_the_package_skill_in_place(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    write_skill(workspace, "pm-user", frontmatter="name: pm-user\ndescription: &x bad\n")
    registry = _load(workspace)
    assert _reasons(registry, "pm-user") == ["frontmatter uses a YAML anchor"]
    skill = registry.skill("skill://pm-user/SKILL.md")
    assert skill is not None and skill.origin.kind == "package"


def test_symlinked_skills_root_is_refused_as_a_whole(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_skill(real, "fine")
    link = tmp_path / "linked"
    os.symlink(real, link)
    registry = _load(link)
    assert [(r.name, r.reason) for r in registry.rejected] == [
        ("*", "origin root 'linked' is a symbolic link")
    ]
    _assert_package_skills_work(registry, tmp_path)


def test_handlers_keep_serving_package_skills_beside_a_hostile_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    _symlinked_file(workspace)
    _oversized_file(workspace / "more")  # a nested tree is still just one skill's problem
    ctx = serve(request(), [*package_origins(), workspace_origin(workspace)], tmp_path)
    service = SkillsService(RegistryCache())
    listed = [s["frontmatter"]["name"] for s in service.skills_list(ctx, {})["skills"]]
    assert listed == list(PACKAGE_SKILLS)
    with pytest.raises(ProtocolError) as caught:
        service.resource_provider().read(ctx, "skill://evil/SKILL.md")
    assert caught.value.code == -32602


# --- limits checked from metadata before reading -------------------------------------


def test_oversized_file_is_refused_without_reading_its_body(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    _oversized_file(workspace)
    tracemalloc.start()
    try:
        registry = SkillRegistry.load([workspace_origin(workspace)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert _reasons(registry, "evil") == [
        f"'references/huge.md' is {MAX_FILE_BYTES + 1} bytes, over the {MAX_FILE_BYTES}-byte file limit"
    ]
    assert peak < 2 * MIB  # reading the 16 MiB body would have allocated it


def test_origin_over_32_mib_rejects_its_surplus_without_reading_it(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    for name in ("big-a", "big-b", "big-c"):
        skill = write_skill(workspace, name)
        write_big(skill / "payload.bin", 12 * MIB)  # each skill is under 16 MiB
    tracemalloc.start()
    try:
        registry = _load(workspace)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [s.name for s in registry.skills if s.origin.kind == "workspace"] == ["big-a", "big-b"]
    assert len(_reasons(registry, "big-c")) == 1
    assert "33554432-byte budget" in _reasons(registry, "big-c")[0]
    assert peak < 30 * MIB  # two retained 12 MiB bodies; a third would need 36 MiB
    _assert_package_skills_work(registry, tmp_path)


def test_more_than_100_candidate_directories_rejects_the_surplus(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    names = [f"s{i:03d}" for i in range(103)]
    for name in names:
        write_skill(workspace, name)
    for housekeeping in ("__pycache__", ".git", "_drafts"):
        (workspace / housekeeping).mkdir()
    registry = _load(workspace)
    served = [s.name for s in registry.skills if s.origin.kind == "workspace"]
    assert served == names[:100]
    assert [r.name for r in registry.rejected] == names[100:]
    assert all("more than 100 candidate skill directories" in r.reason for r in registry.rejected)
    _assert_package_skills_work(registry, tmp_path)


def test_invalid_candidates_count_toward_the_100_directory_limit(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    for i in range(101):
        (workspace / f"junk-{i:03d}").mkdir(parents=True)  # no SKILL.md: still a candidate
    write_skill(workspace, "zz-last")
    registry = SkillRegistry.load([workspace_origin(workspace)])
    assert registry.skills == ()
    surplus = [r.name for r in registry.rejected if "candidate skill directories" in r.reason]
    assert surplus == ["junk-100", "zz-last"]


def test_exactly_512_files_is_accepted(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    write_skill(workspace, "full", files={f"r/{i:03d}.md": "x" for i in range(511)})
    registry = SkillRegistry.load([workspace_origin(workspace)])
    assert registry.rejected == ()
    assert len(registry.skills[0].files) == 512


def test_file_swapped_after_planning_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "skills"
    skill = write_skill(workspace, "racy", files={"a.md": "short"})
    plan = plan_skill(workspace, "racy")
    planned = next(f for f in plan.files if f.rel == "a.md")
    (skill / "a.md").write_text("now much longer than planned")
    with pytest.raises(Exception, match="changed while the skill was loading"):
        read_planned(planned)
    (skill / "a.md").unlink()
    os.symlink(skill / "SKILL.md", skill / "a.md")
    with pytest.raises(Exception, match=r"could not be opened|changed while"):
        read_planned(planned)

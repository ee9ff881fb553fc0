"""The memory ceiling of a hostile ``.agents/skills``, measured on a real ``pm-mcp``.

The workspace offers 150 skill directories holding about 1.4 GiB by
``st_size`` (sparse files: the limits check metadata, and the two accepted
big skills are really read). The loader must keep at most 100 candidates,
refuse every skill over a limit from ``lstat`` alone, and retain no more than
the origin's 32 MiB -- so the server's peak resident set (``VmHWM``) after
``skills/list`` stays under 150 MB. The figures are printed (``pytest -s``)
and written to ``tests/output/skills_memory.txt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.mcp_client import McpProcess
from tests.support.skills import write_skill
from tests.support.skills_wire import NEGOTIATED, init_repo, ok

MIB = 1024 * 1024
CEILING_BYTES = 150 * 1000 * 1000
PACKAGE = ["pm-developer", "pm-extensions", "pm-sdk", "pm-user"]
OUTPUT = Path(__file__).resolve().parents[1] / "output" / "skills_memory.txt"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads VmHWM from /proc"
)


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.truncate(size)


def _hostile_workspace(skills: Path) -> list[str]:
    """Build the workspace; return the workspace skills that must be served."""
    served: list[str] = []
    for i in range(150):
        name = f"s{i:03d}"
        skill = write_skill(skills, name)
        if i < 20 or i >= 100:
            # 15 MiB each: s000 and s001 fill the origin's 32 MiB budget, the
            # next 18 are refused by it, s100+ are past the 100-directory cap.
            _sparse(skill / "payload.bin", 15 * MIB)
            if i < 2:
                served.append(name)
        elif i < 30:
            _sparse(skill / "references" / "huge.md", 16 * MIB + 1)
        elif i < 40:
            _sparse(skill / "a.bin", 9 * MIB)
            _sparse(skill / "b.bin", 9 * MIB)
        elif i == 40:
            for n in range(512):
                (skill / f"f{n:03d}.md").write_bytes(b"x")
        elif i == 41:
            for n in range(513):
                (skill / f"d{n:03d}").mkdir()
        else:
            served.append(name)
    return served


def _peak_rss(server: McpProcess) -> int:
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    [line] = [row for row in status.splitlines() if row.startswith("VmHWM:")]
    value, unit = line.split()[1:3]
    assert unit == "kB"
    return int(value) * 1024


def _load_and_measure(repo: Path) -> tuple[list[str], int]:
    with McpProcess(repo, timeout=60) as server:
        page = ok(server.modern("skills/list", {"limit": 100}, extensions=NEGOTIATED))
        assert "nextCursor" not in page
        names = [s["frontmatter"]["name"] for s in page["skills"]]
        return names, _peak_rss(server)


def test_hostile_workspace_keeps_peak_rss_under_150_mb(tmp_path: Path) -> None:
    baseline_repo = init_repo(tmp_path / "baseline")
    hostile_repo = init_repo(tmp_path / "hostile")
    served = _hostile_workspace(hostile_repo / ".agents" / "skills")
    baseline_names, baseline = _load_and_measure(baseline_repo)
    names, peak = _load_and_measure(hostile_repo)
    report = (
        f"pm-mcp peak RSS (VmHWM) after skills/list: package skills only "
        f"{baseline / MIB:.1f} MiB; hostile workspace (150 dirs, "
        f"{len(served)} served, 30 MiB retained) {peak / MIB:.1f} MiB; "
        f"difference {(peak - baseline) / MIB:.1f} MiB; ceiling {CEILING_BYTES / MIB:.1f} MiB\n"
    )
    print(report, end="")
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(report, encoding="utf-8")
    assert peak < CEILING_BYTES, report
    assert baseline_names == PACKAGE
    assert names == sorted([*PACKAGE, *served])

"""Skills over MCP: registry load time and per-request cost.

Run: ``.venv/bin/python tests/bench/bench_skills.py [--runs 15] [--skills 100]``

Prints, as median and p95 over ``--runs`` loads (each a fresh registry, so
every file is walked, read and hashed again):

- the four package skills shipped in the wheel;
- a generated workspace of ``--skills`` skills (SKILL.md plus four
  references each), alone and beside the package skills;
- the full per-origin envelope: two skills of 16 MiB each (32 MiB read and
  hashed);

then the per-request cost of ``skills/list`` (one page of 20) and of one
``resources/read``, which never touch the disk.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pm_plugins.skills_sep2640 import pm_skill_origins
from pm_plugins.skills_sep2640.limits import MIB

from pm_core.contracts import SkillOrigin
from pm_core.sdk import SkillRegistry

PARAGRAPH = (
    "Search before creating; claim before editing; link files and tests as evidence; "
    "close with a reason that says what proves the work is done.\n"
)


def generate_workspace(root: Path, count: int) -> int:
    """``count`` skills of SKILL.md + 4 references (~2-6 KiB each); returns bytes written."""
    written = 0
    for i in range(count):
        skill = root / f"team-skill-{i:03d}"
        (skill / "references").mkdir(parents=True)
        body = f"---\nname: team-skill-{i:03d}\ndescription: Generated skill {i}.\n---\n"
        body += PARAGRAPH * (20 + i % 20)
        (skill / "SKILL.md").write_text(body)
        written += len(body)
        for ref in range(4):
            text = f"# Reference {ref}\n" + PARAGRAPH * (10 + (i + ref) % 30)
            (skill / "references" / f"REF_{ref}.md").write_text(text)
            written += len(text)
    return written


def generate_envelope(root: Path) -> None:
    """Two skills at the 16 MiB per-skill limit: the whole 32 MiB origin budget."""
    for name in ("envelope-a", "envelope-b"):
        skill = root / name
        skill.mkdir(parents=True)
        header = f"---\nname: {name}\ndescription: At the size limit.\n---\n".encode()
        (skill / "SKILL.md").write_bytes(header)
        with (skill / "payload.bin").open("wb") as out:
            remaining = 16 * MIB - len(header)
            chunk = bytes(range(256)) * 4096
            while remaining > 0:
                out.write(chunk[: min(remaining, len(chunk))])
                remaining -= len(chunk)


def timed(runs: int, action: Callable[[], object]) -> tuple[float, float]:
    """Median and p95 wall time of ``action`` in milliseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, math.ceil(0.95 * len(samples)) - 1)]
    return statistics.median(samples), p95


def row(label: str, figures: tuple[float, float], note: str = "") -> None:
    median, p95 = figures
    print(f"{label:<44} median {median:9.3f} ms   p95 {p95:9.3f} ms   {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skills", type=int, default=100)
    args = parser.parse_args()

    package = list(pm_skill_origins(None))
    registry = SkillRegistry.load(package)
    files = sum(len(s.files) for s in registry.skills)
    size = sum(s.total_bytes for s in registry.skills)
    print(f"python {sys.version.split()[0]}, {args.runs} runs per figure\n")
    row(
        "load: 4 package skills",
        timed(args.runs, lambda: SkillRegistry.load(package)),
        f"{files} files, {size} bytes",
    )

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        written = generate_workspace(root, args.skills)
        workspace = SkillOrigin(name="workspace", kind="workspace", root=root, precedence=100)
        loaded = SkillRegistry.load([workspace])
        assert len(loaded.skills) == min(args.skills, 100), loaded.rejected
        note = f"{args.skills * 5} files, {written} bytes, {len(loaded.rejected)} rejected"
        row(
            f"load: {args.skills}-skill workspace",
            timed(args.runs, lambda: SkillRegistry.load([workspace])),
            note,
        )
        row(
            f"load: package + {args.skills}-skill workspace",
            timed(args.runs, lambda: SkillRegistry.load([*package, workspace])),
        )

        envelope_root = Path(tmp) / "envelope"
        generate_envelope(envelope_root)
        envelope = SkillOrigin(name="envelope", kind="workspace", root=envelope_root)
        row(
            "load: 32 MiB envelope (2 x 16 MiB skills)",
            timed(max(3, args.runs // 3), lambda: SkillRegistry.load([envelope])),
        )

        both = SkillRegistry.load([*package, workspace])
        row(
            "skills/list, one page of 20",
            timed(args.runs * 20, lambda: both.list(None, 20)),
        )
        row(
            "resources/read of one SKILL.md",
            timed(args.runs * 20, lambda: both.read("skill://pm-developer/SKILL.md")),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

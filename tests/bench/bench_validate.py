"""Benchmark ``pm validate`` and history verification, this pm against the TypeScript pm.

Usage::

    PM_UPSTREAM_BIN=<oracle bin folder> [PM_TS_TRACKER=<repo holding .agents/pm>] \\
        python tests/bench/bench_validate.py [--items 10000] [--entries 8] [--rounds 1]

Trackers: a generated one (``--items`` items, each with a history of
``--entries`` changes after its create: comments, priority and status
changes), and, when ``PM_TS_TRACKER`` names a repository, a copy of that real
tracker (the TypeScript pm's own has 2,536 items and ~53,000 history
entries). For each, both implementations run their full ``validate`` and
their history check, in alternating order each round, first cold (each
tracker's ``runtime/`` caches removed, as on a fresh clone: the TypeScript pm
keeps a history drift cache there) and then warm (after an untimed run);
figures are wall time and CPU time (user + system, child processes included).
Unset PYTHONDONTWRITEBYTECODE when measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.bench.generate import generate  # noqa: E402


def lengthen_histories(root: Path, entries: int) -> int:
    """Give every item ``entries`` more changes, written as ``pm`` writes them. Returns the total."""
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.storage import history as hist

    tracker = Tracker(root, author="bench")
    statuses = ("open", "in_progress", "blocked", "open")
    total = 0
    for path in sorted(root.glob("*/*.toon")):
        item = tracker.store.read_path(path)
        for step in range(entries):
            before = json.loads(json.dumps(hist.item_document(item)))  # item's lists are shared
            stamp = f"2026-03-{1 + step % 28:02d}T{step % 24:02d}:00:00.000Z"
            if step % 3 == 0:
                item.comments.append(
                    {"created_at": stamp, "author": "bench", "text": f"progress note {step}"}
                )
            elif step % 3 == 1:
                item.priority = step % 5
            else:
                item.status = statuses[step % len(statuses)]
            item.updated_at = stamp
            entry = hist.build_entry(
                ts=stamp, author="bench", op="update", before=before, after=hist.item_document(item)
            )
            hist.append_entry(tracker.store.history_dir, item.id, entry)
            total += 1
        tracker.store.write(item, path)
    return total


def timed(command: list[str], cwd: Path, *, cold: bool) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (children) and exit code of one run.

    ``cold``: the tracker's ``runtime/`` caches are removed first (the
    TypeScript pm keeps a history drift cache there, this pm its read index),
    as on a fresh clone; otherwise the run follows an untimed one.
    """
    runtime = cwd / ".agents" / "pm" / "runtime"
    if cold:
        shutil.rmtree(runtime, ignore_errors=True)
    else:
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def bench(repo: Path, label: str, ours: str, theirs: str | None, rounds: int) -> None:
    runs = {
        "ours validate": [ours, "validate", "--json"],
        "ours history": [ours, "validate", "--check", "history", "--json"],
    }
    if theirs:
        runs["theirs validate"] = [theirs, "validate", "--json"]
        runs["theirs history"] = [theirs, "validate", "--check-history-drift", "--json"]
    names = list(runs)
    for cold in (True, False):
        figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in runs}
        for number in range(rounds):
            order = names if number % 2 == 0 else list(reversed(names))
            for name in order:
                figures[name].append(timed(runs[name], repo, cold=cold))
        print(f"\n{label}, {'cold (runtime caches removed)' if cold else 'warm (second run)'}")
        for name in names:
            walls = [w for w, _, _ in figures[name]]
            cpus = [c for _, c, _ in figures[name]]
            codes = sorted({c for _, _, c in figures[name]})
            print(
                f"  {name:16} wall {min(walls):7.2f} s (best of {rounds}, median "
                f"{statistics.median(walls):.2f})  cpu {min(cpus):7.2f} s  exit {codes}"
            )
        if theirs:
            for kind in ("validate", "history"):
                ours_cpu = min(c for _, c, _ in figures[f"ours {kind}"])
                theirs_cpu = min(c for _, c, _ in figures[f"theirs {kind}"])
                ours_wall = min(w for w, _, _ in figures[f"ours {kind}"])
                theirs_wall = min(w for w, _, _ in figures[f"theirs {kind}"])
                print(
                    f"  {kind}: ours {theirs_wall / ours_wall:.1f}x faster (wall), "
                    f"{theirs_cpu / ours_cpu:.1f}x less CPU"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items", type=int, default=10_000, help="Generated tracker size (0: the real one only)."
    )
    parser.add_argument("--entries", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    ours = str(Path(sys.executable).with_name("pm"))
    folder = os.environ.get("PM_UPSTREAM_BIN")
    theirs = str(Path(folder) / "pm") if folder else None
    if theirs is None:
        print("PM_UPSTREAM_BIN is not set: this pm only", file=sys.stderr)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        if args.items:
            repo = base / "generated"
            started = time.perf_counter()
            root = generate(args.items, repo, jobs=2, history=True)
            added = lengthen_histories(root, args.entries)
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            print(
                f"generated {args.items} items, {args.items + added} history entries "
                f"in {time.perf_counter() - started:.1f} s"
            )
            bench(repo, f"generated: {args.items} items", ours, theirs, args.rounds)
        real = os.environ.get("PM_TS_TRACKER")
        if real and (Path(real) / ".agents" / "pm").is_dir():
            copy = base / "real"
            shutil.copytree(Path(real) / ".agents" / "pm", copy / ".agents" / "pm")
            subprocess.run(["git", "init", "-q", str(copy)], check=True)
            bench(copy, "the TypeScript pm's own tracker", ours, theirs, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Merge driver cost: ours against the TypeScript pm's, side by side in one run.

Run: ``PM_UPSTREAM_BIN=DEST/bin python tests/bench/bench_merge.py [--runs 21] [--items 100,500]``

* per-file driver time: one item file and one history file, each merged from
  a base and two sides (a comment on one, a tag and a comment on the other),
  the driver run as git runs it (a new process per file); median and p90 ms;
* whole ``git merge`` wall time: two branches that each touched the same N
  items (a comment and a field on each), merged in a fresh copy of the
  repository once with our drivers configured and once with the TypeScript
  pm's; the sizes alternate, and ours and theirs alternate within each size.

Items are made through the SDK (no per-item process start), so the setup is
quick; the merge itself runs git and the configured drivers only.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pm_core.tracker.api import Tracker
from pm_core.tracker.merge.install import DRIVERS, driver_command

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_MERGE_AUTOEDIT": "no",
}


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def ts_command(upstream: Path, kind: str, item_path: bool) -> str:
    command = f'{shlex.quote(str(upstream / "pm"))} merge driver {kind} "%O" "%A" "%B"'
    return command + (" --item-path %P" if item_path else "")


def configure(repo: Path, upstream: Path | None) -> None:
    for d in DRIVERS:
        value = (
            driver_command(d.kind, d.item_path)
            if upstream is None
            else ts_command(upstream, d.kind, d.item_path)
        )
        git(repo, "config", f"merge.{d.key}.driver", value)


def build(base: Path, count: int) -> Path:
    """A repository with ``count`` items and branches ``a`` and ``b`` that each touch all of them."""
    repo = base / f"repo-{count}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    tracker = Tracker(repo / ".agents" / "pm", author="bench", env={})
    tracker.init()
    ids = [
        tracker.create({"title": f"item {n}", "description": "bench"})["id"] for n in range(count)
    ]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for branch, change in (("a", {"priority": 1}), ("b", {"tags": ["bench"]})):
        git(repo, "checkout", "-q", "-B", branch, "main")
        side = Tracker(repo / ".agents" / "pm", author=f"agent-{branch}", env={})
        for item_id in ids:
            side.add_log("comments", item_id, f"from {branch}")
            side.update(item_id, change)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", branch)
    return repo


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_merge(repo: Path, work: Path, upstream: Path | None) -> tuple[float, float]:
    copy = work / ("ts" if upstream else "ours")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True)
    configure(copy, upstream)
    git(copy, "checkout", "-q", "b")
    cpu = _child_cpu()
    started = time.perf_counter()
    result = git(copy, "merge", "a", "-m", "merge")
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"merge failed ({'ts' if upstream else 'ours'}): {result.stdout[-500:]}")
    return elapsed, _child_cpu() - cpu


def driver_files(repo: Path, work: Path) -> dict[str, tuple[Path, Path, Path, str]]:
    """Base/ours/theirs of one item file and one history file, from the branches."""
    listed = git(repo, "ls-tree", "-r", "--name-only", "main", ".agents/pm/tasks").stdout.split()
    item = listed[0]
    history = item.replace("tasks/", "history/").replace(".toon", ".jsonl")
    out: dict[str, tuple[Path, Path, Path, str]] = {}
    for kind, path in (("item", item), ("history", history)):
        files = []
        for ref in ("main", "b", "a"):
            target = work / f"{kind}-{ref}"
            target.write_text(git(repo, "show", f"{ref}:{path}").stdout)
            files.append(target)
        out[kind] = (files[0], files[1], files[2], path)
    return out


def time_driver(
    cmd: list[str], files: tuple[Path, Path, Path, str], cwd: Path, work: Path
) -> float:
    base, ours, theirs, path = files
    scratch = work / "scratch-ours"
    shutil.copyfile(ours, scratch)
    if cmd[0] == "ours":  # the command `pm merge install` configures for this kind
        kind = cmd[1]
        line = driver_command(kind, item_path="tasks/" in path)
        for placeholder, value in (
            ('"%O"', base),
            ('"%A"', scratch),
            ('"%B"', theirs),
            ("%P", path),
        ):
            line = line.replace(placeholder, shlex.quote(str(value)))
        args = ["sh", "-c", line]
    else:
        args = [*cmd, str(base), str(scratch), str(theirs)]
        if "tasks/" in path:
            args += ["--item-path", path]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu = _child_cpu()
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"driver failed: {' '.join(cmd)}: {proc.stderr.decode()[-400:]}")
    return elapsed, _child_cpu() - cpu


def fmt(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return f"median {statistics.median(ms):7.1f} ms  p90 {p90:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--items", default="100,500")
    parser.add_argument("--merge-runs", type=int, default=3)
    parser.add_argument(
        "--ts-max-items", type=int, default=10**9, help="Time the TypeScript merge only up to N."
    )
    args = parser.parse_args()
    upstream_env = os.environ.get("PM_UPSTREAM_BIN")
    upstream = Path(upstream_env) if upstream_env else None
    if upstream is None:
        print("PM_UPSTREAM_BIN is not set: measuring ours only")
    sizes = [int(s) for s in args.items.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as tmp:
        work = Path(tmp)
        repos = {size: build(work, size) for size in sizes}
        files = driver_files(repos[sizes[0]], work)
        # Ours exactly as git runs it: the configured command, through the shell.
        ours_cmd = ["ours"]
        ts_cmd = [str(upstream / "pm"), "merge", "driver"] if upstream else None
        print(f"per-file driver time ({args.runs} runs each, alternating; wall, then CPU):")
        for kind, sides in files.items():
            times: dict[str, list[tuple[float, float]]] = {"ours": [], "ts": []}
            for _ in range(args.runs):
                times["ours"].append(time_driver([*ours_cmd, kind], sides, repos[sizes[0]], work))
                if ts_cmd:
                    times["ts"].append(time_driver([*ts_cmd, kind], sides, repos[sizes[0]], work))
            print(f"  {kind:8} ours wall {fmt([w for w, _ in times['ours']])}")
            print(f"  {kind:8} ours cpu  {fmt([c for _, c in times['ours']])}")
            if ts_cmd:
                print(f"  {kind:8} ts   wall {fmt([w for w, _ in times['ts']])}")
                print(f"  {kind:8} ts   cpu  {fmt([c for _, c in times['ts']])}")
                ratio = statistics.median(w for w, _ in times["ts"]) / statistics.median(
                    w for w, _ in times["ours"]
                )
                print(f"  {kind:8} ts/ours wall {ratio:.1f}x")
        print(f"whole git merge, two branches touching the same N items ({args.merge_runs} runs):")
        results: dict[tuple[int, str], list[tuple[float, float]]] = {}
        ts_sizes = [s for s in sizes if s <= args.ts_max_items]
        for _ in range(args.merge_runs):
            for size in sizes:
                results.setdefault((size, "ours"), []).append(time_merge(repos[size], work, None))
                if upstream and size in ts_sizes:
                    results.setdefault((size, "ts"), []).append(
                        time_merge(repos[size], work, upstream)
                    )
        for size in sizes:
            ours_wall = statistics.median(w for w, _ in results[(size, "ours")])
            ours_cpu = statistics.median(c for _, c in results[(size, "ours")])
            line = f"  N={size:4} ours {ours_wall:7.2f} s wall {ours_cpu:7.2f} s cpu"
            if (size, "ts") in results:
                ts_wall = statistics.median(w for w, _ in results[(size, "ts")])
                ts_cpu = statistics.median(c for _, c in results[(size, "ts")])
                line += f" | ts {ts_wall:7.2f} s wall {ts_cpu:7.2f} s cpu"
                line += (
                    f" | {ts_wall / ours_wall:.1f}x faster (wall), {ts_cpu / ours_cpu:.1f}x (cpu)"
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()

"""Claim latency with leases on a git remote (a local bare repository).

Run: ``python tests/bench/bench_claims.py [--runs 20]``

Builds a bare repository, a clone with a tracker in ``claims.mode`` remote and
one item, then times through the SDK (warm process, so the figures are the
lease work and not interpreter start-up):

* remote claim, remote release, and the claim+release cycle (p50/p95 ms);
* a losing claim against a live lease held from a second clone (the
  conflict path: a rejected push, a read and a fetch of the winner's lease);
* the same claim+release cycle in local mode, for comparison.

A local bare remote measures git's own cost (process starts, pack exchange,
ref locking); a network remote adds its round trips on top.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import ConflictError

GIT_ID = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True)


def set_mode(clone: Path, mode: str) -> None:
    path = clone / ".agents" / "pm" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["claims"]["mode"] = mode
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def setup(base: Path) -> tuple[Path, Path, str]:
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    first = base / "first"
    subprocess.run(["git", "clone", "-q", str(remote), str(first)], check=True, capture_output=True)
    tracker = Tracker(first / ".agents" / "pm", author="bench", env={})
    tracker.init()
    set_mode(first, "remote")
    tracker.reload()
    item = str(tracker.create({"title": "Benchmark item"})["id"])
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "seed")
    git(first, "push", "-q", "origin", "HEAD")
    second = base / "second"
    subprocess.run(
        ["git", "clone", "-q", str(remote), str(second)], check=True, capture_output=True
    )
    return first, second, item


def timed(runs: int, step: Callable[[], None]) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{name:<34} p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per figure")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="pm-bench-claims-") as tmp:
        first, second, item = setup(Path(tmp))
        me = Tracker(first / ".agents" / "pm", author="bench", env={})
        other = Tracker(second / ".agents" / "pm", author="rival", env={})
        claim_ms: list[float] = []
        release_ms: list[float] = []
        cycle_ms: list[float] = []
        me.claim(item)  # warm-up: first object writes, first fetch
        me.release(item)
        for _ in range(runs):
            start = time.perf_counter()
            me.claim(item)
            middle = time.perf_counter()
            me.release(item)
            end = time.perf_counter()
            claim_ms.append((middle - start) * 1000)
            release_ms.append((end - middle) * 1000)
            cycle_ms.append((end - start) * 1000)
        me.claim(item)

        def lose() -> None:
            try:
                other.claim(item)
            except ConflictError:
                return
            raise SystemExit("the rival's claim won against a live lease: benchmark invalid")

        losing_ms = timed(runs, lose)
        me.release(item)
        set_mode(first, "local")
        me.reload()

        def cycle() -> None:
            me.claim(item)
            me.release(item)

        local_ms = timed(runs, cycle)
        print("claim latency, leases on a local bare git remote")
        print(summary("remote claim", claim_ms))
        print(summary("remote release", release_ms))
        print(summary("remote claim+release", cycle_ms))
        print(summary("remote losing claim (conflict)", losing_ms))
        print(summary("local claim+release (item file)", local_ms))


if __name__ == "__main__":
    main()

"""What each start-up trick and second implementation saves, beside its command's time.

Run: ``python tests/bench/bench_tricks.py [--items 10000] [--repeat 15]``.

A trick stays only where it saves at least 10% of the time of the command that
pays for it (house rule 11). For each trick this prints the saving in ms (the
median of fresh interpreters importing the standard way minus the trick's way,
or the decoding time of every item file both ways) and the median wall time of
the command it serves at ``--items`` items, measured here in the same run:

* ``storage/fastread.py`` vs ``toon_format.decode`` -- every item file a first
  read (no index) parses, and ``pm get``, which decodes one file;
* ``storage/scratch.py`` vs ``tempfile`` -- ``pm create``;
* ``from _blake2 import blake2b`` vs ``hashlib`` -- ``pm list`` (index refresh);
* ``import _socket`` vs ``socket`` -- ``pm list`` with the watcher (large trackers).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import cached_workspace  # noqa: E402
from run import Bench, measured_env, run_once  # noqa: E402


def import_ms(statement: str, repeat: int) -> float:
    """Median wall ms of a fresh interpreter running ``statement`` (``-S``-free, like pm)."""
    env = measured_env()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], env=env, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def decode_ms(files: list[Path]) -> tuple[float, float]:
    """Total ms to decode ``files`` with the fast reader and with ``toon_format``."""
    import toon_format

    from pm_core.tracker.storage.fastread import read_record

    texts = [f.read_text(encoding="utf-8") for f in files]
    started = time.perf_counter()
    fast = [read_record(t) for t in texts]
    fast_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    for t in texts:
        toon_format.decode(t)
    full_ms = (time.perf_counter() - started) * 1000
    missed = sum(1 for r in fast if r is None)
    if missed:
        print(f"  (fast reader declined {missed} of {len(texts)} files)")
    return fast_ms, full_ms


def command_ms(bench: Bench, name: str, repeat: int) -> float:
    bench.run(name, -1)
    return statistics.median(bench.run(name, i)[0] for i in range(repeat)) * 1000


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--cache", type=Path, default=Path("/tmp") / "pm-bench")
    args = parser.parse_args(argv)
    root = cached_workspace(args.items, args.cache, progress=sys.stderr.isatty())
    bench = Bench(root, args.repeat, "auto")
    r = args.repeat
    try:
        run_once([bench.pm, "list"], bench.env)
        cmd = {name: command_ms(bench, name, r) for name in ("get", "list", "create")}
    finally:
        bench.cleanup()
    bench.drop_index()
    started = time.perf_counter()
    run_once([bench.pm, "list"], bench.env)
    cmd["first read (no index)"] = (time.perf_counter() - started) * 1000

    base = import_ms("pass", r)
    rows = []
    tf = import_ms("import toon_format", r) - base
    fast_total, full_total = decode_ms(sorted(root.glob("*/*.toon")))
    one_file_saving = tf + (full_total - fast_total) / args.items
    rows.append(("fastread: pm get (import + decode one file)", one_file_saving, cmd["get"]))
    rows.append(
        (
            "fastread: first read, decode every file",
            full_total - fast_total,
            cmd["first read (no index)"],
        )
    )
    tempfile_ms = import_ms("import tempfile", r) - import_ms("import os, pathlib", r)
    rows.append(("scratch.py vs tempfile: pm create", tempfile_ms, cmd["create"]))
    hashlib_ms = import_ms("from hashlib import blake2b", r) - import_ms(
        "from _blake2 import blake2b", r
    )
    rows.append(("_blake2 vs hashlib: pm list", hashlib_ms, cmd["list"]))
    socket_ms = import_ms("import socket", r) - import_ms("import _socket", r)
    rows.append(("_socket vs socket: pm list (watcher)", socket_ms, cmd["list"]))

    print(f"{args.items:,} items, medians of {r} runs; interpreter start-up {base:.1f} ms")
    print(f"{'trick: command':<46} {'saves ms':>9} {'command ms':>11} {'share':>7}")
    for label, saved, total in rows:
        print(f"{label:<46} {saved:>9.1f} {total:>11.1f} {saved / total:>7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

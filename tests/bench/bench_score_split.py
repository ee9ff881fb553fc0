"""Whether the two-thread keyword score split earns its place: search with and without it.

Run: ``python tests/bench/bench_score_split.py [--sizes 10000,100000] [--repeat 15]``.

From ``score.PARALLEL_ROWS`` candidate rows on, the indexed search scores two
halves of the candidates on two read-only connections in two threads. This
times ``Tracker.search`` in one process over the cached bench workspaces
(``generate.py``), each query alternating between the split (as shipped) and
one connection (the threshold raised out of reach), and prints the median ms
of each and the share of the search's time the split saves. House rule: a
second path stays only where it saves at least 10% of its command's time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from generate import cached_workspace, copy_workspace  # noqa: E402
from run import BROAD_QUERY, SEARCH_QUERY  # noqa: E402

from pm_core.tracker.api import Tracker  # noqa: E402
from pm_core.tracker.index import reads  # noqa: E402

#: Queries from rare to common: a made-up word, the bench's broad pair, common words.
QUERIES = (SEARCH_QUERY, BROAD_QUERY, "cache timeout", "the service")


def timed(tracker: Tracker, query: str, split: bool) -> float:
    defaults = reads.search_page.__kwdefaults__
    assert defaults is not None and "parallel_rows" in defaults
    shipped = defaults["parallel_rows"]
    if not split:
        defaults["parallel_rows"] = 10**12
    try:
        started = time.perf_counter()
        tracker.search(query, limit=20)
        return time.perf_counter() - started
    finally:
        defaults["parallel_rows"] = shipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pm-bench")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    # Each size is searched in a copy: an index watcher this process starts must
    # not leave its socket in the cache that other benches copy from.
    scratch = Path(tempfile.mkdtemp(prefix="score-split-", dir=args.cache))
    try:
        return _run(args, sizes, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(args: argparse.Namespace, sizes: list[int], scratch: Path) -> int:
    trackers: dict[int, Tracker] = {}
    for n in sizes:
        copy = copy_workspace(cached_workspace(n, args.cache), scratch / str(n) / ".agents" / "pm")
        trackers[n] = Tracker(copy, author="bench")
    for tracker in trackers.values():
        tracker.search(SEARCH_QUERY)  # build or refresh the index, warm the page cache
    print(f"{'size':>7} {'query':<18} {'split ms':>9} {'one ms':>8} {'saved':>7}")
    for query in QUERIES:
        for n in sizes:
            times: dict[bool, list[float]] = {True: [], False: []}
            for r in range(args.repeat):
                for split in (True, False) if r % 2 == 0 else (False, True):
                    times[split].append(timed(trackers[n], query, split))
            on = statistics.median(times[True]) * 1000
            off = statistics.median(times[False]) * 1000
            print(f"{n:>7,} {query:<18} {on:>9.1f} {off:>8.1f} {(off - on) / off:>6.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

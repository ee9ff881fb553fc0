"""Title-word relevance on a real tracker: our pm against the TypeScript pm, side by side.

For 50 items sampled with a fixed seed, the query is the first four words of
the item's title; a query scores the reciprocal rank of its item within the
top 10 hits (0 when absent). Prints MRR@10 per engine and mode, and the time
per query. The tracker is copied first (searching builds our index in it).

    python tests/bench/bench_relevance.py [--tracker DIR] [--upstream BIN] [--sample 50]

``--tracker`` defaults to the TypeScript pm's own tracker when present
(``PM_TS_TRACKER``); ``--upstream`` to ``PM_UPSTREAM_BIN`` (its ``bin`` folder).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 21
TOP = 10


def titles(root: Path) -> dict[str, str]:
    """Item id -> title, read with our SDK."""
    sys.path.insert(0, str(HERE.parent.parent))
    from pm_core.tracker.api import Tracker

    tracker = Tracker(root, author="bench", env={"PM_INDEX": "off"})
    return {item.id: item.title for item in tracker.items()}


def sample(by_id: dict[str, str], size: int) -> list[tuple[str, str]]:
    """``(id, query)`` pairs: the first four words of each sampled title."""
    rng = random.Random(SEED)
    chosen = rng.sample(sorted(i for i, t in by_id.items() if len(t.split()) >= 2), size)
    return [(i, " ".join(by_id[i].split()[:4])) for i in chosen]


def reciprocal_rank(ids: list[str], wanted: str) -> float:
    top = ids[:TOP]
    return 1.0 / (top.index(wanted) + 1) if wanted in top else 0.0


def ours(pm: list[str], repo: Path, query: str, mode: str) -> list[str]:
    done = subprocess.run(
        [*pm, "--json", "search", query, "--mode", mode, "--limit", str(TOP)],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PM_PATH": ""},
        check=False,
    )
    if done.returncode != 0:
        return []
    return [h["id"] for h in json.loads(done.stdout)["hits"]]


def theirs(pm: Path, repo: Path, query: str) -> list[str]:
    done = subprocess.run(
        [str(pm), "search", query, "--limit", str(TOP), "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return []
    body = json.loads(done.stdout)
    rows = body.get("items") or body.get("hits") or body.get("results") or []
    return [str(r.get("id") or (r.get("item") or {}).get("id")) for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracker", default=os.environ.get("PM_TS_TRACKER", ""))
    parser.add_argument("--upstream", default=os.environ.get("PM_UPSTREAM_BIN", ""))
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--modes", default="keyword,bm25,hybrid")
    args = parser.parse_args(argv)
    if not args.tracker:
        parser.error("pass --tracker (a .agents/pm folder) or set PM_TS_TRACKER")
    with tempfile.TemporaryDirectory(prefix="pm-relevance-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(Path(args.tracker), repo / ".agents" / "pm")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        by_id = titles(repo / ".agents" / "pm")
        queries = sample(by_id, args.sample)
        pm = [str(Path(sys.executable).parent / "pm")]
        engines: dict[str, object] = {f"ours --mode {m}": m for m in args.modes.split(",")}
        if args.upstream:
            engines["typescript pm"] = Path(args.upstream) / "pm"
        scores: dict[str, list[float]] = {name: [] for name in engines}
        spent: dict[str, float] = dict.fromkeys(engines, 0.0)
        for wanted, query in queries:  # engines alternate per query
            for name, how in engines.items():
                start = time.perf_counter()
                ids = (
                    theirs(how, repo, query)
                    if isinstance(how, Path)
                    else ours(pm, repo, query, str(how))
                )
                spent[name] += time.perf_counter() - start
                scores[name].append(reciprocal_rank(ids, wanted))
        print(f"{len(by_id)} items, {len(queries)} title-word queries (seed {SEED}), MRR@{TOP}:")
        for name in engines:
            mrr = sum(scores[name]) / len(scores[name])
            per = 1000 * spent[name] / len(queries)
            print(f"  {name:<20} MRR@{TOP} {mrr:.3f}   {per:.0f} ms/query")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

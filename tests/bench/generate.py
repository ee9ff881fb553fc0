"""Deterministic benchmark workspaces: N items of every type, in the on-disk format.

Run: ``python tests/bench/generate.py --items 10000 --out /tmp/pm-bench-10000``

The same ``--items`` and ``--seed`` always give byte-identical files. Each
item file is written by the SDK's own encoder (``encode_item``), so it is
exactly what ``pm`` would write, and each item gets a ``create`` history
entry whose hash matches the file, so ``pm validate`` has a clean chain.

The shape follows a tracker a team has used for a year: most work closed,
a hierarchy of epics, features and leaves, blocking and related links,
comments, notes, tags, linked files and tests, some deadlines and claims.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pm_core.tracker.model.clock import format_iso
from pm_core.tracker.model.item import item_from_record
from pm_core.tracker.storage import history as hist
from pm_core.tracker.storage.store import encode_item
from pm_core.tracker.storage.workspace import TRACKER_DIR, init_workspace, type_folder

DEFAULT_SEED = 20260731
#: Written next to ``.agents`` once every file is in place (a cache key).
MARKER = ".bench-workspace.json"
GENERATOR_VERSION = 3

#: Epics and features are the first 1% and 4% of items; the rest are drawn from these.
LEAF_WEIGHTS = {
    "Task": 46,
    "Chore": 9,
    "Issue": 20,
    "Decision": 4,
    "Event": 3,
    "Reminder": 3,
    "Milestone": 2,
    "Meeting": 4,
    "Plan": 4,
}
STATUS_WEIGHTS = {
    "closed": 52,
    "canceled": 6,
    "open": 22,
    "in_progress": 6,
    "blocked": 5,
    "draft": 9,
}
AGENTS = ("alice", "bob", "carol", "dave", "codex-1", "claude-2", "gemini-3", "ops-bot")
TAGS = (
    "api",
    "auth",
    "backend",
    "billing",
    "build",
    "cache",
    "ci",
    "cli",
    "db",
    "deploy",
    "docs",
    "frontend",
    "infra",
    "migration",
    "mobile",
    "observability",
    "perf",
    "release",
    "search",
    "security",
    "storage",
    "sync",
    "tests",
    "ux",
)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: Common tracker words (each in roughly a fifth of the items).
WORDS = _words(
    """login session token refresh timeout retry cache index query parser schema
    migration rollback deploy pipeline build artifact release version config
    settings flag toggle export import report dashboard chart metric alert
    latency throughput memory leak crash stack trace error warning handler
    request response header payload endpoint route server client browser
    mobile tablet layout button modal dialog form field input validation
    password email notification queue worker scheduler cron job batch stream
    upload download file folder path permission role user account profile
    billing invoice payment refund subscription plan tier quota limit rate
    search filter sort page cursor offset result score ranking relevance
    sync conflict merge branch commit review approval audit history log
    trace span sample budget target regression benchmark fixture mock stub
    database table column row transaction lock deadlock replica backup
    restore snapshot encryption certificate secret rotation key vault policy"""
)
FILLER = _words(
    """the a to of and in for on with when after before while so that this it
    we should must can could may not only also then again each every all"""
)
_SYLLABLES = ("ka", "zo", "mi", "ter", "vex", "lun", "dra", "pol", "sin", "gar", "tu", "bel")
#: Rarer project vocabulary (names, components, jargon), drawn by Zipf's law.
RARE = tuple(a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "n", "s", "x"))
RARE_WEIGHTS = tuple(1 / (rank + 1) for rank in range(len(RARE)))
FILES = (
    "src/auth/session.py",
    "src/api/routes.py",
    "src/billing/invoice.py",
    "src/search/index.py",
    "src/sync/merge.py",
    "web/app/layout.tsx",
    "web/app/login.tsx",
    "docs/architecture.md",
    "docs/runbook.md",
    "infra/deploy.yaml",
    "tests/test_session.py",
    "tests/test_search.py",
)
RISKS = ("low", "medium", "high", "critical")


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(WORDS)
    if roll < 0.7:
        return rng.choice(FILLER)
    return rng.choices(RARE, weights=RARE_WEIGHTS)[0]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = [_word(rng) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).capitalize()


def plan_workspace(n: int, seed: int) -> dict[str, Any]:
    """Ids, types and timeline for ``n`` items (cheap, done once, shared by workers)."""
    rng = random.Random(seed)
    ids: list[str] = []
    taken: set[str] = set()
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    length = 4 if n <= 200_000 else 5
    while len(ids) < n:
        token = "".join(rng.choice(alphabet) for _ in range(length))
        if token not in taken:
            taken.add(token)
            ids.append("pm-" + token)
    types = [_pick(rng, LEAF_WEIGHTS) for _ in range(n)]
    # The first items are the top of the hierarchy, as a tracker starts with epics.
    epics = max(1, n // 100)
    features = max(1, n // 25)
    for k in range(min(n, epics)):
        types[k] = "Epic"
    for k in range(epics, min(n, epics + features)):
        types[k] = "Feature"
    return {"n": n, "seed": seed, "ids": ids, "types": types, "epics": epics, "features": features}


def build_record(plan: dict[str, Any], k: int) -> dict[str, Any]:
    """The record of item ``k`` (depends only on the plan and ``k``)."""
    seed: int = plan["seed"]
    n: int = plan["n"]
    ids: list[str] = plan["ids"]
    types: list[str] = plan["types"]
    rng = random.Random(seed * 1_000_003 + k)
    base = datetime(2025, 11, 1, tzinfo=UTC)
    span = timedelta(days=365)
    created = base + span * (k / max(1, n)) + timedelta(seconds=rng.randint(0, 600))
    updated = created + timedelta(minutes=rng.randint(0, 60 * 24 * 20))
    type_name = types[k]
    status = _pick(rng, STATUS_WEIGHTS)
    if k < plan["epics"] + plan["features"] and status == "draft":
        status = "open"
    author = rng.choice(AGENTS)
    record: dict[str, Any] = {
        "id": ids[k],
        "title": _title(rng),
        "description": _sentence(rng, 8, 20),
        "type": type_name,
        "status": status,
        "priority": rng.choices(range(5), weights=(5, 20, 45, 22, 8))[0],
        "tags": sorted(set(rng.sample(TAGS, rng.randint(0, 3)))),
        "created_at": format_iso(created),
        "updated_at": format_iso(updated),
        "author": author,
    }
    if rng.random() < 0.06:
        record["deadline"] = format_iso(updated + timedelta(days=rng.randint(-20, 60)))
    if status == "in_progress" or (status == "open" and rng.random() < 0.1):
        holder = rng.choice(AGENTS)
        record["assignee"] = holder
        record["claim_principal"] = holder
    if rng.random() < 0.08:
        record["order"] = rng.randint(1, 50)
    if rng.random() < 0.1:
        record["risk"] = rng.choice(RISKS)
    if rng.random() < 0.3:
        record["acceptance_criteria"] = "; ".join(_sentence(rng, 4, 8) for _ in range(2))
    if status in ("closed", "canceled"):
        record["closed_at"] = record["updated_at"]
        record["completed_at"] = record["updated_at"]
        record["close_reason"] = _sentence(rng, 4, 10)
    # Hierarchy: features under epics, leaves under features (or epics).
    epics, features = plan["epics"], plan["features"]
    if type_name == "Feature" and k >= epics:
        record["parent"] = ids[rng.randrange(epics)]
    elif k >= epics + features and rng.random() < 0.75:
        record["parent"] = ids[rng.randrange(epics + features)]
    deps: list[dict[str, Any]] = []
    if k > 10:
        stamp = record["created_at"]
        if status == "blocked" or rng.random() < 0.12:
            for _ in range(rng.randint(1, 2)):
                deps.append({"id": ids[rng.randrange(k)], "kind": "blocked_by"})
        if rng.random() < 0.06:
            deps.append({"id": ids[rng.randrange(k)], "kind": "related"})
        if rng.random() < 0.03:
            deps.append({"id": ids[rng.randrange(k)], "kind": "discovered_from"})
        seen: set[tuple[str, str]] = set()
        unique = []
        for dep in deps:
            key = (dep["id"], dep["kind"])
            if key not in seen and dep["id"] != ids[k]:
                seen.add(key)
                unique.append({**dep, "created_at": stamp, "author": author})
        if unique:
            record["dependencies"] = unique
    moment = created
    comments = []
    for _ in range(rng.choices(range(5), weights=(40, 30, 15, 10, 5))[0]):
        moment += timedelta(minutes=rng.randint(5, 600))
        comments.append(
            {
                "created_at": format_iso(moment),
                "author": rng.choice(AGENTS),
                "text": _sentence(rng, 5, 18),
            }
        )
    if comments:
        record["comments"] = comments
    if rng.random() < 0.15:
        record["notes"] = [
            {"created_at": format_iso(moment), "author": author, "text": _sentence(rng, 6, 14)}
        ]
    if rng.random() < 0.05:
        record["learnings"] = [
            {"created_at": format_iso(moment), "author": author, "text": _sentence(rng, 6, 14)}
        ]
    if rng.random() < 0.12:
        record["files"] = [
            {"path": path, "scope": "project"} for path in sorted(set(rng.sample(FILES, 2)))
        ]
    if rng.random() < 0.05:
        record["tests"] = [
            {
                "command": f"pytest -q {rng.choice(FILES[-2:])}",
                "scope": "project",
                "timeout_seconds": 120,
            }
        ]
    if type_name == "Reminder":
        record["reminders"] = [
            {"at": format_iso(updated + timedelta(days=rng.randint(1, 30))), "text": _title(rng)}
        ]
    paragraphs = [" ".join(_sentence(rng, 6, 16) for _ in range(rng.randint(1, 4)))]
    for _ in range(rng.randint(0, 3)):
        paragraphs.append(" ".join(_sentence(rng, 6, 16) for _ in range(rng.randint(1, 4))))
    record["body"] = "\n\n".join(paragraphs)
    return record


_PLAN: dict[str, Any] = {}


def _init_worker(plan: dict[str, Any]) -> None:
    _PLAN.clear()
    _PLAN.update(plan)


def _write_chunk(args: tuple[str, int, int, bool]) -> int:
    root_text, start, stop, with_history = args
    root = Path(root_text)
    for k in range(start, stop):
        item = item_from_record(build_record(_PLAN, k))
        folder = root / type_folder(item.type)
        (folder / f"{item.id}.toon").write_bytes(encode_item(item))
        if with_history:
            entry = hist.build_entry(
                ts=item.created_at,
                author=item.author or "unknown",
                op="create",
                before=hist.item_document(None),
                after=hist.item_document(item),
            )
            line = json.dumps(entry.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
            (root / "history" / f"{item.id}.jsonl").write_text(line, encoding="utf-8")
    return stop - start


def generate(
    n: int,
    out: Path,
    *,
    seed: int = DEFAULT_SEED,
    jobs: int = 2,
    history: bool = True,
    progress: bool = False,
) -> Path:
    """Write a workspace of ``n`` items under ``out`` (replacing it); returns the tracker root."""
    if n < 1:
        raise ValueError(f"--items must be at least 1, got {n}")
    if out.exists():
        shutil.rmtree(out)
    root = out / TRACKER_DIR
    init_workspace(root)
    for type_name in ("Epic", "Feature", *LEAF_WEIGHTS):
        (root / type_folder(type_name)).mkdir(exist_ok=True)
    plan = plan_workspace(n, seed)
    step = 500
    chunks = [(str(root), s, min(n, s + step), history) for s in range(0, n, step)]
    done = 0
    started = time.perf_counter()
    if jobs <= 1 or n < 2000:
        _init_worker(plan)
        results = map(_write_chunk, chunks)
        for count in results:
            done += count
    else:
        context = multiprocessing.get_context("fork")
        with context.Pool(jobs, initializer=_init_worker, initargs=(plan,)) as pool:
            for count in pool.imap_unordered(_write_chunk, chunks):
                done += count
                if progress:
                    sys.stderr.write(f"\rgenerating {done:,}/{n:,} items")
                    sys.stderr.flush()
    if progress:
        sys.stderr.write(f"\rgenerated {n:,} items in {time.perf_counter() - started:.1f} s\n")
    marker = {"items": n, "seed": seed, "history": history, "version": GENERATOR_VERSION}
    (out / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return root


def copy_workspace(tracker_dir: Path, dest: Path) -> Path:
    """A copy of a cached tracker for one bench to use and change.

    A socket (an index watcher's, when a bench ran on the cache itself) cannot
    be copied and is left behind.
    """
    shutil.copytree(tracker_dir, dest, symlinks=True, ignore=shutil.ignore_patterns("watch.sock"))
    return dest


def cached_workspace(
    n: int, cache: Path, *, seed: int = DEFAULT_SEED, progress: bool = False
) -> Path:
    """The workspace for ``n`` items under ``cache``, generated only when missing or stale."""
    out = cache / f"pm-bench-{n}-{seed}"
    marker = out / MARKER
    want = {"items": n, "seed": seed, "history": True, "version": GENERATOR_VERSION}
    try:
        if json.loads(marker.read_text(encoding="utf-8")) == want:
            return out / TRACKER_DIR
    except (OSError, ValueError):
        pass
    return generate(n, out, seed=seed, progress=progress)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, required=True, help="how many items")
    parser.add_argument("--out", type=Path, required=True, help="directory to (re)create")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--no-history", action="store_true", help="skip history files")
    args = parser.parse_args(argv)
    root = generate(
        args.items,
        args.out,
        seed=args.seed,
        jobs=args.jobs,
        history=not args.no_history,
        progress=sys.stderr.isatty(),
    )
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Quality-at-scale benchmark for progressive tool discovery.

Run: ``python tests/bench/bench_discovery.py [--calls N] [--sizes 100,1000,10000]``

For synthetic catalogs of 100, 1,000 and 10,000 candidate tools it prints:
latency per ``discover_tools`` call (p50/p95 ms, wall and CPU, warm catalog
cache), the one-off cost of indexing a new catalog, the cost of a call on an
equal catalog made of new objects (a fresh projection), a pagination check (every row once,
same order on a second pass), and the largest token estimate against its
budget. Then the token estimate of the negotiated entry catalog's
``tools/list`` (the five tools' name, description and input schema).
Target: p95 under 20 ms at 10,000 candidates; entry catalog under 1,500 tokens.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import statistics
import time
from typing import Any

import attrs
from pm_plugins.progressive_discovery import ENTRY_CATALOG
from pm_plugins.progressive_discovery.index import IndexCache

from pm_core.contracts import FAMILIES, ToolDescriptor, WorkspaceContracts
from pm_core.sdk import discover_tools


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


VERBS = _words(
    "close claim release create update list search show link record run check validate plan "
    "export import sync archive merge split assign review approve schedule notify tag move "
    "estimate measure report rollback deploy audit summarize"
)
NOUNS = _words(
    "item task issue epic release sprint milestone dependency comment note learning test file "
    "document decision meeting reminder event plan step field status type workflow owner label "
    "board backlog report metric budget incident alert build"
)
ADJECTIVES = _words("open closed blocked stale recent archived shared linked draft urgent")
QUERIES = (
    "close an item with evidence",
    "who is working on what",
    "find stale blocked items",
    "schedule a meeting reminder",
    "export the sprint report",
    "link a test file to an issue",
    "approve a release",
    "merge duplicate issues",
    "summarize recent incidents",
    "what should I do next",
    "",
)


def synthetic_catalog(size: int, seed: int = 7) -> list[ToolDescriptor]:
    """``size`` tools with realistic names, descriptions, families, tiers and schemas."""
    rng = random.Random(seed)
    tools: list[ToolDescriptor] = []
    for i in range(size):
        verb, noun, adj = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(ADJECTIVES)
        other = rng.choice(NOUNS)
        props = {
            f"{rng.choice(NOUNS)}{k}": {"type": rng.choice(["string", "integer", "boolean"])}
            for k in range(rng.randint(1, 6))
        }
        tools.append(
            ToolDescriptor(
                name=f"x_{verb}_{noun}_{i:05d}",
                description=(
                    f"{verb.capitalize()} {adj} {noun} records and their {other} links; "
                    f"returns a compact {noun} summary."
                ),
                input_schema={"type": "object", "properties": props},
                command=f"{verb}-{noun}-{i}",
                tier=rng.choice(("core", "standard", "standard", "full")),
                family=rng.choice(FAMILIES),
            )
        )
    return tools


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def time_calls(catalog: list[ToolDescriptor], calls: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds per call over a rotation of queries, filters, projections.

    CPU time is printed too because a shared machine's wall clock includes
    time spent waiting for a core.
    """
    timings: list[float] = []
    cpu: list[float] = []
    for n in range(calls):
        query = QUERIES[n % len(QUERIES)]
        kwargs: dict[str, Any] = {
            "query": query or None,
            "limit": (10, 25, 50)[n % 3],
            "include_schema": n % 4 == 0,
            "family": FAMILIES[n % len(FAMILIES)] if n % 5 == 0 else None,
            "tier": ("full", "standard", "core")[n % 3],
            "output_budget": (1200, 4000, None)[n % 3],
        }
        start, start_cpu = time.perf_counter(), time.thread_time()
        discover_tools(catalog, secret=b"bench", **kwargs)
        timings.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    return timings, cpu


def rebuilt_call(catalog: list[ToolDescriptor]) -> float:
    """Milliseconds of one call on equal but newly built descriptor objects.

    That is what a server pays when it projects its catalog afresh for each
    request: the content fingerprint is recomputed, the index is reused.
    """
    clone = [attrs.evolve(tool) for tool in catalog]
    start = time.perf_counter()
    discover_tools(clone, query="close blocked items", secret=b"bench")
    return (time.perf_counter() - start) * 1000


def page_through(
    catalog: list[ToolDescriptor], query: str | None, budget: int | None, max_pages: int = 10**6
) -> list[str]:
    """Row names, following next_cursor from the first page (up to ``max_pages``)."""
    names: list[str] = []
    cursor: str | None = None
    for _ in range(max_pages):
        result = discover_tools(
            catalog, query=query, limit=100, cursor=cursor, output_budget=budget, secret=b"bench"
        )
        payload = result.to_json()
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if budget is not None and math.ceil(len(body) / 4) > budget:
            raise SystemExit(f"token ceiling broken: {len(body) / 4:.0f} > {budget}")
        names.extend(row["name"] for row in payload["tools"])
        cursor = result.next_cursor
        if cursor is None:
            break
    return names


def ceiling(catalog: list[ToolDescriptor], budget: int) -> tuple[int, int]:
    """The largest estimate seen over the query rotation at ``budget``, and its count."""
    worst, count = 0, 0
    for query in QUERIES:
        for include in (False, True):
            try:
                result = discover_tools(
                    catalog,
                    query=query or None,
                    limit=100,
                    include_schema=include,
                    output_budget=budget,
                    secret=b"bench",
                )
            except ValueError:
                continue  # a budget too small for one schema row is refused, not exceeded
            worst = max(worst, result.token_cost.estimated_tokens)
            count += 1
    return worst, count


def entry_catalog_tokens() -> tuple[int, str]:
    """Estimated tokens of the negotiated tools/list: the five entry tools."""
    from pm_core.host import build_host

    names = ["progressive_discovery"]
    have_tracker = importlib.util.find_spec("pm_plugins.tracker_tools") is not None
    if have_tracker:
        names.append("tracker_tools")
    plugins = [(n, importlib.import_module(f"pm_plugins.{n}")) for n in names]
    host = build_host(env={}, plugins=plugins, entry_points=False)
    contracts = WorkspaceContracts(
        types=("Epic", "Feature", "Task", "Chore", "Issue", "Decision"),
        statuses=("draft", "open", "in_progress", "blocked", "closed", "canceled"),
    )
    by_name = {t.name: t for t in host.catalog(contracts)}
    rows = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for t in (by_name[n] for n in ENTRY_CATALOG if n in by_name)
    ]
    body = json.dumps({"tools": rows}, separators=(",", ":"), ensure_ascii=False)
    source = "real catalog" if have_tracker else f"only {', '.join(sorted(by_name))} registered"
    return math.ceil(len(body.encode("utf-8")) / 4), f"{len(rows)} tools, {source}"


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sizes", default="100,1000,10000")
    args = parser.parse_args()
    print(
        f"{'size':>6} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8} {'index ms':>9} {'rebuilt ms':>10} "
        f"{'paging':>7} "
        f"{'matched':>8} {'max tokens @1200':>17}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        catalog = synthetic_catalog(size)
        start = time.perf_counter()
        IndexCache().get(catalog)  # a fresh cache: what a new catalog costs once
        index_ms = (time.perf_counter() - start) * 1000
        discover_tools(catalog, secret=b"bench")  # warm the process cache
        rebuilt_ms = statistics.median(rebuilt_call(catalog) for _ in range(5))
        timings, cpu = time_calls(catalog, args.calls)
        # Whole walks without a budget (100 rows a page), twice; then the first
        # 30 pages at the default budget, where the budget cuts every page.
        first = page_through(catalog, "close blocked items", None)
        again = page_through(catalog, "close blocked items", None)
        everything = page_through(catalog, None, None)
        budgeted = page_through(catalog, "close blocked items", 1200, max_pages=30)
        if (
            first != again
            or len(set(first)) != len(first)
            or len(set(everything)) != size
            or budgeted != first[: len(budgeted)]
        ):
            raise SystemExit(f"pagination is not deterministic or repeats rows at {size}")
        worst, checked = ceiling(catalog, 1200)
        print(
            f"{size:>6} {statistics.median(timings):>8.2f} {percentile(timings, 95):>8.2f} "
            f"{statistics.median(cpu):>8.2f} {percentile(cpu, 95):>8.2f} "
            f"{index_ms:>9.1f} {rebuilt_ms:>10.1f} {'ok':>7} {len(first):>8} "
            f"{f'{worst} ({checked} calls)':>17}"
        )
    tokens, note = entry_catalog_tokens()
    print(f"entry catalog tools/list: {tokens} estimated tokens ({note})")


if __name__ == "__main__":
    main()

"""Two installs of pm side by side: every command's time, sizes and installs alternating.

Run: ``python tests/bench/bench_versions.py BEFORE_BIN AFTER_BIN [--sizes 10000,100000]
[--repeat 9]``, each ``*_BIN`` the ``bin/`` folder of a venv with pm installed (say
one built from an older commit and this tree). Each reads its own copy of
the same cached workspaces (``generate.py``); each run of a command goes through every size and
both installs in turn, the order flipping run by run, so a machine that speeds up
or slows down affects both sides alike. Prints, per size and command, the median
wall and CPU ms of each install and the ratio after/before; ``--version`` and
``get`` show the start-up difference in ms.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import cached_workspace, copy_workspace  # noqa: E402
from run import COMMANDS, Bench, measured_env, run_once  # noqa: E402

#: The commands measured: start-up first, then every warm command of ``run.py``.
MEASURED = ("version", *COMMANDS)


class Side(Bench):
    """One install's view of one workspace."""

    def __init__(self, root: Path, repeat: int, pm: Path) -> None:
        super().__init__(root, repeat, "auto")
        self.pm = str(pm)

    def pm_cmd(self, name: str, n: int) -> list[str]:
        if name == "version":
            return [self.pm, "--version"]
        return super().pm_cmd(name, n)


def compare(
    before: Path, after: Path, sizes: list[int], repeat: int, cache: Path
) -> dict[str, Any]:
    """Median wall/CPU ms per size, command and install; sizes and installs alternating."""
    roots = {n: cached_workspace(n, cache, progress=sys.stderr.isatty()) for n in sizes}
    # Each install reads its own copy: two versions may keep different read-index
    # schemas, and sharing one index would make every alternation rebuild it.
    scratch = Path(tempfile.mkdtemp(prefix="versions-", dir=cache))
    sides = {}
    for n in sizes:
        for k, pm in (("before", before), ("after", after)):
            copy = scratch / f"{n}-{k}" / roots[n].name
            copy_workspace(roots[n], copy)
            sides[(n, k)] = Side(copy, repeat, pm / "pm")
    out: dict[str, Any] = {"sizes": sizes, "repeat": repeat, "commands": {}}
    try:
        for side in sides.values():  # settle: build the index, warm the page cache
            side.run("list")
        for name in MEASURED:
            walls: dict[tuple[int, str], list[float]] = {key: [] for key in sides}
            cpus: dict[tuple[int, str], list[float]] = {key: [] for key in sides}
            for side in sides.values():
                side.run(name, -1)
            for r in range(repeat):
                order = list(sides)
                if r % 2:
                    order.reverse()
                for key in order:
                    wall, cpu, _rss = sides[key].run(name, r)
                    walls[key].append(wall)
                    cpus[key].append(cpu)
            for n in sizes:
                row: dict[str, Any] = {}
                for k in ("before", "after"):
                    row[f"{k}_ms"] = round(statistics.median(walls[(n, k)]) * 1000, 1)
                    row[f"{k}_cpu_ms"] = round(statistics.median(cpus[(n, k)]) * 1000, 1)
                row["ratio"] = round(row["after_ms"] / row["before_ms"], 3)
                row["delta_ms"] = round(row["after_ms"] - row["before_ms"], 1)
                out["commands"][f"{n}:{name}"] = row
            for side in sides.values():
                side.cleanup()
    finally:
        for side in sides.values():
            side.cleanup()
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def table(result: dict[str, Any]) -> str:
    """The comparison as aligned text."""
    lines = [
        f"{'size':>7} {'command':<13} {'before':>8} {'after':>8} {'ratio':>6} {'Δ ms':>7}"
        f" {'cpu before':>10} {'cpu after':>9}"
    ]
    for key, row in result["commands"].items():
        n, name = key.split(":")
        lines.append(
            f"{int(n):>7,} {name:<13} {row['before_ms']:>8} {row['after_ms']:>8} "
            f"{row['ratio']:>6} {row['delta_ms']:>7} {row['before_cpu_ms']:>10} "
            f"{row['after_cpu_ms']:>9}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="bin/ folder of the install to compare against")
    parser.add_argument("after", type=Path, help="bin/ folder of the install under test")
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated item counts")
    parser.add_argument("--repeat", type=int, default=9, help="runs per command and side")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pm-bench")
    parser.add_argument("--out", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not (folder / "pm").exists():
            parser.error(f"{folder} holds no pm console script (pass a venv's bin/ folder)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    args.cache.mkdir(parents=True, exist_ok=True)
    # Warm the bytecode of both installs, as an installed wheel has it.
    for folder in (args.before, args.after):
        run_once([str(folder / "pm"), "--version"], measured_env())
    result = compare(args.before, args.after, sizes, args.repeat, args.cache)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

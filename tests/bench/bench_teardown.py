"""What skipping the interpreter's teardown saves ``pm get`` and ``pm list``.

Runs each command at N items (default 10,000; a cached ``generate.py``
workspace) as two kinds of process, alternating run by run so a busy machine
slows both alike: ``console()``, the installed script's way out (``atexit``
handlers, flush, ``os._exit``), and a plain ``sys.exit(main())``. Prints the
median wall and CPU time of each and the saving as a share of the plain exit::

    .venv/bin/python tests/bench/bench_teardown.py [--runs 60] [--items 10000]

``pm_core/cli/main.py`` keeps the skip only while it saves at least 10% of a
command's time; the figure beside it comes from here. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import cached_workspace  # noqa: E402

EXITS = {
    "console": "from pm_core.cli.main import console; console()",
    "plain": "import sys; from pm_core.cli.main import main; sys.exit(main())",
}


def one_run(code: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one ``pm`` process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if status != 0:
        raise SystemExit(f"pm {' '.join(args)} failed (status {status})")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args(argv)
    tracker = cached_workspace(args.items, args.cache, progress=True)
    repo = tracker.parent.parent
    some_id = sorted(p.stem for p in (tracker / "tasks").glob("*.toon"))[0]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PM_PATH")}
    env["PM_AUTHOR"] = "bench"
    commands = {"get": ["get", some_id], "list": ["list"]}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for args_ in commands.values():  # bytecode caches and the read index, untimed
        for code in EXITS.values():
            one_run(code, args_, repo, env)
    for run in range(args.runs):
        order = list(EXITS) if run % 2 == 0 else list(reversed(EXITS))
        for command, args_ in commands.items():
            for kind in order:
                times.setdefault((command, kind), []).append(one_run(EXITS[kind], args_, repo, env))
    print(f"{args.items} items, {args.runs} alternating runs, medians in ms")
    for command in commands:
        for column, label in ((0, "wall"), (1, "cpu")):
            skip = statistics.median(t[column] for t in times[(command, "console")])
            plain = statistics.median(t[column] for t in times[(command, "plain")])
            share = (plain - skip) / plain * 100
            print(
                f"pm {command:<4} {label:<4}  console {skip:6.1f}  plain {plain:6.1f}  "
                f"saving {plain - skip:5.1f} ({share:4.1f}% of plain)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Is the click-free fast path (``pm_core/cli/fast.py``) worth keeping? Start-up with and without it.

Run: ``python tests/bench/bench_fastpath.py [--items 10000] [--runs 15]``

On a generated tracker (``tests/bench/generate.py``, cached under the system
temp folder), runs ``pm --version``, ``pm get ID`` and ``pm list`` as new
processes, alternating two variants run by the same interpreter line: the
console script as installed (``fast``), and the same with ``fast.run``
answering "not sure" so every line goes to click (``click``). Bytecode is
written (``PYTHONDONTWRITEBYTECODE`` is unset); the first run of each is
untimed. Prints the median wall time of each and the saving; the rule is to
keep the fast path only where it saves at least 10% of the command's time.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.generate import cached_workspace

_RUN = "import sys; sys.argv = ['pm', *sys.argv[1:]]; {patch}from pm_core.cli.main import console; console()"
VARIANTS = {
    "fast": _RUN.format(patch=""),
    "click": _RUN.format(patch="import pm_core.cli.fast as f; f.run = lambda a: None; "),
}


def _time(code: str, args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, check=False
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{args} failed: {done.stderr.decode(errors='replace')[-400:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    root = cached_workspace(options.items, Path(tempfile.gettempdir()), progress=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PM_PATH"] = str(root)
    some_file = next(p for p in sorted(root.rglob("*.toon")) if "history" not in p.parts)
    item = some_file.stem
    commands = {"--version": ["--version"], "get": ["get", item], "list": ["list"]}
    print(f"{options.items:,} items, {options.runs} runs each, median ms (variants alternate)")
    print(f"{'command':10} {'fast':>8} {'click':>8} {'saving':>8}")
    for name, args in commands.items():
        times: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for code in VARIANTS.values():
            _time(code, args, env)  # writes bytecode, warms the page cache
        for _ in range(options.runs):
            for variant, code in VARIANTS.items():
                times[variant].append(_time(code, args, env))
        fast = statistics.median(times["fast"])
        slow = statistics.median(times["click"])
        print(f"{name:10} {fast:8.1f} {slow:8.1f} {100 * (slow - fast) / slow:7.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

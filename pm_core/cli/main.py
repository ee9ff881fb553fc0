"""The ``pm`` console script: answers ``--version`` early, then picks the fast or click path.

Everyday reads run through :mod:`pm_core.cli.fast`; everything else goes to
:mod:`pm_core.cli.app`.
"""

from __future__ import annotations

import sys
from typing import NoReturn


def main(argv: list[str] | None = None) -> int:
    """Run ``pm`` with ``argv`` (default: the process arguments); returns the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):
        from pm_core import __version__

        sys.stdout.write(f"pm {__version__}\n")
        return 0
    # Kept for its figure: the fast path saves 23% of `pm get`, 18% of `pm list` at 10,000 items (bench_fastpath.py).
    from pm_core.cli import fast

    code = fast.run(args)
    if code is not None:
        return code
    from pm_core.cli.app import run

    return run(args)


def console() -> NoReturn:
    """The ``pm`` console script: run, flush, and leave without the interpreter's teardown.

    Tearing down frees every module and object one by one for a process about
    to end. Everything pm writes is already on disk by then: item files and
    history are fsynced, index transactions are committed, locks are released,
    and a kill at any point is survivable by design. What the usual exit would
    still do is done here: ``atexit`` handlers run, then standard output and
    error are flushed. When something is unusual (another thread is alive, a
    flush fails) the usual exit runs.
    """
    code = main()
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)  # let the interpreter join them
    import atexit
    import os

    # Kept for its figure: 14% of `pm get`, 11% of `pm list` at 10,000 items (bench_teardown.py).
    # Every handler runs, also those registered before pm started (coverage's, say):
    # only the private _run_exitfuncs reaches them all. What they print is flushed.
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # the interpreter reports it as it always does
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    console()

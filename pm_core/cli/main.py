"""The ``pm`` console script.

Kept tiny on purpose: ``pm --version`` answers before click or the tracker SDK
is imported; the everyday reads (``get``, ``list``, ``search``, ``next``, ...)
run through :mod:`pm_core.cli.fast` without click; everything else hands over
to :mod:`pm_core.cli.app`, which imports each command's module only when that
command runs.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``pm`` with ``argv`` (default: the process arguments); returns the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):
        from pm_core import __version__

        sys.stdout.write(f"pm {__version__}\n")
        return 0
    from pm_core.cli import fast

    code = fast.run(args)
    if code is not None:
        return code
    from pm_core.cli.app import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())

"""Private scratch files next to their destination: one exclusive create under a random name."""

from __future__ import annotations

import os
from pathlib import Path

_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def create_scratch(directory: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """Create a new file readable by its owner only: ``(open descriptor, path)``.

    The name is ``prefix`` + 12 random hex digits + ``suffix``; a name already
    taken is drawn again. Errors other than a taken name (a missing folder, no
    permission) are raised as they are.
    """
    for _ in range(100):
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free scratch file name in {directory}")

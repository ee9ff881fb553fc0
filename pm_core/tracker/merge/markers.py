"""Git conflict markers left in tracker files.

A file merged without the drivers (or resolved by hand and committed half
done) holds ``<<<<<<<``, ``=======`` and ``>>>>>>>`` lines. Only an opening
marker at the start of a line counts: a lone ``=======`` is a legitimate
Markdown underline.
"""

from __future__ import annotations

import re

_OPENING = re.compile(rb"^<{7}(?: |$)", re.MULTILINE)


def first_marker_line(data: bytes) -> int | None:
    """The 1-based line of the first opening conflict marker, or None."""
    # A plain search first: nearly every file has no run of seven "<" at all.
    start = data.find(b"<<<<<<<")
    if start < 0:
        return None
    match = _OPENING.search(data, max(0, data.rfind(b"\n", 0, start) + 1))
    if match is None:
        return None
    return data.count(b"\n", 0, match.start()) + 1

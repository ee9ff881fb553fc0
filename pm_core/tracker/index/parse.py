"""Item files to ready-to-insert index rows, in worker processes for large batches.

Values come from the functions the file-scan path uses (:mod:`pm_core.tracker.index.rows`).
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Iterator, Mapping, Sequence
from stat import S_ISREG
from typing import Any

from pm_core.tracker.index.rows import (
    DOC_COLUMNS,
    ITEM_COLUMNS,
    digest16,
    doc_values,
    item_edges,
    item_values,
    pack_item,
)
from pm_core.tracker.model.errors import CorruptItemError
from pm_core.tracker.model.item import Item, ItemFormatError, item_from_record
from pm_core.tracker.storage.itemfile import decode_item

#: Files per job handed to a worker (large: fewer round trips, still a smooth progress line).
JOB_FILES = 1000
#: Worker processes at most (one per core beyond that only adds switching).
MAX_WORKERS = 4
_NO_ITEM = (None,) * len(ITEM_COLUMNS)
#: Where :func:`doc_values` puts the document's token count.
_NTOKENS = DOC_COLUMNS.index("ntokens")

Stat = tuple[int, int, int]


class Rows:
    """The rows of one batch of files, per table, ready for ``executemany``."""

    __slots__ = ("corrupt", "docs", "edges", "entries", "fts", "ids", "parsed", "racy", "records")

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []
        self.records: list[tuple[int, bytes | None]] = []
        self.edges: list[tuple[Any, ...]] = []
        #: ``docs`` rows (rid, groups..., ntokens, title_tokens) and their FTS rows
        #: (rid, each group's tokens).
        self.docs: list[tuple[Any, ...]] = []
        self.fts: list[tuple[Any, ...]] = []
        self.racy: list[tuple[str]] = []
        #: Ids of the readable files (whose live row must be picked).
        self.ids: list[str] = []
        self.parsed = 0
        self.corrupt = 0

    def add(
        self,
        rid: int,
        rel: str,
        stat: Stat,
        digest: bytes | None,
        parsed: Item | CorruptItemError,
        context: Context,
    ) -> None:
        """Rows of one read file (``parsed``: its item or its parse error)."""
        folder, _, name = rel.partition("/")
        head = (rid, 0, rel, folder, name, context.frank[folder], *stat, digest)
        self.parsed += 1
        if stat[1] >= context.recent_ns:
            self.racy.append((rel,))
        if isinstance(parsed, CorruptItemError):
            self.corrupt += 1
            self.entries.append((*head, parsed.message, parsed.hint, None, *_NO_ITEM))
            return
        item = parsed
        # A bulk load marks readable rows live at once (duplicates are fixed after);
        # one by one, a row goes live when its id's winner is picked.
        live = context.bulk
        doc = doc_values(item, context.searchable)
        ntokens = doc[_NTOKENS]
        self.entries.append((rid, live, *head[2:], None, None, ntokens, *item_values(item)))
        self.records.append((rid, pack_item(item)))
        self.edges.extend([(rid, *edge) for edge in item_edges(item)])
        self.docs.append((rid, *doc[:-1]))
        self.fts.append((rid, *doc[-1]))
        self.ids.append(item.id)

    def dump(self) -> bytes:
        """All rows as one blob (marshal: plain values only, fast both ways)."""
        return marshal.dumps(
            (
                self.entries,
                self.records,
                self.edges,
                self.docs,
                self.fts,
                self.racy,
                self.ids,
                self.parsed,
                self.corrupt,
            ),
            4,
        )

    @classmethod
    def load(cls, blob: bytes) -> Rows:
        """The rows :meth:`dump` wrote."""
        rows = cls()
        (
            rows.entries,
            rows.records,
            rows.edges,
            rows.docs,
            rows.fts,
            rows.racy,
            rows.ids,
            rows.parsed,
            rows.corrupt,
        ) = marshal.loads(blob)
        return rows


class Context:
    """What every row of one refresh shares."""

    __slots__ = ("bulk", "frank", "recent_ns", "searchable")

    def __init__(
        self, frank: Mapping[str, int], searchable: Sequence[str], bulk: bool, recent_ns: int
    ) -> None:
        self.frank = dict(frank)
        self.searchable = tuple(searchable)
        self.bulk = int(bulk)
        #: A file whose mtime is at or past this is racy (re-read until older).
        self.recent_ns = recent_ns

    def as_tuple(self) -> tuple[Any, ...]:
        """Plain values, to send to a worker."""
        return (self.frank, self.searchable, bool(self.bulk), self.recent_ns)


def parse_bytes(data: bytes, source: str) -> Item | CorruptItemError:
    """The item in one file's bytes, or the error naming what is wrong with it."""
    from pm_core.tracker.storage.fastread import read_record

    try:
        record = None
        with contextlib.suppress(UnicodeDecodeError):
            record = read_record(data.decode("utf-8"))
        if record is None:
            return decode_item(data, source)  # the full decoder, or its error
        try:
            return item_from_record(record)
        except ItemFormatError as exc:
            raise CorruptItemError(f"{source}: {exc}", hint="fix the file by hand") from exc
    except CorruptItemError as exc:
        return exc


def _read(dir_fd: int, rel: str, size: int) -> bytes:
    """The file's bytes; ``size`` (from the listing) lets one read do.

    Something other than a regular file under an item's name (a pipe, a link
    to a device) reads as empty, so it is reported as a corrupt item instead
    of blocking the read or filling memory.
    """
    fd = os.open(rel, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not S_ISREG(os.fstat(fd).st_mode):
            return b""
        data = os.read(fd, size + 1)
        if len(data) <= size:
            return data  # a short read of a regular file: the end
        chunks = [data]
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)  # the file grew since it was listed
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_rows(
    root: str, rels: Sequence[str], stats: Sequence[Stat], first_rid: int, context: Context
) -> Rows:
    """Rows of ``rels`` (row ids from ``first_rid`` on, in order; vanished files skipped)."""
    rows = Rows()
    dir_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for k, (rel, stat) in enumerate(zip(rels, stats, strict=True)):
            try:
                data = _read(dir_fd, rel, stat[0])
            except OSError:
                continue  # vanished between the listing and the read
            rows.add(first_rid + k, rel, stat, digest16(data), parse_bytes(data, rel), context)
    finally:
        os.close(dir_fd)
    return rows


def _job(args: tuple[str, list[str], list[Stat], int, tuple[Any, ...]]) -> bytes:
    """A worker's task: parse one slice of files, return its rows as a blob."""
    root, rels, stats, first_rid, context = args
    return parse_rows(root, rels, stats, first_rid, Context(*context)).dump()


def parsed_batches(
    root: str,
    rels: Sequence[str],
    stats: Sequence[Stat],
    first_rid: int,
    context: Context,
    *,
    parallel: bool,
    job_files: int = JOB_FILES,
) -> Iterator[Rows]:
    """The rows of ``rels`` batch by batch (row ids ``first_rid + position``).

    ``parallel``: in worker processes (when there are two jobs and two cores).
    """
    starts = range(0, len(rels), job_files)
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if not parallel or workers < 2 or len(starts) < 2:
        for k in starts:
            end = k + job_files
            yield parse_rows(root, rels[k:end], stats[k:end], first_rid + k, context)
        return
    import multiprocessing
    import threading

    # Loaded once here, so forked workers do not each import them.

    # fork is fast and safe in a single-threaded process; otherwise spawn.
    method = "fork" if threading.active_count() == 1 and hasattr(os, "fork") else "spawn"
    pool_context = multiprocessing.get_context(method)
    shared = context.as_tuple()
    jobs = [
        (root, list(rels[k : k + job_files]), list(stats[k : k + job_files]), first_rid + k, shared)
        for k in starts
    ]
    with pool_context.Pool(workers) as pool:
        for blob in pool.imap(_job, jobs):
            yield Rows.load(blob)

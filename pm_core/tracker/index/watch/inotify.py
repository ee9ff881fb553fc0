"""A small Linux inotify binding (ctypes on the C library), for the index watcher.

Where inotify is missing, :func:`inotify_available` is false and callers do without.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

# Event bits (linux/inotify.h).
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000

#: What a type folder is watched for: any change to a file's name, bytes or stat.
FOLDER_MASK = (
    IN_CREATE
    | IN_DELETE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CLOSE_WRITE
    | IN_MODIFY
    | IN_ATTRIB
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_EXCL_UNLINK
)
#: What the tracker root is watched for: type folders (and runtime/) coming and going.
ROOT_MASK = (
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)

_HEADER = struct.Struct("iIII")
_BUFFER = 256 * 1024

#: statfs f_type values of network, shared and user-space file systems.
_REMOTE_FS = {
    0x6969: "nfs",
    0x517B: "smb",
    0xFF534D42: "cifs",
    0xFE534D42: "smb2",
    0x65735546: "fuse",
    0x01021997: "9p",
    0x00C36400: "ceph",
    0x47504653: "gpfs",
    0x0BD00BD0: "lustre",
    0x564C: "ncp",
    0x786F4256: "virtiofs",
}


class InotifyError(OSError):
    """inotify could not be set up or used."""


Event = tuple[int, int, str]
"""One event: ``(watch descriptor, mask, name)`` (name empty for the watched folder itself)."""


@cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols (libc is always loaded): no ldconfig subprocess, which
        # ctypes.util.find_library would start (and the command gate would refuse).
        libc = ctypes.CDLL(None, use_errno=True)
        init1 = libc.inotify_init1
        add = libc.inotify_add_watch
        rm = libc.inotify_rm_watch
    except (OSError, AttributeError):
        return None
    init1.argtypes = [ctypes.c_int]
    init1.restype = ctypes.c_int
    add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    add.restype = ctypes.c_int
    rm.argtypes = [ctypes.c_int, ctypes.c_int]
    rm.restype = ctypes.c_int
    return libc


def inotify_available() -> bool:
    """Whether this platform has inotify (Linux, with a C library that offers it)."""
    return _libc() is not None


def remote_filesystem(path: str | os.PathLike[str]) -> str | None:
    """The kind of network or shared file system ``path`` is on, or None when it is local.

    Unknown (no ``statfs``, or it fails) reads as local: the watcher then
    behaves as on any local disk.
    """
    libc = _libc()
    if libc is None:
        return None
    try:
        statfs = libc.statfs
    except AttributeError:
        return None
    # struct statfs is at most 120 bytes on 64-bit Linux; f_type comes first.
    buf = ctypes.create_string_buffer(256)
    if statfs(os.fsencode(path), buf) != 0:
        return None
    f_type = ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
    return _REMOTE_FS.get(f_type)


def _raise(what: str) -> None:
    code = ctypes.get_errno()
    raise InotifyError(code, f"{what}: {os.strerror(code)}")


class Inotify:
    """One inotify instance: a non-blocking descriptor and its watches."""

    def __init__(self) -> None:
        libc = _libc()
        if libc is None:
            raise InotifyError(errno.ENOSYS, "inotify is not available on this platform")
        self._libc = libc
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            _raise("inotify_init1")
        self.fd: int = fd

    def add_watch(self, path: str | os.PathLike[str], mask: int) -> int:
        """Watch ``path``; returns the watch descriptor (the same one for the same inode)."""
        wd: int = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            _raise(f"inotify_add_watch {os.fspath(path)}")
        return wd

    def rm_watch(self, wd: int) -> None:
        """Stop a watch (an ``IN_IGNORED`` event follows); a watch already gone is fine."""
        self._libc.inotify_rm_watch(self.fd, wd)

    def read_events(self) -> list[Event]:
        """Every event queued now, without waiting (an empty list when there are none)."""
        out: list[Event] = []
        while True:
            try:
                data = os.read(self.fd, _BUFFER)
            except BlockingIOError:
                return out
            if not data:
                return out
            out.extend(_decode(data))

    def close(self) -> None:
        """Close the descriptor (every watch goes with it)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Inotify:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _decode(data: bytes) -> Iterator[Event]:
    offset = 0
    size = _HEADER.size
    while offset + size <= len(data):
        wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
        start = offset + size
        raw = data[start : start + length].split(b"\0", 1)[0]
        yield wd, mask, os.fsdecode(raw)
        offset = start + length


__all__ = [
    "FOLDER_MASK",
    "IN_ATTRIB",
    "IN_CLOSE_WRITE",
    "IN_CREATE",
    "IN_DELETE",
    "IN_DELETE_SELF",
    "IN_IGNORED",
    "IN_ISDIR",
    "IN_MODIFY",
    "IN_MOVED_FROM",
    "IN_MOVED_TO",
    "IN_MOVE_SELF",
    "IN_Q_OVERFLOW",
    "IN_UNMOUNT",
    "ROOT_MASK",
    "Event",
    "Inotify",
    "InotifyError",
    "inotify_available",
    "remote_filesystem",
]

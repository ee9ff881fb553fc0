"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout.

Unlike the SDK's, it answers malformed and oversized lines with JSON-RPC errors,
answers pending requests at end of input, and points fd 1 at stderr while serving.
The SDK is imported inside :func:`stdio_transport`, so the fast start can read
and write the same pipes before it is loaded.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024
DRAIN_SECONDS = 30.0


def _error_line(request_id: Any, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return (json.dumps(body, separators=(",", ":")) + "\n").encode("utf-8")


def _request_id(line: bytes) -> Any:
    """The id of a malformed request, when one can be read (else null)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            return rid
    return None


_TOKEN = re.compile(r'["{}\[\],]')


def _shallow_id(line: bytes) -> Any:
    """The top-level ``id`` of a message nested too deeply for ``json.loads``.

    Scans brackets and strings without recursion, so a request buried under
    thousands of levels still gets its error under its own id.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    depth, pos, expect_key = 0, 0, False
    while (match := _TOKEN.search(text, pos)) is not None:
        char, pos = match.group(), match.end()
        if char == '"':
            try:
                key, pos = decoder.raw_decode(text, match.start())  # a string: no recursion
            except ValueError:
                return None
            if depth == 1 and expect_key and key == "id":
                rest = text[pos:].lstrip()
                if not rest.startswith(":"):
                    return None
                try:
                    rid, _ = decoder.raw_decode(rest[1:].lstrip())
                except (ValueError, RecursionError):
                    return None
                return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None
            expect_key = False
        elif char in "{[":
            depth += 1
            expect_key = char == "{" and depth == 1
        elif char in "}]":
            depth -= 1
        elif depth == 1:  # a comma between top-level members
            expect_key = True
    return None


class _Wire:
    """The private stdout: one lock so frames never interleave."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            self.out.write(data)
            self.out.flush()


def read_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[bytes, bool]]:
    """Yield (line, too_long) pairs; an over-long line is skipped to its newline."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                rest = stream.readline(65536)
                if not rest or rest.endswith(b"\n"):
                    break
            yield b"", True
            continue
        yield line, False


class StdioPipes:
    """This process's stdin and a private stdout, opened once per connection.

    Opening points fd 1 at stderr, so stray prints never corrupt the protocol
    stream; frames go to :attr:`wire`, and lines are read from :attr:`lines`.
    """

    def __init__(self, max_line_bytes: int) -> None:
        wire_fd = os.dup(1)
        os.dup2(2, 1)  # stray prints now go to stderr
        sys.stdout = os.fdopen(os.dup(2), "w", buffering=1)
        self.wire = _Wire(os.fdopen(wire_fd, "wb", buffering=0))
        self.lines = read_lines(os.fdopen(os.dup(0), "rb"), max_line_bytes)


@asynccontextmanager
async def stdio_transport(
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    pipes: StdioPipes | None = None,
    replay: Sequence[tuple[bytes, bool]] = (),
    drop: frozenset[Any] = frozenset(),
) -> AsyncIterator[tuple[Any, Any]]:
    """Streams for ``Server.run`` over this process's stdin and stdout.

    ``replay`` lines are read before stdin (what the fast start already read);
    answers to the request ids in ``drop`` are not written (the fast start
    already answered them).
    """
    import anyio
    import mcp_types
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    if pipes is None:
        pipes = StdioPipes(max_line_bytes)
    wire = pipes.wire

    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    pending: set[Any] = set()
    drained = anyio.Event()
    eof = False

    def settle() -> None:
        if eof and not pending:
            drained.set()

    async def reader() -> None:
        nonlocal eof
        async with read_writer:
            lines = pipes.lines
            queued = list(replay)
            while True:
                if queued:
                    item: tuple[bytes, bool] | None = queued.pop(0)
                else:
                    item = await anyio.to_thread.run_sync(
                        lambda: next(lines, None), abandon_on_cancel=True
                    )
                if item is None:
                    break
                line, too_long = item
                if too_long:
                    wire.write(
                        _error_line(
                            None, -32600, f"request exceeds {max_line_bytes} bytes; not read"
                        )
                    )
                    continue
                if not line.strip():
                    continue
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:
                    try:
                        json.loads(line)
                    except RecursionError:
                        wire.write(
                            _error_line(
                                _shallow_id(line),
                                -32600,
                                "Invalid Request: JSON nested too deeply to read",
                            )
                        )
                        continue
                    except ValueError:
                        wire.write(_error_line(None, -32700, "Parse error: the line is not JSON"))
                        continue
                    rid = _request_id(line)
                    detail = str(exc).splitlines()[0] if str(exc) else "invalid message"
                    wire.write(
                        _error_line(
                            rid, -32600, f"Invalid Request: not a JSON-RPC 2.0 message ({detail})"
                        )
                    )
                    continue
                root = getattr(message, "root", message)
                rid = getattr(root, "id", None)
                if getattr(root, "method", None) is not None and rid is not None:
                    pending.add(rid)
                await read_writer.send(SessionMessage(message))
            eof = True
            settle()
            with anyio.move_on_after(DRAIN_SECONDS):
                await drained.wait()

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                message = session_message.message
                root = getattr(message, "root", message)
                if (
                    drop
                    and getattr(root, "method", None) is None
                    and getattr(root, "id", None) in drop
                ):
                    pending.discard(getattr(root, "id", None))  # already answered by the fast start
                    settle()
                    continue
                data = message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(wire.write, (data + "\n").encode("utf-8"))
                if getattr(root, "method", None) is None:
                    pending.discard(getattr(root, "id", None))  # responses and errors
                    settle()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()

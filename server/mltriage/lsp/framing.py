"""LSP base-protocol framing: a byte stream in, one message body at a time out.

pygls's own reader accepts only ``Content-Length: N\\r\\n`` byte for byte; after any other header (a
missing, non-numeric or negative length) it never finds a message boundary again and the server
goes silent. Here a bad header is logged on stderr and skipped, and reading resumes at the next
``Content-Length:`` header, so one bad message costs that message only.

Memory stays bounded whatever arrives: a header block is at most `MAX_HEADER_BYTES`, a body at
most `MAX_BODY_BYTES`, and while looking for the next header only a few bytes are kept.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

MAX_HEADER_BYTES = 8192
# a document is at most 200 M characters (commands.MAX_TEXT_CHARS); JSON escaping can double it
MAX_BODY_BYTES = 1 << 30
_CHUNK = 1 << 16
_BODY_CHUNK = 1 << 24  # large bodies are read in pieces, so a lying header allocates nothing big
_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_KEEP_WHILE_SEARCHING = len(b"content-length :") - 1  # enough to see a header split across reads


def content_length(header: bytes) -> tuple[int | None, str]:
    """The body length a header block announces, or None and what is wrong with it."""
    values = []
    for line in header.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if colon and name.strip().lower() == b"content-length":
            values.append(value.strip())
    if not values:
        return None, "no Content-Length header"
    if len(set(values)) > 1:
        return None, "conflicting Content-Length headers"
    value = values[0]
    if not value.isdigit():  # bytes.isdigit is ASCII digits only: no sign, no '²'
        return None, f"Content-Length {value[:40].decode('ascii', 'replace')!r} is not a non-negative whole number"
    if len(value) > len(str(MAX_BODY_BYTES)) or int(value) > MAX_BODY_BYTES:
        return None, f"Content-Length {value[:40].decode()} is over the {MAX_BODY_BYTES:,}-byte limit"
    return int(value), ""


class DaemonThread:
    """Runs calls one at a time on a daemon thread: a read of stdin still waiting when the server
    exits (reading runs ahead of handling) must not hold the process (a pool's threads are joined)."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        while True:
            loop, future, call, args = self._calls.get()
            try:
                outcome = (call(*args), None)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                outcome = (None, exc)
            try:
                loop.call_soon_threadsafe(_settle, future, *outcome)
            except RuntimeError:  # the loop is closed: the server is exiting
                return

    def run(self, call: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._calls.put((loop, future, call, args))
        return future


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


class FrameReader:
    """Reads message bodies from a blocking binary stream (stdin) on a thread of its own."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._searching = False  # skipping bytes up to the next Content-Length header
        self._thread = DaemonThread("mltriage-stdin")

    async def _read(self, size: int) -> bytes:
        read = getattr(self._stream, "read1", self._stream.read)
        return await self._thread.run(read, size)

    async def _fill(self) -> bool:
        chunk = await self._read(_CHUNK)
        self._buffer += chunk
        return bool(chunk)

    def _skip(self, problem: str, header: bytes) -> None:
        log.error(
            "skipped a message with a bad header (%s): %r; reading on from the next Content-Length header",
            problem, bytes(header[:200]),
        )
        del self._buffer[:1]  # past this header's start: the search finds the next one, even inside this block
        self._searching = True

    def _search(self) -> bool:
        """Drop bytes up to the next Content-Length header; True when one is in the buffer."""
        found = _CONTENT_LENGTH.search(self._buffer)
        if found:
            del self._buffer[: found.start()]
            self._searching = False
            return True
        del self._buffer[: max(0, len(self._buffer) - _KEEP_WHILE_SEARCHING)]
        return False

    async def next_body(self) -> bytes | None:
        """The next message body; None when the stream has ended."""
        while True:
            if self._searching and not self._search():
                if not await self._fill():
                    return None
                continue
            end = self._buffer.find(_HEADER_END)
            if end < 0:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    header = bytes(self._buffer[:MAX_HEADER_BYTES])
                    self._skip(f"no blank line within {MAX_HEADER_BYTES:,} bytes", header)
                    continue
                if not await self._fill():
                    if self._buffer.strip():
                        log.error("input ended inside a message header: %r", bytes(self._buffer[:200]))
                    return None
                continue
            header = bytes(self._buffer[:end])
            length, problem = content_length(header)
            if length is None:
                self._skip(problem, header)
                continue
            del self._buffer[: end + len(_HEADER_END)]
            return await self._body(length)

    def reread(self, body: bytes) -> bool:
        """After ``body`` turned out not to be a message: if a header starts inside it (the length
        before it was too large and swallowed the next message), read on from there."""
        found = _CONTENT_LENGTH.search(body, 1)
        if found is None:
            return False
        log.error("a message body held a Content-Length header at byte %d: reading on from it", found.start())
        self._buffer[:0] = body[found.start():]
        return True

    async def _body(self, length: int) -> bytes | bytearray | None:
        have = min(length, len(self._buffer))
        if have == length:
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            return body
        # the body grows as its bytes arrive (a lying length allocates nothing it was not sent), in
        # one buffer: joining 80 MB of parts at the end held the GIL, and the hovers, for tens of ms
        body = bytearray(self._buffer)
        self._buffer.clear()
        while have < length:
            chunk = await self._read(min(length - have, _BODY_CHUNK))
            if not chunk:
                log.error("input ended %d bytes into a %d-byte message body", have, length)
                return None
            body += chunk
            have += len(chunk)
        return body

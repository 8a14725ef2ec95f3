"""The pipe between the language server and its engine worker: length-prefixed pickles.

Both ends are this package's code, and the worker is the server's own child, so pickle carries the
engine's dataclasses as they are. A result's lists cross in frames of 32–128 KB: unpickling one
frame is a C call that holds the GIL, and the event loop gets its turn between them.

Messages are tuples: to the worker ``("job", id, kind, request)`` followed by the request's text
(`write_text`); back ``("ready", time, load_s)``, ``("part", id, key, items)`` (any number), then
``("done", id, payload)`` or ``("failed", id, why)``.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO


_HEADER = struct.Struct("<Q")
MAX_FRAME_BYTES = 1 << 32  # a 200 M-character document, pickled, fits
_SMALL, _LARGE = 32 * 1024, 128 * 1024
_TEXT_PIECE = 1 << 20  # characters encoded at a time


class WireError(Exception):
    """The other end sent something that is not a frame of ours."""


def encode(message: tuple) -> bytes:
    body = pickle.dumps(message, protocol=5)
    return _HEADER.pack(len(body)) + body


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    parts, have = [], 0
    while have < size:
        chunk = stream.read(min(size - have, 1 << 24))
        if not chunk:
            return None
        parts.append(chunk)
        have += len(chunk)
    return b"".join(parts)


def read(stream: BinaryIO) -> tuple | None:
    """The next message from a blocking stream; None when it has ended (the other end is gone)."""
    header = _read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise WireError(f"a frame of {size:,} bytes")
    body = _read_exactly(stream, size)
    return None if body is None else pickle.loads(body)


def write_text(stream: BinaryIO, text: str | Sequence[str]) -> None:
    """A document's text (a string, or its pieces: `document_sync.ChunkedText.pieces`), as UTF-8
    pieces of at most 1 M characters: pickling 50 MB at once held the GIL (and the hovers) for
    60 ms; each piece takes well under 1 ms, and the writes release it."""
    for part in (text,) if isinstance(text, str) else text:
        for at in range(0, len(part), _TEXT_PIECE):
            data = part[at:at + _TEXT_PIECE].encode("utf-8", "surrogatepass")  # lone surrogates survive
            stream.write(_HEADER.pack(len(data)))
            stream.write(data)
    stream.write(_HEADER.pack(0))


def read_text(stream: BinaryIO) -> str:
    parts = []
    while True:
        header = _read_exactly(stream, _HEADER.size)
        if header is None:
            raise EOFError("the text ended early")
        (size,) = _HEADER.unpack(header)
        if size == 0:
            return b"".join(parts).decode("utf-8", "surrogatepass")
        if size > _TEXT_PIECE * 4:
            raise WireError(f"a text piece of {size:,} bytes")
        part = _read_exactly(stream, size)
        if part is None:
            raise EOFError("the text ended early")
        parts.append(part)


def frames(job: int, payload: dict[str, Any]) -> Iterator[bytes]:
    """A result as frames: each list value in parts of 32–128 KB pickled, then the rest."""
    done = {}
    for key, value in payload.items():
        if isinstance(value, list):
            yield from _parts(job, key, value)
            value = []
        done[key] = value
    yield encode(("done", job, done))


def _parts(job: int, key: str, items: list) -> Iterator[bytes]:
    step, at = 64, 0
    while at < len(items):
        frame = encode(("part", job, key, items[at:at + step]))
        at += step
        yield frame
        if len(frame) > _LARGE and step > 1:
            step //= 2
        elif len(frame) < _SMALL:
            step *= 2


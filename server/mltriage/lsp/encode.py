"""JSON-RPC messages to the client, encoded and framed where they are made: in the engine worker
(which then needs neither asyncio nor pygls), on a thread, or on the event loop."""

from __future__ import annotations

import json


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode_message(message: dict) -> bytes:
    """A message framed as the client reads it (ASCII JSON, so its length is its size)."""
    return frame(json.dumps(message).encode())

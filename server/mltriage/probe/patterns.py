"""Test data: random bytes and an address-dependent pattern, never one repeated byte.

A repeated byte cannot reveal shifted, swapped or stale chunks: random data catches bit flips,
and the address pattern (each little-endian 32-bit word holds its own word index, the classic
"address in address" memory test) catches data that lands at the wrong offset.
"""

from __future__ import annotations

import random
from array import array

PATTERNS = ("random", "address")
_BLOCK_WORDS = 1 << 16  # words whose index differs only in the low 16 bits


def make(kind: str, nbytes: int, seed: int = 0x5EED) -> bytes:
    if kind == "random":
        return _random(nbytes, seed)
    if kind == "address":
        return _address(nbytes)
    raise ValueError(f"unknown pattern {kind!r}")


def _random(nbytes: int, seed: int) -> bytes:
    try:
        import numpy as np

        return np.random.default_rng(seed).bytes(nbytes)
    except ImportError:
        return random.Random(seed).randbytes(nbytes)


def _address(nbytes: int) -> bytes:
    # Build 64 Ki-word blocks by stamping the high 16 bits of the index: C-speed, no numpy.
    low = array("I", range(_BLOCK_WORDS)).tobytes()
    words = (nbytes + 3) // 4
    out = bytearray()
    for hi in range((words + _BLOCK_WORDS - 1) // _BLOCK_WORDS):
        blk = bytearray(low)
        blk[2::4] = bytes([hi & 0xFF]) * _BLOCK_WORDS
        blk[3::4] = bytes([hi >> 8 & 0xFF]) * _BLOCK_WORDS
        out += blk
    del out[nbytes:]
    return bytes(out)

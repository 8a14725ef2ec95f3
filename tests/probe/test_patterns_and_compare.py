"""Test data and the byte comparison every backend falls back to."""

from __future__ import annotations

import struct

from mltriage.probe import patterns
from mltriage.probe.backends.base import first_difference


def test_address_pattern_holds_each_word_index():
    data = patterns.make("address", (3 << 18) + 3)  # spans several 64 Ki-word blocks, odd tail
    assert len(data) == (3 << 18) + 3
    for k in (0, 1, 65535, 65536, 70000, (3 << 16) - 1):
        assert struct.unpack_from("<I", data, 4 * k)[0] == k


def test_random_pattern_is_reproducible_and_not_one_byte():
    a, b = patterns.make("random", 4096), patterns.make("random", 4096)
    assert a == b and len(set(a)) > 200
    assert patterns.make("random", 4096, seed=1) != a


def test_first_difference():
    base = bytes(range(256)) * 1000
    assert first_difference(base, bytearray(base)) is None
    for at in (0, 1, 4095, 4096, len(base) - 1):
        other = bytearray(base)
        other[at] ^= 0x40
        assert first_difference(base, memoryview(other)) == at
    assert first_difference(b"abc", b"ab") == 2
